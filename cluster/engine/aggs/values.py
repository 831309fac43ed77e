"""Doc values for aggregations: every value of a field for a set of rows, as NumPy arrays.

Rows are ``docs`` of one segment (a document may appear in several rows: one per bucket that
holds it). :func:`row_values` answers ``(row, value)`` pairs — one per value of each row's
document — so multi-valued fields need no per-document Python. Keyword values come back as
shard-wide ranks into :func:`dictionary`'s sorted distinct values (comparable across
segments); numbers and dates as int64 / float64.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..segment import KeywordField, NumericField, Segment

_DOC_CSR: weakref.WeakKeyDictionary[Segment, dict[str, tuple[np.ndarray, np.ndarray]]] = \
    weakref.WeakKeyDictionary()
_DICTS: dict[tuple[str, tuple[int, ...]], tuple[list[Segment], np.ndarray,
                                                 list[np.ndarray]]] = {}


def _ragged(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(row of each item, index of each item)`` for runs ``starts[i] .. + counts[i]``."""
    total = int(counts.sum())
    rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    if total == 0:
        return rows, np.zeros(0, dtype=np.int64)
    run_start = np.cumsum(counts) - counts
    idx = np.arange(total, dtype=np.int64) - np.repeat(run_start - starts, counts)
    return rows, idx


def _keyword_by_doc(seg: Segment, field: str, fd: KeywordField
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets[n + 1], term ids)``: the postings turned document-major (cached)."""
    per = _DOC_CSR.setdefault(seg, {})
    got = per.get(field)
    if got is None:
        post = fd.postings
        counts = np.diff(post.offsets.astype(np.int64))
        tids = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        docs = post.docs.astype(np.int64)
        order = np.argsort(docs, kind="stable")
        offsets = np.zeros(seg.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(docs, minlength=seg.n), out=offsets[1:])
        got = per[field] = (offsets, tids[order])
    return got


def dictionary(segments: list[Segment], field: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """``(sorted distinct values, per segment: shard-wide rank of each of its term ids)``.

    One O(U log U) sort of the distinct values, cached while the segment list is the same.
    """
    key = (field, tuple(id(s) for s in segments))
    got = _DICTS.get(key)
    if got is not None and all(a is b for a, b in zip(got[0], segments)):
        return got[1], got[2]
    parts = []
    for seg in segments:
        fd = seg.fields.get(field)
        parts.append(fd.sorted_values if isinstance(fd, KeywordField)
                     else np.zeros(0, dtype=object))
    if parts and any(len(p) for p in parts):
        distinct, inv = np.unique(np.concatenate(parts), return_inverse=True)
        inv = inv.astype(np.int64).reshape(-1)
    else:
        distinct, inv = np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
    maps, start = [], 0
    for p in parts:
        maps.append(inv[start:start + len(p)])
        start += len(p)
    if len(_DICTS) >= 32:
        _DICTS.pop(next(iter(_DICTS)))
    _DICTS[key] = (list(segments), distinct, maps)
    return distinct, maps


def row_values(seg: Segment, field: str, docs: np.ndarray, rank_map: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(row, value)`` for every value of each row's document (rows without one: none).

    Keyword values are ranks through ``rank_map`` (see :func:`dictionary`). O(values).
    """
    fd = seg.fields.get(field)
    if isinstance(fd, KeywordField):
        if len(docs) and int(fd.value_count.max(initial=0)) <= 1:
            ords = fd.min_ord[docs].astype(np.int64)
            rows = np.flatnonzero(ords >= 0)
            vals = ords[rows]
        else:
            offsets, tids = _keyword_by_doc(seg, field, fd)
            rows, idx = _ragged(offsets[docs], offsets[docs + 1] - offsets[docs])
            vals = tids[idx]
        return rows, (rank_map[vals] if rank_map is not None else vals)
    if isinstance(fd, NumericField):
        if len(fd.values) == seg.n and fd.present.all() and fd.values is fd.min:
            return np.arange(len(docs), dtype=np.int64), fd.values[docs]
        starts = np.searchsorted(fd.value_docs, docs, side="left")
        ends = np.searchsorted(fd.value_docs, docs, side="right")
        rows, idx = _ragged(starts.astype(np.int64), (ends - starts).astype(np.int64))
        return rows, fd.values[idx]
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)


def has_value(seg: Segment, field: str, docs: np.ndarray) -> np.ndarray:
    """bool per row: whether its document has any value of ``field`` (text fields count)."""
    fd = seg.fields.get(field)
    if fd is None:
        return np.zeros(len(docs), dtype=bool)
    return np.asarray(fd.present)[docs]


def stored_kind(ft: Any) -> str:
    """How a mapped field's values read: ``keyword``, ``long``, ``double``, ``date``,
    ``boolean``, ``text`` (no doc values) or ``unmapped``."""
    if ft is None:
        return "unmapped"
    kind = ft.kind
    if kind in ("keyword", "text", "date", "boolean"):
        return kind
    if kind == "numeric":
        return "long" if ft.is_integer else "double"
    return "range" if kind == "range" else "other"
