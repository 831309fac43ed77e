"""How long a shard group waits for its copies: a segment build may take minutes, anything
else a minute; and once one copy has answered, a silent one gets only a bounded grace."""
from __future__ import annotations

import asyncio
import time

from shardsearch.cluster.distribution.copy_waits import (COPY_CALL_TIMEOUT, command_timeout,
                                                         gather_answers)


def test_only_a_segment_build_may_outlast_the_one_minute_command_timeout() -> None:
    assert command_timeout("refresh", ()) >= 10 * COPY_CALL_TIMEOUT
    assert command_timeout("apply", ([], None, True)) >= 10 * COPY_CALL_TIMEOUT
    assert command_timeout("apply", ([], None, False)) == COPY_CALL_TIMEOUT
    assert command_timeout("set_mapping", (None,)) == COPY_CALL_TIMEOUT


async def _answer(after: float, value: object) -> object:
    await asyncio.sleep(after)
    if isinstance(value, BaseException):
        raise value
    return value


def test_answers_and_errors_come_back_in_the_copies_order() -> None:
    outs = asyncio.run(gather_answers(
        [_answer(0.05, "a"), _answer(0.0, ValueError("b")), _answer(0.02, "c")], timeout=5))
    assert outs[0] == "a" and isinstance(outs[1], ValueError) and outs[2] == "c"


def test_a_silent_copy_gets_twice_the_first_answers_time_not_the_whole_bound() -> None:
    async def go() -> tuple[list[object], float]:
        t0 = time.monotonic()
        outs = await gather_answers([_answer(0.3, "fast"), _answer(60, "hung")], timeout=30,
                                    min_grace=0.1)
        return outs, time.monotonic() - t0
    outs, took = asyncio.run(go())
    assert outs[0] == "fast" and isinstance(outs[1], asyncio.TimeoutError)
    assert 0.8 <= took < 5            # 0.3 s, then twice that: not the 30 s bound


def test_a_slow_copy_within_its_grace_still_answers() -> None:
    outs = asyncio.run(gather_answers([_answer(0.1, "first"), _answer(0.25, "second")],
                                      timeout=30, min_grace=0.5))
    assert outs == ["first", "second"]


def test_with_no_answer_at_all_the_bound_is_the_timeout() -> None:
    async def go() -> tuple[list[object], float]:
        t0 = time.monotonic()
        outs = await gather_answers([_answer(60, "x"), _answer(60, "y")], timeout=0.3)
        return outs, time.monotonic() - t0
    outs, took = asyncio.run(go())
    assert all(isinstance(o, asyncio.TimeoutError) for o in outs) and took < 5
