"""When a shard's work for one request must stop: its deadline passed, or its caller left.

Elasticsearch's shards check a search's timeout and its task's cancelled flag while they
collect; so do ours (DESIGN.md, invariant 10). The engine knows neither Ray nor asyncio: the
host passes a *predicate* ("was this call cancelled?") and the loops call :meth:`check`
between units of work — each segment, each clause of a compound query, every thousandth term
of a pattern expansion — so work stops within one unit of the event. Costs one clock read
(and one predicate call) per check.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from ..errors import ShardTimeout, TaskCancelled

TICKS_PER_CHECK = 1024       # :meth:`Cancellation.tick` checks once per this many calls


class Cancellation:
    """A deadline (``time.time()``, None: none) and a ``cancelled`` predicate (None: never)."""

    __slots__ = ("deadline", "cancelled", "_ticks")

    def __init__(self, deadline: float | None = None,
                 cancelled: Callable[[], bool] | None = None) -> None:
        self.deadline = deadline
        self.cancelled = cancelled
        self._ticks = 0

    def check(self) -> None:
        """Raise :class:`TaskCancelled` if the caller went away, :class:`ShardTimeout` if the
        deadline passed; else return at once."""
        if self.cancelled is not None and self.cancelled():
            raise TaskCancelled("the shard's work was cancelled: its caller went away")
        if self.deadline is not None and time.time() >= self.deadline:
            raise ShardTimeout("the search's deadline passed while this shard was working")

    def tick(self) -> None:
        """:meth:`check` once per :data:`TICKS_PER_CHECK` calls: for loops whose steps are
        too small to pay a clock read each (a pattern against one term)."""
        self._ticks += 1
        if self._ticks % TICKS_PER_CHECK == 0:
            self.check()

    @property
    def bounded(self) -> bool:
        """Whether anything can stop this work (else checks are free to skip)."""
        return self.deadline is not None or self.cancelled is not None


NO_LIMIT = Cancellation()    # work that nothing stops (explain, writes, unit tests)
