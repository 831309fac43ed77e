"""The aggregations scenario of ``shardsearch bench``: page 1 with an aggregation, against DuckDB.

On a corpus with keyword and date fields (the commits corpus, ``../shared/corpora``; a
deterministic synthetic one when it is absent), shardsearch (2 shards, or the plan's count
closest to 2) and DuckDB's ``GROUP BY`` (``peers/duckdb.py``, behind the same FastAPI endpoint as
the other peers) each load the same documents and answer three searches: page 1 of
``match_all`` with a ``terms`` (top 10 authors), a monthly ``date_histogram`` or a
``cardinality`` (distinct authors). Each engine's first answer is kept: the buckets must agree
(a correctness check, reported as ``agree``; a cardinality past Elasticsearch's default
``precision_threshold`` within its sketch's error, see :func:`agrees`), and the p50 at 1
connection is compared (target: ours within 2x of the peer's).
"""
from __future__ import annotations

import asyncio
import gzip
import random
from pathlib import Path
from typing import Any

import orjson

from .bench import Plan, Server, _bulk_load, _log, _search_json, run_load
from .corpus import ROOT, Corpus, infer_mapping

DEFAULT_AGGS_CORPUS = ROOT.parent / "shared" / "corpora" / "commits.ndjson.gz"
KEYWORDS = ["repo", "author"]
DATES = ["authored_at"]
PEER = "duckdb"
QUERIES: dict[str, dict[str, Any]] = {
    "terms": {"terms": {"field": "author", "size": 10}},
    "date_histogram": {"date_histogram": {"field": "authored_at", "calendar_interval": "month",
                                          "min_doc_count": 1}},
    "cardinality": {"cardinality": {"field": "author"}},
}


def search_body(query: str) -> dict[str, Any]:
    return {"size": 10, "query": {"match_all": {}}, "aggs": {"a": QUERIES[query]}}


def synthetic_commits(n: int, seed: int = 11) -> list[bytes]:
    """Commits-like documents: Zipf-distributed authors, three repos, dates with UTC offsets."""
    rng = random.Random(seed)
    authors = [f"author {i:03d}" for i in range(300)]
    weights = [1.0 / (r + 1) for r in range(len(authors))]
    out = []
    for i in range(n):
        t = 1_420_070_400 + rng.randrange(10 * 365 * 86400)
        off = rng.choice([-7, -5, 0, 1, 2, 9])
        stamp = (f"{_utc(t + off * 3600)}{'+' if off >= 0 else '-'}{abs(off):02d}:00")
        out.append(orjson.dumps({"id": f"c-{i}", "repo": rng.choice(["git", "numpy", "flask"]),
                                 "author": rng.choices(authors, weights)[0],
                                 "authored_at": stamp, "insertions": rng.randrange(200),
                                 "subject": f"change {i}"}))
    return out


def _utc(t: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(t, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def load_aggs_corpus(path: Path | None, limit: int | None) -> Corpus:
    """The scenario's documents: ``limit`` evenly spaced lines of the file (the commits corpus
    is ordered by repository; a prefix would hold one), or synthetic ones."""
    if path is None and DEFAULT_AGGS_CORPUS.exists():
        path = DEFAULT_AGGS_CORPUS
    if path is not None:
        opener: Any = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rb") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        if limit and len(lines) > limit:
            lines = lines[::len(lines) // limit][:limit]
        name = Path(path).name.split(".")[0]
    else:
        lines, name = synthetic_commits(limit or 20_000), "synthetic-commits"
    docs = [orjson.loads(ln) for ln in lines]
    mapping = infer_mapping(docs[:2000])
    for k in KEYWORDS:
        mapping["properties"][k] = {"type": "keyword"}
    for k in DATES:
        mapping["properties"][k] = {"type": "date"}
    ids = [str(d.get("id", i)) for i, d in enumerate(docs)]
    return Corpus(name, lines, ids, sum(len(ln) + 1 for ln in lines), mapping,
                  "subject", "author", "")


def answer(agg: dict[str, Any]) -> Any:
    """What must agree between engines: buckets as ``[key, doc_count]`` pairs, or the value."""
    if "buckets" in agg:
        out: dict[str, Any] = {"buckets": [[b["key"], b["doc_count"]] for b in agg["buckets"]]}
        if "sum_other_doc_count" in agg:
            out["sum_other_doc_count"] = agg["sum_other_doc_count"]
        return out
    return {"value": agg.get("value")}


async def bench_aggs_engine(engine: str, shards: int, corpus: Corpus, plan: Plan, out: Path
                            ) -> dict[str, Any]:
    """Start one engine, load the corpus, keep each query's answer, measure each query."""
    import httpx
    server = Server(engine, out / "logs")
    result: dict[str, Any] = {"engine": engine, "shards": shards, "runs": [], "answers": {}}
    try:
        server.wait_ready()
        limits = httpx.Limits(max_connections=max(plan.connections) + 2)
        async with httpx.AsyncClient(limits=limits, timeout=120) as client:
            body: dict[str, Any] = {"settings": {"number_of_shards": shards,
                                                 "number_of_replicas": 0,
                                                 "refresh_interval": "-1"},
                                    "mappings": corpus.mapping}
            if engine == PEER:
                body = {"_bench": {"keywords": KEYWORDS, "dates": DATES}}
            r = await client.put(f"{server.url}/aggs", content=orjson.dumps(body),
                                 headers={"content-type": "application/json"})
            r.raise_for_status()
            result["bulk"] = await _bulk_load(client, server.url, "aggs", corpus, plan)
            _log(f"aggs {engine}: {result['bulk']['docs_per_s']:.0f} docs/s")
            url = f"{server.url}/aggs/_search"
            result["warmup"] = await _warm_up(client, url, plan.warmup_s)
            for query in QUERIES:
                first = await _search_json(client, url, search_body(query))
                result["answers"][query] = answer(first["aggregations"]["a"])
                result["answers"][query]["total"] = first["hits"]["total"]["value"]
                for conns in plan.connections:
                    st = await run_load(client, url, orjson.dumps(search_body(query)),
                                        plan.requests[conns], conns, plan.time_cap_s)
                    result["runs"].append({"engine": engine, "shards": shards, "query": query,
                                           "connections": conns, **st.as_dict()})
                    _log(f"aggs {engine} {query:15} c={conns}: p50 {st.p50_ms} ms "
                         f"{st.rps} req/s err={st.errors}")
    finally:
        server.stop()
    return result


async def _warm_up(client: Any, url: str, seconds: float) -> dict[str, Any]:
    """The same unmeasured warm-up as the main scenarios (``bench.warm_up``), with these
    queries."""
    import time
    bodies = [orjson.dumps(search_body(q)) for q in QUERIES]
    sent, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        await client.post(url, content=bodies[sent % len(bodies)],
                          headers={"content-type": "application/json"})
        sent += 1
    return {"seconds": seconds, "requests": sent}


def agrees(query: str, ours: Any, exact: Any) -> bool:
    """Equal answers; for ``cardinality`` past its ``precision_threshold`` (3,000 by default,
    as Elasticsearch's) ours is a HyperLogLog estimate, so it agrees within three of its
    relative standard errors of the peer's exact ``COUNT(DISTINCT)``."""
    if ours == exact or query != "cardinality" or not ours or not exact:
        return ours == exact
    from shardsearch.cluster.engine.aggs.sketches import (DEFAULT_PRECISION_THRESHOLD, lg_k,
                                                          relative_error)
    a, b = ours.get("value"), exact.get("value")
    if a is None or b is None or b <= DEFAULT_PRECISION_THRESHOLD \
            or ours.get("total") != exact.get("total"):
        return False
    return abs(a - b) <= 3 * relative_error(lg_k(DEFAULT_PRECISION_THRESHOLD)) * b


def compare(ours: dict[str, Any], peer: dict[str, Any], connections: int = 1
            ) -> dict[str, Any]:
    """Whether the answers agree (and where not), and ours / peer p50 per query."""
    mismatches = [q for q in QUERIES if not agrees(q, ours["answers"].get(q),
                                                   peer["answers"].get(q))]
    ratios: dict[str, float | None] = {}
    for q in QUERIES:
        a = next((r for r in ours["runs"] if r["query"] == q
                  and r["connections"] == connections), None)
        b = next((r for r in peer["runs"] if r["query"] == q
                  and r["connections"] == connections), None)
        ok = a and b and a.get("p50_ms") and b.get("p50_ms")
        ratios[q] = round(a["p50_ms"] / b["p50_ms"], 3) if ok else None
    worst = max((v for v in ratios.values() if v is not None), default=None)
    return {"agree": not mismatches, "mismatches": mismatches, "p50_over_peer": ratios,
            "worst_p50_over_peer": worst}


async def run_aggs(plan: Plan, out: Path, path: Path | None, limit: int | None
                   ) -> dict[str, Any]:
    corpus = load_aggs_corpus(path, limit)
    shards = min(plan.shard_counts, key=lambda s: abs(s - 2))
    _log(f"aggs: corpus {corpus.name}, {len(corpus)} docs; shardsearch {shards} shards vs "
         f"{PEER}")
    ours = await bench_aggs_engine("shardsearch", shards, corpus, plan, out)
    peer = await bench_aggs_engine(PEER, 1, corpus, plan, out)
    report = {"corpus": {"name": corpus.name, "docs": len(corpus)}, "queries": QUERIES,
              "shardsearch": ours, PEER: peer, **compare(ours, peer)}
    if "opensearch" in plan.engines:   # the same Elasticsearch request, unchanged, 1 shard
        try:
            theirs = await bench_aggs_engine("opensearch", 1, corpus, plan, out)
            report["opensearch"] = theirs
            report["vs_opensearch"] = compare(ours, theirs)
        except Exception as e:  # noqa: BLE001 - a peer that cannot start is skipped, said so
            _log(f"aggs opensearch: skipped ({type(e).__name__}: {e})")
    return report


def markdown(aggs: dict[str, Any]) -> str:
    """The README table: p50 ms (1 connection) / req/s (8 connections) per query and engine."""
    lines = [f"Aggregations on {aggs['corpus']['name']} ({aggs['corpus']['docs']:,} docs), "
             f"page 1 of match_all (size 10) with one aggregation; answers agree: "
             f"{aggs['agree']}.", "",
             "| query | shardsearch p50 ms | DuckDB p50 ms | ratio | shardsearch req/s (p99 ms) "
             "(8 c) | DuckDB req/s (p99 ms) (8 c) |", "|---|---|---|---|---|---|"]

    def cell(res: dict[str, Any], q: str, c: int, k: str) -> Any:
        return next((r[k] for r in res["runs"] if r["query"] == q and r["connections"] == c),
                    None)

    def rps(res: dict[str, Any], q: str) -> str:
        return f"{cell(res, q, 8, 'rps')} ({cell(res, q, 8, 'p99_ms')})"
    for q in QUERIES:
        lines.append(f"| {q} | {cell(aggs['shardsearch'], q, 1, 'p50_ms')} | "
                     f"{cell(aggs[PEER], q, 1, 'p50_ms')} | {aggs['p50_over_peer'][q]} | "
                     f"{rps(aggs['shardsearch'], q)} | {rps(aggs[PEER], q)} |")
    if "opensearch" in aggs:
        vs = aggs["vs_opensearch"]
        lines += ["", f"Against OpenSearch (1 shard, the same request); answers agree: "
                      f"{vs['agree']}" + (f" (differ: {', '.join(vs['mismatches'])})"
                                          if vs["mismatches"] else "") + ".", "",
                  "| query | shardsearch p50 ms | OpenSearch p50 ms | ratio | "
                  "shardsearch req/s (p99 ms) (8 c) | OpenSearch req/s (p99 ms) (8 c) |",
                  "|---|---|---|---|---|---|"]
        for q in QUERIES:
            lines.append(f"| {q} | {cell(aggs['shardsearch'], q, 1, 'p50_ms')} | "
                         f"{cell(aggs['opensearch'], q, 1, 'p50_ms')} | "
                         f"{vs['p50_over_peer'][q]} | {rps(aggs['shardsearch'], q)} | "
                         f"{rps(aggs['opensearch'], q)} |")
    return "\n".join(lines) + "\n"


def run(plan: Plan, out: Path, path: Path | None, limit: int | None) -> dict[str, Any]:
    return asyncio.run(run_aggs(plan, out, path, limit))
