"""Replicated shards, in process: the real coordinator, shard groups and shard copies (with
their files), reached through ``LocalTransport`` instead of Ray so copies can be crashed and
restarted deterministically. The same code runs over Ray in ``test_ray_cluster.py``.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.durability import Durability
from shardsearch.cluster.distribution.replication import GroupSession, ReplicatedBackend
from shardsearch.cluster.distribution.shard_group import STARTED
from shardsearch.cluster.distribution.transport import LocalTransport
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


class Service:
    """A coordinator over replicated, persistent shards on two simulated nodes."""

    def __init__(self, data_dir: Path, nodes: int = 2, write_timeout: float = 5.0,
                 absent: set[tuple[int, int]] | None = None) -> None:
        self.transport = LocalTransport([f"node-{i}" for i in range(1, nodes + 1)])
        self.transport.absent = set(absent or ())
        self.backend = ReplicatedBackend(self.transport, data_dir=str(data_dir),
                                         write_timeout=write_timeout)
        self.coord = Coordinator(self.backend)
        self.coord.durable = Durability(self.coord, str(data_dir))

    async def start(self) -> Service:
        await self.coord.durable.ready()
        return self

    def close(self) -> None:
        for h in self.transport.handles:
            if h.alive:
                h.crash()
        self.coord.durable.close()

    def group(self, index: str, shard: int = 0) -> Any:
        return self.coord.indices[index].shards[shard]

    async def settle(self, rounds: int = 20) -> None:
        """Monitor rounds until no catch-up is running."""
        for _ in range(rounds):
            await self.backend.maintain()
            for _ in range(5):
                await asyncio.sleep(0)
            if not any(c.busy for g in self.backend.groups for c in g.copies):
                await self.backend.maintain()
                if not any(c.busy for g in self.backend.groups for c in g.copies):
                    return

    async def bulk(self, index: str, docs: dict[str, dict], refresh: bool = True) -> dict:
        return await self.coord.bulk([{"action": "index", "index": index, "id": k, "source": v}
                                      for k, v in docs.items()], refresh)

    async def search(self, index: str, body: dict, **params: str) -> dict:
        return await self.coord.search(parse_search((index,), params, body))

    async def status(self) -> str:
        return (await self.coord.health())["status"]


def docs_of(copy_handle: Any) -> dict[str, tuple[int, int, bytes]]:
    core = copy_handle.obj.core
    out = {}
    for doc_id in sorted(set(core.live) | set(core.buffer)):
        d = core.get(doc_id)
        out[doc_id] = (d.seq, d.version, d.source)
    return out


def corpus(n: int, start: int = 0) -> dict[str, dict]:
    words = ["alpha", "beta", "gamma", "delta"]
    return {str(i): {"title": " ".join(words[: 1 + i % 4]) + f" doc{i}", "n": i}
            for i in range(start, start + n)}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_writes_reach_every_copy_before_they_are_acknowledged(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_shards": 1, "number_of_replicas": 1}})
        g = s.group("b")
        assert {c.placement.node_id for c in g.copies} == {"node-1", "node-2"}
        r = await s.bulk("b", corpus(10))
        assert not r["errors"]
        assert r["items"][0]["index"]["_shards"] == {"total": 2, "successful": 2, "failed": 0}
        assert docs_of(g.copies[0].handle) == docs_of(g.copies[1].handle)
        assert len(docs_of(g.copies[1].handle)) == 10
        assert await s.status() == "green"
        s.close()
    run(main())


def test_a_replica_with_no_other_node_stays_unassigned_and_health_is_yellow(tmp_path: Path
                                                                           ) -> None:
    async def main() -> None:
        s = await Service(tmp_path, nodes=1).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 1}})
        rows = await s.coord.shard_infos()
        assert [(r["prirep"], r["state"]) for r in rows] == [("p", "STARTED"),
                                                              ("r", "UNASSIGNED")]
        assert await s.status() == "yellow"
        s.close()
    run(main())


def test_a_down_replica_turns_health_yellow_then_catches_up_from_the_log(tmp_path: Path
                                                                        ) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_shards": 1, "number_of_replicas": 1}})
        g = s.group("b")
        await s.bulk("b", corpus(10))
        replica = g.copies[1]
        s.transport.kill(replica.handle)
        r = await s.bulk("b", corpus(10, start=10))
        assert not r["errors"]
        assert r["items"][0]["index"]["_shards"]["successful"] == 1
        assert await s.status() == "yellow"
        assert g.in_sync_set == {0}
        assert (await s.search("b", {"query": {"match_all": {}}}))["hits"]["total"]["value"] == 20
        replica.handle.restart()                       # Ray restarts it; it reloads its files
        assert len(docs_of(replica.handle)) == 10      # what it had
        await s.settle()
        assert replica.state == STARTED and g.in_sync_set == {0, 1}
        assert docs_of(replica.handle) == docs_of(g.copies[0].handle)
        assert await s.status() == "green"
        s.close()
    run(main())


def test_a_replica_behind_a_compacted_log_is_sent_a_snapshot(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 1,
                                                "translog.flush_threshold_size": "1kb"}})
        g = s.group("b")
        s.transport.kill(g.copies[1].handle)
        for i in range(6):
            await s.bulk("b", corpus(8, start=8 * i))
        src = g.copies[0].handle.obj
        assert src.export_since(-1)["snapshot"] is not None   # the log was compacted
        g.copies[1].handle.restart()
        await s.settle()
        assert g.copies[1].state == STARTED
        assert docs_of(g.copies[1].handle) == docs_of(g.copies[0].handle)
        s.close()
    run(main())


def test_order_and_scores_do_not_depend_on_which_copy_answers(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_shards": 2, "number_of_replicas": 1,
                                                "translog.flush_threshold_size": "2kb"}})
        for i in range(5):
            await s.bulk("b", corpus(12, start=12 * i), refresh=i % 2 == 0)
        await s.coord.refresh("b")
        # one replica is rebuilt from a snapshot: different segments, same documents
        g0 = s.group("b", 0)
        s.transport.kill(g0.copies[1].handle)
        g0.copies[1].handle.restart()
        await s.settle()
        assert g0.copies[1].handle.obj.recovery["snapshot"] is not None
        body = {"query": {"match": {"title": "gamma delta"}}, "size": 100}

        async def answer() -> list[tuple[str, float]]:
            res = await s.search("b", body)
            return [(h["_id"], h["_score"]) for h in res["hits"]["hits"]]
        answers = []
        for down in (None, 0, 1):      # both copies, then only copy 1, then only copy 0
            for g in (s.group("b", 0), s.group("b", 1)):
                for c in g.copies:
                    c.state = STARTED if down is None or c.no != down else "UNASSIGNED"
            answers.append(await answer())
            answers.append(await answer())   # round robin: the other copy when two are up
        assert all(a == answers[0] for a in answers) and len(answers[0]) > 10
        s.close()
    run(main())


def test_a_search_fails_over_and_fetches_by_seq_when_its_copy_dies(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 1}})
        await s.bulk("b", corpus(20))
        g = s.group("b")
        full = await s.search("b", {"query": {"match": {"title": "beta"}}, "size": 5})
        # the query phase on one copy, then that copy dies before the fetch phase
        sess = GroupSession(g)
        from shardsearch.cluster.engine.shard_messages import ShardQuery
        from shardsearch.cluster.engine.query.dsl import parse_query
        from shardsearch.cluster.engine.sorting import SCORE_SORT
        st, gen = await sess.call("term_stats", (["title"], [("title", "beta")], None))
        hits = await sess.call("query", (ShardQuery(parse_query({"match": {"title": "beta"}}),
                                                    SCORE_SORT, 5, 0, gen, st),))
        s.transport.kill(sess.copy.handle)
        docs = await sess.call("fetch", ([int(a) for a in hits.addr], None, False))
        assert [d.id for d in docs] == [h["_id"] for h in full["hits"]["hits"]]
        # a whole search with a dead copy: answered by the other one, nothing reported failed
        res = await s.search("b", {"query": {"match": {"title": "beta"}}, "size": 5})
        assert res["_shards"]["failed"] == 0
        assert [h["_id"] for h in res["hits"]["hits"]] == [h["_id"] for h in full["hits"]["hits"]]
        s.close()
    run(main())


def test_a_write_to_a_shard_with_no_live_copy_waits_for_it_to_come_back(tmp_path: Path
                                                                       ) -> None:
    async def main() -> None:
        s = await Service(tmp_path, write_timeout=5).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 0}})
        await s.bulk("b", corpus(5))
        g = s.group("b")
        s.transport.kill(g.copies[0].handle)

        async def restart_later() -> None:
            await asyncio.sleep(0.5)
            g.copies[0].handle.restart()
        asyncio.get_running_loop().create_task(restart_later())
        r = await s.bulk("b", corpus(5, start=5))
        assert not r["errors"]
        assert len(docs_of(g.copies[0].handle)) == 10
        s.close()
    run(main())


def test_a_write_to_a_shard_that_stays_down_fails_with_a_clear_error(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path, write_timeout=0.5).start()
        s.coord.create_index("b", {"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
        s.transport.kill(s.group("b", 0).copies[0].handle)
        r = await s.bulk("b", corpus(10))
        assert r["errors"]
        bad = [i["index"] for i in r["items"] if "error" in i["index"]]
        good = [i["index"] for i in r["items"] if "error" not in i["index"]]
        assert bad and good                       # the other shard took its documents
        assert all(b["status"] == 503 and b["error"]["type"] == "unavailable_shards_exception"
                   for b in bad)
        assert "primary shard is not active" in bad[0]["error"]["reason"]
        assert await s.status() == "red"
        res = await s.search("b", {"query": {"match_all": {}}, "size": 20})
        assert res["_shards"]["failed"] == 1 and res["_shards"]["failures"][0]["shard"] == 0
        assert len(res["hits"]["hits"]) == len(good)
        with pytest.raises(Exception) as err:
            await s.search("b", {"query": {"match_all": {}}},
                           allow_partial_search_results="false")
        assert getattr(err.value, "status", None) == 503
        assert err.value.es_type == "search_phase_execution_exception"
        s.close()
    run(main())


def test_a_copy_holding_an_unacknowledged_write_is_rebuilt(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 1}})
        await s.bulk("b", corpus(4))
        g = s.group("b")
        a = g.copies[1]
        # copy 1 ran a command that never reached copy 0 and was never acknowledged
        from shardsearch.cluster.engine.doc_parsing import parse_document
        from shardsearch.cluster.engine.writes import WriteOp
        fields, _ = parse_document({"title": "ghost"}, g.mapping, "ghost")
        a.handle.obj.command(g.next_op, "apply", ([WriteOp("index", "ghost", 999,
                                                           orjson.dumps({"title": "ghost"}),
                                                           fields)], None, True),
                             "lost-write", g.last_id)
        s.transport.kill(a.handle)
        await s.bulk("b", corpus(4, start=4))      # the group gives that number to this write
        a.handle.restart()
        assert "ghost" in docs_of(a.handle)
        await s.settle()
        assert a.state == STARTED
        assert "ghost" not in docs_of(a.handle)
        assert docs_of(a.handle) == docs_of(g.copies[0].handle)
        s.close()
    run(main())


def test_restart_reopens_indices_with_their_settings_mapping_and_sequence(tmp_path: Path
                                                                         ) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("keep", {"settings": {"number_of_shards": 2,
                                                   "number_of_replicas": 1,
                                                   "max_result_window": 50},
                                      "mappings": {"properties": {"tag": {"type": "keyword"}}}})
        s.coord.create_index("gone", {})
        await s.bulk("keep", corpus(30))
        await s.bulk("keep", {"x": {"title": "dynamic field", "extra": 5}})
        s.coord.delete_index("gone")
        seq = s.coord.indices["keep"].next_seq
        before = await s.search("keep", {"query": {"match": {"title": "gamma"}}, "size": 30})
        s.close()

        t = await Service(tmp_path).start()
        assert sorted(t.coord.indices) == ["keep"]
        meta = t.coord.indices["keep"]
        assert meta.next_seq == seq and meta.max_result_window == 50
        assert meta.mapping.get("tag").type == "keyword" and meta.mapping.get("extra")
        after = await t.search("keep", {"query": {"match": {"title": "gamma"}}, "size": 30})
        assert after["hits"] == before["hits"]
        r = await t.bulk("keep", {"new": {"title": "after restart"}})
        assert r["items"][0]["index"]["_seq_no"] == seq
        assert await t.status() == "green"
        t.close()
    run(main())


def test_a_restart_waits_for_an_in_sync_copy_instead_of_a_stale_one(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 1}})
        await s.bulk("b", corpus(5))
        g = s.group("b")
        s.transport.kill(g.copies[1].handle)          # the replica misses the next writes
        await s.bulk("b", corpus(5, start=5))
        assert g.in_sync_set == {0}
        s.close()
        # restart while the node holding copy 0 (the only in-sync one) is away
        t = await Service(tmp_path, absent={(0, 0)}, write_timeout=0.5).start()
        g = t.group("b")
        assert await t.status() == "red"            # not yellow: copy 1 is stale
        r = await t.bulk("b", {"late": {"title": "x"}})
        assert r["items"][0]["index"]["status"] == 503
        g.copies[0].handle.restart()                  # its node is back
        await t.settle()
        assert await t.status() == "green"
        assert docs_of(g.copies[1].handle) == docs_of(g.copies[0].handle)
        assert len(docs_of(g.copies[1].handle)) == 10
        t.close()
    run(main())


def test_replicas_can_be_added_and_removed_on_a_live_index(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path, nodes=3).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 0}})
        await s.bulk("b", corpus(12))
        s.coord.put_settings("b", {"index": {"number_of_replicas": 2}})
        await s.settle()
        g = s.group("b")
        assert [c.state for c in g.copies] == [STARTED] * 3
        assert len({c.placement.node_id for c in g.copies}) == 3
        assert all(docs_of(c.handle) == docs_of(g.copies[0].handle) for c in g.copies)
        s.coord.put_settings("b", {"index": {"number_of_replicas": 1}})
        assert len(g.copies) == 2 and await s.status() == "green"
        s.close()
    run(main())


def test_a_copy_that_missed_writes_while_down_is_never_the_base(tmp_path: Path) -> None:
    """Both copies down, the stale one back first: writes wait for the in-sync one rather
    than continue from the stale one (which would lose acknowledged writes)."""
    async def main() -> None:
        s = await Service(tmp_path, write_timeout=0.5).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 1}})
        await s.bulk("b", corpus(5))
        g = s.group("b")
        primary, replica = g.copies
        s.transport.kill(replica.handle)
        await s.settle()                     # the monitor sees it down (no write failed on it)
        assert replica.state != STARTED and g.in_sync_set == {0, 1}
        await s.bulk("b", corpus(5, start=5))
        assert g.in_sync_set == {0}          # acknowledged without it: out of the set
        s.transport.kill(primary.handle)
        replica.handle.restart()
        r = await s.bulk("b", {"x": {"title": "waits"}})
        assert r["items"][0]["index"]["status"] == 503
        assert await s.status() == "red"
        primary.handle.restart()
        await s.settle()
        assert await s.status() == "green"
        assert len(docs_of(replica.handle)) == 10
        assert docs_of(replica.handle) == docs_of(primary.handle)
        s.close()
    run(main())


def test_a_lone_copy_that_restarted_serves_again_without_any_write(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_replicas": 0}})
        await s.bulk("b", corpus(8))
        g = s.group("b")
        s.transport.kill(g.copies[0].handle)
        with pytest.raises(Exception) as err:      # its only shard: all shards failed, 503
            await s.search("b", {"query": {"match_all": {}}})
        assert err.value.status == 503 and await s.status() == "red"
        g.copies[0].handle.restart()
        await s.settle()
        res = await s.search("b", {"query": {"match_all": {}}})
        assert res["_shards"]["failed"] == 0 and res["hits"]["total"]["value"] == 8
        s.close()
    run(main())

