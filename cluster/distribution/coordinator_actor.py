"""The coordinator's actor: a Ray async actor around the :class:`~cluster.coordinator.Coordinator`.

Many searches are in flight at once on its one event loop. Callers name a verb of the
coordinator's remote interface (``Coordinator.VERBS``, the one table of them); the actor also
serves the same calls on its fast lane (``lanes.py``) for callers on its node. The coordinator
object itself is built by the function it is given (``coordinator.build_coordinator``), so this
layer never imports the coordinator.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..errors import IllegalArgument
from .lazy_addons import install_lazy_addons

# in the actor's worker this module is imported before Ray makes its serialization context
install_lazy_addons()

COORDINATOR_NAME = "coordinator"
NAMESPACE = "shardsearch"
# verbs that only read: a caller that leaves may stop them (``cancel_calls.py``); every other
# verb (writes, index admin) runs to its end once sent, as Elasticsearch's bulk does
CANCELLABLE_VERBS = frozenset({"search", "count", "scroll"})


class CoordinatorService:
    """The coordinator's remote interface: an awaited forwarder of its verbs."""

    def __init__(self, build: Callable[[str | None], Any], data_dir: str | None = None) -> None:
        self.core = build(data_dir)
        self._lane: Any = None

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if self.core.durable is not None:
            await self.core.durable.ready()
        return await call_verb(self.core, method, *args, **kwargs)

    async def lane(self) -> tuple[str, str]:
        """``(node id, socket path)`` of this actor's fast lane (``lanes.py``), started
        on first use: callers on the same node send their calls there instead of through Ray."""
        import ray

        from .lanes import LaneServer
        if self._lane is None:
            self._lane = LaneServer(self.call, CANCELLABLE_VERBS.__contains__)
        return ray.get_runtime_context().get_node_id(), await self._lane.start()

    async def ping(self) -> str:
        if self.core.durable is not None:
            await self.core.durable.ready()
        return "pong"


async def call_verb(core: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """Run one verb of ``core``'s remote interface (``core.VERBS``), awaited if it is async."""
    if method not in core.VERBS:
        raise IllegalArgument(f"[{method}] is not a coordinator call")
    result = getattr(core, method)(*args, **kwargs)
    if asyncio.iscoroutine(result):
        result = await result
    return result


def coordinator_actor_class():
    """The Ray actor class of the coordinator (lazy: importing this module needs no Ray)."""
    import ray

    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1000)(CoordinatorService)
