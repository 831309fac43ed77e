"""A copy's calls through the Ray transport give up at their timeout whatever they wait on:
a write over the fast lane first asks the copy for its lane, and a copy busy with something
else (or hung) must not hold the write, and its shard group's lock, past the timeout."""
from __future__ import annotations

import asyncio
import time

import pytest


@pytest.fixture(scope="module")
def busy_copy(ray_session):
    import ray

    @ray.remote
    class BusyCopy:
        """Answers commands at once, but its lane only after a long while."""

        async def lane(self):
            await asyncio.sleep(30)
            return None

        def command(self, *args):
            return "ran"

    actor = BusyCopy.remote()
    yield actor
    ray.kill(actor)


def test_a_write_waiting_for_the_copys_lane_gives_up_at_its_timeout(busy_copy) -> None:
    from shardsearch.cluster.distribution.transport import RayTransport

    async def go() -> float:
        t0 = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            await RayTransport().call(busy_copy, "command", 1, "apply", ((), None, False),
                                      "id-1", None, timeout=1.0)
        return time.monotonic() - t0
    assert asyncio.run(go()) < 10     # not the lane's 30 s


def test_a_write_goes_through_ray_when_the_copy_has_no_lane(ray_session) -> None:
    import ray
    from shardsearch.cluster.distribution.transport import RayTransport

    @ray.remote
    class NoLane:
        def lane(self):
            raise RuntimeError("no lane here")

        def command(self, *args):
            return ["ran", args[1]]

    actor = NoLane.remote()
    try:
        out = asyncio.run(RayTransport().call(actor, "command", 1, "apply", ((), None, False),
                                              "id-1", None, timeout=30))
        assert out == ["ran", "apply"]
    finally:
        ray.kill(actor)
