"""Simulated trouble and profiles through the real service (Ray shard actors, uvicorn, HTTP and the
Python API): every knob shows where it should, and the real timeout / partial-result / retry paths
run. ``/_sim`` is ours, not Elasticsearch's.
"""
from __future__ import annotations

import random
import time
from collections.abc import Iterator

import httpx
import pytest

from shardsearch.cluster.indices.routing import shard_for

DOCS = 60


@pytest.fixture
def sim(es: httpx.Client) -> Iterator[httpx.Client]:
    """A 3-shard index ``sim`` of ``DOCS`` documents; all trouble is cleared afterwards."""
    es.put("/sim", json={"settings": {"number_of_shards": 3},
                         "mappings": {"properties": {"n": {"type": "long"},
                                                     "t": {"type": "text"}}}})
    lines = []
    for i in range(DOCS):
        lines.append('{"index": {"_id": "%d"}}' % i)
        lines.append('{"n": %d, "t": "%s"}' % (i, "red fox" if i % 2 else "red"))
    r = es.post("/sim/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]
    yield es
    es.delete("/_sim")


def _trouble(es: httpx.Client, **body) -> dict:
    r = es.post("/_sim/shards", json={"index": "sim", **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_simulation_is_off_by_default_and_reported_in_health_while_on(sim: httpx.Client) -> None:
    assert "simulation" not in sim.get("/_cluster/health").json()
    assert sim.get("/_sim").json() == {"simulation": {"enabled": False, "shards": []}}
    out = _trouble(sim, shard=[0, 2], latency_ms=5, jitter_ms=1, fail_rate=0.1, seed=3)
    assert out["acknowledged"] is True and out["shards"] == 2
    health = sim.get("/_cluster/health").json()
    assert health["simulation"]["enabled"] is True
    assert [(s["index"], s["shard"], s["latency_ms"], s["fail_rate"])
            for s in health["simulation"]["shards"]] == [("sim", 0, 5.0, 0.1), ("sim", 2, 5.0, 0.1)]
    assert sim.get("/_sim").json()["simulation"] == health["simulation"]
    assert sim.delete("/_sim").json()["acknowledged"] is True
    assert "simulation" not in sim.get("/_cluster/health").json()


def test_all_zero_knobs_turn_a_shard_off(sim: httpx.Client) -> None:
    _trouble(sim, latency_ms=5)
    _trouble(sim, shard=1)
    assert [s["shard"] for s in sim.get("/_sim").json()["simulation"]["shards"]] == [0, 2]


def test_bad_simulation_requests_are_elasticsearch_errors(sim: httpx.Client) -> None:
    cases = [({"index": "sim", "fail_rate": 2}, 400, "illegal_argument_exception"),
             ({"index": "sim", "slowdown": 0}, 400, "illegal_argument_exception"),
             ({"index": "sim", "shard": 7}, 400, "illegal_argument_exception"),
             ({"index": "sim", "latency": 5}, 400, "parsing_exception"),
             ({"index": "nope", "latency_ms": 5}, 404, "index_not_found_exception")]
    for body, status, kind in cases:
        r = sim.post("/_sim/shards", json=body)
        assert r.status_code == status, (body, r.text)
        assert r.json()["error"]["type"] == kind
    assert sim.post("/_sim/shards", content=b"[1]",
                    headers={"content-type": "application/json"}).status_code == 400


def test_latency_shows_in_took(sim: httpx.Client) -> None:
    _trouble(sim, shard=0, latency_ms=250)
    r = sim.post("/sim/_search", json={"size": DOCS, "profile": True}).json()
    assert r["took"] >= 250
    assert r["_shards"] == {"total": 3, "successful": 3, "skipped": 0, "failed": 0}
    delayed = {s["shard_id"]: s["shardsearch"]["simulated_delay_ns"]
               for s in r["profile"]["shards"]}
    assert delayed[0] >= 2 * 250e6 and delayed[1] == delayed[2] == 0   # query + fetch
    assert r["profile"]["shards"][0]["shardsearch"]["query_round_trip_ns"] >= 250e6


def test_fail_rate_one_on_one_shard_gives_partial_results(sim: httpx.Client) -> None:
    whole = sim.post("/sim/_search", json={"size": 0}).json()["hits"]["total"]["value"]
    _trouble(sim, shard=1, fail_rate=1)
    r = sim.post("/sim/_search", json={"size": DOCS, "profile": True})
    assert r.status_code == 200
    body = r.json()
    assert body["_shards"]["failed"] == 1 and body["_shards"]["successful"] == 2
    failure = body["_shards"]["failures"][0]
    assert failure["index"] == "sim" and failure["shard"] == 1
    assert failure["reason"]["type"] == "simulated_failure_exception"
    assert 0 < body["hits"]["total"]["value"] < whole
    assert len(body["hits"]["hits"]) == body["hits"]["total"]["value"]
    ours = body["profile"]["shardsearch"]
    assert ours["retries"] == 1   # retried once on the same actor before counting as failed
    assert ours["unanswered"] == [{"index": "sim", "shard": 1, "failed": True,
                                   "timed_out": False, "retries": 1}]


def test_failed_shard_without_partial_results_is_503(sim: httpx.Client) -> None:
    _trouble(sim, shard=1, fail_rate=1)
    r = sim.post("/sim/_search?allow_partial_search_results=false", json={})
    assert r.status_code == 503
    assert r.json()["error"]["type"] == "search_phase_execution_exception"
    assert r.json()["error"]["root_cause"][0]["type"] == "simulated_failure_exception"


def test_every_shard_failing_is_503_all_shards_failed(sim: httpx.Client) -> None:
    _trouble(sim, fail_rate=1)
    r = sim.post("/sim/_search", json={"query": {"match": {"t": "fox"}}})
    assert r.status_code == 503
    assert r.json()["error"]["reason"] == "all shards failed"


def _seed_failing_first_call_only(salt: str) -> int:
    """A seed whose draws on shard ``salt`` fail the first call (p=0.5) and pass the next two."""
    for seed in range(1000):
        rng = random.Random(f"{seed}:{salt}")
        if rng.random() < 0.5 <= rng.random() and rng.random() >= 0.5:
            return seed
    raise AssertionError("no seed")


def test_a_failed_call_is_retried_once_on_the_same_shard(sim: httpx.Client) -> None:
    seed = _seed_failing_first_call_only("sim/2")
    _trouble(sim, shard=2, fail_rate=0.5, seed=seed)
    r = sim.post("/sim/_search", json={"size": DOCS, "profile": True}).json()
    assert r["_shards"]["failed"] == 0 and r["_shards"]["successful"] == 3
    assert r["hits"]["total"]["value"] == DOCS
    per = {s["shard_id"]: s["shardsearch"]["retries"] for s in r["profile"]["shards"]}
    assert per == {0: 0, 1: 0, 2: 1}


def test_timeout_gives_timed_out_with_the_shards_that_answered(sim: httpx.Client) -> None:
    _trouble(sim, shard=0, latency_ms=5000)
    t0 = time.monotonic()
    r = sim.post("/sim/_search", json={"size": DOCS, "timeout": "200ms", "profile": True}).json()
    assert time.monotonic() - t0 < 2.5
    assert r["timed_out"] is True
    assert r["_shards"]["successful"] == 2 and r["_shards"]["failed"] == 0
    assert r["hits"]["hits"] and all(h["_index"] == "sim" for h in r["hits"]["hits"])
    assert r["profile"]["shardsearch"]["unanswered"][0]["timed_out"] is True
    # the slow shard gave up at the deadline: with the trouble gone it answers at once
    sim.delete("/_sim")
    t0 = time.monotonic()
    r = sim.post("/sim/_search", json={"size": 1}).json()
    assert r["timed_out"] is False and r["_shards"]["successful"] == 3
    assert time.monotonic() - t0 < 2.0


def test_timeout_with_global_statistics_keeps_the_answering_shards(sim: httpx.Client) -> None:
    """The statistics round waits at most half the timeout, so the query round still has time
    for the shards that answer."""
    _trouble(sim, shard=1, latency_ms=5000)
    r = sim.post("/sim/_search", json={"query": {"match": {"t": "fox"}}, "timeout": "1s",
                                       "size": DOCS}).json()
    assert r["timed_out"] is True and r["_shards"]["successful"] == 2
    assert r["hits"]["hits"]


def test_timeout_on_the_deep_page_path(sim: httpx.Client) -> None:
    _trouble(sim, shard=2, latency_ms=5000)
    r = sim.post("/sim/_search?paging=deep_page",
                 json={"from": 5, "size": 5, "sort": [{"n": "asc"}], "timeout": "1s",
                       "profile": True}).json()   # 1 s: two rounds must fit, on a busy machine
    assert r["timed_out"] is True and r["_shards"]["successful"] == 2
    assert r["profile"]["shardsearch"]["method"] == "deep_page"
    assert len(r["hits"]["hits"]) == 5


def test_slowdown_multiplies_a_shards_own_time(sim: httpx.Client) -> None:
    _trouble(sim, shard=1, slowdown=50)
    r = sim.post("/sim/_search", json={"query": {"match": {"t": "fox"}}, "profile": True}).json()
    fig = {s["shard_id"]: s["shardsearch"] for s in r["profile"]["shards"]}
    # the extra (slowdown - 1) x work was really waited for, not only reported
    assert fig[1]["query_round_trip_ns"] >= fig[1]["query_ns"] * 49 / 50


def test_python_api_simulate_profile_and_sweep(cluster, sim: httpx.Client) -> None:
    out = cluster.simulate("sim", 0, latency_ms=30)
    assert out["simulation"]["shards"][0]["latency_ms"] == 30.0
    assert cluster.health()["simulation"]["enabled"] is True
    r = cluster.search("sim", size=5, profile=True)
    assert r["took"] >= 30 and r["profile"]["shardsearch"]["method"] == "from_size"
    cluster.simulate_clear()
    assert "simulation" not in cluster.health()
    df = cluster.sweep("sim", {"from_": [0, 20], "size": [5]},
                       method=["from_size", "deep_page", "search_after", "scroll"], repeat=2)
    assert set(df.method) == {"from_size", "deep_page", "search_after", "scroll"}
    assert len(df) == 4 * 2 * 2
    for col in ("took_ms", "wall_ms", "candidates", "bytes", "merge_ms", "hits", "shards"):
        assert col in df.columns
    classic = df[(df.method == "from_size") & (df.from_ == 20)]
    per_shard = [0, 0, 0]
    for i in range(DOCS):
        per_shard[shard_for(str(i), 3)] += 1
    assert (classic.candidates == sum(min(25, n) for n in per_shard)).all()
    assert (df[df.method == "search_after"].candidates <= 3 * 5).all()
    assert (df.hits == 5).all()
    assert set(df[df.method == "scroll"].query_phase) <= {"from_size", "search_after"}


def test_scroll_and_pit_are_named_in_the_profile(sim: httpx.Client) -> None:
    r = sim.post("/sim/_search?scroll=1m", json={"size": 5, "profile": True}).json()
    assert r["profile"]["shardsearch"]["method"] == "scroll"
    nxt = sim.post("/_search/scroll", json={"scroll": "1m", "scroll_id": r["_scroll_id"]}).json()
    assert nxt["profile"]["shardsearch"]["method"] == "scroll"
    assert nxt["profile"]["shardsearch"]["query_phase"] == "search_after"
    pit = sim.post("/sim/_pit?keep_alive=1m").json()["id"]
    r = sim.post("/_search", json={"size": 5, "pit": {"id": pit}, "profile": True}).json()
    assert r["profile"]["shardsearch"]["method"] == "pit"
    sim.request("DELETE", "/_pit", json={"id": pit})
