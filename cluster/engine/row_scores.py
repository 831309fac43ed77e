"""Scores of extra queries for the rows a shard returns: named queries and rescore queries.

Both concern only the top rows of the query phase (Elasticsearch reports ``matched_queries``
for the hits of the page and rescores the top ``window_size``), so the shard evaluates each
such query on the segments of those rows, with the search's global statistics, and ships one
score per row: the coordinator needs no extra round trip.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .query.context import Context
from .query.matching import evaluate
from .query.rewrite import expand
from .query.validation import validate
from .shard_messages import ShardHits, ShardQuery


def score_rows(core: Any, q: ShardQuery, hits: ShardHits) -> None:
    """Fill ``hits.named`` (name -> score of the named queries each row matches) and
    ``hits.rescore`` (per rescore query, each row's score; NaN where it does not match).
    O(n) vectorised work per query and segment holding a returned row."""
    ctx = Context(mapping=core.mapping, stats=q.stats, index_name=core.index)
    addr = hits.addr
    if q.named:
        hits.named = [{} for _ in range(len(addr))]
        for name, node in q.named:
            scores = _scores(core, node, addr, ctx)
            for i, s in enumerate(scores.tolist()):
                if s == s:   # not NaN: the row matches
                    hits.named[i][name] = s
    if q.rescore:
        hits.rescore = [_scores(core, node, addr, ctx) for node in q.rescore]


def _scores(core: Any, node: Any, addr: np.ndarray, ctx: Context) -> np.ndarray:
    """float64 score of ``node`` for each address, NaN where it does not match."""
    out = np.full(len(addr), np.nan)
    if not len(addr):
        return out
    expanded = expand(node, core.mapping)
    validate(expanded, core.mapping)
    uids = addr >> np.int64(32)
    rows = addr & np.int64(0xFFFFFFFF)
    for uid in np.unique(uids):
        where = np.flatnonzero(uids == uid)
        mask, scores = evaluate(expanded, core.by_uid[int(uid)], ctx)
        r = rows[where]
        hit = mask[r]
        out[where[hit]] = scores[r[hit]]
    return out
