"""The benchmark's targets (``benchmarks/targets.py``), judged from results without running
anything: each target's ratio, threshold and reached / not reached / not measured."""
from __future__ import annotations

from typing import Any

from shardsearch.benchmarks import targets as T


def _runs(engine: str, page1_ms: float, deep_ms: float, rps: float, p99: float
          ) -> list[dict[str, Any]]:
    out = []
    for depth, method, ms in ((0, "from", page1_ms), (1000, "from", deep_ms),
                              (1000, "search_after", deep_ms)):
        for c in (1, 8):
            out.append({"engine": engine, "query": "match", "depth": depth, "method": method,
                        "connections": c, "p50_ms": ms, "p99_ms": p99, "rps": rps * c,
                        "total_hits": 500})
    return out


def _engine(runs: list[dict[str, Any]], docs_per_s: float, pss: int, raw: int,
            shards: int = 1) -> dict[str, Any]:
    return {"shards": shards, "runs": runs, "bulk": {"docs_per_s": docs_per_s, "docs": 1000},
            "memory": {"loaded_above_empty_pss": pss, "raw_ndjson_bytes": raw,
                       "empty": {"pss": 100 << 20}, "index_created": {"pss": 140 << 20}}}


def report() -> dict[str, Any]:
    ours = _engine(_runs("shardsearch", 4.0, 4.4, 100.0, 9.0), 20_000, 5 << 20, 2 << 20, 2)
    return {"shardsearch": {"2": ours, "1": _engine(_runs("shardsearch", 1, 1, 1, 1), 1, 1, 1)},
            "tantivy": _engine(_runs("tantivy", 2.0, 10.0, 100.0, 5.0), 80_000, 6 << 20, 2 << 20),
            "sqlite": _engine(_runs("sqlite", 50.0, 90.0, 10.0, 70.0), 40_000, 6 << 20, 2 << 20),
            "aggs": {"agree": True, "p50_over_peer": {"terms": 1.5, "date_histogram": 2.5,
                                                      "cardinality": None}}}


def test_a_ratio_on_the_right_side_of_its_threshold_is_reached() -> None:
    assert T.judge("x", "d", 0.8, ">=", 0.8, "").reached is True
    assert T.judge("x", "d", 1.2, "<=", 1.2, "").reached is True
    missed = T.judge("bulk_vs_sqlite", "d", 0.5, ">=", 1.0, "")
    assert missed.reached is False and missed.blocker == T.BLOCKERS["bulk_vs_sqlite"]


def test_a_missing_measurement_is_not_measured_never_reached() -> None:
    t = T.judge("x", "d", None, ">=", 0.8, "")
    assert t.reached is None and t.value is None and t.blocker == ""
    assert T.ratio(1.0, None) is None and T.ratio(1.0, 0) is None


def test_targets_are_judged_on_the_two_shard_run_against_peers_of_the_same_run() -> None:
    t = T.evaluate(report())
    assert t["bulk_vs_sqlite"]["value"] == 0.5 and t["bulk_vs_sqlite"]["reached"] is False
    assert t["memory_over_raw"]["value"] == 2.5 and t["memory_over_raw"]["reached"] is True
    assert "Tantivy 3.0x" in t["memory_over_raw"]["detail"]
    assert t["page1_rps_vs_tantivy"]["value"] == 1.0
    assert t["deep_over_page1_from"]["value"] == 1.1
    assert t["deep_over_page1_search_after"]["reached"] is True


def test_page1_throughput_carries_p99_next_to_req_per_s() -> None:
    detail = T.evaluate(report())["page1_rps_vs_tantivy"]["detail"]
    assert detail == "800.0 req/s (p99 9.0 ms) vs Tantivy 800.0 req/s (p99 5.0 ms)"


def test_aggregation_targets_compare_each_query_with_the_peer() -> None:
    t = T.evaluate(report())
    assert t["aggs_terms_p50"]["reached"] is True
    assert t["aggs_date_histogram_p50"]["reached"] is False
    assert t["aggs_cardinality_p50"]["reached"] is None


def test_empty_service_plus_one_shard_counts_one_of_the_index_shards() -> None:
    res = report()["shardsearch"]["2"]
    assert T.empty_plus_one_shard(res) == (100 << 20) + (20 << 20)
    t = T.evaluate(report())["empty_plus_one_shard"]
    # the 1-shard run comes first: 100 + 40 MiB over the baseline
    assert t["value"] == round(140 / T.BASELINE_EMPTY_PLUS_ONE_SHARD_MIB, 3)


def test_without_peers_or_scale_runs_those_targets_are_not_measured() -> None:
    r = report()
    del r["tantivy"], r["sqlite"], r["aggs"]
    t = T.evaluate(r)
    for name in ("bulk_vs_sqlite", "page1_rps_vs_tantivy", "aggs_terms_p50",
                 "scale_bulk_rate", "scale_page1_growth", "scale_memory_ratio"):
        assert t[name]["reached"] is None, name
    assert t["deep_over_page1_from"]["reached"] is True


def _scale_row(factor: int, shards: int, rate: float, p50: float, hits: int, mem: float
               ) -> dict[str, Any]:
    return {"factor": factor, "shards": shards, "docs": 1000 * factor, "docs_per_s": rate,
            "page1_p50_ms": p50, "total_hits": hits, "memory_over_raw": mem}


def test_scale_targets_compare_the_largest_factor_with_factor_one_at_two_shards() -> None:
    rows = [_scale_row(1, 2, 1000, 2.0, 100, 4.0), _scale_row(8, 2, 900, 8.0, 800, 4.2),
            _scale_row(1, 1, 10, 1.0, 100, 1.0), _scale_row(8, 1, 1, 100.0, 800, 9.0)]
    t = T.evaluate({"scale": {"runs": rows}})
    assert t["scale_bulk_rate"]["value"] == 0.9 and t["scale_bulk_rate"]["reached"] is True
    assert t["scale_page1_growth"]["value"] == 0.5 and t["scale_page1_growth"]["reached"]
    assert t["scale_memory_ratio"]["value"] == 1.05
    assert "1,000 -> 8,000 docs, 2 shards" in t["scale_bulk_rate"]["detail"]


def test_the_targets_table_says_reached_not_reached_or_not_measured_with_blockers() -> None:
    t = T.evaluate(report())
    table = T.markdown(t)
    lines = table.strip().splitlines()
    assert lines[0].startswith("| target | threshold | value | reached |")
    assert len(lines) == 2 + len(t)
    assert "| **reached** |" in table and "| not reached |" in table
    assert "| not measured |" in table
    assert T.BLOCKERS["bulk_vs_sqlite"] in table


def test_a_report_without_shardsearch_runs_still_lists_every_target() -> None:
    t = T.evaluate({"aggs": report()["aggs"]})
    assert len(t) == len(T.evaluate(report())) == 12
    assert t["bulk_vs_sqlite"]["reached"] is None and t["aggs_terms_p50"]["reached"] is True


def test_memory_target_counts_the_data_above_the_index_created_empty() -> None:
    # the shards' processes are the empty-service target's; the data target is what loading
    # adds to the index whose shards already run (older results: the growth above empty)
    r = report()
    r["shardsearch"]["2"]["memory"]["loaded_above_created_pss"] = 3 << 20
    t = T.evaluate(r)["memory_over_raw"]
    assert t["value"] == 1.5 and t["reached"] is True
    assert "(above empty, with the shards' processes: 5.0 MiB)" in t["detail"]
