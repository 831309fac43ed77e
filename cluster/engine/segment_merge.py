"""Merging segments: N immutable segments in, one out (pure NumPy over their columns).

A merged segment answers every query, sort and aggregation exactly as its sources did at every
generation a reader can still ask for, because nothing that decides an answer changes: each
document version keeps its ``seq``, ``version``, ``created_gen`` and ``deleted_gen`` (so its
visibility at every generation), its postings, frequencies, positions, norms and doc values.
Only the rows' places change (sources concatenated in order), and no order depends on a place:
ties break on index, then ``seq``.

Versions no reader can see any more are dropped: deleted at or before the current generation
(``deleted_gen <= generation``) and invisible at every pinned generation. That is what
Lucene's merge does with deleted documents, and what frees the memory of updates and deletes.

Cost: O(rows + postings + positions) NumPy work, plus O(U log U) to sort the U distinct terms
of each field (Python strings), plus re-compressing the kept ``_source`` blocks.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from .nested import merge_blocks
from .postings import Postings, build_postings, narrow, sorted_ids
from .scoring import encode_norms
from .segment import (FieldData, KeywordField, NoRouting, NumericField, Segment, SourceStore,
                      TextField, _uid_counter)


def droppable(seg: Segment, generation: int, pinned: Iterable[int]) -> np.ndarray:
    """bool[n]: the versions no reader can see again — gone at ``generation`` (and so at every
    later one) and invisible at every pinned generation."""
    gone = seg.deleted_gen <= generation
    for g in set(pinned):
        if g < generation:
            gone &= ~seg.visible(g)
    return gone


def kept_rows(sources: list[Segment], generation: int, pinned: Iterable[int] = ()
              ) -> list[np.ndarray]:
    """Per source, the rows a merge at ``generation`` keeps (ascending).

    Safe while writes go on: a write only turns a live version's ``deleted_gen`` from
    ``NEVER`` into a generation after ``generation``, which changes no row's fate here."""
    pinned = list(pinned)
    return [np.flatnonzero(~droppable(s, generation, pinned)) for s in sources]


def merge_rows(sources: list[Segment], rows: list[np.ndarray]) -> Segment | None:
    """One segment of the ``rows`` of each source, in order (None: no row at all). Its
    ``deleted_gen`` is read as it is now; a merge that ran beside writes copies it again when
    it is swapped in (``merging.py``)."""
    n = int(sum(len(r) for r in rows))
    if n == 0:
        return None
    # new row of each kept old row, per source (-1: dropped)
    remaps, base = [], 0
    for s, r in zip(sources, rows):
        m = np.full(s.n, -1, dtype=np.int64)
        m[r] = np.arange(base, base + len(r))
        remaps.append(m)
        base += len(r)
    ids = list(itertools.chain.from_iterable(s.ids[r].tolist() for s, r in zip(sources, rows)))
    cat = lambda col: np.concatenate([getattr(s, col)[r] for s, r in zip(sources, rows)])  # noqa: E731
    sources_out = SourceStore(list(itertools.chain.from_iterable(
        s.sources.take(r.tolist()) for s, r in zip(sources, rows))))
    routing_all = [[s.routing[i] for i in r.tolist()] for s, r in zip(sources, rows)]
    routing: list[str | None] | NoRouting = list(itertools.chain.from_iterable(routing_all))
    if all(isinstance(s.routing, NoRouting) for s in sources):
        routing = NoRouting(n)
    fields = merge_fields([(s.fields, r, m) for s, r, m in zip(sources, rows, remaps)], n)
    nested = merge_blocks(sources, remaps, merge_fields)
    return Segment(next(_uid_counter), ids, cat("seq"), cat("version"), cat("created_gen"),
                   cat("deleted_gen").copy(), sources_out, routing, fields, nested)


def merge_fields(parts: list[tuple[dict[str, FieldData], np.ndarray, np.ndarray]], n: int
                 ) -> dict[str, FieldData]:
    """The columns of ``n`` merged rows from each source's ``(fields, kept rows, remap)``."""
    fields: dict[str, FieldData] = {}
    for name in dict.fromkeys(itertools.chain.from_iterable(f for f, _, _ in parts)):
        cols = [(f.get(name), r, m) for f, r, m in parts]
        kinds = {type(fd) for fd, _, _ in cols if fd is not None}
        if len(kinds) != 1:   # a field's type never changes; refuse to guess if it did
            raise ValueError(f"field [{name}] has different kinds across segments: {kinds}")
        kind = kinds.pop()
        if kind is NumericField:
            fields[name] = _merge_numeric(cols, n)
        elif kind is KeywordField:
            fields[name] = _merge_keyword(cols, n)
        else:
            fields[name] = _merge_text(cols, n)
    return fields


def _merge_postings(parts: list[tuple[Postings | None, np.ndarray]], n: int,
                    positions: bool) -> tuple[Postings, list[np.ndarray]]:
    """The union of the parts' postings over their kept rows (``remap``: old row -> new row,
    -1 dropped), and for each part the new id of each of its old term ids.

    Every occurrence is re-emitted (term, new doc, position) in the order ``build_postings``
    needs — within a term, documents ascending then positions — which the parts already are,
    one after the other (new rows grow with the part)."""
    term_lists = [p.term_list if p is not None else [] for p, _ in parts]
    terms, tids = sorted_ids(list(itertools.chain.from_iterable(term_lists)))
    maps, at = [], 0
    for tl in term_lists:
        maps.append(tids[at:at + len(tl)].astype(np.int64))
        at += len(tl)
    all_t, all_d, all_p = [], [], []
    for (p, remap), tmap in zip(parts, maps):
        if p is None or len(p.docs) == 0:
            continue
        counts = np.diff(p.offsets.astype(np.int64))
        term_of = np.repeat(np.arange(len(counts)), counts)          # per posting
        freqs = p._freqs(0, len(p.docs)).astype(np.int64)
        docs_new = remap[p.docs.astype(np.int64)]
        keep = docs_new >= 0
        occ_keep = np.repeat(keep, freqs)                              # per occurrence
        all_t.append(np.repeat(tmap[term_of], freqs)[occ_keep])
        all_d.append(np.repeat(docs_new, freqs)[occ_keep])
        if positions:
            absolute = p.all_positions()
            assert absolute is not None
            all_p.append(absolute.astype(np.int64)[occ_keep])
    empty = np.zeros(0, dtype=np.int64)
    t = np.concatenate(all_t) if all_t else empty
    d = np.concatenate(all_d) if all_d else empty
    poss = (np.concatenate(all_p) if all_p else empty) if positions else None
    return build_postings(terms, t, d, poss, n), maps


def _merge_text(parts: list[tuple[FieldData | None, np.ndarray, np.ndarray]], n: int
                ) -> TextField:
    lengths = np.concatenate([fd.lengths[r] if fd is not None else np.zeros(len(r), np.int32)
                              for fd, r, _ in parts]).astype(np.int32)      # type: ignore[union-attr]
    present = np.concatenate([fd.present[r] if fd is not None else np.zeros(len(r), bool)
                              for fd, r, _ in parts])
    postings, _ = _merge_postings([(fd.postings if fd is not None else None, m)  # type: ignore[union-attr]
                                   for fd, _, m in parts], n, positions=True)
    return TextField(postings, narrow(lengths), encode_norms(lengths), present)


def _merge_keyword(parts: list[tuple[FieldData | None, np.ndarray, np.ndarray]], n: int
                   ) -> KeywordField:
    postings, maps = _merge_postings([(fd.postings if fd is not None else None, m)  # type: ignore[union-attr]
                                      for fd, _, m in parts], n, positions=False)

    def ords(col: str) -> np.ndarray:
        out = []
        for (fd, r, _), tmap in zip(parts, maps):
            if fd is None:
                out.append(np.full(len(r), -1, dtype=np.int32))
                continue
            o = getattr(fd, col)[r].astype(np.int64)
            out.append(np.where(o >= 0, tmap[np.maximum(o, 0)] if len(tmap) else -1, -1)
                       .astype(np.int32))
        return np.concatenate(out)

    min_ord = ords("min_ord")
    same = all(fd is None or fd.max_ord is fd.min_ord for fd, _, _ in parts)  # type: ignore[union-attr]
    max_ord = min_ord if same else ords("max_ord")
    present = np.concatenate([fd.present[r] if fd is not None else np.zeros(len(r), bool)
                              for fd, r, _ in parts])
    counts = np.concatenate([fd.value_count[r].astype(np.int64)   # type: ignore[union-attr]
                             if fd is not None else np.zeros(len(r), np.int64)
                             for fd, r, _ in parts])
    return KeywordField(postings, min_ord, max_ord, present, narrow(counts))


def _merge_numeric(parts: list[tuple[FieldData | None, np.ndarray, np.ndarray]], n: int
                   ) -> NumericField:
    typed = [fd for fd, _, _ in parts if fd is not None]
    dtype = typed[0].values.dtype                                    # type: ignore[union-attr]
    vals, vdocs, mins, maxs, pres = [], [], [], [], []
    for fd, r, remap in parts:
        if fd is None:
            mins.append(np.zeros(len(r), dtype))
            maxs.append(np.zeros(len(r), dtype))
            pres.append(np.zeros(len(r), bool))
            continue
        new_docs = remap[fd.value_docs.astype(np.int64)]             # type: ignore[union-attr]
        keep = new_docs >= 0
        vals.append(fd.values[keep].astype(dtype))                   # type: ignore[union-attr]
        vdocs.append(new_docs[keep])
        mins.append(fd.min[r].astype(dtype))                         # type: ignore[union-attr]
        maxs.append(fd.max[r].astype(dtype))                         # type: ignore[union-attr]
        pres.append(fd.present[r])                                   # type: ignore[union-attr]
    values = np.concatenate(vals) if vals else np.zeros(0, dtype)
    value_docs = np.concatenate(vdocs).astype(np.int32) if vdocs else np.zeros(0, np.int32)
    if len(values) == n and np.array_equal(value_docs, np.arange(n)):
        # one value per document, in order: the values are the doc values (as ``build`` does)
        return NumericField(values, value_docs, values, values, np.ones(n, dtype=bool))
    return NumericField(values, value_docs, np.concatenate(mins), np.concatenate(maxs),
                        np.concatenate(pres))
