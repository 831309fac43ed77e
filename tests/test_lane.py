"""The fast lane: calls over a Unix socket behave like actor calls (answers, errors, many in
flight), and a broken lane says whether the call may have run."""
from __future__ import annotations

import asyncio
import os
import stat

import pytest
from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.distribution.lanes import LaneClient, LaneClosed, LaneServer


class Target:
    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def call(self, method: str, *args, **kwargs):
        if method == "add":
            return args[0] + kwargs.get("plus", 0)
        if method == "bad":
            raise IllegalArgument("no such thing")
        if method == "wait":
            await self.release.wait()
            return "released"
        raise AttributeError(method)


def run(coro):
    return asyncio.run(coro)


def test_calls_return_the_targets_answers_and_domain_errors_keep_their_type() -> None:
    async def go():
        server = LaneServer(Target().call)
        client = LaneClient(await server.start())
        try:
            assert await client.call("add", 2, plus=3) == 5
            with pytest.raises(IllegalArgument) as e:
                await client.call("bad")
            assert e.value.es_type == "illegal_argument_exception"
            assert e.value.status == 400
        finally:
            client.close()
            server.close()
    run(go())


def test_many_calls_are_in_flight_at_once_and_each_gets_its_own_answer() -> None:
    async def go():
        target = Target()
        server = LaneServer(target.call)
        client = LaneClient(await server.start())
        try:
            waiting = asyncio.ensure_future(client.call("wait"))
            sums = await asyncio.gather(*(client.call("add", i, plus=i) for i in range(50)))
            assert sums == [2 * i for i in range(50)]
            assert not waiting.done()          # a slow call does not hold up the others
            target.release.set()
            assert await waiting == "released"
        finally:
            client.close()
            server.close()
    run(go())


def test_the_socket_is_reachable_only_by_its_owner() -> None:
    async def go():
        server = LaneServer(Target().call)
        path = await server.start()
        try:
            mode = stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)
            assert mode == 0o700
        finally:
            server.close()
        assert not os.path.exists(path)
    run(go())


def test_a_lane_that_cannot_be_reached_says_the_call_was_not_sent() -> None:
    async def go():
        client = LaneClient("/nonexistent/dir/lane.sock")
        with pytest.raises(LaneClosed) as e:
            await client.call("add", 1)
        assert e.value.sent is False
        assert client.closed
    run(go())


def test_pending_calls_fail_as_sent_when_the_lane_breaks() -> None:
    async def go():
        target = Target()
        server = LaneServer(target.call)
        client = LaneClient(await server.start())
        pending = asyncio.ensure_future(client.call("wait"))
        await asyncio.sleep(0.05)
        client._writer.transport.abort()       # the connection drops (a dead process)
        with pytest.raises(LaneClosed) as e:
            await pending
        assert e.value.sent is True
        with pytest.raises(LaneClosed) as e2:    # and the client stays closed
            await client.call("add", 1)
        assert e2.value.sent is False
        server.close()
    run(go())


def test_a_serialized_class_never_runs_two_public_calls_at_once() -> None:
    import threading
    import time

    from shardsearch.cluster.distribution.lanes import serialized

    class Counter:
        def __init__(self) -> None:
            self.inside = 0
            self.most = 0

        def work(self) -> None:
            self.inside += 1
            self.most = max(self.most, self.inside)
            time.sleep(0.002)
            self.nested()
            self.inside -= 1

        def nested(self) -> None:   # re-entrant: a call may call another public method
            pass

        @staticmethod
        def helper() -> int:
            return 7

    c = serialized(Counter)()
    threads = [threading.Thread(target=lambda: [c.work() for _ in range(20)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.most == 1
    assert type(c).__name__ == "Counter" and c.helper() == 7


def test_a_thread_lane_serves_only_the_allowed_methods() -> None:
    from shardsearch.cluster.distribution.lanes import serialized

    class Copy:
        def query(self, x: int) -> int:
            return x * 2

        def apply(self) -> None:
            raise AssertionError("writes never take the lane")

    async def calls(client: LaneClient) -> None:
        assert await client.call("query", 21) == 42
        with pytest.raises(IllegalArgument):
            await client.call("apply")
    _on_thread_lane(serialized(Copy)(), {"query"}, calls)


def _on_thread_lane(target: object, allowed: set[str], calls) -> None:
    """``await calls(client)`` with a client of a :class:`ThreadLane` serving ``target``."""
    from shardsearch.cluster.distribution.lanes import ThreadLane

    lane = ThreadLane(target, frozenset(allowed))

    async def go():
        client = LaneClient(lane.path)
        try:
            await calls(client)
        finally:
            client.close()
    try:
        run(go())
    finally:
        lane.close()


class _Batch:
    """An argument a lane call receives (pickled: defined at module level)."""


def test_a_thread_lane_keeps_nothing_of_a_call_once_it_has_answered() -> None:
    """The last call's arguments (a bulk write's whole batch) must not stay alive until a
    next call that may never come, nor wait for a cyclic collection."""
    import gc
    import weakref

    from shardsearch.cluster.distribution.lanes import serialized

    seen: list[weakref.ref] = []

    class Copy:
        def command(self, batch: _Batch, fail: bool = False) -> int:
            seen.append(weakref.ref(batch))
            if fail:
                raise IllegalArgument("refused")
            return 1

    async def calls(client: LaneClient) -> None:
        assert await client.call("command", _Batch()) == 1
        with pytest.raises(IllegalArgument):     # nor of a call that failed
            await client.call("command", _Batch(), True)
        await asyncio.sleep(0.05)       # the server reads on; the connection stays open
        assert len(seen) == 2 and [r() for r in seen] == [None, None]

    gc.disable()     # as a bulk apply pauses the collector: no cycle may hold them meanwhile
    try:
        _on_thread_lane(serialized(Copy)(), {"command"}, calls)
    finally:
        gc.enable()


def test_sockets_of_processes_that_are_gone_are_swept() -> None:
    import subprocess
    import sys

    from shardsearch.cluster.distribution.lanes import lane_dir
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = os.path.join(lane_dir(), f"{gone}-deadbeef.sock")
    open(stale, "w").close()

    async def go():
        server = LaneServer(Target().call)
        path = await server.start()
        try:
            assert os.path.dirname(path) == os.path.dirname(stale)
            assert not os.path.exists(stale)
            assert os.path.exists(path)
        finally:
            server.close()
    run(go())
