"""Sort columns of a shard's matches: the value of each sort key for every match.

Numeric and date keys read the segments' value columns (``min``/``max``/``avg``...); keyword
keys become shard-wide ordinals (:func:`keyword_ranks`) so that ordering never compares
strings per query, and strings are gathered only for the rows that leave the shard
(:class:`RankedStrings`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .segment import KeywordField, NumericField, Segment
from .sorting import SortField, missing_substitute, scale_date


def keyword_ranks(segments: list[Segment], cache: dict[str, Any], sf: SortField,
                  ft: Any, kind: str, parts: list[tuple[Segment, np.ndarray, np.ndarray]]
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(ranks, values)``: shard-wide ordinals of a keyword sort column (same order as its
    strings) and the shard's distinct values they index, so that ordering never sorts
    strings per query: O(m) lookups. None when the column is not a keyword or a
    ``missing`` substitute string takes part in the order."""
    if kind != "keyword" or sf.script is not None \
            or missing_substitute(sf, kind, ft) is not None:
        return None
    use_max = sf.mode == "max" or (sf.mode is None and sf.desc)
    glob, distinct = global_ords(segments, cache, sf.field)
    out = []
    for seg, docs, _ in parts:
        fd = seg.fields.get(sf.field)
        if not isinstance(fd, KeywordField) or seg.uid not in glob:
            out.append(np.full(len(docs), -1, dtype=np.int64))
            continue
        ords = (fd.max_ord if use_max else fd.min_ord)[docs]
        out.append(np.where(ords < 0, -1, glob[seg.uid][np.maximum(ords, 0)]))
    return (np.concatenate(out) if out else np.zeros(0, dtype=np.int64)), distinct


def global_ords(segments: list[Segment], cache: dict[str, Any], field: str
                ) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """``(segment uid -> shard-wide rank of each of its ordinals, distinct values)`` for
    ``field``; rebuilt (one O(U log U) sort of the distinct values) only when the segment
    list changed."""
    segs = [s for s in segments if isinstance(s.fields.get(field), KeywordField)
            and len(s.fields[field].postings.terms)]  # type: ignore[union-attr]
    key = tuple(s.uid for s in segs)
    got = cache.get(field)
    if got is not None and got[0] == key:
        return got[1], got[2]
    values = [s.fields[field].sorted_values for s in segs]  # type: ignore[union-attr]
    out: dict[int, np.ndarray] = {}
    distinct = np.zeros(0, dtype=object)
    if len(segs) == 1:
        out[segs[0].uid] = np.arange(len(values[0]), dtype=np.int64)
        distinct = values[0]
    elif segs:
        distinct, inv = np.unique(np.concatenate(values), return_inverse=True)
        inv = inv.astype(np.int64).reshape(-1)
        start = 0
        for seg, v in zip(segs, values):
            out[seg.uid] = inv[start:start + len(v)]
            start += len(v)
    cache[field] = (key, out, distinct)
    return out, distinct


def sort_column(sf: SortField, ft: Any, kind: str, parts: list[Any], scores: np.ndarray,
                ties: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``(values, missing)`` of one sort key for the matches ``parts`` (scores and
    tie-breaks are columns already; keywords here are strings, see :func:`keyword_ranks`)."""
    if kind == "score":
        return scores.astype(np.float32), None
    if kind == "tiebreak":
        return ties, None
    subst = missing_substitute(sf, kind, ft)
    if kind == "keyword":
        vals_l, miss_l = [], []
        for seg, docs, _ in parts:
            fd = seg.fields.get(sf.field)
            if not isinstance(fd, KeywordField):
                vals_l.append(np.full(len(docs), "", dtype=object))
                miss_l.append(np.ones(len(docs), dtype=bool))
                continue
            use_max = sf.mode == "max" or (sf.mode is None and sf.desc)
            ords = (fd.max_ord if use_max else fd.min_ord)[docs]
            miss = ords < 0
            vals = fd.sorted_values[np.where(miss, 0, ords)] if len(fd.postings.terms) \
                else np.full(len(docs), "", dtype=object)
            vals_l.append(vals)
            miss_l.append(miss)
        vals = np.concatenate(vals_l) if vals_l else np.zeros(0, dtype=object)
        miss = np.concatenate(miss_l) if miss_l else np.zeros(0, dtype=bool)
        if subst is not None:
            vals = np.where(miss, subst, vals).astype(object)
            miss = np.zeros(len(vals), dtype=bool)
        return vals.astype(object), miss
    dtype = np.int64 if kind == "int" else np.float64
    out_l = []
    for seg, docs, _ in parts:
        fd = seg.fields.get(sf.field)
        if not isinstance(fd, NumericField):
            out_l.append(np.full(len(docs), subst, dtype=dtype))
            continue
        mode = sf.mode or ("max" if sf.desc else "min")
        if mode == "max":
            vals = fd.max[docs]
        elif mode in ("avg", "sum", "median"):
            vals = _reduce_values(fd, docs, mode)
        else:
            vals = fd.min[docs]
        if vals.dtype == np.uint64:
            vals = unsigned_sort_key(vals)
        vals = np.where(fd.present[docs], scale_date(vals, sf, ft), subst).astype(dtype)
        out_l.append(vals)
    col = np.concatenate(out_l) if out_l else np.zeros(0, dtype=dtype)
    return col, None


class RankedStrings:
    """A keyword sort column held as shard-wide ranks into the shard's distinct values.

    Ordering only needs the ranks; strings are gathered for the rows asked for (the page, the
    samples), not for all m matches (an object gather of 56k strings cost ~0.5 ms a query).
    Indexing gives what the eager column gave: an object array (or one string); a missing
    value reads as "" (its ``missing`` flag is what counts).
    """

    __slots__ = ("ranks", "values")

    def __init__(self, ranks: np.ndarray, values: np.ndarray) -> None:
        self.ranks = ranks
        self.values = values

    def __len__(self) -> int:
        return len(self.ranks)

    def __getitem__(self, rows: Any) -> Any:
        r = self.ranks[rows]
        if np.ndim(r) == 0:
            return self.values[r] if r >= 0 else ""
        out = np.full(len(r), "", dtype=object)
        present = r >= 0
        out[present] = self.values[r[present]]
        return out


def _reduce_values(fd: NumericField, docs: np.ndarray, mode: str) -> np.ndarray:
    n = len(fd.present)
    sums = np.zeros(n, dtype=np.float64)
    counts = np.zeros(n, dtype=np.int64)
    np.add.at(sums, fd.value_docs, fd.values.astype(np.float64))
    np.add.at(counts, fd.value_docs, 1)
    if mode == "sum":
        out = sums
    else:
        out = np.divide(sums, np.maximum(counts, 1))
    vals = out[docs]
    if fd.values.dtype == np.int64:
        return np.round(vals).astype(np.int64)
    return vals


UNSIGNED_SHIFT = 1 << 63


def unsigned_sort_key(values: np.ndarray) -> np.ndarray:
    """unsigned_long values (uint64) as int64 sort keys in the same order: ``v - 2^63``
    (the sign bit flipped). ``sort_value_out`` adds ``2^63`` back."""
    return (values ^ np.uint64(UNSIGNED_SHIFT)).view(np.int64)
