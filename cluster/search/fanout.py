"""One fan-out to shards, with a deadline and one retry, whose every call ends in an outcome.

Every phase of a search (statistics, query, the deep page's two rounds, fetch) sends one call
per shard and waits for all of them. Here each call ends as exactly one of: a value, a failure
(kept for ``_shards.failures``) or a time-out (the search's ``timeout`` passed first), and its
round-trip time and retries are recorded for the profile.

Retry policy: a call that fails for a reason that may pass — a simulated failure or an actor
that is dead or restarting — is sent once more to the same shard actor, if the deadline allows
(replicas, once they exist, are the better second choice). Errors of the request itself (a bad
query, an unknown field) are never retried: they would fail again.

Deadline and cancellation: the shards check the deadline themselves (``engine/cancellation.py``)
and answer what they collected before it, flagged ``timed_out`` (Elasticsearch's partial
results). So the fan-out waits :data:`PARTIAL_GRACE_S` past the deadline for those answers;
a call still running then is cancelled — as is every call when the fan-out itself is
cancelled (its client went away) — and the distribution layer cancels the shard's task too.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from ..errors import SearchError, ShardTimeout, SimulatedFailure, actor_died, remote_cause

MAX_RETRIES = 1
PARTIAL_GRACE_S = 0.1   # after the deadline: time for the shards' partial answers to arrive


@dataclass
class Outcome:
    """How one shard call ended."""

    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    round_trip_ns: int = 0      # as the coordinator saw it: hops, queueing, simulated delay
    retries: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


def is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, ShardTimeout) or isinstance(remote_cause(exc), ShardTimeout)


def is_retryable(exc: BaseException) -> bool:
    """A simulated failure or an unreachable actor; never an error of the request itself."""
    inner = remote_cause(exc)
    if isinstance(inner, SimulatedFailure):
        return True
    if isinstance(inner, SearchError):
        return False
    return actor_died(exc)


def share(deadline: float | None, fraction: float) -> float | None:
    """A deadline for one round of several: ``fraction`` of the time left until ``deadline``.

    A search's statistics round and the deep page's sample round get half of what is left, so
    one slow shard cannot spend the whole ``timeout`` before the round that finds the hits.
    """
    if deadline is None:
        return None
    now = time.time()
    return now + max(0.0, deadline - now) * fraction


async def fan_out(calls: list[Callable[[], Awaitable[Any]]], deadline: float | None
                  ) -> list[Outcome]:
    """Run every call concurrently; wait until all ended or ``deadline`` (``time.time()``,
    plus :data:`PARTIAL_GRACE_S`) passed, whichever comes first. Calls still running then are
    cancelled and time out; cancelling the fan-out cancels every call."""
    outcomes = [Outcome() for _ in calls]

    async def one(call: Callable[[], Awaitable[Any]], out: Outcome) -> None:
        t0 = time.perf_counter_ns()
        try:
            while True:
                try:
                    out.value = await call()
                    return
                except asyncio.CancelledError:
                    raise
                except BaseException as e:  # noqa: BLE001 - every failure becomes an outcome
                    if is_timeout(e):
                        out.timed_out = True
                        return
                    if out.retries < MAX_RETRIES and is_retryable(e) \
                            and (deadline is None or time.time() < deadline):
                        out.retries += 1
                        continue
                    out.error = e
                    return
        finally:
            out.round_trip_ns = time.perf_counter_ns() - t0

    if not calls:
        return outcomes
    t0 = time.perf_counter_ns()
    tasks = [asyncio.ensure_future(one(c, o)) for c, o in zip(calls, outcomes)]
    if deadline is None:
        await asyncio.gather(*tasks)
        return outcomes
    try:
        _, pending = await asyncio.wait(
            tasks, timeout=max(0.0, deadline - time.time()) + PARTIAL_GRACE_S)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        raise
    for task in pending:
        task.cancel()
    for task, out in zip(tasks, outcomes):
        if task in pending:
            out.timed_out = True
            out.round_trip_ns = time.perf_counter_ns() - t0
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    return outcomes
