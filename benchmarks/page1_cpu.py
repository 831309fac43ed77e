"""CPU per ranked page-1 search, hop by hop: the front end, the coordinator, each shard copy
and Ray's own processes, under the bench's 8-connection load.

Starts shardsearch as ``shardsearch bench`` does (``--data-dir`` keeps the loaded index between
runs, so code changes are compared on the same data), loads the corpus if the index is absent,
warms up, then runs ``--rounds`` load runs of ``--requests`` searches at 8 connections and
reports, per process, CPU milliseconds per search (median of the rounds; ``psutil`` user +
system). CPU time, not wall clock: the machine is shared. ``--py-spy SECONDS`` also samples the
front end, the coordinator and the shards with py-spy (when installed) during one more load run
and prints each one's top functions by own time.

    .venv/bin/python -m shardsearch.benchmarks.page1_cpu [--data-dir DIR] [--rounds 5]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import orjson

from .bench import DEFAULT_CORPUS, _bulk_load, quick_plan, query_body
from .corpus import load_corpus
from .loadgen import run_load
from .server import Server, _process_label

CONNECTIONS = 8


async def ensure_index(client: Any, server: Server, corpus: Any, shards: int) -> None:
    """Create and load ``bench`` unless a kept data directory already holds it."""
    if (await client.get(f"{server.url}/bench")).status_code == 200:
        return
    settings = {"number_of_shards": shards, "number_of_replicas": 0, "refresh_interval": "-1"}
    r = await client.put(f"{server.url}/bench", content=orjson.dumps(
        {"settings": settings, "mappings": corpus.mapping}),
        headers={"content-type": "application/json"})
    r.raise_for_status()
    await _bulk_load(client, server.url, "bench", corpus, quick_plan())


async def one_round(client: Any, url: str, server: Server, body: bytes, n: int
                    ) -> tuple[dict[tuple[str, int], float], Any]:
    """CPU milliseconds per search of each process over one load run, and the run's stats."""
    c0 = server.cpu_by_process()
    stats = await run_load(client, url, body, n, CONNECTIONS, 600.0, warmup=0)
    c1 = server.cpu_by_process()
    done = max(stats.requests, 1)
    return {k: (v - c0.get(k, 0.0)) / done * 1000 for k, v in c1.items()}, stats


def sample_stacks(server: Server, seconds: int, out: Path) -> list[tuple[str, Path]]:
    """Start py-spy on the front end, the coordinator and the shard copies (raw stacks)."""
    spy = shutil.which("py-spy") or str(Path(__file__).resolve().parents[1] / ".venv/bin/py-spy")
    if not Path(spy).exists():
        print("page1_cpu: py-spy is not installed (pip install py-spy): no samples")
        return []
    procs = []
    for p in server.processes():
        label = _process_label(p)
        if label.startswith(("http front", "ray::Coordinator", "ray::ShardCopy", "ray::Copy")):
            f = out / f"{label.replace(' ', '_').replace(':', '')}-{p.pid}.txt"
            procs.append((label, f, subprocess.Popen(
                [spy, "record", "--pid", str(p.pid), "--duration", str(seconds), "--rate",
                 "200", "--format", "raw", "--gil", "--nonblocking", "--output", str(f)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
    return [(label, f) for label, f, _ in procs]


def top_functions(path: Path, n: int = 25) -> list[tuple[str, float]]:
    """Own-time share of the leaf frames of py-spy's raw (collapsed) stacks."""
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        own[stack.split(";")[-1]] += int(count)
        total += int(count)
    return [(f, c / max(total, 1)) for f, c in own.most_common(n)]


async def main(a: argparse.Namespace) -> None:
    import httpx
    corpus = load_corpus(Path(a.corpus), a.limit)
    server = Server("shardsearch", Path(tempfile.mkdtemp(prefix="page1_cpu_")),
                    data_dir=a.data_dir)
    try:
        server.wait_ready()
        async with httpx.AsyncClient(timeout=600, limits=httpx.Limits(
                max_connections=CONNECTIONS)) as client:
            await ensure_index(client, server, corpus, a.shards)
            url = f"{server.url}/bench/_search"
            body = orjson.dumps(query_body(corpus, "match"))
            await run_load(client, url, body, a.warmup, CONNECTIONS, 600.0)
            c0 = server.cpu_by_process()
            await asyncio.sleep(a.idle)
            idle = {k: (v - c0.get(k, 0.0)) / a.idle * 1000
                    for k, v in server.cpu_by_process().items()}
            per: dict[str, list[float]] = collections.defaultdict(list)
            rps, p99 = [], []
            for _ in range(a.rounds):
                cpu, stats = await one_round(client, url, server, body, a.requests)
                by_label: dict[str, float] = collections.Counter()
                for (label, pid), ms in cpu.items():
                    key = label if not label.startswith("ray::") else f"{label} {pid}"
                    by_label[key] += ms
                for k, v in by_label.items():
                    per[k].append(v)
                per["TOTAL"].append(sum(cpu.values()))
                rps.append(stats.rps)
                p99.append(stats.p99_ms or 0.0)
            if a.py_spy:
                out = Path(tempfile.mkdtemp(prefix="page1_spy_"))
                files = sample_stacks(server, a.py_spy, out)
                await run_load(client, url, body, 10**6, CONNECTIONS, a.py_spy + 1.0, warmup=0)
                await asyncio.sleep(3)
    finally:
        server.stop()
    print(f"{corpus.name}: {len(corpus)} docs, {a.shards} shards, {a.rounds} rounds x "
          f"{a.requests} searches at {CONNECTIONS} connections; CPU ms per search, median")
    for k, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1])):
        if statistics.median(v) >= 0.01:
            print(f"  {k:48} {statistics.median(v):6.3f}  ({min(v):.3f}-{max(v):.3f})")
    print(f"  idle, CPU ms per second over {a.idle} s: "
          + ", ".join(f"{k[0]} {v:.1f}" for k, v in sorted(idle.items()) if v >= 0.5))
    print(f"  req/s median {statistics.median(rps):.0f}, p99 median {statistics.median(p99):.1f} "
          "ms (wall clock: noisy on a shared machine)")
    if a.py_spy:
        for label, f in files:
            if f.exists():
                print(f"\n{label} ({f}): own time")
                for fn, share in top_functions(f):
                    print(f"  {share * 100:5.1f}%  {fn}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--data-dir", default=None, help="keep the loaded index here between runs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--idle", type=int, default=10, help="seconds of idle CPU measured")
    ap.add_argument("--py-spy", type=int, default=0, help="seconds of py-spy sampling")
    asyncio.run(main(ap.parse_args()))
