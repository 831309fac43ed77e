"""``shardsearch bench``'s parts: corpus loading, the bounded load generator, the peers' endpoint,
and the report (targets, table, plots). The full benchmark is not run here (it takes minutes);
no timing is asserted."""
from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import httpx
import orjson
import pytest

from shardsearch.benchmarks import bench
from shardsearch.benchmarks.peers.serve import close_peer, create_peer_app


def test_percentile_interpolates_between_ranks() -> None:
    xs = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert bench.percentile(xs, 0.5) == 3.0
    assert bench.percentile(xs, 0.99) == pytest.approx(4.96)
    assert bench.percentile([], 0.5) is None
    assert bench.percentile([7.0], 0.99) == 7.0


def test_summarize_reports_milliseconds_and_completed_requests_per_second() -> None:
    st = bench.summarize([0.002, 0.001, 0.003], errors=1, wall_s=0.5)
    assert (st.requests, st.errors, st.p50_ms, st.rps) == (3, 1, 2.0, 6.0)
    assert st.p99_ms == pytest.approx(2.98)


def test_synthetic_corpus_is_deterministic_and_pages_deep() -> None:
    a, b = bench.synthetic_lines(500), bench.synthetic_lines(500)
    assert a == b
    docs = [orjson.loads(x) for x in a]
    assert sum("webster" in d["text"].split() for d in docs) > 400
    corpus = bench.load_corpus(None, 300) if not bench.DEFAULT_CORPUS.exists() else None
    if corpus is not None:
        assert corpus.name == "synthetic" and corpus.term == "webster"


def test_load_corpus_reads_a_gzipped_ndjson_slice_and_infers_fields(tmp_path: Path) -> None:
    path = tmp_path / "c.ndjson.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"\n".join(bench.synthetic_lines(50)) + b"\n\n")
    corpus = bench.load_corpus(path, 20)
    assert len(corpus) == 20 and corpus.ids[0] == "syn-0"
    assert corpus.text_field == "text" and corpus.sort_field == "headword"
    assert corpus.mapping["properties"]["words"] == {"type": "long"}
    assert corpus.raw_bytes == sum(len(x) + 1 for x in corpus.lines)


def test_bulk_bodies_pair_each_action_with_its_document() -> None:
    corpus = bench.load_corpus(None, 5) if not bench.DEFAULT_CORPUS.exists() else \
        bench.load_corpus(bench.DEFAULT_CORPUS, 5)
    bodies = list(bench.bulk_bodies(corpus, 2))
    assert len(bodies) == 3
    lines = b"".join(bodies).strip().split(b"\n")
    assert len(lines) == 10
    assert orjson.loads(lines[0]) == {"index": {"_id": corpus.ids[0]}}
    assert lines[1] == corpus.lines[0]


def test_search_after_bodies_end_with_the_tie_break() -> None:
    corpus = bench.Corpus("c", [], [], 0, {}, "text", "headword", "webster")
    body = bench.query_body(corpus, "match", search_after=[1.5, 7], tiebreak=True)
    assert body["sort"] == [{"_score": "desc"}, {"_doc": "asc"}]
    assert body["search_after"] == [1.5, 7] and "from" not in body
    assert bench.query_body(corpus, "sort", frm=10)["sort"] == [{"headword": "asc"}]


def test_load_generator_stops_at_the_request_count(base_url: str) -> None:
    async def run() -> bench.LoadStats:
        async with httpx.AsyncClient() as client:
            return await bench.run_load(client, base_url + "/_search", b"{}", requests=20,
                                        connections=4, time_cap_s=30)
    st = asyncio.run(run())
    assert st.requests + st.errors == 20 and st.errors == 0


def test_load_generator_stops_at_the_time_cap(base_url: str) -> None:
    async def run() -> bench.LoadStats:
        async with httpx.AsyncClient() as client:
            return await bench.run_load(client, base_url + "/_search", b"{}",
                                        requests=10**9, connections=2, time_cap_s=0.3)
    st = asyncio.run(run())
    assert 0 < st.requests < 10**9 and st.wall_s < 30


@pytest.mark.parametrize("engine", ["tantivy", "sqlite"])
def test_peer_answers_the_benchmark_queries_in_elasticsearch_shape(engine: str) -> None:
    if engine == "tantivy":
        pytest.importorskip("tantivy")
    from starlette.testclient import TestClient
    corpus = bench.Corpus("syn", bench.synthetic_lines(60), [f"syn-{i}" for i in range(60)], 0,
                          {}, "text", "headword", "webster")
    app = create_peer_app(engine)
    with TestClient(app) as client:
        meta = {"_bench": {"text_field": "text", "sort_field": "headword"}}
        assert client.put("/p", content=orjson.dumps(meta)).status_code == 200
        for body in bench.bulk_bodies(corpus, 25):
            assert client.post("/p/_bulk", content=body).status_code == 200
        assert client.post("/p/_refresh").status_code == 200
        total = sum("webster" in orjson.loads(x)["text"].split() for x in corpus.lines)
        r = client.post("/p/_search", json=bench.query_body(corpus, "match")).json()
        assert r["hits"]["total"]["value"] == total and len(r["hits"]["hits"]) == 10
        assert r["hits"]["hits"][0]["_score"] > 0 and "_source" in r["hits"]["hits"][0]
        r = client.post("/p/_search", json=bench.query_body(corpus, "sort", frm=5)).json()
        heads = sorted(orjson.loads(x)["headword"] for x in corpus.lines)
        assert [h["sort"][0] for h in r["hits"]["hits"]] == heads[5:15]
        r = client.post("/p/_search", json=bench.query_body(corpus, "match_all")).json()
        assert r["hits"]["total"]["value"] == 60
        r = client.post("/p/_search", json=bench.query_body(corpus, "sort", search_after=["a"]))
        assert r.status_code == 400
    close_peer(app)


def _fake_report() -> dict:
    runs = []
    for engine, shards in (("shardsearch", 2), ("tantivy", 1)):
        for q in ("match_all", "sort", "match"):
            for depth, method in ((0, "from"), (100, "from"), (100, "search_after")):
                for c in (1, 8):
                    runs.append({"engine": engine, "shards": shards, "query": q, "depth": depth,
                                 "method": method, "connections": c, "total_hits": 200,
                                 "requests": 5, "errors": 0, "wall_s": 1.0,
                                 "p50_ms": 2.0 + depth / 100, "p99_ms": 3.0, "mean_ms": 2.0,
                                 "rps": 100.0 * c})
    res = {"runs": [r for r in runs if r["engine"] == "shardsearch"],
           "bulk": {"docs_per_s": 1000.0},
           "memory": {"loaded_above_empty_pss": 3 << 20, "raw_ndjson_bytes": 1 << 20,
                      "peak_rss": 100 << 20}}
    peer = dict(res, runs=[r for r in runs if r["engine"] == "tantivy"])
    return {"machine": {"nproc": 2, "cpu": "cpu", "ram_gib": 24, "python": "3.11",
                        "load_avg_start": [0.1, 0.1, 0.1]},
            "corpus": {"name": "syn", "docs": 200, "raw_bytes": 1 << 20, "text_field": "text",
                       "sort_field": "headword", "term": "webster"},
            "shardsearch": {"2": res}, "peers": ["tantivy"], "tantivy": peer}


def test_report_computes_the_targets_and_writes_table_and_plots(tmp_path: Path) -> None:
    report = _fake_report()
    t = bench.targets(report)
    assert t["deep_over_page1_from"]["value"] == 1.5
    assert t["deep_over_page1_from"]["reached"] is False
    assert t["page1_rps_vs_tantivy"]["value"] == 1.0
    assert t["page1_rps_vs_tantivy"]["reached"] is True
    assert t["memory_over_raw"]["value"] == 3.0
    table = bench.markdown_table(report)
    assert "| shardsearch | 2 | match | 100 | search_after |" in table
    paths = bench.plot(report, tmp_path)
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)


def test_from_json_judges_the_targets_again_and_rewrites_table_and_plots(tmp_path: Path
                                                                         ) -> None:
    from shardsearch.cli import build_parser
    src = tmp_path / "old.json"
    src.write_bytes(orjson.dumps(dict(_fake_report(), targets={"stale": {}})))
    out = tmp_path / "out"
    args = build_parser().parse_args(["bench", "--from-json", str(src), "--out", str(out)])
    assert bench.main(args) == 0
    report = orjson.loads((out / "results.json").read_bytes())
    assert "stale" not in report["targets"]
    assert report["targets"] == bench.targets(_fake_report())
    table = (out / "table.md").read_text()
    assert table.startswith("## Targets") and "| not measured |" in table
    assert (out / "latency_vs_depth.png").stat().st_size > 1000


def test_quick_benchmark_runs_end_to_end_and_writes_its_outputs(tmp_path: Path) -> None:
    """The smallest real run: a private service on loopback, 600 synthetic documents, 2
    shards, both peers, and the corpus x2 (``--quick``'s scale); it stops its servers and
    writes JSON with every target judged, the table and the plots."""
    from shardsearch.cli import build_parser
    pytest.importorskip("tantivy")
    args = build_parser().parse_args(
        ["bench", "--quick", "--corpus", "synthetic", "--limit", "600", "--peers",
         "sqlite,tantivy", "--requests", "2", "--warmup", "0.5", "--aggs", "off", "--out",
         str(tmp_path)])
    assert bench.main(args) == 0
    report = orjson.loads((tmp_path / "results.json").read_bytes())
    runs = report["shardsearch"]["2"]["runs"]
    for engine in (report["shardsearch"]["2"], report["sqlite"]):   # the same for every engine
        assert engine["warmup"]["seconds"] == 0.5 and engine["warmup"]["requests"] > 0
    assert {r["query"] for r in runs} == {"match_all", "sort", "match"}
    assert all(r["errors"] == 0 and r["requests"] > 0 for r in runs)
    assert {r["method"] for r in runs} == {"from", "search_after"}
    assert report["sqlite"]["bulk"]["docs"] == 600
    targets = report["targets"]
    for name in ("deep_over_page1_from", "deep_over_page1_search_after", "bulk_vs_sqlite",
                 "page1_rps_vs_tantivy", "memory_over_raw", "empty_plus_one_shard",
                 "scale_bulk_rate", "scale_page1_growth", "scale_memory_ratio"):
        t = targets[name]
        assert t["value"] is not None and t["reached"] in (True, False), name
        assert t["reached"] == (t["value"] <= t["threshold"] if t["op"] == "<="
                                else t["value"] >= t["threshold"]), name
    ours, sqlite = report["shardsearch"]["2"], report["sqlite"]
    assert targets["bulk_vs_sqlite"]["value"] == round(
        ours["bulk"]["docs_per_s"] / sqlite["bulk"]["docs_per_s"], 3)
    assert "p99" in targets["page1_rps_vs_tantivy"]["detail"]
    assert targets["aggs_terms_p50"]["reached"] is None   # --aggs off: not measured
    rows = report["scale"]["runs"]
    assert sorted((r["factor"], r["docs"]) for r in rows) == [(1, 600), (2, 1200)]
    assert rows[1]["total_hits"] == 2 * rows[0]["total_hits"]   # copies keep their terms
    assert rows[1]["raw_bytes"] > rows[0]["raw_bytes"]
    table = (tmp_path / "table.md").read_text()
    assert table.index("## Targets") < table.index("## Engines") < table.index("## Scale")
    assert "p99 ms (8 conn)" in table
    for name in ("latency_vs_depth.png", "throughput_vs_shards.png", "scale.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_duckdb_peer_answers_the_aggregations_scenario() -> None:
    """The peer alone (in process): page 1, terms, monthly histogram in UTC, cardinality."""
    pytest.importorskip("duckdb")
    from starlette.testclient import TestClient
    from shardsearch.benchmarks import aggs
    corpus = bench.Corpus("syn", aggs.synthetic_commits(200), [f"c-{i}" for i in range(200)], 0, {},
                     "subject", "author", "")
    docs = [orjson.loads(x) for x in corpus.lines]
    app = create_peer_app("duckdb")
    with TestClient(app) as client:
        meta = {"_bench": {"keywords": aggs.KEYWORDS, "dates": aggs.DATES}}
        assert client.put("/a", content=orjson.dumps(meta)).status_code == 200
        for body in bench.bulk_bodies(corpus, 64):
            assert client.post("/a/_bulk", content=body).status_code == 200
        assert client.post("/a/_refresh").status_code == 200
        r = client.post("/a/_search", json=aggs.search_body("terms")).json()
        assert r["hits"]["total"]["value"] == 200 and len(r["hits"]["hits"]) == 10
        counts: dict[str, int] = {}
        for d in docs:
            counts[d["author"]] = counts.get(d["author"], 0) + 1
        want = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        assert [[b["key"], b["doc_count"]] for b in r["aggregations"]["a"]["buckets"]] == \
            [list(kv) for kv in want[:10]]
        assert r["aggregations"]["a"]["sum_other_doc_count"] == sum(c for _, c in want[10:])
        r = client.post("/a/_search", json=aggs.search_body("cardinality")).json()
        assert r["aggregations"]["a"]["value"] == len(counts)
        r = client.post("/a/_search", json=aggs.search_body("date_histogram")).json()
        buckets = r["aggregations"]["a"]["buckets"]
        assert sum(b["doc_count"] for b in buckets) == 200
        months = {b["key_as_string"][:7] for b in buckets}
        from shardsearch.benchmarks.peers.duckdb import epoch_ms
        import datetime as dt
        assert months == {dt.datetime.fromtimestamp(epoch_ms(d["authored_at"]) / 1000,
                                                     tz=dt.timezone.utc).strftime("%Y-%m")
                          for d in docs}
        bad = dict(aggs.search_body("terms"), aggs={"a": {"avg": {"field": "insertions"}}})
        assert client.post("/a/_search", json=bad).status_code == 400
    close_peer(app)


def test_quick_aggregations_scenario_agrees_with_duckdb(tmp_path: Path) -> None:
    """``bench --quick --aggs only``: shardsearch (2 shards, its own Ray) and DuckDB load the
    same commits and give the same buckets for terms, date_histogram and cardinality."""
    pytest.importorskip("duckdb")
    from shardsearch.cli import build_parser
    args = build_parser().parse_args(
        ["bench", "--quick", "--aggs", "only", "--aggs-limit", "800", "--requests", "2",
         "--warmup", "0.5", "--no-plots", "--out", str(tmp_path)])
    assert bench.main(args) == 0
    report = orjson.loads((tmp_path / "results.json").read_bytes())
    aggs = report["aggs"]
    assert aggs["mismatches"] == [] and aggs["agree"] is True
    ours = aggs["shardsearch"]["answers"]
    assert len(ours["terms"]["buckets"]) == 10 and ours["cardinality"]["value"] > 10
    assert sum(c for _, c in ours["date_histogram"]["buckets"]) == 800
    assert all(r["errors"] == 0 and r["p50_ms"] for r in aggs["shardsearch"]["runs"])
    assert all(r["errors"] == 0 and r["p50_ms"] for r in aggs["duckdb"]["runs"])
    for q in ("terms", "date_histogram", "cardinality"):
        t = report["targets"][f"aggs_{q}_p50"]
        assert t["value"] == aggs["p50_over_peer"][q] and t["reached"] in (True, False)
    assert report["targets"]["bulk_vs_sqlite"]["reached"] is None   # --aggs only
    assert aggs["shardsearch"]["warmup"]["requests"] > 0 and aggs["duckdb"]["warmup"]["requests"]
    assert "| date_histogram |" in (tmp_path / "table.md").read_text()


@pytest.mark.slow
def test_two_node_mode_spreads_shards_over_both_nodes_and_reports_each(tmp_path: Path) -> None:
    """``--cluster local2``: a two-node local Ray cluster started and stopped by the run; the
    index's two shards sit on the two worker nodes; each node's share is reported."""
    from shardsearch.cli import build_parser
    args = build_parser().parse_args(
        ["bench", "--quick", "--corpus", "synthetic", "--limit", "300", "--peers", "none",
         "--requests", "2", "--warmup", "0.2", "--aggs", "off", "--scale", "1", "--cluster",
         "local2", "--no-plots", "--out", str(tmp_path)])
    assert bench.main(args) == 0
    two = orjson.loads((tmp_path / "results.json").read_bytes())["two_node"]
    assert sorted(two["shards"]) == ["node_1", "node_2"]
    assert two["bulk"]["docs"] == 300 and two["bulk"]["failed_batches"] == 0
    assert all(r["errors"] == 0 and r["requests"] > 0 for r in two["runs"])
    nodes = two["nodes_at_max_connections"]
    assert nodes["node_1"]["shards"] == nodes["node_2"]["shards"] == 1
    rps8 = next(r["rps"] for r in two["runs"] if r["connections"] == 8)
    assert nodes["node_1"]["shard_queries_per_s"] == round(rps8, 1)
    assert nodes["node_1"]["cpu_s"] > 0 and nodes["node_2"]["cpu_s"] > 0 and "front end" in nodes
    assert "## Two nodes" in (tmp_path / "table.md").read_text()
    from shardsearch.benchmarks.two_node import session_processes
    left = session_processes(list(two["sessions"].values()))
    assert not left, f"the run left processes of its Ray nodes running: {left}"


def test_a_two_node_run_that_failed_is_reported_not_tabled() -> None:
    from shardsearch.benchmarks.report import full_markdown
    report = dict(_fake_report(), two_node={"error": "RuntimeError: no cluster"})
    report["targets"] = bench.targets(report)
    assert "The two-node run did not complete: RuntimeError: no cluster" in \
        full_markdown(report)


@pytest.mark.parametrize("scale", ["0", "65"])
def test_scale_outside_its_bounds_is_refused_before_anything_starts(scale: str) -> None:
    from shardsearch.cli import build_parser
    args = build_parser().parse_args(["bench", "--quick", "--scale", scale])
    with pytest.raises(SystemExit, match="--scale must be between 1 and 64"):
        bench.make_plan(args)
