"""How routes reach the coordinator: one awaitable ``call(method, *args)``.

In the service it is the Ray coordinator actor (one hop); a domain error raised there comes back
as the same ``SearchError`` here.
"""
from __future__ import annotations

from typing import Annotated, Any, Protocol

from fastapi import Depends, Request

from ..cluster.errors import SearchError


class CoordinatorClient(Protocol):
    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any: ...


class RayCoordinator:
    """Calls the coordinator actor and unwraps domain errors from Ray's task errors."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        import ray
        try:
            return await self.handle.call.remote(method, *args, **kwargs)
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, SearchError):
                raise cause from None
            raise
        except ray.exceptions.RayActorError as e:
            # the coordinator's process died: it restarts (with a data dir) and reopens the
            # indices; until then the cluster has no master, as Elasticsearch would say
            raise SearchError(f"the coordinator is unavailable ({type(e).__name__}); retry "
                              "shortly", es_type="master_not_discovered_exception",
                              status=503) from None


class LocalCoordinator:
    """An in-process coordinator (for unit tests of the HTTP layer without Ray)."""

    def __init__(self, core: Any) -> None:
        self.core = core

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        import asyncio
        result = getattr(self.core, method)(*args, **kwargs)
        if asyncio.iscoroutine(result):
            result = await result
        return result


def get_coordinator(request: Request) -> CoordinatorClient:
    return request.app.state.coordinator


Coord = Annotated[CoordinatorClient, Depends(get_coordinator)]
