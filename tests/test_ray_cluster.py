"""shardsearch on a real multi-node Ray cluster (one machine, loopback), started by the test with
``ray_config/local_cluster.sh``: a head and two worker nodes, each in its own session and temp
dir, on ports no other Ray here uses, token auth on. The cluster is always stopped at the end,
by signalling only the processes the script started (never ``ray stop``).

What must hold: copies of a shard live on different nodes; killing a shard's process keeps
searches answering (partial results, or from the replica) and the shard comes back with all its
documents; stopping a whole worker node loses no acknowledged write, health turns yellow, and
green again when the node returns; a soak of concurrent writes and paged searches with random
kills sees no unexpected 5xx and loses no acknowledged write.
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from conftest import ROOT, free_port
from service_proc import ServeProcess, session_pids

pytestmark = pytest.mark.slow

SCRIPT = ROOT / "ray_config" / "local_cluster.sh"


class LocalCluster:
    """The script's cluster, in a temp dir of its own."""

    def __init__(self, base: Path) -> None:
        self.dir = base / "cluster"
        self.port = free_port()
        self.env = {**os.environ, "CLUSTER_DIR": str(self.dir), "RAY_PORT": str(self.port),
                    "WORKERS": "2", "HEAD_CPUS": "1", "WORKER_CPUS": "1",
                    "OBJECT_STORE_MB": "100",
                    "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
        self.env.pop("RAY_ADDRESS", None)
        self.env.pop("RAY_AUTH_TOKEN", None)

    def run(self, *args: str, timeout: float = 180) -> str:
        out = subprocess.run(["bash", str(SCRIPT), *args], env=self.env, capture_output=True,
                             text=True, timeout=timeout)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    @property
    def token(self) -> str:
        return (self.dir / "auth_token").read_text().strip()


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # a short path: Ray's unix socket paths under it must stay below 108 bytes
    base = Path(tempfile.mkdtemp(prefix="ssc-", dir="/tmp"))
    c = LocalCluster(base)
    try:
        c.run("start")
        yield c
    finally:
        sids = [int(p.read_text()) for p in c.dir.glob("*.sid") if p.read_text().strip()]
        subprocess.run(["bash", str(SCRIPT), "stop"], env=c.env, capture_output=True,
                       timeout=120)
        deadline = time.monotonic() + 10
        while (left := [pid for sid in sids for pid in session_pids(sid)]) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        shutil.rmtree(base, ignore_errors=True)
        assert not left, f"the script left processes of its nodes running: {left}"


@pytest.fixture(scope="module")
def service(cluster: LocalCluster, tmp_path_factory) -> Iterator[ServeProcess]:
    base = tmp_path_factory.mktemp("service")
    # ``auto`` joins the cluster RAY_ADDRESS names (what ``local_cluster.sh env`` exports)
    svc = ServeProcess(free_port(), ["--ray-address", "auto", "--data-dir", str(base / "data")],
                       env={"RAY_ADDRESS": f"127.0.0.1:{cluster.port}", "RAY_AUTH_MODE": "token",
                            "RAY_AUTH_TOKEN": cluster.token, "SHARDSEARCH_WRITE_TIMEOUT": "20"},
                       log=base / "serve.log")
    try:
        svc.wait_up()
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def es(service: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=60) as c:
        yield c


def bulk(c: httpx.Client, index: str, docs: dict[str, dict], refresh: bool = False) -> dict:
    lines = []
    for k, v in docs.items():
        lines += [orjson.dumps({"index": {"_index": index, "_id": k}}), orjson.dumps(v)]
    r = c.post("/_bulk" + ("?refresh=true" if refresh else ""),
               content=b"\n".join(lines) + b"\n",
               headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    return r.json()


def corpus(n: int, start: int = 0) -> dict[str, dict]:
    words = ["north", "south", "east", "west"]
    return {f"d{i}": {"title": " ".join(words[: 1 + i % 4]) + f" {i}", "n": i}
            for i in range(start, start + n)}


def copies(c: httpx.Client, index: str) -> list[dict[str, Any]]:
    r = c.get(f"/_cat/shards/{index}?format=json&h=index,shard,prirep,state,docs,node,pid,copy")
    return r.json()


def wait_for(what: str, check, timeout: float = 60.0, every: float = 0.3) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


def count(c: httpx.Client, index: str) -> dict:
    return c.get(f"/{index}/_count").json()


def health(c: httpx.Client) -> str:
    return c.get("/_cluster/health").json()["status"]


def test_the_service_runs_on_every_node_and_spreads_copies(es: httpx.Client) -> None:
    body = es.get("/_cluster/health").json()
    assert body["number_of_nodes"] == 3 and body["number_of_data_nodes"] == 2
    es.put("/spread", json={"settings": {"number_of_shards": 2, "number_of_replicas": 1}})
    rows = copies(es, "spread")
    assert len(rows) == 4 and all(r["state"] == "STARTED" for r in rows)
    for sid in ("0", "1"):
        nodes = {r["node"] for r in rows if r["shard"] == sid}
        assert len(nodes) == 2, rows                       # primary and replica apart
    assert {r["node"] for r in rows} == {"node_1", "node_2"}   # names, not Ray node ids
    ips = es.get("/_cat/shards/spread?format=json&h=ip").json()
    assert len({r["ip"] for r in ips}) == 1 and ips[0]["ip"]   # one machine, its address
    # every node reports its own processes (the copies on it carry their samples)
    nodes = es.get("/_cat/nodes", params={"format": "json", "bytes": "b", "s": "name",
                                          "h": "name,heap.current,ram.max,pid,uptime"}).json()
    assert len(nodes) == 3 and all(int(n["heap.current"]) > 0 for n in nodes), nodes
    assert len({n["pid"] for n in nodes}) == 3 and len({n["ram.max"] for n in nodes}) == 1
    assert health(es) == "green"
    es.delete("/spread")


def test_killing_a_shard_process_keeps_searches_answering(es: httpx.Client) -> None:
    es.put("/solo", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    es.put("/dup", json={"settings": {"number_of_shards": 2, "number_of_replicas": 1}})
    docs = corpus(120)
    assert not bulk(es, "solo", docs, refresh=True)["errors"]
    assert not bulk(es, "dup", docs, refresh=True)["errors"]
    for index in ("solo", "dup"):
        victim = next(r for r in copies(es, index) if r["shard"] == "0" and r["prirep"] == "p")
        os.kill(int(victim["pid"]), signal.SIGKILL)
        seen_partial = False
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3:
            r = es.get(f"/{index}/_search", params={"size": 5, "q": "north"})
            assert r.status_code == 200, r.text
            shards = r.json()["_shards"]
            if index == "dup":
                assert shards["failed"] == 0, r.text        # the replica answers
            elif shards["failed"]:
                seen_partial = True
                assert shards["failures"][0]["shard"] == 0 and shards["successful"] == 1
                strict = es.get(f"/{index}/_search",
                                params={"allow_partial_search_results": "false"})
                assert strict.status_code in (200, 503)
                if strict.status_code == 503:
                    assert strict.json()["error"]["type"] == "search_phase_execution_exception"
        # the shard comes back by itself, with all its documents
        wait_for(f"{index} back", lambda: count(es, index)["count"] == 120
                 and count(es, index)["_shards"]["failed"] == 0, timeout=60)
        back = next(r for r in copies(es, index)   # _cat values are strings
                    if r["shard"] == "0" and r["copy"] == "0")
        assert back["pid"] != victim["pid"]
        ids = {h["_id"] for h in es.post(f"/{index}/_search",
                                         json={"size": 200}).json()["hits"]["hits"]}
        assert ids == set(docs)
        del seen_partial   # a restart can be quicker than the first search: not required
    es.delete("/solo")
    es.delete("/dup")


def test_stopping_a_worker_node_loses_nothing_and_health_goes_yellow_then_green(
        cluster: LocalCluster, es: httpx.Client) -> None:
    es.put("/ha", json={"settings": {"number_of_shards": 2, "number_of_replicas": 1}})
    assert not bulk(es, "ha", corpus(100), refresh=True)["errors"]
    wait_for("green", lambda: health(es) == "green")
    cluster.run("stop-node", "2")
    wait_for("yellow", lambda: health(es) == "yellow", timeout=30)
    assert count(es, "ha")["count"] == 100                  # no acknowledged write lost
    r = bulk(es, "ha", corpus(50, start=100), refresh=True)   # writes go on meanwhile
    assert not r["errors"]
    assert all(i["index"]["_shards"]["successful"] == 1 for i in r["items"])
    assert count(es, "ha")["count"] == 150
    rows = copies(es, "ha")
    assert sum(r["state"] == "UNASSIGNED" for r in rows) == 2
    cluster.run("start-node", "2")
    wait_for("green", lambda: health(es) == "green", timeout=90)
    rows = copies(es, "ha")
    for sid in ("0", "1"):
        docs = {r["docs"] for r in rows if r["shard"] == sid}
        assert len(docs) == 1, rows                          # the returning copy caught up
    assert count(es, "ha")["count"] == 150
    es.delete("/ha")


def test_soak_concurrent_writes_and_paged_searches_with_random_kills(es: httpx.Client,
                                                                     service: ServeProcess
                                                                     ) -> None:
    es.put("/soak", json={"settings": {"number_of_shards": 2, "number_of_replicas": 1,
                                       "refresh_interval": "200ms",
                                       "max_result_window": 1_000_000},
                          "mappings": {"properties": {"n": {"type": "long"},
                                                      "title": {"type": "text"}}}})
    acked: dict[str, int] = {}
    problems: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()
    stats = {"bulks": 0, "searches": 0, "partial": 0, "kills": 0, "item_errors": 0}

    def writer(w: int) -> None:
        n = 0
        with httpx.Client(base_url=service.url, timeout=60) as c:
            while not stop.is_set():
                docs = {f"w{w}-{n + i}": {"title": f"soak {w} {(n + i) % 7}", "n": n + i}
                        for i in range(25)}
                n += 25
                r = c.post("/_bulk", content=b"\n".join(
                    x for k, v in docs.items()
                    for x in (orjson.dumps({"index": {"_index": "soak", "_id": k}}),
                              orjson.dumps(v))) + b"\n",
                    headers={"content-type": "application/x-ndjson"})
                if r.status_code != 200:
                    problems.append(f"bulk {r.status_code}: {r.text[:300]}")
                    continue
                with lock:
                    stats["bulks"] += 1
                    for item in r.json()["items"]:
                        res = item["index"]
                        if "error" in res:
                            stats["item_errors"] += 1
                            if res["error"]["type"] != "unavailable_shards_exception":
                                problems.append(f"item error: {res}")
                        else:
                            acked[res["_id"]] = res["_seq_no"]

    def searcher() -> None:
        with httpx.Client(base_url=service.url, timeout=60) as c:
            while not stop.is_set():
                frm = random.choice([0, 10, 40, 100])
                r = c.post("/soak/_search", json={"query": {"match": {"title": "soak"}},
                                                  "from": frm, "size": 10,
                                                  "sort": [{"n": "desc"}, "_doc"]})
                with lock:
                    stats["searches"] += 1
                    if r.status_code == 200:
                        if r.json()["_shards"]["failed"]:
                            stats["partial"] += 1
                    elif r.status_code == 503 and r.json()["error"]["type"] in (
                            "search_phase_execution_exception",):
                        stats["partial"] += 1      # every copy of a shard down at once
                    else:
                        problems.append(f"search {r.status_code}: {r.text[:300]}")

    def killer() -> None:
        # a random copy every 2.5 s, once the previous victim is back (green): with one
        # replica a shard then always has a copy to answer from
        with httpx.Client(base_url=service.url, timeout=60) as c:
            while not stop.wait(2.5):
                if health(c) != "green":
                    continue
                rows = [r for r in copies(c, "soak") if r["state"] == "STARTED" and r["pid"]]
                if rows:
                    victim = random.choice(rows)
                    try:
                        os.kill(int(victim["pid"]), signal.SIGKILL)
                        stats["kills"] += 1
                    except ProcessLookupError:
                        pass

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    threads += [threading.Thread(target=searcher) for _ in range(2)]
    threads.append(threading.Thread(target=killer))
    for t in threads:
        t.start()
    time.sleep(20)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    assert not problems, problems[:5]
    assert stats["kills"] >= 2 and stats["bulks"] > 10 and stats["searches"] > 20, stats
    assert stats["partial"] <= stats["searches"] // 20, stats    # the replica answered
    wait_for("green", lambda: health(es) == "green", timeout=90)
    es.post("/soak/_refresh")
    # every document in one page: a fast machine acknowledges more than 10,000 in 20 s
    hits = es.post("/soak/_search", json={"size": len(acked) + 10_000, "_source": False,
                                          "seq_no_primary_term": True}).json()["hits"]["hits"]
    found = {h["_id"]: h["_seq_no"] for h in hits}
    lost = [k for k in acked if k not in found]
    assert not lost, (len(lost), lost[:10], stats)
    assert all(found[k] == s for k, s in acked.items())
    rows = copies(es, "soak")
    for sid in ("0", "1"):
        assert len({r["docs"] for r in rows if r["shard"] == sid}) == 1, rows
    es.delete("/soak")


def test_a_service_joined_to_a_cluster_stops_when_the_cluster_is_stopped(tmp_path) -> None:
    """``local_cluster.sh stop`` leaves no ``serve`` behind answering errors: the service sees
    its coordinator gone and exits, saying why."""
    base = Path(tempfile.mkdtemp(prefix="ssw-", dir="/tmp"))
    lone = LocalCluster(base)
    lone.env["WORKERS"] = "0"
    try:
        lone.run("start")
        svc = ServeProcess(free_port(), ["--ray-address", "auto", "--in-memory"],
                           env={"RAY_ADDRESS": f"127.0.0.1:{lone.port}",
                                "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": lone.token},
                           log=tmp_path / "serve.log")
        try:
            svc.wait_up()
            lone.run("stop")
            wait_for("the service to exit", lambda: svc.proc.poll() is not None, timeout=120)
            assert "lost the Ray cluster" in (tmp_path / "serve.log").read_text()
        finally:
            svc.stop()
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=lone.env, capture_output=True,
                       timeout=120)
        shutil.rmtree(base, ignore_errors=True)
