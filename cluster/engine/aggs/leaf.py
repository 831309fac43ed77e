"""The shard's side of aggregations in one call: which documents, which snapshot, collect.

The shard's query phase calls :func:`leaf_aggregate` with the matches it already found (per
segment, at the search's snapshot), so hits and aggregations read the same generation — a
point in time, a scroll or a page token included. With a ``post_filter`` the hits' matches
are narrower than the aggregations'; the aggregation query is then matched here on its own.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..cancellation import NO_LIMIT, Cancellation
from ..query.context import Context
from ..query.matching import evaluate
from ..query.rewrite import expand
from ..query.validation import validate
from ..query.nodes import Query
from ..segment import Segment
from .collect import ShardView, collect
from .tput import apply_cut, check_shipped


def leaf_aggregate(core: Any, q: Any, parts: list[tuple[Segment, np.ndarray, Any]],
                   cancel: Cancellation = NO_LIMIT) -> dict[str, Any]:
    """Partials of ``q.aggs`` on ``core`` (a ``ShardCore``) over the matched ``parts``
    (``(segment, docs, scores)`` as the query phase builds them). ``cancel`` is checked
    before collecting and per segment of every query it matches (filters, post_filter)."""
    gen = core.generation if q.generation is None else q.generation
    ctx = Context(mapping=core.mapping, stats=q.stats, index_name=core.index, cancel=cancel)
    segments, visible = [], []
    for seg in core.segments:
        vis = seg.visible(gen)
        if vis.any():
            segments.append(seg)
            visible.append(vis)

    def match(query: Query, seg: Segment) -> np.ndarray:
        cancel.check()
        expanded = expand(query, core.mapping)
        validate(expanded, core.mapping)
        return evaluate(expanded, seg, ctx)[0]
    view = ShardView(core.index, core.mapping, segments, visible, match)
    if q.agg_query is not None:   # post_filter: aggregations see the query alone
        expanded = expand(q.agg_query, core.mapping)
        matched, scores = [], []
        for s, v in zip(segments, visible):
            cancel.check()
            mask, sc = evaluate(expanded, s, ctx)
            matched.append(np.flatnonzero(mask & v))
            scores.append(np.asarray(sc, dtype=np.float32)[matched[-1]])
    else:
        by_seg = {id(seg): (docs, sc) for seg, docs, sc in parts}
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        matched = [np.asarray(by_seg.get(id(s), empty)[0], dtype=np.int64) for s in segments]
        scores = [np.asarray(by_seg.get(id(s), empty)[1], dtype=np.float32) for s in segments]
    cancel.check()
    partials = collect(q.aggs, view, matched, scores)
    for name, cut in (q.agg_cuts or {}).items():   # bounded terms rounds (``tput.py``)
        partials[name] = apply_cut(partials[name], cut)
    if q.max_shard_terms is not None:
        check_shipped(partials, q.max_shard_terms)
    return partials
