"""CPU time of a ranked ``match`` page over the real service: page 1 vs ``from`` = depth.

Starts shardsearch (Ray, uvicorn on 127.0.0.1) as ``shardsearch bench`` does, loads the corpus
into ``--shards`` shards, then measures, interleaved in rounds, the CPU seconds the whole
process tree (front end, coordinator, shard workers, Ray's own processes) spends per request
for page 1, for ``from`` = depth and for ``search_after`` at the same depth — every request
re-running the same body, as the bench's load does. CPU time, not wall clock: the machine is
shared, and a busy neighbour stretches latency but not the work done.

    .venv/bin/python -m shardsearch.benchmarks.deep_page_cpu [--depth 100000] [--rounds 7]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from .bench import DEFAULT_CORPUS, SIZE, _bulk_load, _search_json, quick_plan, query_body
from .corpus import load_corpus
from .server import Server


async def per_request_ms(client: Any, url: str, server: Server, body: bytes, n: int
                         ) -> tuple[float, list[float]]:
    """CPU milliseconds of the process tree per request over ``n`` sequential requests, and
    each request's wall-clock milliseconds (noisy on a shared machine: shown, not judged)."""
    headers = {"content-type": "application/json"}
    c0 = server.cpu_seconds()
    walls = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = await client.post(url, content=body, headers=headers)
        walls.append((time.perf_counter() - t0) * 1000)
        r.raise_for_status()
    return (server.cpu_seconds() - c0) / n * 1000, walls


async def main(corpus_path: Path, limit: int | None, shards: int, depth: int, rounds: int,
               n: int) -> None:
    import httpx
    corpus = load_corpus(corpus_path, limit)
    server = Server("shardsearch", Path(tempfile.mkdtemp(prefix="deep_cpu_")))
    try:
        server.wait_ready()
        async with httpx.AsyncClient(timeout=600) as client:
            settings = {"number_of_shards": shards, "number_of_replicas": 0,
                        "max_result_window": depth + 10 * SIZE, "refresh_interval": "-1"}
            r = await client.put(f"{server.url}/bench", content=orjson.dumps(
                {"settings": settings, "mappings": corpus.mapping}),
                headers={"content-type": "application/json"})
            r.raise_for_status()
            await _bulk_load(client, server.url, "bench", corpus, quick_plan())
            url = f"{server.url}/bench/_search"
            total = (await _search_json(client, url, dict(query_body(corpus, "match"),
                                                          track_total_hits=True))
                     )["hits"]["total"]["value"]
            d = min(depth, max(0, total - SIZE))
            prev = await _search_json(client, url, query_body(corpus, "match", frm=d - 1,
                                                              size=1, tiebreak=True))
            bodies = {"page 1": query_body(corpus, "match"),
                      f"from={d}": query_body(corpus, "match", frm=d),
                      f"search_after at {d}": query_body(
                          corpus, "match", tiebreak=True,
                          search_after=prev["hits"]["hits"][0]["sort"])}
            raw = {k: orjson.dumps(v) for k, v in bodies.items()}
            for b in raw.values():   # warm: caches as the bench's warm-up leaves them
                await per_request_ms(client, url, server, b, 5)
            got: dict[str, list[float]] = {k: [] for k in raw}
            walls: dict[str, list[float]] = {k: [] for k in raw}
            for _ in range(rounds):
                for k, b in raw.items():
                    cpu, wall = await per_request_ms(client, url, server, b, n)
                    got[k].append(cpu)
                    walls[k] += wall
    finally:
        server.stop()
    base = statistics.median(got["page 1"])
    wbase = statistics.median(walls["page 1"])
    print(f"{corpus.name}: {len(corpus)} docs, {shards} shards, '{corpus.term}' {total} hits; "
          f"{rounds} interleaved rounds x {n} requests; CPU ms per request (whole process "
          "tree, median of rounds) and wall p50")
    for k, v in got.items():
        m, w = statistics.median(v), statistics.median(walls[k])
        print(f"{k:24} CPU {m:7.2f} ms  x{m / base:.2f}    wall p50 {w:7.2f} ms  "
              f"x{w / wbase:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--depth", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--requests", type=int, default=40)
    a = ap.parse_args()
    asyncio.run(main(Path(a.corpus), a.limit, a.shards, a.depth, a.rounds, a.requests))
