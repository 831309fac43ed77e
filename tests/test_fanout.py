"""One fan-out round: every call ends as a value, a failure or a time-out; the retry policy
(pure asyncio, no Ray)."""
from __future__ import annotations

import asyncio
import time

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.search.fanout import fan_out, share
from shardsearch.cluster.distribution.simulation import ShardTimeout, SimulatedFailure


def _calls(*behaviours):
    """Call factories; each behaviour is a list consumed one attempt at a time."""
    attempts = [0] * len(behaviours)

    def make(i):
        async def call():
            step = behaviours[i][min(attempts[i], len(behaviours[i]) - 1)]
            attempts[i] += 1
            if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
                await asyncio.sleep(step)
                return "slow"
            if isinstance(step, BaseException):
                raise step
            return step
        return call
    return [make(i) for i in range(len(behaviours))], attempts


def test_a_passing_failure_is_retried_once_then_counts() -> None:
    calls, attempts = _calls([SimulatedFailure("x"), "ok"], [SimulatedFailure("x")])
    out = asyncio.run(fan_out(calls, None))
    assert out[0].ok and out[0].value == "ok" and out[0].retries == 1
    assert isinstance(out[1].error, SimulatedFailure) and out[1].retries == 1
    assert attempts == [2, 2]


def test_an_error_of_the_request_is_not_retried() -> None:
    calls, attempts = _calls([IllegalArgument("bad query")])
    out = asyncio.run(fan_out(calls, None))
    assert isinstance(out[0].error, IllegalArgument) and out[0].retries == 0
    assert attempts == [1]


def test_the_deadline_times_out_slow_calls_and_keeps_the_others() -> None:
    calls, _ = _calls(["fast"], [5.0], [ShardTimeout("gave up")])
    t0 = time.monotonic()
    out = asyncio.run(fan_out(calls, time.time() + 0.1))
    assert time.monotonic() - t0 < 1.0
    assert out[0].value == "fast" and out[0].ok
    assert out[1].timed_out and out[1].error is None
    assert out[2].timed_out and out[2].error is None     # the shard's own time-out
    assert all(o.round_trip_ns > 0 for o in out)


def test_share_gives_a_fraction_of_the_time_left() -> None:
    assert share(None, 0.5) is None
    now = time.time()
    d = share(now + 10, 0.5)
    assert d is not None and now + 4.9 < d < now + 5.2
    assert share(now - 1, 0.5) <= time.time()
