"""``search_after`` pages read from a query's cached order instead of matching it again.

A client paging with ``search_after`` (or a scroll, whose batches are ``search_after`` pages)
sends the same query, sort and snapshot again and again with a new ``after``. Matching and
scoring every document each time, then filtering by ``after``, costs a full page 1 plus a mask
over every match. From the second ``search_after`` of a query on one snapshot, the shard keeps
its matches in their full order (the deep-page cache, ``candidates.sorted_candidates``), and
each later page is a bisection of that order for ``after`` plus the next ``k`` rows: no
matching, no scoring, O(log m + k). The answer is the same rows in the same order: the cached
order is the search's strict total order (sort keys, then the unique tie-break), and the rows
after ``after`` on the sort keys are a suffix of it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .cancellation import Cancellation
from .candidates import Candidates, cached_sorted, collect, sorted_key, store_sorted
from .shard_messages import ShardQuery
from .sorting import (check_sortable, coerce_after, column_kind, compare_rows,
                      field_type_for_sort)

PROBES = 64        # rows compared per bisection step (one vectorised compare_rows each)
SEEN_MAX = 64      # queries remembered as seen once (bounded)


def after_candidates(core: Any, q: ShardQuery, cancel: Cancellation
                     ) -> tuple[Candidates, np.ndarray] | None:
    """``(every match in order, rows of the top q.k after q.after)`` from the cached order, or
    None when the query must take the matching path (first sight, collapse, terminate_after,
    a timeout — the matching path keeps its partial answer and its checks —, or a NaN among
    the sort values: ``compare_rows`` never counts NaN as after, so those rows are no suffix)."""
    if (q.after is None or q.collapse is not None or q.terminate_after is not None
            or q.deadline is not None):
        return None
    fts = [field_type_for_sort(sf, core.mapping) for sf in q.sort]
    for sf, ft in zip(q.sort, fts):   # the matching path's checks and errors, in its order
        check_sortable(sf, ft, core.index)
    key = coerce_after(q.sort, [column_kind(sf, ft) for sf, ft in zip(q.sort, fts)], fts,
                       q.after)
    base = replace(q, after=None)
    c = cached_sorted(core, base)
    if c is None:
        if not _seen_before(core, base):
            return None
        c = collect(core, base, cancel)
        if _has_nan(c):
            return None
        c = store_sorted(core, base, c)
    elif _has_nan(c):       # stored by a deep ``from`` page
        return None
    assert c.order is not None
    start = first_after(c, key)
    return c, c.order[start:start + max(q.k, 0)]


def _has_nan(c: Candidates) -> bool:
    return any(isinstance(col, np.ndarray) and col.dtype.kind == "f"
               and bool(np.isnan(col).any()) for col in c.columns)


def first_after(c: Candidates, key: list[Any]) -> int:
    """Position in ``c.order`` of the first row sorting after ``key`` on the sort keys.

    The rows after a key form a suffix of the order, so a bisection finds its start: each step
    compares ``PROBES`` evenly spaced rows of the remaining range (one vectorised call) and
    keeps the gap where the answer changes from "not after" to "after". O(log m) rows compared.
    """
    assert c.order is not None
    rank_key = c.in_rank_space(key)
    lo, hi = 0, len(c.order)      # before lo: not after; from hi on: after
    while lo < hi:
        if hi - lo <= PROBES:
            pos = np.arange(lo, hi)
        else:
            pos = np.unique(np.linspace(lo, hi - 1, PROBES).astype(np.int64))
        gt = _after(c, c.order[pos], rank_key)
        i = int(np.argmax(gt)) if gt.any() else len(pos)
        if hi - lo <= PROBES:
            return lo + i
        new_hi = int(pos[i]) if i < len(pos) else hi
        lo, hi = (int(pos[i - 1]) + 1 if i > 0 else lo), new_hi
    return lo


def _after(c: Candidates, rows: np.ndarray, key: list[Any]) -> np.ndarray:
    """Whether each of ``rows`` sorts after ``key`` (in rank space) on the sort keys."""
    ranks = None
    if c.ranks and any(r is not None for r in c.ranks):
        ranks = [2 * r[rows] if r is not None else None for r in c.ranks]
    return compare_rows(c.sort, c.kinds, [col[rows] for col in c.columns],
                        [m[rows] if m is not None else None for m in c.missing], key, ranks)[0]


def _seen_before(core: Any, base: ShardQuery) -> bool:
    """Whether this query and snapshot asked for a ``search_after`` page before (then the
    order is worth building: the client is paging); remembers it otherwise."""
    key = sorted_key(core, base)
    seen: dict[Any, None] = core.__dict__.setdefault("_after_seen", {})
    if key in seen:
        return True
    if len(seen) >= SEEN_MAX:
        seen.pop(next(iter(seen)), None)
    seen[key] = None
    return False
