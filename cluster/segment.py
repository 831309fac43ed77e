"""Immutable columnar segments, as Lucene builds them at refresh.

A segment holds the documents of one refresh as NumPy arrays: per-document columns (``seq``,
``version``, ``created_gen`` and the one mutable column ``deleted_gen``), postings for every
indexed field (CSR: term -> documents, frequencies, positions), Lucene norms for text fields,
and doc values for sorting and ranges. ``_source`` is kept as the original JSON bytes and only
leaves the shard for the page being fetched.

Visibility is generational: a document version is visible at refresh generation ``g`` when
``created_gen <= g < deleted_gen``. ``deleted_gen`` is only ever set to a *future* generation, so
what any existing generation sees never changes: snapshots (point in time, scroll, page tokens)
cost nothing and cached per-snapshot statistics never go stale.
"""
from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .analysis import get_analyzer
from .mapping import FieldType
from .scoring import encode_norms

NEVER = np.iinfo(np.int32).max
POSITION_INCREMENT_GAP = 100
_uid_counter = itertools.count(1)


@dataclass
class BufferedDoc:
    """A document version waiting in the write buffer for the next refresh."""

    id: str
    seq: int
    version: int
    source: bytes
    fields: dict[str, list[Any]]
    routing: str | None = None
    deleted: bool = False


class Postings:
    """Term -> (docs, freqs[, positions]) in CSR form. Terms are kept in insertion order with a
    lazily built sorted view for prefix and wildcard expansion."""

    __slots__ = ("terms", "term_list", "offsets", "docs", "freqs", "pos_offsets", "positions",
                 "_sorted")

    def __init__(self, terms: dict[str, int], offsets: np.ndarray, docs: np.ndarray,
                 freqs: np.ndarray, pos_offsets: np.ndarray | None,
                 positions: np.ndarray | None) -> None:
        self.terms = terms
        self.term_list = list(terms)
        self.offsets = offsets
        self.docs = docs
        self.freqs = freqs
        self.pos_offsets = pos_offsets
        self.positions = positions
        self._sorted: list[str] | None = None

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        tid = self.terms.get(term)
        if tid is None:
            return None
        a, b = self.offsets[tid], self.offsets[tid + 1]
        return self.docs[a:b], self.freqs[a:b]

    def positions_of(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(doc of each position, position) for every occurrence of ``term``."""
        tid = self.terms.get(term)
        if tid is None or self.pos_offsets is None or self.positions is None:
            return None
        a, b = self.offsets[tid], self.offsets[tid + 1]
        pa, pb = self.pos_offsets[a], self.pos_offsets[b]
        docs = np.repeat(self.docs[a:b], self.freqs[a:b])
        return docs, self.positions[pa:pb]

    @property
    def sorted_terms(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.term_list)
        return self._sorted

    def terms_with_prefix(self, prefix: str) -> list[str]:
        st = self.sorted_terms
        i = bisect_left(st, prefix)
        out = []
        while i < len(st) and st[i].startswith(prefix):
            out.append(st[i])
            i += 1
        return out

    def terms_matching(self, regex: re.Pattern[str]) -> list[str]:
        return [t for t in self.term_list if regex.fullmatch(t)]


@dataclass
class TextField:
    postings: Postings
    lengths: np.ndarray      # int32[n]: tokens in the field (0 when absent)
    norms: np.ndarray        # uint8[n]: Lucene's encoded length
    present: np.ndarray      # bool[n]


@dataclass
class KeywordField:
    postings: Postings
    sorted_values: np.ndarray  # object[U]: the segment's distinct values, sorted
    min_ord: np.ndarray        # int32[n], -1 when missing
    max_ord: np.ndarray        # int32[n], -1 when missing
    present: np.ndarray        # bool[n]
    value_count: np.ndarray    # int32[n]


@dataclass
class NumericField:
    """Numbers, dates (as int64 millis or nanos) and booleans (0/1)."""

    values: np.ndarray       # all values, flat (float64 or int64)
    value_docs: np.ndarray   # int32, the document of each value
    min: np.ndarray          # per document (missing: 0, see ``present``)
    max: np.ndarray
    present: np.ndarray      # bool[n]


FieldData = TextField | KeywordField | NumericField


class SourceStore:
    """The stored ``_source`` of a segment's documents: one contiguous buffer plus offsets.

    One allocation instead of a bytes object per document: ~40 bytes less per document, and the
    per-document objects that arrived with the writes can be freed whole (no fragmentation).
    Indexing returns the document's bytes (a copy, made only for the page being fetched).
    """

    __slots__ = ("blob", "offsets")

    def __init__(self, sources: list[bytes]) -> None:
        self.blob = b"".join(sources)
        self.offsets = np.zeros(len(sources) + 1, dtype=np.int64)
        if sources:
            np.cumsum(np.fromiter(map(len, sources), dtype=np.int64, count=len(sources)),
                      out=self.offsets[1:])

    def __getitem__(self, i: int) -> bytes:
        i = int(i)
        if i < 0:
            i += len(self)
        return self.blob[self.offsets[i]:self.offsets[i + 1]]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))


def fresh_strings(values: list[str]) -> list[str]:
    """Equal strings allocated afresh and side by side (one join, one split).

    Strings kept for a segment's life (terms, ids) were allocated among millions of transient
    ones (tokens, parsed documents); copying them lets the allocator return that memory.
    """
    if not values:
        return values
    out = "\x00".join(values).split("\x00")
    return out if len(out) == len(values) else values


def release_free_memory() -> None:
    """Give freed heap memory back to the operating system (glibc ``malloc_trim``; no-op
    elsewhere). Called after a refresh, which frees a whole write buffer at once."""
    import gc
    gc.collect()
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _build_postings(term_ids: dict[str, int], tids: Any, docs: Any,
                    poss: Any | None) -> Postings:
    """CSR postings from one entry per token occurrence. ``docs`` (then ``poss``) must be
    non-decreasing in the order given — the segment builders produce them so — which lets a
    stable sort on the term id alone give the (term, doc, position) order. O(P log P)."""
    n_terms = len(term_ids)
    if len(tids) == 0:
        empty = np.zeros(0, dtype=np.int32)
        return Postings(term_ids, np.zeros(n_terms + 1, dtype=np.int64), empty, empty,
                        np.zeros(1, dtype=np.int64) if poss is not None else None,
                        empty if poss is not None else None)
    t = np.asarray(tids, dtype=np.int32)
    d = np.asarray(docs, dtype=np.int32)
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    p = np.asarray(poss, dtype=np.int32)[order] if poss is not None else None
    key_change = np.ones(len(t), dtype=bool)
    key_change[1:] = (t[1:] != t[:-1]) | (d[1:] != d[:-1])
    starts = np.flatnonzero(key_change)
    post_t = t[starts]
    post_d = d[starts]
    freqs = np.diff(np.append(starts, len(t))).astype(np.int32)
    offsets = np.searchsorted(post_t, np.arange(n_terms + 1), side="left").astype(np.int64)
    pos_offsets = np.append(starts, len(t)).astype(np.int64) if p is not None else None
    return Postings(term_ids, offsets, post_d, freqs, pos_offsets, p)


class Segment:
    """One immutable segment. Build it with :meth:`build`; only ``deleted_gen`` ever changes."""

    def __init__(self, uid: int, ids: np.ndarray, seq: np.ndarray, version: np.ndarray,
                 created_gen: np.ndarray, deleted_gen: np.ndarray, sources: list[bytes],
                 routing: list[str | None], fields: dict[str, FieldData]) -> None:
        self.uid = uid
        self.ids = ids
        self.seq = seq
        self.version = version
        self.created_gen = created_gen
        self.deleted_gen = deleted_gen
        self.sources = sources
        self.routing = routing
        self.fields = fields
        self.n = len(ids)

    @classmethod
    def build(cls, docs: list[BufferedDoc], field_types: dict[str, FieldType],
              generation: int) -> Segment:
        """Columnar segment of ``docs`` made visible at ``generation``.

        Cost: O(tokens) Python work to assign term ids, then O(P log P) NumPy sorting.
        """
        n = len(docs)
        ids = np.empty(n, dtype=object)
        ids[:] = fresh_strings([d.id for d in docs])
        seq = np.array([d.seq for d in docs], dtype=np.int64)
        version = np.array([d.version for d in docs], dtype=np.int64)
        created = np.full(n, generation, dtype=np.int32)
        deleted = np.full(n, NEVER, dtype=np.int32)
        by_field: dict[str, list[tuple[int, list[Any]]]] = {}
        for i, d in enumerate(docs):
            for fname, vals in d.fields.items():
                by_field.setdefault(fname, []).append((i, vals))
        fields: dict[str, FieldData] = {}
        for fname, entries in by_field.items():
            ft = field_types.get(fname)
            if ft is None or not ft.index and not ft.doc_values:
                continue
            kind = ft.kind
            if kind == "text":
                fields[fname] = _build_text(entries, n, ft)
            elif kind == "keyword":
                fields[fname] = _build_keyword(entries, n)
            elif kind in ("numeric", "date", "boolean"):
                fields[fname] = _build_numeric(entries, n, ft)
        return cls(next(_uid_counter), ids, seq, version, created, deleted,
                   SourceStore([d.source for d in docs]), [d.routing for d in docs], fields)

    def visible(self, gen: int) -> np.ndarray:
        """bool[n]: the versions visible at refresh generation ``gen``. O(n), cached."""
        return _visible(self, gen)

    def __hash__(self) -> int:
        return self.uid

    def __eq__(self, other: object) -> bool:
        return self is other


@lru_cache(maxsize=256)
def _visible(seg: Segment, gen: int) -> np.ndarray:
    out = (seg.created_gen <= gen) & (seg.deleted_gen > gen)
    out.setflags(write=False)
    return out


def _build_text(entries: list[tuple[int, list[Any]]], n: int, ft: FieldType) -> TextField:
    """Postings with positions, lengths and norms of a text field.

    Python touches each *value* once (analysis); term ids come from one C-level pass over all
    tokens (ids in order of first occurrence), docs and positions are computed with NumPy:
    value ``k`` of a document starts at position ``tokens before it + k * gap``.
    """
    analyze = get_analyzer(ft.analyzer)
    all_toks: list[str] = []
    counts: list[int] = []          # tokens of each value
    value_doc: list[int] = []
    value_k: list[int] = []         # index of the value within its document
    present = np.zeros(n, dtype=bool)
    for doc, vals in entries:
        for k, v in enumerate(vals):
            toks = analyze(v)
            all_toks += toks
            counts.append(len(toks))
            value_doc.append(doc)
            value_k.append(k)
        present[doc] = True
    term_ids = {t: i for i, t in enumerate(fresh_strings(list(dict.fromkeys(all_toks))))}
    tids = np.fromiter(map(term_ids.__getitem__, all_toks), dtype=np.int32,
                       count=len(all_toks))
    cnt = np.asarray(counts, dtype=np.int64)
    vdoc = np.asarray(value_doc, dtype=np.int64)
    vk = np.asarray(value_k, dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int32)
    if len(cnt):
        np.add.at(lengths, vdoc, cnt.astype(np.int32))
    vstart = np.cumsum(cnt) - cnt                      # flat index of each value's first token
    doc_start = np.maximum.accumulate(np.where(vk == 0, vstart, 0)) if len(vk) else vstart
    base = np.repeat(doc_start - vk * POSITION_INCREMENT_GAP, cnt)
    poss = np.arange(len(all_toks), dtype=np.int64) - base
    docs = np.repeat(vdoc, cnt)
    postings = _build_postings(term_ids, tids, docs, poss)
    return TextField(postings, lengths, encode_norms(lengths), present)


def _build_keyword(entries: list[tuple[int, list[Any]]], n: int) -> KeywordField:
    """Postings and sorted ordinals (min/max per document) of a keyword field.

    Python touches each *entry* once; term ids come from one C-level pass (order of first
    occurrence), and the distinct values are sorted once (O(U log U)) for the ordinals.
    """
    all_vals: list[str] = []
    entry_docs: list[int] = []
    entry_counts: list[int] = []
    for doc, vals in entries:
        all_vals += vals
        entry_docs.append(doc)
        entry_counts.append(len(vals))
    ed = np.asarray(entry_docs, dtype=np.int64)
    ec = np.asarray(entry_counts, dtype=np.int32)
    present = np.zeros(n, dtype=bool)
    counts = np.zeros(n, dtype=np.int32)
    if len(ed):
        present[ed] = ec > 0
        counts[ed] = ec
    term_list = fresh_strings(list(dict.fromkeys(all_vals)))
    term_ids = {t: i for i, t in enumerate(term_list)}
    tids = np.fromiter(map(term_ids.__getitem__, all_vals), dtype=np.int32, count=len(all_vals))
    docs = np.repeat(ed, ec)
    postings = _build_postings(term_ids, tids, docs, None)
    by_value = sorted(range(len(term_list)), key=term_list.__getitem__)
    sorted_values = np.empty(len(term_list), dtype=object)
    sorted_values[:] = [term_list[i] for i in by_value]
    rank_of_tid = np.empty(len(term_list), dtype=np.int32)
    rank_of_tid[np.asarray(by_value, dtype=np.int64)] = np.arange(len(term_list), dtype=np.int32)
    min_ord = np.full(n, -1, dtype=np.int32)
    max_ord = np.full(n, -1, dtype=np.int32)
    if len(tids):
        t = rank_of_tid[tids]
        d = docs.astype(np.int32)
        big = np.iinfo(np.int32).max
        mins = np.full(n, big, dtype=np.int32)
        np.minimum.at(mins, d, t)
        np.maximum.at(max_ord, d, t)
        min_ord = np.where(mins == big, -1, mins).astype(np.int32)
    return KeywordField(postings, sorted_values, min_ord, max_ord, present, counts)


def _build_numeric(entries: list[tuple[int, list[Any]]], n: int, ft: FieldType) -> NumericField:
    is_int = ft.is_integer or ft.kind == "boolean"
    dtype = np.int64 if is_int else np.float64
    vals: list[Any] = []
    vdocs: list[int] = []
    for doc, vs in entries:
        for v in vs:
            vals.append(int(v) if is_int else v)
            vdocs.append(doc)
    values = np.asarray(vals, dtype=dtype)
    value_docs = np.asarray(vdocs, dtype=np.int32)
    present = np.zeros(n, dtype=bool)
    present[value_docs] = True
    if is_int:
        mn = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        mx = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    else:
        mn = np.full(n, np.inf)
        mx = np.full(n, -np.inf)
    if len(values):
        np.minimum.at(mn, value_docs, values)
        np.maximum.at(mx, value_docs, values)
    mn[~present] = 0
    mx[~present] = 0
    return NumericField(values, value_docs, mn, mx, present)
