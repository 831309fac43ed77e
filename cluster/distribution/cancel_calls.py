"""A caller that gives up stops the call it made, in the process that runs it.

A call leaves its caller in one of two ways, and each has its way to be stopped:

* **a Ray actor call** — when the asyncio task awaiting its ``ObjectRef`` is cancelled,
  :func:`awaited` calls ``ray.cancel(ref)``. Measured with Ray 2.60: on a synchronous actor
  this sets a flag the running task reads with ``ray.get_runtime_context().is_canceled()``
  (a call still queued never starts) and the caller gets ``TaskCancelledError``; on an async
  actor (the coordinator) it cancels the call's asyncio task. Cancelling only the awaiting
  task, without ``ray.cancel``, leaves the actor computing for nobody.
* **a lane call** (``lanes.py``) — the client sends a cancel frame and the lane sets the
  call's :class:`threading.Event`.

On the receiving side :func:`cancelled_predicate` is the engine's "was this call cancelled?"
for the call the current thread runs (``engine/cancellation.py`` checks it in the loops).
"""
from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_local = threading.local()


async def awaited(ref: Any) -> Any:
    """The value of a Ray ``ObjectRef``; if the awaiting task is cancelled, the actor task
    is cancelled too (``ray.cancel``) before the cancellation goes on."""
    try:
        return await ref
    except asyncio.CancelledError:
        import ray
        with contextlib.suppress(Exception):   # already finished, or its actor is gone
            ray.cancel(ref)
        raise


@contextlib.contextmanager
def lane_call(flag: threading.Event) -> Iterator[None]:
    """Mark the current thread as running a lane call that ``flag`` cancels."""
    _local.flag = flag
    try:
        yield
    finally:
        _local.flag = None


def cancelled_predicate() -> Callable[[], bool] | None:
    """"Was the call this thread runs cancelled?": the lane call's flag, else Ray's flag of
    the current actor task; None where neither exists (in-process shards, a driver)."""
    flag = getattr(_local, "flag", None)
    if flag is not None:
        return flag.is_set
    ray = sys.modules.get("ray")      # never import Ray just to ask (in-process shards)
    if ray is None or not ray.is_initialized():
        return None
    ctx = ray.get_runtime_context()
    try:
        ctx.is_canceled()
    except RuntimeError:              # a driver, or an async actor (cancelled by asyncio)
        return None
    return ctx.is_canceled
