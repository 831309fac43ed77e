"""How the coordinator reaches shards: the protocol, and its in-process implementation.

The coordinator's logic only sees this small protocol, so it is tested without Ray while the
service (and the integration tests) use real actors.
"""
from __future__ import annotations

import asyncio
from typing import Any, Protocol

from ..engine.mapping import Mapping
from ..errors import IllegalArgument
from .lanes import serialized
from .shard_service import ShardService


class ShardBackend(Protocol):
    def create(self, index: str, shard: int, mapping: Mapping, **options: Any) -> Any: ...
    async def call(self, ref: Any, method: str, *args: Any) -> Any: ...
    def destroy(self, ref: Any) -> None: ...
    # one search's view of the shards (the replicated backend: the same copy for every phase)
    def session(self, refs: list[Any], preference: str | None = None) -> list[Any]: ...
    # a copy's actor handle and node, for readers that call it directly (client/data.py)
    def read_target(self, ref: Any) -> tuple[Any, str | None]: ...
    # one row per shard copy: prirep, state, node_id, docs...
    async def describe(self, ref: Any) -> list[dict[str, Any]]: ...
    def reconfigure(self, refs: list[Any], settings: dict[str, Any], replicas: int) -> None: ...
    def nodes(self) -> list[dict[str, Any]]: ...


class _OneCopy:
    """Defaults for backends whose shards have a single copy (no replicas)."""

    def session(self, refs: list[Any], preference: str | None = None) -> list[Any]:
        return refs   # one copy: nothing for a preference to choose

    def read_target(self, ref: Any) -> tuple[Any, str | None]:
        raise IllegalArgument("reading shards directly (Ray Data) needs shards that are Ray "
                              "actors; this coordinator holds them in process")

    async def describe(self, ref: Any) -> list[dict[str, Any]]:
        try:
            info = await self.call(ref, "info")  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a dead shard is a row, not an error
            return [{"prirep": "p", "state": "UNASSIGNED", "docs": None, "node_id": None}]
        return [{**info, "prirep": "p", "state": "STARTED"}]

    def reconfigure(self, refs: list[Any], settings: dict[str, Any], replicas: int) -> None:
        return None

    def nodes(self) -> list[dict[str, Any]]:
        return []


class BackgroundMergeShard(ShardService):
    """A shard whose merges run on its background thread, as a shard copy's do."""

    background_merges = True


class LocalBackend(_OneCopy):
    """Shards as plain objects in this process (unit tests, single-process experiments).

    With ``background_merges`` each shard merges on its own thread and every call holds the
    shard's lock, as in a shard actor; otherwise merges run inline, in the refresh's call."""

    def __init__(self, background_merges: bool = False) -> None:
        self.background_merges = background_merges

    def create(self, index: str, shard: int, mapping: Mapping, **options: Any) -> ShardService:
        if self.background_merges:
            return serialized(BackgroundMergeShard)(index, shard, mapping)
        return ShardService(index, shard, mapping)

    async def call(self, ref: ShardService, method: str, *args: Any) -> Any:
        await asyncio.sleep(0)
        return getattr(ref, method)(*args)

    def destroy(self, ref: Any) -> None:
        return None

