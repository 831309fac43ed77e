"""Concurrent calls to one actor ride in one actor call when the actor is busy.

An actor call costs about 1 ms of CPU on each side (serialisation, scheduling, the event loop)
whatever it carries, which on a 2-core machine is most of a small search. So while a caller
already has ``limit`` calls in flight to an actor, further calls wait in a queue, and the next
call sends the whole queue at once (``many``: a list of ``(method, args, kwargs)``, answered by
a list of ``(ok, value-or-exception)``). With one request at a time nothing waits and nothing
changes; under load the per-call cost is shared by the batch.

Calls keep their order (one FIFO queue per actor), and each call gets its own answer: a
failing call fails alone, a lost actor fails every call of the batch with Ray's error (which is
what each would have raised on its own).

A caller that gives up (its task is cancelled) leaves the queue; when every caller of an actor
call in flight gave up, that call is cancelled too (``send_one``/``send_many`` then see a
``CancelledError`` and can cancel the actor's task, see ``cancel_calls.awaited``).
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Call = tuple[str, tuple, dict]
SendOne = Callable[[str, tuple, dict], Awaitable[Any]]
SendMany = Callable[[list[Call]], Awaitable[list[tuple[bool, Any]]]]


class Coalescer:
    """A queue in front of one actor: at most ``limit`` actor calls in flight; what arrives
    meanwhile goes out together in the next one."""

    def __init__(self, send_one: SendOne, send_many: SendMany, limit: int = 1,
                 max_batch: int = 64) -> None:
        self._one = send_one
        self._many = send_many
        self.limit = limit
        self.max_batch = max_batch
        self._queue: list[tuple[Call, asyncio.Future]] = []
        self._inflight = 0
        self._sending: dict[asyncio.Future, tuple[asyncio.Task, list[asyncio.Future]]] = {}

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        fut = asyncio.get_running_loop().create_future()
        self._queue.append(((method, args, kwargs), fut))
        if self._inflight < self.limit:
            self._start()
        try:
            return await fut
        except asyncio.CancelledError:
            self._abandon(fut)
            raise

    def _abandon(self, fut: asyncio.Future) -> None:
        """``fut``'s caller gave up: cancel its actor call if nobody else waits for it."""
        got = self._sending.get(fut)
        if got is not None and all(f.done() for f in got[1]):
            got[0].cancel()

    def _start(self) -> None:
        batch, self._queue = self._queue[:self.max_batch], self._queue[self.max_batch:]
        batch = [(c, f) for c, f in batch if not f.done()]   # a caller gave up (timeout)
        if not batch:
            return
        self._inflight += 1
        task = asyncio.get_running_loop().create_task(self._send(batch))
        futs = [f for _, f in batch]
        for f in futs:
            self._sending[f] = (task, futs)

    async def _send(self, batch: list[tuple[Call, asyncio.Future]]) -> None:
        try:
            if len(batch) == 1:
                (method, args, kwargs), fut = batch[0]
                try:
                    out = await self._one(method, args, kwargs)
                except BaseException as e:  # noqa: BLE001 - delivered to its caller
                    _settle(fut, False, e)
                else:
                    _settle(fut, True, out)
                return
            try:
                outs = await self._many([c for c, _ in batch])
            except BaseException as e:  # noqa: BLE001 - the actor call itself failed
                for _, fut in batch:
                    _settle(fut, False, e)
                return
            for (ok, value), (_, fut) in zip(outs, batch):
                _settle(fut, ok, value)
        finally:
            for _, fut in batch:
                self._sending.pop(fut, None)
            self._inflight -= 1
            if self._queue and self._inflight < self.limit:
                self._start()


def _settle(fut: asyncio.Future, ok: bool, value: Any) -> None:
    if fut.done():
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


def run_many(target: Any, calls: list[Call]) -> list[tuple[bool, Any]]:
    """The receiving side for a synchronous actor: the calls in order, each answer or
    exception kept apart."""
    out: list[tuple[bool, Any]] = []
    for method, args, kwargs in calls:
        try:
            out.append((True, getattr(target, method)(*args, **kwargs)))
        except Exception as e:  # noqa: BLE001 - travels back to its own caller
            out.append((False, e))
    return out
