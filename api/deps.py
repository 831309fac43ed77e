"""How routes reach the coordinator: one awaitable ``call(method, *args)``.

In the service it is the Ray coordinator actor (one hop: over its fast lane on the same node,
else a Ray actor call); a domain error raised there comes back as the same ``SearchError`` here.
"""
from __future__ import annotations

from typing import Annotated, Any, Protocol

from fastapi import Depends, Request

from ..cluster.distribution.cancel_calls import awaited
from ..cluster.distribution.coordinator_actor import CANCELLABLE_VERBS, call_verb
from ..cluster.errors import SearchError, domain_error
from ..cluster.distribution.lanes import LaneClosed, LaneFinder


class CoordinatorClient(Protocol):
    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any: ...


class RayCoordinator:
    """Calls the coordinator actor and unwraps domain errors from Ray's task errors.

    On the coordinator's node the calls go over its fast lane (``cluster/lane.py``: a Unix
    socket, ~2 ms of CPU less per call than a Ray actor call); elsewhere, or while the lane
    cannot be reached, through Ray. ``lane=False`` always uses Ray. Either way a cancelled
    read (``CANCELLABLE_VERBS``) is cancelled in the coordinator too (a cancel frame, or
    ``ray.cancel``); writes run to their end.
    """

    def __init__(self, handle: Any, lane: bool = True) -> None:
        self.handle = handle
        self._lanes = LaneFinder() if lane else None

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        import ray
        lane = await self._lanes.get(self.handle) if self._lanes is not None else None
        if lane is not None:
            try:
                return await lane.call(method, *args, **kwargs)
            except LaneClosed as e:
                if e.sent:   # it may have run: report what a dead actor call reports
                    raise _unavailable("LaneClosed") from None
        try:
            ref = self.handle.call.remote(method, *args, **kwargs)
            return await (awaited(ref) if method in CANCELLABLE_VERBS else ref)
        except ray.exceptions.RayTaskError as e:
            cause = domain_error(e)
            if cause is not e:
                raise cause from None
            raise
        except ray.exceptions.RayActorError as e:
            raise _unavailable(type(e).__name__) from None


def _unavailable(why: str) -> SearchError:
    """The coordinator's process died: it restarts (with a data dir) and reopens the indices;
    until then the cluster has no master, as Elasticsearch would say."""
    return SearchError(f"the coordinator is unavailable ({why}); retry shortly",
                       es_type="master_not_discovered_exception", status=503)


class LocalCoordinator:
    """An in-process coordinator (for unit tests of the HTTP layer without Ray)."""

    def __init__(self, core: Any) -> None:
        self.core = core

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return await call_verb(self.core, method, *args, **kwargs)


def coordinator_of(request: Request) -> CoordinatorClient:
    """The app's coordinator client (for routes on the hot path, without ``Depends``)."""
    return request.app.state.coordinator  # type: ignore[no-any-return]


async def get_coordinator(request: Request) -> CoordinatorClient:
    """(async: FastAPI runs a plain function dependency in a thread pool, per request)"""
    return coordinator_of(request)


Coord = Annotated[CoordinatorClient, Depends(get_coordinator)]
