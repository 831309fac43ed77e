"""Aggregations on one shard: the request tree (``parse``) and its partials (``collect``).

A shard computes a *partial* per aggregation over its matching documents from columnar doc
values; the coordinator reduces the partials exactly (``cluster/search/aggs``).
"""
from __future__ import annotations

from . import bucket, composite, geo, ip_range, metric, nested  # noqa: F401 - each registers its collectors
from .collect import ShardView, collect
from .parse import AggNode, AggRequest, parse_aggs

__all__ = ["AggNode", "AggRequest", "ShardView", "collect", "parse_aggs"]
