"""``"profile": true``: Elasticsearch's per-shard shape, and our figures equal to what each method
must send (pure logic: the real coordinator and shards in one process, no Ray).

What a shard must send in the query phase:
* classic ``from_size``: its top ``from + size`` — ``min(from + size, its matches)``;
* ``search_after``: its top ``size`` after the key — ``min(size, its matches after the key)``;
* ``deep_page``: a bounded range, however deep the page (``deep_page.py``).
"""
from __future__ import annotations

import re

import pytest

from inprocess import LocalCluster

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.indices.routing import shard_for
from shardsearch.cluster.distribution.simulation import ShardSimulator, ShardTimeout, SimulatedFailure, Trouble

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPINGS = {"properties": {"n": {"type": "long"}, "t": {"type": "text"},
                           "tag": {"type": "keyword"}}}
N = 600
SORT = [{"n": "asc"}, {"_doc": "asc"}]


def _docs(n: int = N) -> list[dict]:
    return [{"n": (i * 37) % 101, "t": "red fox" if i % 3 else "red", "tag": f"t{i % 5}"}
            for i in range(n)]


@pytest.fixture(scope="module")
def lc() -> LocalCluster:
    c = LocalCluster().create("d", shards=4, mappings=MAPPINGS)
    c.index("d", _docs())
    return c


def _per_shard(resp: dict) -> dict[int, dict]:
    return {s["shard_id"]: s["shardsearch"] for s in resp["profile"]["shards"]}


def _matches_per_shard(ids: list[str], shards: int = 4) -> dict[int, int]:
    out = {s: 0 for s in range(shards)}
    for i in ids:
        out[shard_for(i, shards)] += 1
    return out


def test_profile_has_elasticsearch_shape_per_shard(lc: LocalCluster) -> None:
    r = lc.search("d", {"profile": True, "query": {"match": {"t": "fox"}}, "size": 3})
    shards = r["profile"]["shards"]
    assert len(shards) == 4
    for s in shards:
        assert re.fullmatch(r"\[[^\]]+\]\[d\]\[\d\]", s["id"])
        assert s["index"] == "d" and s["id"].endswith(f"[{s['shard_id']}]")
        search = s["searches"][0]
        q = search["query"][0]
        assert q["type"] == "BooleanQuery" and q["description"] == "t:fox"
        assert isinstance(q["time_in_nanos"], int) and q["time_in_nanos"] > 0
        assert q["breakdown"]["score"] == q["time_in_nanos"]
        assert isinstance(search["rewrite_time"], int)
        assert search["collector"][0]["reason"] == "search_top_hits"
        assert s["dfs"]["statistics"]["type"] == "statistics"   # global statistics gathered
    # only shards holding page hits ran a fetch
    fetched = [s for s in shards if "fetch" in s]
    assert sum(s["shardsearch"]["fetched"] for s in fetched) == 3
    assert all(s["fetch"]["time_in_nanos"] > 0 for s in fetched)
    ours = r["profile"]["shardsearch"]
    assert ours["method"] == "from_size" and ours["merge_ns"] > 0 and ours["took_ns"] > 0
    assert ours["candidates"] == sum(s["shardsearch"]["candidates"] for s in shards)
    assert ours["bytes"] > 0 and ours["pickled_bytes"] > 0 and ours["fetch_bytes"] > 0


def test_no_profile_unless_asked(lc: LocalCluster) -> None:
    assert "profile" not in lc.search("d", {"size": 1})


@pytest.mark.parametrize("from_,size", [(0, 10), (40, 10), (130, 25), (580, 30)])
def test_classic_candidates_per_shard_are_min_of_from_plus_size_and_matches(
        lc: LocalCluster, from_: int, size: int) -> None:
    query = {"match": {"t": "fox"}}
    everything = lc.ids("d", {"query": query, "size": N})
    matches = _matches_per_shard(everything)
    r = lc.search("d", {"profile": True, "query": query, "from": from_, "size": size},
                  paging="from_size")
    per = _per_shard(r)
    assert r["profile"]["shardsearch"]["method"] == "from_size"
    for sid, fig in per.items():
        assert fig["matches"] == matches[sid]
        assert fig["candidates"] == min(from_ + size, matches[sid])
        assert fig["k"] == from_ + size


@pytest.mark.parametrize("anchor,size", [(0, 10), (57, 10), (300, 40), (590, 20)])
def test_search_after_candidates_per_shard_are_min_of_size_and_remaining(
        lc: LocalCluster, anchor: int, size: int) -> None:
    ordered = lc.search("d", {"sort": SORT, "size": N})["hits"]["hits"]
    after = ordered[anchor]["sort"]
    remaining = _matches_per_shard([h["_id"] for h in ordered[anchor + 1:]])
    r = lc.search("d", {"profile": True, "sort": SORT, "size": size, "search_after": after})
    assert r["profile"]["shardsearch"]["method"] == "search_after"
    assert [h["_id"] for h in r["hits"]["hits"]] == \
        [h["_id"] for h in ordered[anchor + 1:anchor + 1 + size]]
    for sid, fig in _per_shard(r).items():
        assert fig["candidates"] == min(size, remaining[sid])


@pytest.mark.parametrize("from_", [100, 300, 570])
def test_deep_page_candidates_are_bounded_whatever_the_depth(from_: int) -> None:
    lc = LocalCluster().create("d", shards=4, mappings=MAPPINGS)
    lc.index("d", _docs(2000))
    lc.coord.deep_page_samples = 32
    size = 10
    body = {"sort": SORT, "from": from_, "size": size}
    classic = lc.search("d", {**body, "profile": True}, paging="from_size")
    deep = lc.search("d", {**body, "profile": True}, paging="deep_page")
    assert [h["_id"] for h in deep["hits"]["hits"]] == [h["_id"] for h in classic["hits"]["hits"]]
    assert deep["profile"]["shardsearch"]["method"] == "deep_page"
    per = _per_shard(deep)
    step = max(-(-fig["matches"] // 32) for fig in per.values())   # one sample every `step`
    for fig in per.values():
        assert fig["sample_candidates"] <= 32
        assert fig["candidates"] <= 4 * step + size
    assert deep["profile"]["shardsearch"]["candidates"] < \
        classic["profile"]["shardsearch"]["candidates"]


def test_paging_parameter_chooses_the_method(lc: LocalCluster) -> None:
    body = {"profile": True, "sort": SORT, "from": 1200 // 4, "size": 5}
    lc.coord.deep_page_threshold = 100
    try:
        assert lc.search("d", body)["profile"]["shardsearch"]["method"] == "deep_page"
        assert lc.search("d", body, paging="from_size")["profile"]["shardsearch"]["method"] \
            == "from_size"
    finally:
        lc.coord.deep_page_threshold = 1000
    assert lc.search("d", body)["profile"]["shardsearch"]["method"] == "from_size"
    assert lc.search("d", body, paging="deep_page")["profile"]["shardsearch"]["method"] \
        == "deep_page"
    with pytest.raises(IllegalArgument, match=r"\[paging\] must be one of"):
        lc.search("d", body, paging="fast")


# --- the shard side of simulated trouble (no Ray) ---------------------------------------------

def test_trouble_knobs_are_validated() -> None:
    for bad in ({"fail_rate": 2}, {"latency_ms": -1}, {"slowdown": 0.5}, {"jitter_ms": "x"},
                {"latency": 5}, {"seed": "s"}, {"latency_ms": float("inf")}):
        with pytest.raises(IllegalArgument):
            Trouble.from_dict(bad)
    assert Trouble.from_dict({"latency_ms": "5", "seed": 3}) == Trouble(latency_ms=5.0, seed=3)
    assert Trouble.from_dict({}).is_noop


def test_seeded_jitter_is_reproducible_and_differs_per_shard() -> None:
    def delays(salt: str) -> list[int]:
        sim = ShardSimulator()
        sim.configure({"jitter_ms": 1, "seed": 7}, salt=salt)
        out = []
        for _ in range(5):
            sim.run(lambda: None)
            out.append(sim.last_delay_ns)
        return out
    assert delays("d/0") == delays("d/0")
    assert delays("d/0") != delays("d/1")


def test_fail_rate_one_always_fails_and_deadline_cuts_the_wait() -> None:
    import time
    sim = ShardSimulator()
    sim.configure({"fail_rate": 1})
    with pytest.raises(SimulatedFailure):
        sim.run(lambda: 1)
    sim.configure({"latency_ms": 5000})
    t0 = time.time()
    with pytest.raises(ShardTimeout):
        sim.run(lambda: 1, deadline=time.time() + 0.05)
    assert time.time() - t0 < 1.0
    with pytest.raises(ShardTimeout):       # already late: refused without waiting
        sim.run(lambda: 1, deadline=time.time() - 1)
    sim.configure(None)
    assert sim.run(lambda: 1) == 1


def test_slowdown_multiplies_the_shards_own_time() -> None:
    import time
    sim = ShardSimulator()
    sim.configure({"slowdown": 4})
    t0 = time.perf_counter()
    sim.run(time.sleep, 0.02)
    assert time.perf_counter() - t0 >= 0.079
    assert sim.last_work_ns >= 4 * 0.02e9 * 0.99
