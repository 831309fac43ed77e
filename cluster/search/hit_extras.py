"""What a hit shows besides its document: rescored scores, ``matched_queries``, highlights and
the collapse key — and the query-phase window that rescoring needs.

The shards computed the named and rescore queries' scores of their top rows in the query
phase (``engine/row_scores.py``); here they become the page's hits.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..engine.shard_messages import ShardHits
from ..engine.sorting import SortField
from .collapse import key_fields
from .highlight import highlight_hit
from .reduce import ReducedQuery, merge
from .request import SearchRequest
from .rescore import rescore_window


def shard_k(req: SearchRequest) -> int:
    """Candidates each shard sends: ``from + size`` (``size`` after a cursor), and at least
    every rescorer's window."""
    k = req.from_ + req.size if req.search_after is None else req.size
    for r in req.rescore:
        k = max(k, r.window_size)
    return k


def rescored_merge(req: SearchRequest, results: list[ShardHits],
                   sort: tuple[SortField, ...], from_: int) -> ReducedQuery:
    """Merge the shards' windows, rescore the global window(s), cut the page."""
    whole = merge(results, sort, 0, shard_k(req))
    entries = whole.page
    scores = [float(results[e.shard_pos].scores[e.row]) for e in entries]
    extra = []
    for j in range(len(req.rescore)):
        col = []
        for e in entries:
            r = results[e.shard_pos].rescore
            v = float(r[j][e.row]) if r is not None else math.nan
            col.append(None if math.isnan(v) else v)
        extra.append(col)
    positions, new_scores = rescore_window(req.rescore, scores, extra)
    ordered = [entries[p] for p in positions]
    page = ordered[from_:from_ + req.size]
    rescored = dict(zip(ordered, new_scores))
    max_score = max(new_scores) if new_scores else whole.max_score
    return replace(whole, page=page, rescored={e: rescored[e] for e in page},
                   max_score=max_score)


def decorate_hits(req: SearchRequest, reduced: ReducedQuery, page: list[Any],
                  entries: list[tuple[ShardHits, int]], docs: list[Any],
                  hits: list[dict[str, Any]], metas: list[Any]) -> None:
    """Add what ``req`` asks each hit of the page to show (in place)."""
    metas_by_name = {m.name: m for m in metas}
    for i, ((h, row), hit) in enumerate(zip(entries, hits)):
        if reduced.rescored is not None and page[i] in reduced.rescored:
            hit["_score"] = reduced.rescored[page[i]]
        if h.named is not None:
            _matched_queries(hit, h.named[row], req.include_named_queries_score)
        if req.highlight is not None:
            found = highlight_hit(req.highlight, req.query, docs[i].source,
                                  metas_by_name[h.index].mapping)
            if found:
                hit["highlight"] = found
        if req.collapse is not None and h.groups is not None:
            key_fields(hit, req.collapse.field, h.groups[row])


def _matched_queries(hit: dict[str, Any], named: dict[str, float], with_scores: bool) -> None:
    """``matched_queries``: the names (sorted), or name -> score with
    ``include_named_queries_score``; absent when none matched, as in Elasticsearch."""
    if not named:
        return
    names = sorted(named)
    hit["matched_queries"] = {n: named[n] for n in names} if with_scores else names
