"""Immutable columnar segments, as Lucene builds them at refresh.

A segment holds the documents of one refresh as NumPy arrays: per-document columns (``seq``,
``version``, ``created_gen`` and the one mutable column ``deleted_gen``), postings for every
indexed field (CSR: term -> documents, frequencies, positions), Lucene norms for text fields,
and doc values for sorting and ranges. ``_source`` is kept as the original JSON bytes,
compressed in blocks, and only leaves the shard for the page being fetched.

Memory decides the layout: a segment is a few large arrays and strings, not millions of Python
objects (the postings' layout is in ``postings.py``). Integer columns take the narrowest dtype
their values fit, chosen per segment.

Visibility is generational: a document version is visible at refresh generation ``g`` when
``created_gen <= g < deleted_gen``. ``deleted_gen`` is only ever set to a *future* generation, so
what any existing generation sees never changes: snapshots (point in time, scroll, page tokens)
cost nothing and cached per-snapshot statistics never go stale.
"""
from __future__ import annotations

import importlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .buffered_doc import BufferedDoc
from .field_entries import GATHER_DOCS, FieldEntries, entries_by_field, entries_of_chunks
from .field_types import IGNORED_FIELD, FieldType
from .geo import LON_SUFFIX
from .gcpause import gc_paused
from .id_column import IdColumn
from .nested import NESTED_KEY, NestedDocs, build_blocks
from .postings import Postings, build_postings, narrow, sorted_ids
from .scoring import encode_norms
from .source_cache import BlockCache

NEVER = np.iinfo(np.int32).max
POSITION_INCREMENT_GAP = 100
SOURCE_BLOCK = 8 << 10         # uncompressed bytes of _source per compressed block
SOURCE_LEVEL = 4               # zstd level of the blocks: with the dictionary 3.4x on GCIDE
SOURCE_DICT_LEVEL = 5          # and of the dictionary's training (level 4's own: 3% larger blocks)
SOURCE_DICT = 64 << 10         # bytes of the zstd dictionary trained on a segment's sources
SOURCE_DICT_MIN = 2 << 20      # sources (uncompressed) from which a segment trains one
_uid_counter = itertools.count(1)


@dataclass
class TextField:
    postings: Postings
    lengths: np.ndarray      # unsigned[n] (``narrow``): tokens in the field (0 when absent)
    norms: np.ndarray        # uint8[n]: Lucene's encoded length
    present: np.ndarray      # bool[n]


def ignored_fields(seg: Segment, i: int) -> tuple[str, ...]:
    """``_ignored`` of document ``i``: the fields whose malformed values were skipped."""
    fd = seg.fields.get("_ignored")
    if not isinstance(fd, KeywordField) or not fd.present[i]:
        return ()
    return tuple(fd.postings.terms_of(i))


class KeywordField:
    """A keyword field: postings, and per document the ordinals (term ids = ranks among the
    segment's distinct values) of its smallest and largest value."""

    __slots__ = ("postings", "min_ord", "max_ord", "present", "value_count", "_values")

    def __init__(self, postings: Postings, min_ord: np.ndarray, max_ord: np.ndarray,
                 present: np.ndarray, value_count: np.ndarray) -> None:
        self.postings = postings
        self.min_ord = min_ord            # int32[n], -1 when missing
        self.max_ord = max_ord            # int32[n], -1 when missing (min_ord when single-valued)
        self.present = present            # bool[n]
        self.value_count = value_count    # unsigned[n]: values of the document
        self._values: np.ndarray | None = None

    @property
    def sorted_values(self) -> np.ndarray:
        """object[U]: the distinct values, sorted (an ordinal indexes it). Made on first use
        — sorting on the field — and kept: only sorted fields pay for Python strings."""
        if self._values is None:
            values = np.empty(len(self.postings.terms), dtype=object)
            values[:] = self.postings.term_list
            self._values = values
        return self._values


@dataclass
class NumericField:
    """Numbers, dates (as int64 millis or nanos) and booleans (0/1)."""

    values: np.ndarray       # all values, flat (float64 or int64)
    value_docs: np.ndarray   # int32, the document of each value
    min: np.ndarray          # per document (missing: 0, see ``present``)
    max: np.ndarray          # (one value per document: ``min``, ``max`` and ``values`` are one)
    present: np.ndarray      # bool[n]


FieldData = TextField | KeywordField | NumericField


class SourceStore:
    """The stored ``_source`` of a segment's documents, zstd-compressed in blocks.

    Documents are packed in order into blocks of about ``SOURCE_BLOCK`` bytes, each compressed
    alone, in one buffer. Reading a document decompresses its block; :meth:`take` and
    iteration decompress each block once for all its documents. Small blocks keep a page's
    fetch cheap but compress poorly alone: a segment with ``SOURCE_DICT_MIN`` bytes of sources
    or more trains a zstd dictionary (``SOURCE_DICT`` bytes, from ~1 MiB of its documents) that
    every block is compressed with — what repeats across documents (keys, boilerplate) is
    then not paid in each block. On half of GCIDE: 10.4 → 8.6 MiB, dictionary included, for
    ~0.15 s more CPU per 32 MiB at refresh. Blocks are compressed at level 4 (9.4 MiB with
    offsets and dictionary, 0.16 CPU s), not 5 (8.8 MiB, 0.28 s: twice the refresh's zstd
    CPU for 0.6 MiB less per copy); a block read takes ~5 µs where Arrow's codec took
    ~15 (a decompression context reused per thread, :func:`_decompressor`). The store lives in
    memory only (snapshots hold plain sources).
    """

    __slots__ = ("blob", "block_at", "first_doc", "offsets", "zdict")

    def __init__(self, sources: list[bytes]) -> None:
        n = len(sources)
        offsets = np.zeros(n + 1, dtype=np.int64)
        if sources:
            np.cumsum(np.fromiter(map(len, sources), dtype=np.int64, count=n), out=offsets[1:])
        first = [0]
        parts = []
        ends = offsets.tolist()
        self.zdict = _train_dictionary(sources, ends[-1])     # zstd's dictionary, or None
        compress = _zstd().ZstdCompressor(level=SOURCE_LEVEL, dict_data=self.zdict,
                                          write_checksum=False, write_dict_id=False).compress
        for i in range(n):
            if ends[i + 1] - ends[first[-1]] >= SOURCE_BLOCK or i + 1 == n:
                parts.append(compress(b"".join(sources[first[-1]:i + 1])))
                first.append(i + 1)
        at = np.zeros(len(parts) + 1, dtype=np.int64)
        if parts:
            np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)),
                      out=at[1:])
        self.blob = b"".join(parts)
        self.block_at = narrow(at)                      # block b: blob[at[b]:at[b + 1]]
        self.first_doc = narrow(np.asarray(first, dtype=np.int64), n + 1)
        self.offsets = narrow(offsets)                  # of each document, uncompressed

    def __getstate__(self) -> dict[str, Any]:
        """The slots, the dictionary as its bytes (zstd's object neither pickles nor copies)."""
        state = {k: getattr(self, k) for k in self.__slots__}
        if self.zdict is not None:
            state["zdict"] = self.zdict.as_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        if self.zdict is not None:
            self.zdict = _zstd().ZstdCompressionDict(self.zdict)

    def nbytes(self) -> int:
        """Compressed blocks and dictionary (``merge_policy.segment_bytes``)."""
        extra = len(self.zdict.as_bytes()) if self.zdict is not None else 0
        return len(self.blob) + extra + self.offsets.nbytes

    def _block(self, b: int) -> bytes:
        """Block ``b`` decompressed, all of it (a zstd frame is read whole)."""
        view = memoryview(self.blob)[int(self.block_at[b]):int(self.block_at[b + 1])]
        return _decompressor(self.zdict).decompress(view)  # type: ignore[no-any-return]

    def _cached_block(self, b: int, need: int, cache: BlockCache | None, uid: int) -> bytes:
        """:meth:`_block` (``need`` bytes of it), through ``cache`` when there is one."""
        if cache is None:
            return self._block(b)
        data = cache.get((uid, b), need)
        if data is None:
            data = self._block(b)
            cache.put((uid, b), data)
        return data

    def _block_of(self, i: int) -> int:
        return int(np.searchsorted(self.first_doc, i, side="right")) - 1

    def __getitem__(self, i: int) -> bytes:
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        b = self._block_of(i)
        data = self._block(b)
        base = int(self.offsets[int(self.first_doc[b])])
        return data[int(self.offsets[i]) - base:int(self.offsets[i + 1]) - base]

    def take(self, docs: list[int], cache: BlockCache | None = None, uid: int = 0
             ) -> list[bytes]:
        """The sources of ``docs`` (any order), decompressing each block they touch once —
        or not at all when ``cache`` (a shard's, ``source_cache.py``; ``uid`` names this
        segment in it) holds it. O(len(docs) log len(docs)) plus the blocks' decompression."""
        if not docs:
            return []
        idx = np.asarray(docs, dtype=np.int64)
        # in first_doc's own dtype: a mixed one would convert the whole column per call
        blocks = np.searchsorted(self.first_doc, idx.astype(self.first_doc.dtype),
                                 side="right").astype(np.int64) - 1
        order = np.argsort(blocks, kind="stable")
        by_block, want = blocks[order], idx[order]
        lo = np.flatnonzero(np.concatenate(([True], by_block[1:] != by_block[:-1])))
        off = self.offsets
        base = off[self.first_doc[by_block]].astype(np.int64)
        starts = (off[want].astype(np.int64) - base).tolist()
        ends = (off[want + 1].astype(np.int64) - base).tolist()
        upto = np.maximum.reduceat(want, lo) + 1
        need = (off[upto].astype(np.int64) - base[lo]).tolist()
        rows = order.tolist()
        bounds = lo.tolist() + [len(rows)]
        out: list[bytes] = [b""] * len(docs)
        for g, b in enumerate(by_block[lo].tolist()):
            data = self._cached_block(b, need[g], cache, uid)
            for k in range(bounds[g], bounds[g + 1]):
                out[rows[k]] = data[starts[k]:ends[k]]
        return out

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __iter__(self) -> Iterator[bytes]:
        for b in range(len(self.first_doc) - 1):
            lo, hi = int(self.first_doc[b]), int(self.first_doc[b + 1])
            data = self._block(b)
            base = int(self.offsets[lo])
            for i in range(lo, hi):
                yield data[int(self.offsets[i]) - base:int(self.offsets[i + 1]) - base]


def _zstd() -> Any:
    """The ``zstandard`` module (imported where sources are stored or read, not at import:
    the front end and the coordinator import this module too)."""
    import zstandard
    return zstandard


_local = threading.local()
_DECOMPRESSORS = 4     # per thread: the segments read last (a page touches few)


def _decompressor(zdict: Any) -> Any:
    """A zstd decompressor for ``zdict`` (None: none), reused by this thread: a fresh one
    per block costs ~10 µs of its ~15 µs read (contexts are not thread-safe, hence one set
    per thread). Bounded: the last ``_DECOMPRESSORS`` dictionaries read."""
    cache = getattr(_local, "decompressors", None)
    if cache is None:
        cache = _local.decompressors = {}
    key = id(zdict)
    hit = cache.pop(key, None)
    if hit is None or hit[0] is not zdict:
        hit = (zdict, _zstd().ZstdDecompressor(dict_data=zdict))
    cache[key] = hit                       # most recent last
    if len(cache) > _DECOMPRESSORS:
        del cache[next(iter(cache))]
    return hit[1]


def _train_dictionary(sources: list[bytes], total: int) -> Any:
    """A zstd dictionary trained on about 1 MiB of ``sources`` (every k-th document), or None
    when they are too few bytes for one to pay or too few documents to train on."""
    if total < SOURCE_DICT_MIN:
        return None
    sample = sources[::max(1, total >> 20)]
    try:   # fixed k and d: no parameter search (~0.02 s instead of ~0.1 s), same ratio
        return _zstd().train_dictionary(SOURCE_DICT, sample, k=256, d=8,
                                           level=SOURCE_DICT_LEVEL)
    except _zstd().ZstdError:
        return None


class NoRouting:
    """The routing column of a segment written without custom routing: None for every doc."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __getitem__(self, i: int) -> None:
        return None

    def __len__(self) -> int:
        return self.n


def load_build_modules() -> None:
    """Import the refresh's own modules (``column_tokens.py``, ``term_ids.py``) and zstd's
    (``SourceStore``). Only processes that build segments need them: the front end and the
    coordinator import this module too. A shard calls this while its write
    buffer is empty, so the modules' objects do not land among buffered documents and pin
    their pages after the refresh frees them (imported at the first refresh instead, zstd's
    module kept ~5 more of Python's 1 MiB arenas alive per copy of half of GCIDE)."""
    importlib.import_module(".column_tokens", __package__)
    _zstd()


def int32_if_fits(values: np.ndarray) -> np.ndarray:
    """An int64 column as int32 when every value fits with room (``seq`` and ``version``:
    8 bytes per document saved where values stay below 2^30; readers take ``int(...)``,
    ``tolist()`` or cast to int64, so neither width changes an answer)."""
    if len(values) and (int(values.min()) < -(1 << 30) or int(values.max()) >= 1 << 30):
        return values
    return values.astype(np.int32, copy=False)


class Segment:
    """One immutable segment. Build it with :meth:`build`; only ``deleted_gen`` ever changes."""

    def __init__(self, uid: int, ids: list[str], seq: np.ndarray, version: np.ndarray,
                 created_gen: np.ndarray, deleted_gen: np.ndarray, sources: SourceStore,
                 routing: list[str | None] | NoRouting, fields: dict[str, FieldData],
                 nested: dict[str, NestedDocs] | None = None) -> None:
        self.uid = uid
        self.n = len(ids)
        self.ids = IdColumn(ids)       # ``_id`` of each row (``id_column.py``)
        self.seq = int32_if_fits(seq)
        self.version = int32_if_fits(version)
        self.created_gen = created_gen
        self.deleted_gen = deleted_gen
        self.sources = sources
        self.routing = routing
        self.fields = fields
        self.nested = nested or {}     # nested path -> its children (``nested.py``)
        for block in self.nested.values():
            block.segment = self

    @classmethod
    def build(cls, docs: list[BufferedDoc], field_types: dict[str, FieldType],
              generation: int) -> Segment:
        """Columnar segment of ``docs`` made visible at ``generation``.

        Cost: O(tokens) Python work to assign term ids, O(U log U) to sort each field's U
        distinct terms, O(P log P) NumPy sorting, and zstd over the sources.
        """
        with gc_paused():
            return cls._build(docs, field_types, generation)

    @classmethod
    def _build(cls, docs: list[BufferedDoc], field_types: dict[str, FieldType],
               generation: int) -> Segment:
        n = len(docs)
        for ft in field_types.values():
            ft.kind  # noqa: B018 - cached now, before the heap fills (``Flushing.compact_built``)
        ids, seqs, versions, routing = map(list, zip(*map(BufferedDoc.columns, docs))) \
            if docs else ([], [], [], [])
        seq = np.array(seqs, dtype=np.int64)
        version = np.array(versions, dtype=np.int64)
        del seqs, versions
        created = np.full(n, generation, dtype=np.int32)
        deleted = np.full(n, NEVER, dtype=np.int32)
        per_doc: list[dict[str, list[Any]]] = []
        by_field = entries_of_chunks(_unpickled(docs, per_doc))
        fields = build_fields(per_doc, n, field_types, by_field)
        nested = build_blocks(per_doc, lambda rows, m: build_fields(rows, m, field_types)) \
            if NESTED_KEY in by_field else None
        if all(r is None for r in routing):
            routing = NoRouting(n)
        return cls(next(_uid_counter), ids, seq, version, created, deleted,
                   SourceStore([d.source for d in docs]), routing, fields, nested)

    def visible(self, gen: int) -> np.ndarray:
        """bool[n]: the versions visible at refresh generation ``gen``. O(n), cached."""
        return _visible(self, gen)

    def __hash__(self) -> int:
        return self.uid

    def __eq__(self, other: object) -> bool:
        return self is other


def _unpickled(docs: list[BufferedDoc], into: list[dict[str, list[Any]]]
               ) -> Iterator[list[dict[str, list[Any]]]]:
    """The fields of ``docs``, ``GATHER_DOCS`` documents at a time, each chunk also appended
    to ``into``: the chunk is gathered while its new objects are still in the CPU's cache."""
    for at in range(0, len(docs), GATHER_DOCS):
        chunk = [d.fields for d in docs[at:at + GATHER_DOCS]]
        into += chunk
        yield chunk


def build_fields(per_doc: list[dict[str, list[Any]]], n: int,
                 field_types: dict[str, FieldType],
                 by_field: dict[str, FieldEntries] | None = None) -> dict[str, FieldData]:
    """The columns of ``n`` parsed documents (a segment's, or a nested block's);
    ``by_field``: their :func:`entries_by_field` when known."""
    fields: dict[str, FieldData] = {}
    for fname, entries in (entries_by_field(per_doc) if by_field is None else by_field).items():
        ft = field_types.get(fname) or (IGNORED_FIELD if fname == "_ignored" else None)
        kind = ft.kind if ft is not None else None
        if ft is None or not ft.index and not ft.doc_values and kind not in ("geo", "binary"):
            continue
        if kind == "geo":      # latitudes in the field's column, longitudes beside (geo.py)
            fields[fname] = _build_numeric(FieldEntries(
                entries.docs, entries.counts, [p[0] for p in entries.flat]), n, ft)
            fields[fname + LON_SUFFIX] = _build_numeric(FieldEntries(
                entries.docs, entries.counts, [p[1] for p in entries.flat]), n, ft)
        elif kind == "text":
            fields[fname] = _build_text(entries, n, ft)
        elif kind == "keyword" or kind == "binary":
            fields[fname] = _build_keyword(entries, n)
        elif kind in ("numeric", "date", "boolean", "range"):
            fields[fname] = _build_numeric(entries, n, ft)
    return fields


@lru_cache(maxsize=256)
def _visible(seg: Segment, gen: int) -> np.ndarray:
    out = (seg.created_gen <= gen) & (seg.deleted_gen > gen)
    out.setflags(write=False)
    return out


def _build_text(entries: FieldEntries, n: int, ft: FieldType) -> TextField:
    """Postings with positions, lengths and norms of a text field.

    Python touches no value; analysis and term ids are column passes (``column_tokens.py``,
    ``term_ids.py``: NumPy for ``standard``), docs and positions are computed with NumPy:
    value ``k`` of a document starts at position ``tokens before it + k * gap``.
    """
    per_entry = entries.counts
    values: list[str] = entries.flat
    present = np.zeros(n, dtype=bool)
    present[entries.docs] = True
    from .column_tokens import text_term_ids   # only where segments are built
    terms, tids, cnt = text_term_ids(values, ft.analyzer)   # cnt: tokens of each value
    del values
    vdoc = np.repeat(entries.docs, per_entry)
    # index of each value within its document
    vk = np.arange(len(vdoc), dtype=np.int64) - np.repeat(np.cumsum(per_entry) - per_entry,
                                                         per_entry)
    lengths = np.bincount(vdoc, weights=cnt, minlength=n).astype(np.int32) if len(cnt) \
        else np.zeros(n, dtype=np.int32)
    vstart = np.cumsum(cnt) - cnt                      # flat index of each value's first token
    doc_start = np.maximum.accumulate(np.where(vk == 0, vstart, 0)) if len(vk) else vstart
    base = np.repeat(doc_start - vk * POSITION_INCREMENT_GAP, cnt)
    poss = np.arange(len(tids), dtype=np.int64) - base
    docs = np.repeat(vdoc, cnt)
    postings = build_postings(terms, tids, docs, poss, n)
    return TextField(postings, narrow(lengths), encode_norms(lengths), present)


def _build_keyword(entries: FieldEntries, n: int) -> KeywordField:
    """Postings and ordinals (min/max per document) of a keyword field.

    Python touches no value; term ids are the ranks of the distinct values (sorted once,
    O(U log U)), so they are the ordinals too.
    """
    all_vals: list[str] = entries.flat
    ed, ec = entries.docs, entries.counts
    present = np.zeros(n, dtype=bool)
    counts = np.zeros(n, dtype=np.int64)
    if len(ed):
        present[ed] = ec > 0
        counts[ed] = ec
    terms, tids = sorted_ids(all_vals)
    docs = np.repeat(ed, ec)
    postings = build_postings(terms, tids, docs, None, n)
    min_ord = np.full(n, -1, dtype=np.int32)
    max_ord = min_ord
    if len(tids):
        d = docs.astype(np.int32)
        big = np.iinfo(np.int32).max
        mins = np.full(n, big, dtype=np.int32)
        np.minimum.at(mins, d, tids)
        min_ord = np.where(mins == big, -1, mins).astype(np.int32)
        max_ord = min_ord
        if counts.max() > 1:
            max_ord = np.full(n, -1, dtype=np.int32)
            np.maximum.at(max_ord, d, tids)
    return KeywordField(postings, min_ord, max_ord, present, narrow(counts))


def _build_numeric(entries: FieldEntries, n: int, ft: FieldType) -> NumericField:
    is_int = ft.is_integer or ft.kind == "boolean"
    # unsigned_long: 0..2^64-1 exactly, in its own unsigned column (NumPy compares it with
    # Python ints exactly; order and equality need no offset trick)
    dtype = np.uint64 if ft.type == "unsigned_long" else np.int64 if is_int else np.float64
    flat = entries.flat
    values = np.asarray(list(map(int, flat)) if is_int else flat, dtype=dtype)
    value_docs = np.repeat(entries.docs.astype(np.int32), entries.counts)
    if len(values) == n and np.array_equal(value_docs, np.arange(n)):
        # one value per document, in document order: the values are the doc values
        return NumericField(values, value_docs, values, values, np.ones(n, dtype=bool))
    present = np.zeros(n, dtype=bool)
    present[value_docs] = True
    if is_int:
        mn = np.full(n, np.iinfo(dtype).max, dtype=dtype)
        mx = np.full(n, np.iinfo(dtype).min, dtype=dtype)
    else:
        mn = np.full(n, np.inf)
        mx = np.full(n, -np.inf)
    if len(values):
        np.minimum.at(mn, value_docs, values)
        np.maximum.at(mx, value_docs, values)
    mn[~present] = 0
    mx[~present] = 0
    return NumericField(values, value_docs, mn, mx, present)
