"""How long a shard group waits for its copies' answers to one command.

Most commands answer within a minute (``COPY_CALL_TIMEOUT``). A refresh builds a segment of
the whole write buffer: a bulk load of a million documents with refresh off takes ~20 CPU s per
copy, minutes on a loaded machine, and Ray reports a dead process as an error at once, so such a
command may take far longer before a silent copy reads as lost. But the group holds its lock
while it waits: once one copy has answered, the others get twice its time (at least a minute)
more, so one hung copy cannot hold every write to its shard for the whole long bound.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

COPY_CALL_TIMEOUT = 60.0                   # one copy's answer to a command
SEGMENT_BUILD_TIMEOUT = 10 * COPY_CALL_TIMEOUT


def command_timeout(method: str, args: tuple) -> float:
    """How long a copy may take to run a command: a refresh, or writes that ask for one
    (``refresh=true``), builds a segment; anything else answers within a minute."""
    builds = method == "refresh" or (method == "apply" and len(args) > 2 and bool(args[2]))
    return SEGMENT_BUILD_TIMEOUT if builds else COPY_CALL_TIMEOUT


async def gather_answers(calls: list[Awaitable[Any]], timeout: float,
                         min_grace: float = COPY_CALL_TIMEOUT) -> list[Any]:
    """Each call's answer or exception, in order (``asyncio.TimeoutError`` for a call that did
    not answer): at most ``timeout`` in all, and at most twice the first answer's time (at
    least ``min_grace``) once one has come."""
    tasks = [asyncio.ensure_future(c) for c in calls]
    t0 = time.monotonic()
    done, pending = await asyncio.wait(tasks, timeout=timeout,
                                       return_when=asyncio.FIRST_COMPLETED)
    if pending and done:
        first = time.monotonic() - t0
        grace = min(max(min_grace, 2 * first), timeout - first)
        await asyncio.wait(pending, timeout=max(0.0, grace))
    out: list[Any] = []
    for t in tasks:
        if not t.done():
            t.cancel()
            out.append(asyncio.TimeoutError())
        elif t.cancelled():
            out.append(asyncio.CancelledError())
        else:
            out.append(t.exception() or t.result())
    return out
