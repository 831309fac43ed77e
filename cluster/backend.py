"""How the coordinator reaches shards: through Ray actors, or in-process for unit tests.

The coordinator's logic only sees this small protocol, so it is tested without Ray while the
service (and the integration tests) use real actors.
"""
from __future__ import annotations

import asyncio
from typing import Any, Protocol

from .mapping import Mapping
from .shard import ShardService


class ShardBackend(Protocol):
    def create(self, index: str, shard: int, mapping: Mapping) -> Any: ...
    async def call(self, ref: Any, method: str, *args: Any) -> Any: ...
    def destroy(self, ref: Any) -> None: ...


class LocalBackend:
    """Shards as plain objects in this process (unit tests, single-process experiments)."""

    def create(self, index: str, shard: int, mapping: Mapping) -> ShardService:
        return ShardService(index, shard, mapping)

    async def call(self, ref: ShardService, method: str, *args: Any) -> Any:
        await asyncio.sleep(0)
        return getattr(ref, method)(*args)

    def destroy(self, ref: Any) -> None:
        return None


class RayBackend:
    """Shards as Ray actors; a call is one actor hop, awaited without blocking the event loop."""

    def __init__(self, namespace_prefix: str = "shardsearch") -> None:
        import ray  # noqa: F401 - fail early if Ray is missing

        from .shard import shard_actor_class
        self._cls = shard_actor_class()
        self._prefix = namespace_prefix

    def create(self, index: str, shard: int, mapping: Mapping) -> Any:
        import uuid
        name = f"{self._prefix}:{index}:{shard}:{uuid.uuid4().hex[:8]}"
        return self._cls.options(name=name, lifetime=None).remote(index, shard, mapping)

    async def call(self, ref: Any, method: str, *args: Any) -> Any:
        return await getattr(ref, method).remote(*args)

    def destroy(self, ref: Any) -> None:
        import ray
        try:
            ray.kill(ref, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
