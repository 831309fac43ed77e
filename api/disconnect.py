"""A search whose client went away stops: the coordinator call is cancelled, and with it the
shards' work (``cluster/distribution/cancel_calls.py``).

Elasticsearch cancels a search's task when its HTTP channel closes. uvicorn tells an
application that its client left by answering ``receive()`` with ``http.disconnect`` once the
body has been read, so a route races its coordinator call against that message.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from fastapi import Request

from ..cluster.errors import TaskCancelled

T = TypeVar("T")


async def unless_disconnected(request: Request, call: Awaitable[T]) -> T:
    """``call``'s answer; if the client disconnects first, ``call`` is cancelled and
    :class:`TaskCancelled` raised (the answer would reach nobody)."""
    work = asyncio.ensure_future(call)
    watch = asyncio.ensure_future(_disconnect(request))
    try:
        await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        watch.cancel()
        raise
    if work.done():
        watch.cancel()
        return work.result()
    work.cancel()
    with contextlib.suppress(BaseException):
        await work
    raise TaskCancelled("the client closed its connection: the search was cancelled")


async def _disconnect(request: Request) -> None:
    """Returns when the client has disconnected (the body was read before: what else
    ``receive()`` says is ignored)."""
    while True:
        message: dict[str, Any] = await request.receive()
        if message["type"] == "http.disconnect":
            return
