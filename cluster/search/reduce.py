"""Merge the shards' ordered candidate lists into one order and cut the page.

Pagination invariant: every shard sends its top ``from + size`` (or, after a cursor, its top
``size``) in the global order; the page ``[from, from + size)`` of the global order is contained
in their union, so ordering the union and slicing once is exact. The merge never re-decides a
shard's order: the global order is a strict total order (the tie-break is unique per document
version), so ordering the concatenation gives the same result as a k-way merge. Cost:
O(C log C) in NumPy for C candidates in total.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.collapse import first_per_key
from ..engine.shard_messages import ShardHits
from ..engine.sorting import SortField, ascending_keys, order

TRACK_TOTAL_HITS_DEFAULT = 10_000


@dataclass(frozen=True)
class PageEntry:
    """One hit of the page before its document is fetched (a *partial hit*)."""

    shard_pos: int       # position of the shard in the list that was merged
    row: int             # row in that shard's candidate arrays


@dataclass(frozen=True)
class ReducedQuery:
    """The merged query phase."""

    total: int                 # exact number of matching documents across shards
    max_score: float | None    # best score across shards (None when scores are not tracked)
    page: list[PageEntry]      # the page, in order
    candidates: int            # how many candidates the shards sent in all
    rescored: dict[PageEntry, float] | None = None   # rescore: the page's new scores


def merge(results: list[ShardHits], sort: tuple[SortField, ...], from_: int,
          size: int) -> ReducedQuery:
    """Order the union of the shards' candidates and cut ``[from_, from_ + size)``."""
    total = sum(r.total for r in results)
    scores = [r.max_score for r in results if r.max_score is not None]
    max_score = max(scores) if scores else None
    nonempty = [(i, r) for i, r in enumerate(results) if len(r)]
    cand = sum(len(r) for _, r in nonempty)
    if not nonempty or size <= 0:
        return ReducedQuery(total, max_score, [], cand)
    pos, rows, sel = _ordered(nonempty, sort)
    if nonempty[0][1].groups is not None:   # collapse: the first of each group key
        group_keys = [g for _, r in nonempty for g in r.groups or ()]
        sel = sel[first_per_key([group_keys[i] for i in sel.tolist()])]
    sel = sel[from_:from_ + size]
    page = [PageEntry(int(pos[i]), int(rows[i])) for i in sel]
    return ReducedQuery(total, max_score, page, cand)


def global_order(results: list[ShardHits], sort: tuple[SortField, ...]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate in the global order, as (shard position, row) columns."""
    nonempty = [(i, r) for i, r in enumerate(results) if len(r)]
    if not nonempty:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    pos, rows, sel = _ordered(nonempty, sort)
    return pos[sel], rows[sel]


def _ordered(nonempty: list[tuple[int, ShardHits]], sort: tuple[SortField, ...]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates' shard positions and rows, concatenated, and their global order."""
    pos = np.concatenate([np.full(len(r), i, dtype=np.int32) for i, r in nonempty])
    rows = np.concatenate([np.arange(len(r), dtype=np.int64) for _, r in nonempty])
    if len(nonempty) == 1:
        sel = np.arange(len(rows))
    else:
        nkeys = len(sort)
        columns = [np.concatenate([r.columns[j] for _, r in nonempty]) for j in range(nkeys)]
        missing = []
        for j in range(nkeys):
            parts = [r.missing[j] for _, r in nonempty]
            if all(p is None for p in parts):
                missing.append(None)
            else:
                missing.append(np.concatenate([p if p is not None else
                                               np.zeros(len(r), dtype=bool)
                                               for p, (_, r) in zip(parts, nonempty)]))
        ties = np.concatenate([r.ties for _, r in nonempty])
        kinds = nonempty[0][1].kinds
        keys = ascending_keys(sort, kinds, columns, missing, ties)
        sel = order(keys)
    return pos, rows, sel


def total_hits(total: int, track: bool | int) -> dict[str, object] | None:
    """``hits.total`` for a ``track_total_hits`` setting (True, False or a threshold)."""
    if track is False:
        return None
    if track is True:
        return {"value": total, "relation": "eq"}
    limit = int(track)
    if total > limit:
        return {"value": limit, "relation": "gte"}
    return {"value": total, "relation": "eq"}
