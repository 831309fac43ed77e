"""All rounds of one search read one snapshot, even when segments merge between them.

A cut ``terms`` aggregation (``search/aggs/rounds.py``) asks the shards several times. Between
its first round and the later ones the test (a hook in the transport, no clock) updates and
deletes documents, refreshes and force-merges every shard down to one segment — a merge that
would drop the versions the first round counted, were they not pinned. The search pins the
generations round 1 read before its later rounds (``search/round_pins.py``), so it answers
exactly what it would have answered with nothing happening in between, with no shard failure; afterwards nothing stays pinned.
"""
from __future__ import annotations

import asyncio
import random

import pytest

from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.replication import ReplicatedBackend
from shardsearch.cluster.distribution.transport import LocalTransport
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

AGGS = {"t": {"terms": {"field": "tag", "size": 4, "shard_size": 4},
              "aggs": {"s": {"sum": {"field": "n"}}}}}


class BetweenRounds(LocalTransport):
    """In-process shard copies; ``hook`` runs once, before the first later-round call (a
    later round names the generation round 1 read, which is pinned by then)."""

    hook = None

    async def call(self, handle, method, *args, timeout=None):
        if method == "query" and args[0].k == 0 and not args[0].latest \
                and args[0].generation is not None \
                and args[0].agg_cuts and self.hook is not None:
            hook, self.hook = self.hook, None
            await hook()
        return await super().call(handle, method, *args, timeout=timeout)


def _docs() -> dict[str, dict]:
    rnd = random.Random(5)
    return {str(i): {"tag": [f"t{rnd.randint(0, 30)}" for _ in range(rnd.randint(1, 3))],
                     "n": rnd.randint(0, 9)} for i in range(400)}


async def _search(c: Coordinator) -> dict:
    return await c.search(parse_search(("idx",), {}, {"size": 0, "aggs": AGGS}))


def test_a_merge_between_aggregation_rounds_changes_nothing() -> None:
    async def run() -> None:
        transport = BetweenRounds()
        c = Coordinator(ReplicatedBackend(transport))
        c.create_index("idx", {"settings": {"number_of_shards": 3},
                               "mappings": {"properties": {"tag": {"type": "keyword"},
                                                           "n": {"type": "long"}}}})
        docs = _docs()
        for at in range(0, 400, 40):   # several segments per shard
            await c.bulk([{"action": "index", "index": "idx", "id": k, "source": v}
                          for k, v in list(docs.items())[at:at + 40]], refresh=True)
        expected = await _search(c)
        assert expected["_shards"]["failed"] == 0

        async def churn_and_merge() -> None:
            ops = [{"action": "index", "index": "idx", "id": str(i), "source": {"tag": ["zz"]}}
                   for i in range(0, 400, 2)]
            ops += [{"action": "delete", "index": "idx", "id": str(i)} for i in range(1, 400, 4)]
            await c.bulk(ops, refresh=True)
            await c.force_merge("idx", max_num_segments=1)
            merged.append(True)
        merged: list[bool] = []
        transport.hook = churn_and_merge
        during = await _search(c)
        assert merged and transport.hook is None          # the merge ran between the rounds
        assert during["_shards"]["failed"] == 0, during["_shards"]
        assert during["aggregations"] == expected["aggregations"]
        after = await _search(c)
        assert after["aggregations"]["t"]["buckets"][0]["key"] == "zz"
        for h in transport.handles:
            assert h.obj.core.pins == {}                   # the search released its pins

    asyncio.run(run())
