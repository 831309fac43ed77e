"""``bench --cluster local2``: the page-1 load on a two-node Ray cluster on this machine.

``ray_config/local_cluster.sh`` starts a head and two worker nodes (each in its own session,
its own temp dir, a fresh port, token auth, loopback addresses), ``shardsearch serve`` joins it,
and an index with one shard per worker node is loaded with the corpus. The ranked ``match``
page 1 runs at 1 and 8 connections. For each node the run reports its shards, the CPU time its
processes used during the 8-connection load, and its throughput: shard queries per second
(every page-1 search queries each shard once). Everything it started is stopped at the end,
by the script, which signals only the sessions it recorded.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from .corpus import ROOT, Corpus
from .server import Server, free_port

SCRIPT = ROOT / "ray_config" / "local_cluster.sh"
WORKERS = 2


class LocalCluster:
    """The script's cluster in a short temp dir of its own (Ray's socket paths must stay
    below 108 bytes)."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="ssb-", dir="/tmp"))
        self.dir = self.base / "cluster"
        self.port = free_port()
        self.env = {**os.environ, "CLUSTER_DIR": str(self.dir), "RAY_PORT": str(self.port),
                    "WORKERS": str(WORKERS), "HEAD_CPUS": "1", "WORKER_CPUS": "1",
                    "OBJECT_STORE_MB": "200", "RAY_USAGE_STATS_ENABLED": "0",
                    "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
        for k in ("RAY_ADDRESS", "RAY_AUTH_TOKEN", "SHARDSEARCH_RAY_ADDRESS"):
            self.env.pop(k, None)

    def run(self, *args: str, timeout: float = 240) -> str:
        out = subprocess.run(["bash", str(SCRIPT), *args], env=self.env, capture_output=True,
                             text=True, timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(f"local_cluster.sh {' '.join(args)}: {out.stdout}{out.stderr}")
        return out.stdout

    def ray_env(self) -> dict[str, str]:
        """What a process needs to join the cluster."""
        token = (self.dir / "auth_token").read_text().strip()
        return {"RAY_ADDRESS": f"127.0.0.1:{self.port}", "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN": token}

    def sessions(self) -> dict[str, int]:
        """Node name (as ``_cat`` shows it: ``node_1``; the head as ``head``) -> session id."""
        out = {}
        for f in self.dir.glob("*.sid"):
            text = f.read_text().strip()
            if text:
                out[f.stem.replace("-", "_")] = int(text)
        return out

    def stop(self, wait_s: float = 15.0) -> None:
        """The script's ``stop``; then wait (bounded) until no process of the sessions it
        recorded is left, and kill what is (only those sessions: never ``ray stop``)."""
        sids = list(self.sessions().values())
        try:
            self.run("stop", timeout=120)
        finally:
            deadline = time.monotonic() + wait_s
            while session_processes(sids) and time.monotonic() < deadline:
                time.sleep(0.2)
            for pid in session_processes(sids):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            shutil.rmtree(self.base, ignore_errors=True)


def session_processes(sids: list[int]) -> list[int]:
    """Live (not zombie) processes of the sessions ``sids``."""
    import psutil
    out = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and os.getsid(p.pid) in sids:
                out.append(p.pid)
        except (OSError, psutil.Error):
            continue
    return out


MIN_REQUESTS = 200
"""Each node's CPU is read from the kernel's 10 ms ticks: a few dozen requests of ~1 ms each can
read as 0 on a node, so each connection level sends at least this many."""


def session_cpu_s(sid: int) -> float:
    """User + system CPU seconds of every live process of session ``sid``."""
    import psutil
    total = 0.0
    for p in psutil.process_iter(["pid"]):
        try:
            if os.getsid(p.pid) == sid:
                t = p.cpu_times()
                total += t.user + t.system
        except (OSError, psutil.Error):
            continue
    return total


def per_node(shard_nodes: list[str], cpu_s: dict[str, float], rps: float, requests: int
             ) -> dict[str, dict[str, Any]]:
    """Per node: shards, CPU ms per search, and shard queries per second."""
    out = {}
    for node, cpu in sorted(cpu_s.items()):
        shards = shard_nodes.count(node)
        out[node] = {"shards": shards, "cpu_s": round(cpu, 3),
                     "cpu_ms_per_search": round(1000 * cpu / max(1, requests), 3),
                     "shard_queries_per_s": round(rps * shards, 1)}
    return out


async def run_two_node(corpus: Corpus, plan: Any, out: Path) -> dict[str, Any]:
    """Start the cluster and a joined service, load, measure page 1, stop both."""
    from .bench import _log
    cluster = LocalCluster()
    try:
        _log(f"two-node: starting {WORKERS} worker nodes on 127.0.0.1:{cluster.port}")
        cluster.run("start")
        server = Server("shardsearch", out / "logs", ray_env=cluster.ray_env())
        try:
            server.wait_ready(timeout_s=240)
            result = await _measure(server, cluster, corpus, plan)
        finally:
            server.stop()
        result["sessions"] = cluster.sessions()   # all stopped below; recorded for checks
        return result
    finally:
        cluster.stop()


async def _measure(server: Server, cluster: LocalCluster, corpus: Corpus, plan: Any
                   ) -> dict[str, Any]:
    import httpx

    from .bench import SIZE, _bulk_load, _log, query_body
    from .loadgen import run_load
    limits = httpx.Limits(max_connections=max(plan.connections) + 2)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        body = {"settings": {"number_of_shards": WORKERS, "number_of_replicas": 0,
                             "refresh_interval": "-1", "max_result_window": 10 * SIZE},
                "mappings": corpus.mapping}
        r = await client.put(f"{server.url}/bench", content=orjson.dumps(body),
                             headers={"content-type": "application/json"})
        r.raise_for_status()
        bulk = await _bulk_load(client, server.url, "bench", corpus, plan)
        r = await client.get(f"{server.url}/_cat/shards/bench?format=json&h=shard,node")
        shard_nodes = [row["node"] for row in r.json()]
        url = f"{server.url}/bench/_search"
        search = orjson.dumps(query_body(corpus, "match"))
        runs, nodes = [], {}
        for conns in plan.connections:
            sessions = cluster.sessions()
            before = {n: session_cpu_s(s) for n, s in sessions.items()}
            front = server.cpu_seconds()
            st = await run_load(client, url, search, max(plan.requests[conns], MIN_REQUESTS),
                                conns, plan.time_cap_s)
            cpu = {n: session_cpu_s(s) - before[n] for n, s in sessions.items()}
            cpu["front end"] = server.cpu_seconds() - front
            runs.append({"query": "match", "depth": 0, "method": "from",
                         "connections": conns, **st.as_dict()})
            nodes = per_node(shard_nodes, cpu, st.rps, st.requests)
            _log(f"two-node c={conns}: {st.rps} req/s, p50 {st.p50_ms} ms, p99 {st.p99_ms} ms")
    return {"workers": WORKERS, "shards": shard_nodes, "bulk": bulk, "runs": runs,
            "nodes_at_max_connections": nodes}


def markdown(two: dict[str, Any]) -> str:
    """The two-node table: page-1 req/s and p99, then each node's share."""
    if "error" in two:
        return f"The two-node run did not complete: {two['error']}\n"
    lines = [f"Two Ray nodes (shards on {', '.join(two['shards'])}); bulk "
             f"{two['bulk']['docs_per_s']:,.0f} docs/s.", "",
             "| connections | req/s | p50 ms | p99 ms |", "|---|---|---|---|"]
    for r in two["runs"]:
        lines.append(f"| {r['connections']} | {r['rps']} | {r['p50_ms']} | {r['p99_ms']} |")
    lines += ["", "| node | shards | shard queries/s | CPU ms per search |", "|---|---|---|---|"]
    for node, n in two["nodes_at_max_connections"].items():
        lines.append(f"| {node} | {n['shards']} | {n['shard_queries_per_s']} | "
                     f"{n['cpu_ms_per_search']} |")
    return "\n".join(lines) + "\n"
