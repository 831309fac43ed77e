"""The ``search.*`` cluster settings (``PUT /_cluster/settings``): the only ones we keep.

Cursors obey ``search.max_keep_alive`` / ``search.default_keep_alive``; the query checks obey
``search.allow_expensive_queries``; aggregations ``search.max_buckets`` and
``search.aggs.max_shard_terms``. Settings we do not know
are refused, as Elasticsearch refuses them.
"""
from __future__ import annotations

from typing import Any

from ..errors import IllegalArgument
from ..values import flatten, nest, parse_bool
from ..engine.aggs.tput import DEFAULT_MAX_SHARD_TERMS
from ..engine.limits import default_max_shards_per_node
from .aggs.phase import check_max_buckets, check_max_shard_terms
from .aggs.render import DEFAULT_MAX_BUCKETS
from .cursors import MAX_KEEP_ALIVE_MS, parse_keep_alive

SEARCH_SETTINGS = {"search.max_keep_alive", "search.default_keep_alive",
                   "search.allow_expensive_queries", "search.max_buckets",
                   "search.aggs.max_shard_terms"}


class SearchSettings:
    """The persistent and transient ``search.*`` settings, as flat strings."""

    def __init__(self) -> None:
        self.store: dict[str, dict[str, str]] = {"persistent": {}, "transient": {}}

    def max_keep_alive(self) -> int:
        st = self.store
        raw = st["transient"].get("search.max_keep_alive",
                                  st["persistent"].get("search.max_keep_alive"))
        return MAX_KEEP_ALIVE_MS if raw is None else parse_keep_alive(raw, "search.max_keep_alive")

    def put(self, body: dict[str, Any]) -> dict[str, Any]:
        """``PUT /_cluster/settings`` for the settings cursors obey (``search.max_keep_alive``,
        ``search.default_keep_alive``); ``null`` resets one. Others are refused, as Elasticsearch
        refuses settings it does not know."""
        st = self.store
        staged = {scope: dict(st[scope]) for scope in st}
        for scope in ("persistent", "transient"):
            section = body.get(scope) or {}
            if not isinstance(section, dict):
                raise IllegalArgument(f"[{scope}] must be an object")
            for key, value in flatten(section).items():
                if key not in SEARCH_SETTINGS:
                    raise IllegalArgument(f"{scope} setting [{key}], not recognized")
                if value is None:
                    staged[scope].pop(key, None)
                elif key == "search.allow_expensive_queries":
                    staged[scope][key] = str(parse_bool(value, key)).lower()
                elif key == "search.max_buckets":
                    staged[scope][key] = str(check_max_buckets(value))
                elif key == "search.aggs.max_shard_terms":
                    staged[scope][key] = str(check_max_shard_terms(value))
                else:
                    parse_keep_alive(value, key)
                    staged[scope][key] = str(value)
        st.update(staged)
        return {"acknowledged": True, **self.get()}

    def get(self, include_defaults: bool = False) -> dict[str, Any]:
        """``persistent`` and ``transient``; ``include_defaults``: and ``defaults``, the
        values the server uses for the cluster settings it reads that neither sets."""
        st = self.store
        out = {scope: nest(st[scope]) for scope in ("persistent", "transient")}
        if include_defaults:
            out["defaults"] = nest({k: v for k, v in cluster_defaults().items()
                                    if k not in st["persistent"] and k not in st["transient"]})
        return out


def cluster_defaults() -> dict[str, str]:
    """The cluster settings the server reads, with the value each falls back to (its
    ``cluster.max_shards_per_node`` comes from this machine's memory: ``engine/limits.py``)."""
    return {"search.max_keep_alive": f"{MAX_KEEP_ALIVE_MS // 3_600_000}h",
            "search.allow_expensive_queries": "true",
            "search.max_buckets": str(DEFAULT_MAX_BUCKETS),
            "search.aggs.max_shard_terms": str(DEFAULT_MAX_SHARD_TERMS),
            "cluster.max_shards_per_node": str(default_max_shards_per_node())}
