"""Round 1 of a cut ``terms`` runs unpinned; the snapshot is pinned only for later rounds.

Through real Ray shard actors (``RayTransport``, recording the ``pin`` calls it sends): a
search whose round 1 settles every bucket sends no pin at all; one that needs later rounds pins
exactly the generations round 1 read (the response's snapshot) and releases them; and when a
refresh and a merge land between round 1 and that pin (a hook in the transport, no clock) —
so the generation round 1 read is gone — the search runs again with each shard's latest
generation pinned first, and answers exactly the counts of the documents after the change,
with no shard failure. Expected answers are counted from the documents by brute force.
"""
from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import pytest

from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.replication import ReplicatedBackend
from shardsearch.cluster.distribution.transport import RayTransport
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

DOCS = 300


class RecordingRay(RayTransport):
    """Ray shard actors; records each ``pin`` (key, generation) and runs ``hook`` once before
    the first pin of a named generation."""

    def __init__(self) -> None:
        super().__init__()
        self.pins: list[tuple[str, int | None]] = []
        self.spawned: list[Any] = []
        self.hook: Any = None

    def spawn(self, spec: dict[str, Any], placement: Any) -> Any:
        handle = super().spawn(spec, placement)
        self.spawned.append(handle)
        return handle

    async def call(self, handle: Any, method: str, *args: Any,
                   timeout: float | None = None) -> Any:
        if method == "pin":
            if args[1] is not None and self.hook is not None:
                hook, self.hook = self.hook, None
                await hook()
            self.pins.append((args[0], args[1]))
        return await super().call(handle, method, *args, timeout=timeout)


def _docs() -> dict[str, dict[str, Any]]:
    rnd = random.Random(11)
    return {str(i): {"tag": [f"t{rnd.randint(0, 40)}" for _ in range(rnd.randint(1, 3))],
                     "n": rnd.randint(0, 9)} for i in range(DOCS)}


def _brute(docs: dict[str, dict[str, Any]], size: int, subs: bool = True) -> dict[str, Any]:
    """Elasticsearch's terms buckets (count desc, key asc), with a ``sum`` of ``n`` in each
    when ``subs``."""
    counts: Counter = Counter()
    sums: Counter = Counter()
    for d in docs.values():
        for t in set(d["tag"]):
            counts[t] += 1
            sums[t] += d.get("n", 0)
    ranked = sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))
    return {"doc_count_error_upper_bound": 0,
            "sum_other_doc_count": sum(counts.values()) - sum(c for _, c in ranked[:size]),
            "buckets": [{"key": k, "doc_count": c, **({"s": {"value": float(sums[k])}}
                                                           if subs else {})}
                        for k, c in ranked[:size]]}


def _aggs(size: int, shard_size: int, subs: bool = True) -> dict[str, Any]:
    """A terms on ``tag`` (sub-aggregations take a round of their own after the top keys)."""
    terms: dict[str, Any] = {"terms": {"field": "tag", "size": size, "shard_size": shard_size}}
    return {"t": {**terms, "aggs": {"s": {"sum": {"field": "n"}}}} if subs else terms}


async def _search(c: Coordinator, aggs: dict[str, Any]) -> dict[str, Any]:
    return await c.search(parse_search(("idx",), {}, {"size": 0, "aggs": aggs}))


async def _cluster(transport: RecordingRay) -> tuple[Coordinator, dict[str, dict[str, Any]]]:
    c = Coordinator(ReplicatedBackend(transport))
    c.create_index("idx", {"settings": {"number_of_shards": 2, "number_of_replicas": 0},
                           "mappings": {"properties": {"tag": {"type": "keyword"},
                                                       "n": {"type": "long"}}}})
    docs = _docs()
    for at in range(0, DOCS, 50):   # several segments per shard
        await c.bulk([{"action": "index", "index": "idx", "id": k, "source": v}
                      for k, v in list(docs.items())[at:at + 50]], refresh=True)
    return c, docs


async def _pins_left(transport: RecordingRay) -> list[dict[int, int]]:
    return [await transport.call(h, "pinned_generations") for h in transport.spawned]


def _run(body: Any) -> None:
    async def run() -> None:
        transport = RecordingRay()
        c, docs = await _cluster(transport)
        try:
            await body(c, transport, docs)
        finally:
            c.delete_index("idx")
    asyncio.run(run())


def test_a_terms_settled_in_round_one_pins_nothing(ray_session) -> None:
    async def body(c: Coordinator, transport: RecordingRay, docs: dict) -> None:
        got = await _search(c, _aggs(5, 100, subs=False))   # every shard ships all its keys
        assert got["_shards"]["failed"] == 0
        assert got["aggregations"]["t"] == _brute(docs, 5, subs=False)
        assert transport.pins == []
    _run(body)


def test_later_rounds_pin_the_generations_round_one_read_and_release_them(ray_session) -> None:
    async def body(c: Coordinator, transport: RecordingRay, docs: dict) -> None:
        got = await _search(c, _aggs(4, 4))       # a cut: later rounds are needed
        assert got["_shards"]["failed"] == 0
        assert got["aggregations"]["t"] == _brute(docs, 4)
        assert len({k for k, _ in transport.pins}) == 1       # one key for the search
        assert sorted(g for _, g in transport.pins) == sorted(got["_snapshot"].values())
        assert await _pins_left(transport) == [{}, {}]
    _run(body)


def test_a_merge_before_the_pin_runs_the_search_again_on_a_pinned_snapshot(ray_session) -> None:
    async def body(c: Coordinator, transport: RecordingRay, docs: dict) -> None:
        after = dict(docs)

        async def churn_and_merge() -> None:
            ops = [{"action": "index", "index": "idx", "id": str(i), "source": {"tag": ["zz"]}}
                   for i in range(0, DOCS, 2)]
            ops += [{"action": "delete", "index": "idx", "id": str(i)}
                    for i in range(1, DOCS, 4)]
            await c.bulk(ops, refresh=True)
            await c.force_merge("idx", max_num_segments=1)
            after.update({str(i): {"tag": ["zz"]} for i in range(0, DOCS, 2)})
            for i in range(1, DOCS, 4):
                del after[str(i)]
        transport.hook = churn_and_merge
        got = await _search(c, _aggs(4, 4))
        assert transport.hook is None                        # the merge ran before the pin
        assert got["_shards"]["failed"] == 0, got["_shards"]
        assert got["aggregations"]["t"] == _brute(after, 4)
        assert None in [g for _, g in transport.pins]        # pinned at the latest, again
        assert await _pins_left(transport) == [{}, {}]
    _run(body)
