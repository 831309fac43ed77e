"""Merges run beside searches and writes, and change no answer (without Ray).

A shard copy builds its merges on a background thread, taking the shard's lock only to pick the
segments and to swap the merged one in. These tests hold a merge half-way (a
``threading.Event`` the merge waits on, set by the test: no clock), then index, update and
delete documents of the segments being merged, refresh, search and open points in time — all of
which complete while the merge is held — then let it finish and compare every answer (hits,
scores, sort values, versions, totals, aggregations) with a shard that never merged.
"""
from __future__ import annotations

import asyncio
import threading

import orjson
import pytest

from hypothesis import HealthCheck, given, settings
from test_segment_merge import _answers, _source, ops_strategy

from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.distribution.shard_service import ShardService
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

NEVER_MERGE = {"index.merge.policy.segments_per_tier": 10 ** 12}
MAPPINGS = {"properties": {"n": {"type": "long"}, "text": {"type": "text"},
                           "tag": {"type": "keyword"}}}
BOUND_S = 120   # a bound on waiting for the merge thread (never reached when all is well)


class Gate:
    """The test hook: the first merge that reaches it waits until it is opened."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()

    def __call__(self) -> None:
        if not self.reached.is_set():
            self.reached.set()
            assert self.opened.wait(BOUND_S), "the test never opened the gate"


def _coordinator(backend, settings: dict | None = None) -> Coordinator:
    c = Coordinator(backend)
    c.create_index("idx", {"settings": {"number_of_shards": 1, **(settings or {})},
                           "mappings": MAPPINGS})
    return c


def _service(c: Coordinator) -> ShardService:
    return c.admin.indices["idx"].shards[0]


async def _write(cs: list[Coordinator], ops: list[dict]) -> None:
    for c in cs:
        for d in ops:
            item = {"action": d["op"], "index": "idx", "id": d["id"]}
            if d["op"] == "index":
                item["source"] = _source(d)
            await c.bulk([item], refresh=d["refresh"])
        await c.refresh("idx")


def _index(i: int, doc_id: str, refresh: bool = True) -> dict:
    return {"op": "index", "id": doc_id, "n": i % 5, "tag": "abc"[i % 3],
            "text": ["alpha beta", "gamma", "delta alpha"][i % 3], "refresh": refresh}


def test_writes_searches_and_pits_proceed_while_a_merge_is_held_and_answers_match() -> None:
    async def run() -> None:
        merging, plain = _coordinator(LocalBackend(background_merges=True)), _coordinator(LocalBackend(),
                                                                          NEVER_MERGE)
        gate = Gate()
        svc = _service(merging)
        svc.merger.pause = gate
        # ten one-document refreshes: one tier at the cap; the eleventh makes a merge due
        await _write([merging, plain], [_index(i, str(i)) for i in range(10)])
        pit_before = {c: (await c.open_pit("idx", "5m"))["id"] for c in (merging, plain)}
        snapshot_before = await _answers(merging, pit_before[merging])
        await _write([merging, plain], [_index(10, "10")])
        assert gate.reached.wait(BOUND_S)
        sources = len(svc.core.segments)
        # the merge is held half-way: writes into its sources, refreshes, searches
        await _write([merging, plain], [
            _index(11, "3"), {"op": "delete", "id": "5", "refresh": False},
            _index(12, "7", refresh=False), _index(13, "new"),
            {"op": "delete", "id": "0", "refresh": True}])
        held_now = await _answers(merging)
        pit_during = {c: (await c.open_pit("idx", "5m"))["id"] for c in (merging, plain)}
        snapshot_during = await _answers(merging, pit_during[merging])
        assert svc.merger.running and svc.core.merges["total"] == 0   # all that, still held
        assert held_now == await _answers(plain)
        gate.opened.set()
        # a force merge queues behind the held one: once it answers, that one was swapped in
        await asyncio.to_thread(svc.force_merge, None, False, False)
        assert svc.core.merges["total"] >= 1 and svc.core.merges["abandoned"] == 0
        assert len(svc.core.segments) < sources
        assert await _answers(merging) == held_now == await _answers(plain)
        assert await _answers(merging, pit_before[merging]) == snapshot_before \
            == await _answers(plain, pit_before[plain])
        assert await _answers(merging, pit_during[merging]) == snapshot_during \
            == await _answers(plain, pit_during[plain])
        for doc_id, version in (("3", 2), ("7", 2), ("new", 1)):
            assert svc.get(doc_id).version == version
        assert svc.get("5") is None and svc.get("0") is None

    asyncio.run(run())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, during=ops_strategy)
def test_a_force_merge_held_while_anything_is_written_changes_no_answer(ops, during) -> None:
    """Any writes, deletes and refreshes while a ``_forcemerge`` to one segment is held
    half-way: afterwards every answer equals a never-merged shard's."""
    async def run() -> None:
        merging, plain = _coordinator(LocalBackend(background_merges=True)), _coordinator(LocalBackend(),
                                                                          NEVER_MERGE)
        await _write([merging, plain], ops)
        svc = _service(merging)
        gate = Gate()
        svc.merger.pause = gate
        done = threading.Event()
        force = threading.Thread(target=lambda: (svc.force_merge(1, False, False), done.set()))
        force.start()
        while not gate.reached.wait(0.01) and not done.is_set():
            pass   # either the merge is held, or there was nothing to merge
        await _write([merging, plain], during)
        during_answers = await _answers(plain)
        assert await _answers(merging) == during_answers
        gate.opened.set()
        force.join(BOUND_S)
        assert done.is_set()
        assert await _answers(merging) == during_answers
        assert svc.core.merges["abandoned"] == 0

    asyncio.run(run())


def test_a_pin_taken_during_a_merge_at_an_older_generation_is_respected() -> None:
    """A point in time reopened at an older generation while a merge that would drop its
    versions is built: the merge is abandoned, the snapshot still reads the same."""
    async def run() -> None:
        c = _coordinator(LocalBackend(background_merges=True))
        svc = _service(c)
        await _write([c], [_index(i, str(i)) for i in range(3)])
        old = svc.pin("early")               # keeps the first versions from the policy
        await _write([c], [_index(i + 3, str(i)) for i in range(3)])
        svc.unpin(["early"])                 # now a merge may drop them
        gate = Gate()
        svc.merger.pause = gate
        force = threading.Thread(target=svc.force_merge, args=(1, False, False))
        force.start()
        assert gate.reached.wait(BOUND_S)
        svc.pin("late", old)                 # readable still: nothing was dropped yet
        gate.opened.set()
        force.join(BOUND_S)
        assert svc.core.merges["abandoned"] == 1
        assert svc.core.can_read(old) and svc.core.doc_count(old) == 3
        r = await c.search(parse_search(("idx",), {}, {"size": 10}))
        assert r["hits"]["total"]["value"] == 3
        assert sorted(orjson.loads(h["_source"])["n"] for h in r["hits"]["hits"]) == [0, 3, 4]

    asyncio.run(run())


def test_closing_a_copy_abandons_its_merge_and_swaps_nothing() -> None:
    c = _coordinator(LocalBackend(background_merges=True))
    svc = _service(c)
    asyncio.run(_write([c], [_index(i, str(i)) for i in range(4)]))
    segments = list(svc.core.segments)
    gate = Gate()
    svc.merger.pause = gate
    errors: list[BaseException] = []

    def force() -> None:
        try:
            svc.force_merge(1, False, False)
        except BaseException as e:  # noqa: BLE001 - what the waiting caller gets
            errors.append(e)
    t = threading.Thread(target=force)
    t.start()
    assert gate.reached.wait(BOUND_S)
    svc.close_merges()
    gate.opened.set()
    t.join(BOUND_S)
    assert [type(e).__name__ for e in errors] == ["TaskCancelled"]
    assert svc.core.segments == segments and svc.core.merges["total"] == 0
