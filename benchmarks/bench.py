"""``shardsearch bench``: shardsearch against peers, over loopback HTTP, in one run.

What it does, per engine (shardsearch at each shard count, then Tantivy and SQLite FTS5 behind a
minimal FastAPI endpoint, see ``peers/``; the corpus in ``corpus.py``, the report in ``report.py``):

1. starts the engine's HTTP server as a child process on 127.0.0.1 (shardsearch: ``shardsearch
   serve`` with its own private Ray), and measures the memory of its process tree while empty;
2. bulk-loads the corpus (``_bulk`` NDJSON, then ``_refresh``) and reports documents per second;
3. runs a bounded load (fixed request count *and* a time cap, at 1 and 8 connections) for three
   queries (``match_all``, a keyword sort, a ranked ``match``) at three depths (page 1,
   ``from`` = 9,990, and depth 100,000 — by ``from`` with a raised ``index.max_result_window``
   and by ``search_after``), and reports p50/p99 latency and requests per second;
4. measures the memory again (loaded and peak) and stops the server.

Then, in the same run: the aggregations scenario against DuckDB (``aggs.py``), the corpus at
larger scales (``scale.py``, ``--scale``) and, with ``--cluster local2``, the page-1 load on two
Ray nodes (``two_node.py``). ``targets.py`` judges every target of the issue from the results.

Everything is loopback only, bounded in count and time, and stops by itself. Results: a JSON
file, PNG plots and a Markdown table under ``--out`` (default ``bench_results/``).
"""
from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .corpus import (DEFAULT_CORPUS, ROOT, Corpus, bulk_bodies, infer_mapping,
                     load_corpus, read_ndjson, synthetic_lines)
from .loadgen import LoadStats, percentile, run_load, summarize
from .report import full_markdown, markdown_table, plot, plot_all
from .server import Server, free_port
from .targets import evaluate as targets

__all__ = ["DEFAULT_CORPUS", "ROOT", "Corpus", "LoadStats", "Plan", "Server", "bulk_bodies",
           "free_port", "infer_mapping", "load_corpus", "main", "markdown_table", "percentile",
           "plot", "read_ndjson", "run_load", "summarize", "synthetic_lines", "targets"]

SIZE = 10
MAX_SCALE = 64
DEEP = 100_000
MID = 9_990

# --- the benchmark ------------------------------------------------------------------------------


@dataclass
class Plan:
    """How much to run."""

    shard_counts: list[int]
    engines: list[str]                 # peers to run beside shardsearch
    connections: list[int]
    requests: dict[int, int]           # connections -> request count
    time_cap_s: float
    bulk_batch: int
    bulk_connections: int
    depths: list[int]
    queries: list[str] = field(default_factory=lambda: ["match_all", "sort", "match"])
    warmup_s: float = 20.0             # per engine, unmeasured: a JVM's JIT compiles the path
    aggs: str = "on"                   # the aggregations scenario (aggs.py): on, off or only
    aggs_corpus: str | None = None     # its NDJSON file (default: the commits corpus)
    aggs_limit: int | None = None      # its document count (default: all; 3,000 with --quick)
    scale: int = 1                     # also load the corpus x2, x4, ... up to x scale (scale.py)
    cluster: str = "private"           # "local2": also the page-1 load on two Ray nodes


def full_plan() -> Plan:
    return Plan(shard_counts=[1, 2, 4, 8], engines=["tantivy", "sqlite"], connections=[1, 8],
                requests={1: 60, 8: 240}, time_cap_s=12.0, bulk_batch=5000,
                bulk_connections=2, depths=[0, MID, DEEP], scale=8)


def quick_plan() -> Plan:
    return Plan(shard_counts=[2], engines=["tantivy", "sqlite"], connections=[1, 8],
                requests={1: 12, 8: 32}, time_cap_s=3.0, bulk_batch=1000,
                bulk_connections=2, depths=[0, 990, 2000], warmup_s=5.0, scale=2)


def query_body(corpus: Corpus, query: str, frm: int = 0, size: int = SIZE,
               search_after: list[Any] | None = None, tiebreak: bool = False) -> dict[str, Any]:
    """The search body of one scenario. With ``tiebreak`` the sort ends with ``_doc`` (the
    unique tie-break search_after needs)."""
    body: dict[str, Any] = {"size": size}
    if frm:
        body["from"] = frm
    if query == "match":
        body["query"] = {"match": {corpus.text_field: corpus.term}}
        if tiebreak:
            body["sort"] = [{"_score": "desc"}, {"_doc": "asc"}]
    elif query == "sort":
        body["sort"] = [{corpus.sort_field: "asc"}] + ([{"_doc": "asc"}] if tiebreak else [])
    else:
        if tiebreak:
            body["sort"] = [{"_doc": "asc"}]
    if search_after is not None:
        body["search_after"] = search_after
    return body


def machine_info() -> dict[str, Any]:
    import psutil
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "cpu": model, "python": platform.python_version(), "platform": platform.platform(),
            "load_avg_start": [round(x, 2) for x in os.getloadavg()]}


def _log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


async def _bulk_load(client: Any, url: str, index: str, corpus: Corpus, plan: Plan,
                     server: Any = None) -> dict[str, Any]:
    """The timed load and refresh; with ``server``, also its processes' CPU seconds during the
    load and during the refresh (``cpu``, by process label: wall clock is noisy on a shared
    machine, CPU time much less)."""
    bodies = bulk_bodies(corpus, plan.bulk_batch)
    errors = 0
    headers = {"content-type": "application/x-ndjson"}

    async def worker() -> None:
        nonlocal errors
        for body in bodies:   # one shared generator: each body goes to one worker
            r = await client.post(f"{url}/{index}/_bulk", content=body, headers=headers,
                                  timeout=600)
            if r.status_code != 200 or r.json().get("errors"):
                errors += 1
    cpu = [server.cpu_by_process()] if server is not None else []
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(plan.bulk_connections)))
    t_bulk = time.perf_counter() - t0
    cpu += [server.cpu_by_process()] if server is not None else []
    r = await client.post(f"{url}/{index}/_refresh", timeout=600)
    r.raise_for_status()
    wall = time.perf_counter() - t0
    cpu += [server.cpu_by_process()] if server is not None else []
    return {**({"cpu": _cpu_phases(cpu)} if cpu else {}),
            "docs": len(corpus), "bulk_s": round(t_bulk, 3), "refresh_s": round(wall - t_bulk, 3),
            "wall_s": round(wall, 3), "docs_per_s": round(len(corpus) / wall, 1),
            "failed_batches": errors, "batch": plan.bulk_batch,
            "connections": plan.bulk_connections}


def _cpu_phases(snaps: list[dict[tuple[str, int], float]]) -> dict[str, dict[str, float]]:
    """CPU seconds of the load and of the refresh, by process label and in all, from three
    ``Server.cpu_by_process`` snapshots (before, after the load, after the refresh)."""
    out = {}
    for phase, a, b in (("load", snaps[0], snaps[1]), ("refresh", snaps[1], snaps[2])):
        by: dict[str, float] = {}
        for key, t in b.items():
            by[key[0]] = by.get(key[0], 0.0) + t - a.get(key, 0.0)
        out[phase] = {k: round(v, 3) for k, v in sorted(by.items())}
        out[phase]["all"] = round(sum(by.values()), 3)
    return out


async def _search_json(client: Any, url: str, body: dict[str, Any]) -> dict[str, Any]:
    r = await client.post(url, content=orjson.dumps(body),
                          headers={"content-type": "application/json"}, timeout=600)
    if r.status_code != 200:
        raise RuntimeError(f"search failed ({r.status_code}): {r.text[:300]}")
    return r.json()


async def bench_engine(engine: str, shards: int, corpus: Corpus, plan: Plan, out: Path
                       ) -> dict[str, Any]:
    """Start one engine, load the corpus, run every scenario, stop it."""
    import httpx
    server = Server(engine, out / "logs")
    result: dict[str, Any] = {"engine": engine, "shards": shards, "runs": []}
    try:
        server.wait_ready()
        await asyncio.sleep(1.0)
        mem_empty = server.memory()
        index = "bench"
        limits = httpx.Limits(max_connections=max(plan.connections) + 2,
                              max_keepalive_connections=max(plan.connections) + 2)
        async with httpx.AsyncClient(limits=limits, timeout=120) as client:
            # no periodic refresh while bulk loading (Elasticsearch's advice for bulk loads):
            # one refresh at the end makes one segment per shard
            settings = {"number_of_shards": shards, "number_of_replicas": 0,
                        "max_result_window": max(plan.depths) + 10 * SIZE,
                        "refresh_interval": "-1"}
            body = {"settings": settings, "mappings": corpus.mapping,
                    "_bench": {"text_field": corpus.text_field, "sort_field": corpus.sort_field}}
            if engine in ("shardsearch", "opensearch"):
                body.pop("_bench")
            r = await client.put(f"{server.url}/{index}", content=orjson.dumps(body),
                                 headers={"content-type": "application/json"})
            r.raise_for_status()
            if engine == "shardsearch":
                # its shard copies start in worker processes of their own (none prestarted):
                # a search reaches every copy, so the memory below counts them fully started
                await _search_json(client, f"{server.url}/{index}/_search", {"size": 0})
            await asyncio.sleep(1.0)
            mem_created = server.memory()   # the empty service and its index's empty shards
            _log(f"{engine} shards={shards}: bulk loading {len(corpus)} docs")
            result["bulk"] = await _bulk_load(client, server.url, index, corpus, plan, server)
            _log(f"{engine} shards={shards}: {result['bulk']['docs_per_s']:.0f} docs/s")
            await asyncio.sleep(1.0)
            mem_loaded = server.memory()
            url = f"{server.url}/{index}/_search"
            result["warmup"] = await warm_up(client, url, corpus, plan)
            for query in plan.queries:
                first = await _search_json(client, url, dict(query_body(corpus, query),
                                                             track_total_hits=True))
                total = first["hits"]["total"]["value"]
                for depth in plan.depths:
                    d = min(depth, max(0, total - SIZE))
                    methods = ["from"] if d == 0 else ["from", "search_after"]
                    for method in methods:
                        if method == "search_after":
                            if engine not in ("shardsearch", "opensearch"):
                                continue
                            prev = await _search_json(client, url, query_body(
                                corpus, query, frm=d - 1, size=1, tiebreak=True))
                            after = prev["hits"]["hits"][0]["sort"]
                            body_b = orjson.dumps(query_body(corpus, query, search_after=after,
                                                             tiebreak=True))
                        else:
                            body_b = orjson.dumps(query_body(corpus, query, frm=d))
                        slow = False
                        for conns in plan.connections:
                            if slow:   # a closed loop of such requests would outlast the cap
                                _log(f"{engine} s={shards} {query} depth={d} {method} c={conns}"
                                     ": skipped (p50 at 1 connection above a quarter of the "
                                     "time cap)")
                                continue
                            st = await run_load(client, url, body_b, plan.requests[conns],
                                                conns, plan.time_cap_s)
                            slow = (st.p50_ms or 0) > plan.time_cap_s * 1000 / 4
                            row = {"engine": engine, "shards": shards, "query": query,
                                   "depth": d, "method": method, "connections": conns,
                                   "total_hits": total, **st.as_dict()}
                            result["runs"].append(row)
                            _log(f"{engine} s={shards} {query:9} depth={d:<6} {method:12} "
                                 f"c={conns}: p50 {st.p50_ms} ms p99 {st.p99_ms} ms "
                                 f"{st.rps} req/s err={st.errors}")
            mem_after = server.memory()
        result["memory"] = {"empty": mem_empty, "index_created": mem_created,
                            "loaded": mem_loaded, "after_load": mem_after,
                            "peak_rss": server.peak_rss,
                            "loaded_above_empty_pss": mem_loaded["pss"] - mem_empty["pss"],
                            "loaded_above_empty_rss": mem_loaded["rss"] - mem_empty["rss"],
                            # the data alone: the shards' processes already run empty
                            "loaded_above_created_pss": mem_loaded["pss"] - mem_created["pss"],
                            "raw_ndjson_bytes": corpus.raw_bytes}
    finally:
        server.stop()
    return result


async def warm_up(client: Any, url: str, corpus: Corpus, plan: Plan) -> dict[str, Any]:
    """Every engine gets the same unmeasured ``plan.warmup_s`` of the benchmark's own requests
    (each query at page 1 and at the deepest ``from``) before its first measured one, so a
    JVM's JIT (OpenSearch) or a cold cache is not what the table shows."""
    headers = {"content-type": "application/json"}
    deepest = max(plan.depths)
    bodies = [orjson.dumps(query_body(corpus, q, frm=d)) for q in plan.queries
              for d in (0, deepest)]
    sent, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < plan.warmup_s:
        await client.post(url, content=bodies[sent % len(bodies)], headers=headers)
        sent += 1
    return {"seconds": plan.warmup_s, "requests": sent}


async def run_bench(corpus: Corpus, plan: Plan, out: Path) -> dict[str, Any]:
    report: dict[str, Any] = {
        "machine": machine_info(), "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "corpus": {"name": corpus.name, "docs": len(corpus), "raw_bytes": corpus.raw_bytes,
                   "text_field": corpus.text_field, "sort_field": corpus.sort_field,
                   "term": corpus.term},
        "plan": asdict(plan), "shardsearch": {}, "peers": list(plan.engines)}
    main_runs = plan.aggs != "only"
    for shards in plan.shard_counts if main_runs else []:
        report["shardsearch"][str(shards)] = await bench_engine("shardsearch", shards, corpus,
                                                                plan, out)
    for peer in plan.engines if main_runs else []:
        try:
            report[peer] = await bench_engine(peer, 1, corpus, plan, out)
        except Exception as e:  # noqa: BLE001 - a missing peer library skips that peer
            _log(f"{peer}: skipped ({type(e).__name__}: {e})")
            report[peer] = None
    if plan.aggs in ("on", "only"):
        from .aggs import run_aggs
        aggs_path = Path(plan.aggs_corpus) if plan.aggs_corpus else None
        report["aggs"] = await run_aggs(plan, out, aggs_path, plan.aggs_limit)
    if main_runs and plan.scale > 1:
        from .scale import run_scale
        report["scale"] = await run_scale(corpus, plan, out, report["shardsearch"])
    if main_runs and plan.cluster == "local2":
        from .two_node import run_two_node
        try:
            report["two_node"] = await run_two_node(corpus, plan, out)
        except Exception as e:  # noqa: BLE001 - a cluster that cannot start: said, run kept
            _log(f"two-node: skipped ({type(e).__name__}: {e})")
            report["two_node"] = {"error": f"{type(e).__name__}: {e}"}
    report["machine"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    report["targets"] = targets(report)
    return report


def write_outputs(report: dict[str, Any], out: Path, plots: bool = True) -> None:
    """``results.json`` (targets judged afresh), ``table.md`` and the plots."""
    out.mkdir(parents=True, exist_ok=True)
    report["targets"] = targets(report)
    (out / "results.json").write_bytes(orjson.dumps(
        report, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    (out / "table.md").write_text(full_markdown(report))
    if plots:
        plot_all(report, out)


def main(args: Any) -> int:
    """Entry point of ``shardsearch bench`` (arguments from ``cli.py``)."""
    if args.from_json:   # redo the targets, table and plots of an earlier run
        report = orjson.loads(Path(args.from_json).read_bytes())
        write_outputs(report, Path(args.out), not args.no_plots)
        print(json.dumps(report["targets"], indent=2))
        return 0
    plan = make_plan(args)
    limit = args.limit if args.limit else (3000 if args.quick else None)
    synthetic = args.corpus == "synthetic"
    corpus_path = Path(args.corpus) if args.corpus and not synthetic else None
    if corpus_path is not None and not corpus_path.exists():
        raise SystemExit(f"bench: no such corpus file: {corpus_path}")
    if args.quick and limit:
        deep = max(10, min(limit - 2 * SIZE, 2000))
        plan.depths = [0, min(990, deep // 2), deep]
    if args.depths:
        plan.depths = [int(d) for d in re.split(r"[, ]+", args.depths) if d]
    if args.aggs == "only":   # the main corpus only names the run
        limit = 1
    corpus = load_corpus(corpus_path, limit, term=args.term, sort_field=args.sort_field,
                         text_field=args.text_field, synthetic=synthetic)
    if args.aggs != "only":
        _log(f"corpus {corpus.name}: {len(corpus)} docs, {corpus.raw_bytes / 1e6:.1f} MB; "
             f"shards {plan.shard_counts}; peers {plan.engines}; scale x{plan.scale}")
    out = Path(args.out)
    report = asyncio.run(run_bench(corpus, plan, out))
    write_outputs(report, out, not args.no_plots)
    _log(f"wrote {out / 'results.json'}, {out / 'table.md'} and plots")
    print(full_markdown(report).split("## Engines")[0])
    return 0


def make_plan(args: Any) -> Plan:
    """The plan of ``--quick`` or the full run, with the options that change it."""
    plan = quick_plan() if args.quick else full_plan()
    plan.aggs, plan.aggs_corpus = args.aggs, args.aggs_corpus
    plan.aggs_limit = args.aggs_limit or (3000 if args.quick else None)
    if args.shards:
        plan.shard_counts = [int(s) for s in re.split(r"[, ]+", args.shards) if s]
    if args.peers is not None:
        plan.engines = [p for p in re.split(r"[, ]+", args.peers) if p and p != "none"]
    if args.requests:
        plan.requests = {c: args.requests * c for c in plan.connections}
    if args.warmup is not None:
        plan.warmup_s = float(args.warmup)
    if args.scale is not None:
        if not 1 <= args.scale <= MAX_SCALE:   # each factor is loaded at every shard count
            raise SystemExit(f"bench: --scale must be between 1 and {MAX_SCALE}")
        plan.scale = args.scale
    plan.cluster = args.cluster
    return plan


def add_arguments(p: Any) -> None:
    """The ``bench`` subcommand's options."""
    p.add_argument("--corpus", default=None,
                   help="NDJSON file (optionally .gz), one document a line, or 'synthetic'; "
                        "default: ../shared/corpora/gcide.ndjson.gz when present, else a "
                        "synthetic one")
    p.add_argument("--limit", type=int, default=None, help="use the first N documents")
    p.add_argument("--quick", action="store_true",
                   help="a small run: 3,000 documents, 2 shards, few requests (about a minute)")
    p.add_argument("--out", default="bench_results", help="output folder (default bench_results)")
    p.add_argument("--shards", default=None, help="shard counts, e.g. '1,2,4,8'")
    p.add_argument("--peers", default=None,
                   help="peers to run beside shardsearch: 'tantivy,sqlite' (default), "
                        "'opensearch,tantivy,sqlite' (OpenSearch needs Java 17+ and Maven) "
                        "or 'none'")
    p.add_argument("--requests", type=int, default=None,
                   help="requests per connection in each load run")
    p.add_argument("--depths", default=None,
                   help="page depths (from), e.g. '0,9990,20000'; over 10,000 the index's "
                        "max_result_window is raised for every engine, and search_after is "
                        "measured beside from")
    p.add_argument("--warmup", type=float, default=None,
                   help="seconds of unmeasured requests per engine before measuring "
                        "(default 20, --quick 5)")
    p.add_argument("--term", default=None, help="term of the ranked match query")
    p.add_argument("--text-field", default=None, help="field of the ranked match query")
    p.add_argument("--sort-field", default=None, help="keyword field of the sort query")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--aggs", choices=["on", "off", "only"], default="on",
                   help="the aggregations scenario against DuckDB (benchmarks/aggs.py): on "
                        "(default), off, or only (nothing else)")
    p.add_argument("--aggs-corpus", default=None,
                   help="its NDJSON file with keyword and date fields (default: "
                        "../shared/corpora/commits.ndjson.gz when present, else synthetic)")
    p.add_argument("--aggs-limit", type=int, default=None,
                   help="its document count (default: all; 3,000 with --quick)")
    p.add_argument("--scale", type=int, default=None,
                   help="also load the corpus x2, x4, ... up to xN (ids rewritten, text words "
                        "rotated; streamed) at each shard count and plot latency and memory "
                        "against size (default 8, --quick 2; 1 turns it off)")
    p.add_argument("--cluster", choices=["private", "local2"], default="private",
                   help="local2: also run the page-1 load on a two-node local Ray cluster "
                        "(ray_config/local_cluster.sh) and report throughput per node")
    p.add_argument("--from-json", default=None,
                   help="no run: write the table and plots of an earlier results.json")
