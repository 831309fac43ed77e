"""Where aggregations meet the coordinator's search: the shards' plan and the response.

Three hooks keep the search path's edits small: :func:`plan_shard_queries` before the query
round (aggregations ride on it), :func:`aggregation_rounds` after it (only a cut top-level
``terms`` needs more: ``rounds.py``) and :func:`response_aggregations` at the end.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import dataclasses

from ...errors import IllegalArgument
from ...engine.aggs.parse import AggRequest
from ...engine.aggs.tput import DEFAULT_MAX_SHARD_TERMS
from ...engine.query.nodes import Bool
from ...engine.shard_calls import ShardCalls
from ..failures import all_failed
from ..profile import SearchProfile
from .render import DEFAULT_MAX_BUCKETS, aggregations_response
from .rounds import terms_rounds
from .tput import cut_for


def plan_shard_queries(queries: list[Any], req: Any,
                       settings: dict[str, dict[str, str]] | None = None) -> None:
    """Ask every shard for partials; with a ``post_filter`` the hits match ``query AND
    post_filter`` while the aggregations match ``query`` alone. A top-level ``terms`` that
    rounds make exact ships only its round-1 cut, without sub-aggregations (the last round
    brings those of the final keys); every other partial is whole, up to
    ``search.aggs.max_shard_terms`` keyed buckets per shard."""
    aggs, cuts = req.aggs, {}
    if aggs is not None:
        nodes = []
        for node in aggs.nodes:
            cut = cut_for(node)
            if cut is not None:
                cuts[node.name] = cut
                node = dataclasses.replace(node, subs=())
            nodes.append(node)
        aggs = AggRequest(tuple(nodes))
    limit = max_shard_terms(settings)
    for q in queries:
        if req.post_filter is not None:
            q.agg_query = q.query if req.aggs is not None else None
            q.query = Bool(must=(q.query,), filter=(req.post_filter,))
        q.aggs = aggs
        q.agg_cuts = cuts or None
        q.max_shard_terms = limit if aggs is not None else None


def has_rounds(req: Any) -> bool:
    """Whether the search's aggregations need rounds after the query round (a cut ``terms``)."""
    return req.aggs is not None and any(cut_for(n) is not None for n in req.aggs.nodes)


async def aggregation_rounds(calls: ShardCalls, req: Any, shard_list: list[Any],
                             queries: list[Any], hits_list: list[Any], deadline: float | None,
                             prof: SearchProfile | None,
                             hold: Callable[[], Awaitable[None]] | None = None
                             ) -> list[dict[str, Any]]:
    """The rounds after the query round (none without a cut ``terms``); returns their
    failures. A shard refusing for ``search.aggs.max_shard_terms`` fails the search (400).
    ``hold`` (awaited once, before a later round if there is one) pins round 1's snapshot."""
    if req.aggs is None:
        return []
    failures = await terms_rounds(calls, req, shard_list, queries, hits_list, deadline, prof,
                                  hold)
    refuse_too_many(failures)
    return failures


def refuse_too_many(failures: list[dict[str, Any]]) -> None:
    """Shards that would ship too many buckets: the request's fault, never a partial result."""
    over = [f for f in failures if f["reason"].get("type") == "too_many_buckets_exception"]
    if over:
        raise all_failed(over)


def response_aggregations(req: Any, hits_list: list[Any], metas: list[Any],
                          settings: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """The response's ``aggregations`` from the shards that answered."""
    partials = [h.aggs for _, h in hits_list if h.aggs is not None]
    return aggregations_response(req.aggs, partials, [m.mapping for m in metas],
                                 typed_keys=req.typed_keys, max_buckets=max_buckets(settings))


def max_buckets(settings: dict[str, dict[str, str]] | None) -> int:
    """``search.max_buckets`` (transient over persistent; default 65,536)."""
    st = settings or {}
    raw = st.get("transient", {}).get("search.max_buckets",
                                      st.get("persistent", {}).get("search.max_buckets"))
    return DEFAULT_MAX_BUCKETS if raw is None else check_max_buckets(raw)


def max_shard_terms(settings: dict[str, dict[str, str]] | None) -> int:
    """``search.aggs.max_shard_terms`` (transient over persistent; default 1,000,000)."""
    st = settings or {}
    raw = st.get("transient", {}).get("search.aggs.max_shard_terms",
                                      st.get("persistent", {}).get("search.aggs.max_shard_terms"))
    return DEFAULT_MAX_SHARD_TERMS if raw is None else check_max_shard_terms(raw)


def check_max_shard_terms(value: Any) -> int:
    return positive_setting("search.aggs.max_shard_terms", value)


def check_max_buckets(value: Any) -> int:
    return positive_setting("search.max_buckets", value)


def positive_setting(name: str, value: Any) -> int:
    """A cluster setting that must be a whole number of at least 1, in Elasticsearch's words."""
    try:
        n = int(str(value))
    except ValueError:
        raise IllegalArgument(f"Failed to parse value [{value}] for setting [{name}]") from None
    if n < 1:
        raise IllegalArgument(f"Failed to parse value [{value}] for setting [{name}] must be "
                              ">= 1")
    return n
