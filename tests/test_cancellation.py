"""Bounded and cancellable (DESIGN.md, invariant 10): a search stops its shard work when its
``timeout`` passes or its client goes away — on the shards too, not only at the coordinator.

The engine's checks are tested without Ray; then real shard actors (local Ray) behind the real
uvicorn server: a query that would keep a shard busy for several seconds — a hundred wildcard
clauses, each trying every one of 20,000 distinct terms (~7 s on this machine) — is stopped by
its timeout, by its client disconnecting, and by ``ray.cancel`` of its shard call, and each
time the shard serves the next call at once.
"""
from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import orjson
import pytest

from shardsearch.cluster.engine.cancellation import TICKS_PER_CHECK, Cancellation
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.shard import ShardCore
from shardsearch.cluster.engine.shard_messages import ShardQuery
from shardsearch.cluster.engine.sorting import SCORE_SORT, SortField
from shardsearch.cluster.engine.writes import WriteOp
from shardsearch.cluster.errors import ShardTimeout, TaskCancelled

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

TERMS = 20_000
CLAUSES = 100


def _slow_query(clauses: int = CLAUSES) -> dict[str, Any]:
    """Wildcards with a leading ``*``: each tries every term of ``k`` (no literal prefix)."""
    return {"bool": {"should": [{"wildcard": {"k": f"*{j % 10}*{j // 10 % 10}*x"}}
                                for j in range(clauses)]}}


def _key(i: int) -> str:
    return f"{i * 7919 % 100_003:05d}-{i:06d}"


# --- the engine, without Ray ---------------------------------------------------------------

def _core(segments: int = 1, docs: int = 2000) -> ShardCore:
    core = ShardCore("idx", 0, Mapping.from_body({"properties": {"k": {"type": "keyword"}}}))
    per = docs // segments
    for s in range(segments):
        core.apply([WriteOp("index", str(i), i, orjson.dumps({"k": _key(i)}))
                    for i in range(s * per, (s + 1) * per)])
        core.refresh()
    return core


class Stepper:
    """A ``cancelled`` predicate that counts its calls and, from call ``at`` on, either says
    "cancelled" or moves the deadline into the past (deterministic, unlike a clock)."""

    def __init__(self, at: int, expire: bool = False) -> None:
        self.at, self.expire, self.calls = at, expire, 0
        self.cancel = Cancellation(None, self)

    def __call__(self) -> bool:
        self.calls += 1
        if self.calls >= self.at:
            if self.expire:
                self.cancel.deadline = 0.0
                return False
            return True
        return False


def test_check_raises_a_timeout_past_the_deadline_and_a_cancel_when_the_caller_left() -> None:
    Cancellation().check()
    Cancellation(time.time() + 60, lambda: False).check()
    with pytest.raises(ShardTimeout):
        Cancellation(time.time() - 1).check()
    with pytest.raises(TaskCancelled):
        Cancellation(time.time() + 60, lambda: True).check()


def test_tick_checks_once_per_thousand_steps() -> None:
    step = Stepper(at=1)
    for _ in range(TICKS_PER_CHECK - 1):
        step.cancel.tick()
    assert step.calls == 0
    with pytest.raises(TaskCancelled):
        step.cancel.tick()


def test_a_query_past_its_deadline_answers_the_segments_done_before_it() -> None:
    """Elasticsearch's shards return what they collected before the timeout, flagged."""
    core = _core(segments=4, docs=400)
    q = ShardQuery(query=parse_query({"match_all": {}}), sort=SCORE_SORT, k=1000, index_rank=0)
    assert core.query(q).total == 400 and not core.query(q).timed_out
    step = Stepper(at=5, expire=True)   # 2 checks a segment (it, its query): the 3rd is late
    hits = core.query(q, step.cancel)
    assert hits.timed_out and hits.total == 200 and len(hits) == 200


def test_a_partial_answer_aggregates_the_matches_found_in_time() -> None:
    from shardsearch.cluster.engine.aggs import parse_aggs
    core = _core(segments=4, docs=400)
    q = ShardQuery(query=parse_query({"match_all": {}}), sort=SCORE_SORT, k=0, index_rank=0,
                   aggs=parse_aggs({"n": {"value_count": {"field": "k"}}}))
    hits = core.query(q, Stepper(at=5, expire=True).cancel)
    assert hits.timed_out and hits.total == 200
    assert hits.aggs is not None and hits.aggs["n"].count.tolist() == [200]


def test_deep_paging_rounds_past_the_deadline_refuse_rather_than_answer_part() -> None:
    core = _core(segments=4, docs=400)
    q = ShardQuery(query=parse_query({"match_all": {}}), sort=(SortField("_doc"),), k=10,
                   index_rank=0)
    with pytest.raises(ShardTimeout):
        core.sample(q, 5, Stepper(at=2, expire=True).cancel)
    with pytest.raises(ShardTimeout):
        core.window(q, 0, 10, Stepper(at=2, expire=True).cancel)


def test_a_cancelled_pattern_expansion_stops_within_a_thousand_terms() -> None:
    core = _core(docs=TERMS)
    q = ShardQuery(query=parse_query({"wildcard": {"k": "*1*2*x"}}), sort=SCORE_SORT, k=10,
                   index_rank=0)
    step = Stepper(at=3)   # 1: the segment, 2: the wildcard node, 3: the first tick check
    with pytest.raises(TaskCancelled):
        core.query(q, step.cancel)
    assert step.calls == 3


def test_each_clause_of_a_bool_query_checks_the_cancellation() -> None:
    core = _core(docs=100)
    clauses = [{"term": {"k": _key(i)}} for i in range(10)]
    q = ShardQuery(query=parse_query({"bool": {"should": clauses}}), sort=SCORE_SORT, k=10,
                   index_rank=0)
    step = Stepper(at=10**9)
    assert core.query(q, step.cancel).total == 10
    assert step.calls == 1 + 1 + 10      # the segment, the bool, each clause
    with pytest.raises(TaskCancelled):
        core.query(q, Stepper(at=5).cancel)


def test_term_statistics_stop_too() -> None:
    core = _core(segments=2, docs=100)
    with pytest.raises(TaskCancelled):
        core.term_stats(["k"], [("k", _key(1))], None, Stepper(at=1).cancel)


# --- the distribution layer's carriers, without Ray -----------------------------------------

class Spinner:
    """A target that works until its call is cancelled (as the engine's checks would)."""

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def spin(self) -> str:
        from shardsearch.cluster.distribution.cancel_calls import cancelled_predicate
        cancelled = cancelled_predicate()
        assert cancelled is not None
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if cancelled():
                self.stopped.set()
                return "stopped"
            time.sleep(0.005)
        return "finished"


def test_a_cancelled_lane_call_sets_its_flag_where_it_runs() -> None:
    from shardsearch.cluster.distribution.lanes import LaneClient, ThreadLane
    target = Spinner()
    lane = ThreadLane(target, frozenset({"spin"}))

    async def run() -> None:
        client = LaneClient(lane.path)
        call = asyncio.ensure_future(client.call("spin"))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        client.close()
    try:
        asyncio.run(run())
        assert target.stopped.wait(2.0)
    finally:
        lane.close()


def test_a_batched_call_is_cancelled_only_when_all_its_callers_gave_up() -> None:
    from shardsearch.cluster.distribution.coalescing import Coalescer
    cancelled: list[str] = []

    async def one(method: str, args: tuple, kwargs: dict) -> Any:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(method)
            raise

    async def many(calls: list) -> list:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append("many")
            raise
        return []

    async def run() -> None:
        c = Coalescer(one, many, limit=1)
        first = asyncio.ensure_future(c.call("a"))
        await asyncio.sleep(0.01)
        second = asyncio.ensure_future(c.call("b"))
        third = asyncio.ensure_future(c.call("c"))
        await asyncio.sleep(0.01)
        first.cancel()                      # alone in its actor call: cancelled
        await asyncio.sleep(0.01)
        assert cancelled == ["a"]
        await asyncio.sleep(0.01)           # b and c went out together
        second.cancel()
        await asyncio.sleep(0.01)
        assert cancelled == ["a"]           # c still waits for the batch
        third.cancel()
        await asyncio.sleep(0.01)
        assert cancelled == ["a", "many"]
    asyncio.run(run())


# --- real shard actors behind the real server ----------------------------------------------

def _slow_index(es: Any, name: str = "slow") -> None:
    es.put(f"/{name}", json={"settings": {"number_of_shards": 1},
                             "mappings": {"properties": {"k": {"type": "keyword"}}}})
    lines = []
    for i in range(TERMS):
        lines.append('{"index": {"_id": "%d"}}' % i)
        lines.append('{"k": "%s"}' % _key(i))
    r = es.post(f"/{name}/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]


def _shard_actor(index: str) -> Any:
    import ray
    for a in ray.util.list_named_actors(all_namespaces=True):
        if a["name"].startswith(f"shardsearch:{index}:0:0:"):
            return ray.get_actor(a["name"], namespace=a["namespace"])
    raise AssertionError(f"no shard actor for [{index}]")


def _stopped(handle: Any) -> dict[str, int]:
    """The copy's count of calls cut short; the call itself waits for the shard's lock, so
    it answering quickly shows the shard is free."""
    import ray
    return ray.get(handle.info.remote(), timeout=30)["stopped_calls"]


def _next_search_is_quick(es: Any) -> None:
    t0 = time.monotonic()
    r = es.post("/slow/_search", json={"size": 1, "query": {"term": {"k": _key(7)}}})
    assert r.status_code == 200 and r.json()["hits"]["total"]["value"] == 1
    assert time.monotonic() - t0 < 1.5     # the slow query alone keeps the shard ~7 s


def test_timed_out_search_frees_the_shard_for_the_next(es) -> None:
    _slow_index(es)
    before = _stopped(_shard_actor("slow"))
    t0 = time.monotonic()
    r = es.post("/slow/_search", json={"query": _slow_query(), "timeout": "50ms"})
    assert time.monotonic() - t0 < 1.5
    body = r.json()
    assert r.status_code == 200 and body["timed_out"] is True
    assert body["_shards"]["failed"] == 0
    _next_search_is_quick(es)
    assert _stopped(_shard_actor("slow"))["timed_out"] > before["timed_out"]


def test_client_that_disconnects_cancels_the_shard_work(es, base_url) -> None:
    _slow_index(es)
    handle = _shard_actor("slow")
    before = _stopped(handle)
    payload = orjson.dumps({"query": _slow_query()})
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /slow/_search HTTP/1.1\r\nhost: x\r\n"
                     b"content-type: application/json\r\n"
                     b"content-length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
        time.sleep(0.7)                     # the shard is inside the expansion by now
    _next_search_is_quick(es)
    deadline = time.monotonic() + 5
    while _stopped(handle)["cancelled"] == before["cancelled"]:
        assert time.monotonic() < deadline, "the shard's work was not cancelled"
        time.sleep(0.05)


def test_ray_cancel_of_a_shard_call_stops_the_shard_work(es) -> None:
    """The Ray path (a coordinator on another node, or a broken lane): ``ray.cancel`` of the
    actor task sets the flag the engine checks."""
    import ray
    _slow_index(es)
    handle = _shard_actor("slow")
    before = _stopped(handle)
    q = ShardQuery(query=parse_query(_slow_query()), sort=SCORE_SORT, k=10, index_rank=0)
    ref = handle.query.remote(q)
    time.sleep(0.5)
    ray.cancel(ref)
    # Ray 2.60 reports a task that stopped by raising as the error it raised (ours)
    with pytest.raises((ray.exceptions.TaskCancelledError, TaskCancelled)):
        ray.get(ref, timeout=30)
    t0 = time.monotonic()
    after = _stopped(handle)
    assert time.monotonic() - t0 < 1.0
    assert after["cancelled"] == before["cancelled"] + 1


def test_cancelling_a_coordinator_call_over_ray_cancels_the_shard_work(es, coordinator) -> None:
    """The front end's Ray path to the coordinator (no lane): ``ray.cancel`` of the async
    actor's task cancels the search, and the search its shard calls."""
    from shardsearch.api.deps import RayCoordinator
    from shardsearch.cluster.search.request import parse_search
    _slow_index(es)
    handle = _shard_actor("slow")
    before = _stopped(handle)
    coord = RayCoordinator(coordinator, lane=False)

    async def run() -> None:
        req = parse_search(("slow",), {}, {"query": _slow_query()})
        call = asyncio.ensure_future(coord.call("search", req))
        await asyncio.sleep(0.7)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    asyncio.run(run())
    _next_search_is_quick(es)
    deadline = time.monotonic() + 5
    while _stopped(handle)["cancelled"] == before["cancelled"]:
        assert time.monotonic() < deadline, "the shard's work was not cancelled"
        time.sleep(0.05)
