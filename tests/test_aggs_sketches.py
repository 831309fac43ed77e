"""``cardinality`` past ``precision_threshold``: exact below it (however many shards), an HLL
estimate (Apache DataSketches) within its documented error above it — through the real shards
and search path in process (no Ray), and the sketch helpers alone.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shardsearch.cluster.engine.aggs.sketches import lg_k, merged_estimate, relative_error, sketch_of
from inprocess import LocalCluster

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


def _cluster(shards: int, docs: list[dict[str, Any]]) -> LocalCluster:
    c = LocalCluster().create("idx", shards=shards, mappings={"properties": {
        "k": {"type": "keyword"}, "n": {"type": "long"}, "g": {"type": "keyword"}}})
    c.index("idx", dict(enumerate(docs)))
    return c


def test_thresholds_map_to_sketch_sizes() -> None:
    assert lg_k(3_000) == 14 and lg_k(40_000) == 18 and lg_k(0) == 4
    assert relative_error(14) < 0.01


def test_sketches_merge_with_exact_values() -> None:
    a = sketch_of(np.arange(30_000), 14)
    got = merged_estimate([a], [np.arange(20_000, 40_000).astype(np.float64)], 14)
    assert abs(got - 40_000) <= 4 * relative_error(14) * 40_000
    words = np.array([f"w{i}" for i in range(5_000)], dtype=object)
    got = merged_estimate([sketch_of(words, 12)], [words[:100]], 12)
    assert abs(got - 5_000) <= 4 * relative_error(12) * 5_000


def test_below_the_threshold_per_shard_the_count_is_exact() -> None:
    docs = [{"k": f"v{i}", "n": i} for i in range(5_000)]   # ~1,700 per shard of 3
    c = _cluster(3, docs)
    aggs = {"k": {"cardinality": {"field": "k"}}, "n": {"cardinality": {"field": "n"}}}
    got = c.search("idx", {"size": 0, "aggs": aggs})["aggregations"]
    assert got == {"k": {"value": 5_000}, "n": {"value": 5_000}}


def test_above_the_threshold_the_estimate_is_within_its_error() -> None:
    docs = [{"k": f"v{i % 12_000}", "n": i % 12_000, "g": "ab"[i % 2]} for i in range(24_000)]
    for shards in (1, 3, 7):
        c = _cluster(shards, docs)
        aggs = {"k": {"cardinality": {"field": "k", "precision_threshold": 1_000}},
                "n": {"cardinality": {"field": "n"}},
                "g": {"terms": {"field": "g"},
                      "aggs": {"d": {"cardinality": {"field": "n",
                                                     "precision_threshold": 500}}}}}
        got = c.search("idx", {"size": 0, "aggs": aggs})["aggregations"]
        for name, lg, true in (("k", lg_k(1_000), 12_000), ("n", lg_k(3_000), 12_000)):
            assert abs(got[name]["value"] - true) <= 4 * relative_error(lg) * true, (shards, got)
        for b in got["g"]["buckets"]:   # each bucket holds 6,000 of the values
            assert abs(b["d"]["value"] - 6_000) <= 4 * relative_error(lg_k(500)) * 6_000


def _rank_error(values: np.ndarray, p: float, got: float) -> float:
    """How far (as a fraction of n) ``got``'s rank is from ``p`` percent."""
    s = np.sort(values)
    lo, hi = np.searchsorted(s, got, "left"), np.searchsorted(s, got, "right")
    target = p / 100.0 * len(s)
    return 0.0 if lo <= target <= hi else min(abs(lo - target), abs(hi - target)) / len(s)


def test_percentiles_past_the_exact_limit_come_from_merged_digests() -> None:
    rnd = np.random.default_rng(5)
    vals = rnd.lognormal(3, 1, 36_000)
    docs = [{"n": float(v), "g": "ab"[i % 2]} for i, v in enumerate(vals)]
    c = LocalCluster().create("idx", shards=3, mappings={"properties": {
        "n": {"type": "double"}, "g": {"type": "keyword"}}})
    c.index("idx", dict(enumerate(docs)))
    aggs = {"p": {"percentiles": {"field": "n", "percents": [1, 25, 50, 75, 99]}},
            "r": {"percentile_ranks": {"field": "n", "values": [10, 20, 40]}},
            "g": {"terms": {"field": "g"}, "aggs": {"m": {"percentiles": {
                "field": "n", "percents": [50], "tdigest": {"compression": 200}}}}}}
    got = c.search("idx", {"size": 0, "aggs": aggs})["aggregations"]
    for p in (1, 25, 50, 75, 99):
        tolerance = 0.04 if 10 <= p <= 90 else 0.005   # k = 100: see sketches.py
        assert _rank_error(vals, p, got["p"]["values"][f"{float(p)}"]) <= tolerance, p
    for v in (10, 20, 40):
        exact = float(np.mean(vals < v) * 100)
        assert abs(got["r"]["values"][f"{float(v)}"] - exact) <= 4.0
    for b in got["g"]["buckets"]:   # 18,000 values per bucket, 6,000 per shard: exact
        part = vals[0::2] if b["key"] == "a" else vals[1::2]
        assert b["m"]["values"]["50.0"] == float(np.sort(part)[len(part) // 2])


def _mad_coverage(vals: np.ndarray, d: float) -> float:
    """The fraction of values within ``d`` of the median: 1/2 for the exact deviation."""
    m = float(np.sort(vals)[len(vals) // 2])
    return float(np.mean(np.abs(vals - m) <= d))


def test_median_absolute_deviation_past_the_exact_limit_comes_from_merged_digests() -> None:
    """One shard over ``EXACT_PERCENTILE_VALUES`` ships a t-digest (``compression`` its k);
    the answer covers half the values within the documented 2 % (sketches.py)."""
    rnd = np.random.default_rng(11)
    vals = np.concatenate([rnd.lognormal(3, 1, 24_000), rnd.normal(50, 5, 12_000)])
    c = LocalCluster().create("idx", shards=2, mappings={"properties": {"n": {"type": "double"}}})
    c.index("idx", {i: {"n": float(v)} for i, v in enumerate(vals)})
    for compression in (None, 200):
        spec: dict[str, Any] = {"field": "n"}
        if compression is not None:
            spec["compression"] = compression
        got = c.search("idx", {"size": 0, "aggs": {"m": {"median_absolute_deviation": spec}}})
        d = got["aggregations"]["m"]["value"]
        assert abs(_mad_coverage(vals, d) - 0.5) <= 0.02, (compression, d)


def test_median_absolute_deviation_below_the_limit_stays_exact() -> None:
    vals = np.arange(1, 2_001, dtype=np.float64) ** 1.5
    c = LocalCluster().create("idx", shards=3, mappings={"properties": {"n": {"type": "double"}}})
    c.index("idx", {i: {"n": float(v)} for i, v in enumerate(vals)})
    got = c.search("idx", {"size": 0, "aggs": {"m": {"median_absolute_deviation": {
        "field": "n"}}}})["aggregations"]["m"]["value"]
    m = float(np.sort(vals)[len(vals) // 2])
    dev = np.sort(np.abs(vals - m))
    assert got == float(dev[len(dev) // 2])
