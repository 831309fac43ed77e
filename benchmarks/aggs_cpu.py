"""CPU time per aggregation request, shardsearch (2 shards) against DuckDB, on a loaded machine.

Wall-clock p50s swing with the machine's load; CPU time per request, summed over each server's
whole process tree (HTTP front end, coordinator and shard actors, Ray's own processes; DuckDB's
server), does much less. Both servers load the aggregations scenario's corpus
(``aggs.load_aggs_corpus``) and answer its three searches (``aggs.search_body``) in
interleaved rounds: per round, per query, ``requests`` sequential searches to each engine. The
report is the median per request and the ratio of medians. Run:

    python -m shardsearch.benchmarks.aggs_cpu [--limit N] [--rounds 5] [--requests 30] [--out f]
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

import orjson

from .aggs import DATES, KEYWORDS, QUERIES, load_aggs_corpus, search_body
from .corpus import Corpus, bulk_bodies
from .server import Server

ENGINES = ("shardsearch", "duckdb")
JSON = {"content-type": "application/json"}


def start(engine: str, corpus: Corpus, log_dir: Path) -> tuple[Server, Any]:
    """One engine's server with the corpus loaded and refreshed."""
    import httpx
    server = Server(engine, log_dir)
    server.wait_ready()
    client = httpx.Client(timeout=300)
    body: dict[str, Any] = {"_bench": {"keywords": KEYWORDS, "dates": DATES}} \
        if engine == "duckdb" else {"settings": {"number_of_shards": 2, "number_of_replicas": 0,
                                                 "refresh_interval": "-1"},
                                    "mappings": corpus.mapping}
    client.put(f"{server.url}/aggs", content=orjson.dumps(body), headers=JSON).raise_for_status()
    for bulk in bulk_bodies(corpus, 5000):
        client.post(f"{server.url}/aggs/_bulk", content=bulk,
                    headers={"content-type": "application/x-ndjson"}).raise_for_status()
    client.post(f"{server.url}/aggs/_refresh").raise_for_status()
    return server, client


def cpu_ms_per_request(server: Server, client: Any, body: bytes, n: int) -> float:
    before = server.cpu_seconds()
    for _ in range(n):
        client.post(f"{server.url}/aggs/_search", content=body, headers=JSON).raise_for_status()
    return (server.cpu_seconds() - before) / n * 1000


def measure(limit: int | None, rounds: int, requests: int, log_dir: Path) -> dict[str, Any]:
    """Per query and engine: every round's CPU ms per request, their median, and the ratio."""
    corpus = load_aggs_corpus(None, limit)
    runs: dict[str, dict[str, list[float]]] = {q: {e: [] for e in ENGINES} for q in QUERIES}
    servers = {e: start(e, corpus, log_dir) for e in ENGINES}
    try:
        bodies = {q: orjson.dumps(search_body(q)) for q in QUERIES}
        for server, client in servers.values():   # unmeasured: caches and code paths warm
            for q in QUERIES:
                cpu_ms_per_request(server, client, bodies[q], 10)
        for _ in range(rounds):
            for q in QUERIES:
                for e, (server, client) in servers.items():
                    runs[q][e].append(cpu_ms_per_request(server, client, bodies[q], requests))
    finally:
        for server, client in servers.values():
            client.close()
            server.stop()
    medians = {q: {e: round(statistics.median(v), 2) for e, v in by.items()}
               for q, by in runs.items()}
    for m in medians.values():
        m["ratio"] = round(m["shardsearch"] / m["duckdb"], 2) if m["duckdb"] else None
    return {"corpus": {"name": corpus.name, "docs": len(corpus)}, "rounds": rounds,
            "requests": requests, "cpu_ms_median": medians, "cpu_ms_runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="documents (default: all)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=30, help="per round, query and engine")
    ap.add_argument("--out", type=Path, default=Path("bench_results/aggs_cpu.json"))
    args = ap.parse_args()
    report = measure(args.limit, args.rounds, args.requests, args.out.parent / "logs")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(orjson.dumps(report["cpu_ms_median"]).decode())


if __name__ == "__main__":
    main()
