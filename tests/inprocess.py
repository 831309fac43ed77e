"""An in-process cluster for pure-logic tests: the real coordinator and shard code, no Ray.

``LocalCluster`` wraps :class:`~shardsearch.cluster.coordinator.Coordinator` over a
:class:`~shardsearch.cluster.distribution.local_backend.LocalBackend` and gives synchronous helpers that answer
with the same JSON the HTTP API would send (``_source`` bytes decoded).
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
from shardsearch.api.json import dumps
from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.search.request import parse_search


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


class LocalCluster:
    """Indices in this process; every call runs the coordinator's real code path."""

    def __init__(self) -> None:
        self.coord = Coordinator(LocalBackend())

    def create(self, name: str, shards: int = 1, mappings: dict[str, Any] | None = None,
               **settings: Any) -> LocalCluster:
        body: dict[str, Any] = {"settings": {"number_of_shards": shards, **settings}}
        if mappings is not None:
            body["mappings"] = mappings
        self.coord.create_index(name, body)
        return self

    def index(self, name: str, docs: Any, refresh: bool = True) -> dict[str, Any]:
        """Index ``docs`` (``{id: source}`` or a list of sources, ids "0", "1", ...)."""
        items = docs.items() if isinstance(docs, dict) else enumerate(docs)
        ops = [{"action": "index", "index": name, "id": str(i), "source": src}
               for i, src in items]
        return self.bulk(ops, refresh=refresh)

    def bulk(self, ops: list[dict[str, Any]], refresh: bool = True) -> dict[str, Any]:
        return orjson.loads(dumps(_run(self.coord.bulk(ops, refresh=refresh))))

    def search(self, index: str = "_all", body: dict[str, Any] | None = None,
               **params: Any) -> dict[str, Any]:
        """``GET /{index}/_search`` with ``body`` and URL ``params`` (all as strings)."""
        indices = tuple(p for p in index.split(",") if p)
        req = parse_search(indices, {k: str(v) for k, v in params.items()}, body)
        resp = _run(self.coord.search(req))
        resp.pop("_snapshot", None)
        return orjson.loads(dumps(resp))

    def ids(self, index: str = "_all", body: dict[str, Any] | None = None,
            **params: Any) -> list[str]:
        """The ``_id`` of each hit, in order."""
        return [h["_id"] for h in self.search(index, body, **params)["hits"]["hits"]]

    def mapping(self, index: str) -> dict[str, Any]:
        return self.coord.get_mapping(index)[index]["mappings"]
