"""Where aggregations meet the coordinator's search: the shards' plan and the response.

Two hooks keep the coordinator's edits small: :func:`plan_shard_queries` before the query
round (aggregations ride on it, so a search with aggregations is still one round trip per
shard) and :func:`response_aggregations` after it.
"""
from __future__ import annotations

from typing import Any

from ...errors import IllegalArgument
from ...engine.query.nodes import Bool
from .render import DEFAULT_MAX_BUCKETS, aggregations_response


def plan_shard_queries(queries: list[Any], req: Any) -> None:
    """Ask every shard for partials; with a ``post_filter`` the hits match ``query AND
    post_filter`` while the aggregations match ``query`` alone."""
    for q in queries:
        if req.post_filter is not None:
            q.agg_query = q.query if req.aggs is not None else None
            q.query = Bool(must=(q.query,), filter=(req.post_filter,))
        q.aggs = req.aggs


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


def check_max_buckets(value: Any) -> int:
    try:
        n = int(str(value))
    except ValueError:
        raise IllegalArgument(f"Failed to parse value [{value}] for setting "
                              "[search.max_buckets]") from None
    if n < 1:
        raise IllegalArgument(f"Failed to parse value [{value}] for setting "
                              "[search.max_buckets] must be >= 1")
    return n
