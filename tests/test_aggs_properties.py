"""Aggregations as a property: for random documents, mappings and aggregation trees, 1, 3 and 7
shards give the answer a straightforward single-process computation gives — exact for
counts, keys, extremes and long sums; double sums and averages to floating-point rounding.
Top-level ``terms`` by count or key run the bounded rounds (``search/aggs/tput.py``; with
``shard_size`` = ``size`` every round is needed), nested ones ship whole partials.

The in-process backend runs the real shard and coordinator code (no Ray); the reference below
is plain Python over the documents' ``_source``, written from Elasticsearch's documented
semantics, not from the service's code.
"""
from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inprocess import LocalCluster

TAGS = ["a", "b", "c", "d", "e"]

docs_strategy = st.lists(
    st.fixed_dictionaries({
        "tag": st.one_of(st.none(), st.sampled_from(TAGS),
                         st.lists(st.sampled_from(TAGS), min_size=1, max_size=3)),
        "n": st.one_of(st.none(), st.integers(-20, 40),
                       st.lists(st.integers(-20, 40), min_size=1, max_size=3)),
        "x": st.one_of(st.none(), st.floats(-50, 50, allow_nan=False).map(lambda v: round(v, 2))),
    }),
    max_size=40)

metric = st.sampled_from(["avg", "sum", "min", "max", "value_count", "cardinality", "stats"])
metric_field = st.sampled_from(["n", "x"])


@st.composite
def agg_tree(draw: Any, depth: int = 0) -> dict[str, Any]:
    kind = draw(st.sampled_from(["terms", "terms_n", "terms_cut", "histogram", "range",
                                 "filter", "metric"] if depth < 2 else ["metric"]))
    if kind == "metric":
        return {draw(metric): {"field": draw(metric_field)}}
    if kind == "terms":
        spec: dict[str, Any] = {"terms": {"field": "tag", "size": draw(st.integers(1, 6)),
                                          "order": draw(st.sampled_from(
                                              [{"_count": "desc"}, {"_key": "asc"},
                                               {"_key": "desc"}, {"_count": "asc"}]))}}
    elif kind == "terms_n":
        spec = {"terms": {"field": "n", "size": draw(st.integers(1, 8))}}
    elif kind == "terms_cut":   # shard_size = size: a top-level one runs every TPUT round
        size = draw(st.integers(1, 4))
        spec = {"terms": {"field": draw(st.sampled_from(["n", "tag"])), "size": size,
                          "shard_size": size}}
    elif kind == "histogram":
        spec = {"histogram": {"field": draw(metric_field), "interval": draw(
            st.sampled_from([5, 10, 7.5])), "min_doc_count": draw(st.sampled_from([0, 1]))}}
    elif kind == "range":
        spec = {"range": {"field": "x", "ranges": [{"to": -10}, {"from": -10, "to": 10},
                                                   {"from": 0}]}}
    else:
        spec = {"filter": {"term": {"tag": draw(st.sampled_from(TAGS))}}}
    subs = draw(st.lists(st.deferred(lambda: agg_tree(depth + 1)), max_size=2))
    if subs:
        spec["aggs"] = {f"s{i}": s for i, s in enumerate(subs)}
    return spec


# --- the reference --------------------------------------------------------------------------

def values(doc: dict[str, Any], field: str) -> list[Any]:
    v = doc.get(field)
    return [] if v is None else v if isinstance(v, list) else [v]


def ref_level(aggs: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {name: ref_one(spec, docs) for name, spec in aggs.items()}


def ref_one(spec: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, Any]:
    kind = next(k for k in spec if k != "aggs")
    p, subs = spec[kind], spec.get("aggs", {})

    def bucket(head: dict[str, Any], members: list[dict[str, Any]]) -> dict[str, Any]:
        return {**head, "doc_count": len(members), **ref_level(subs, members)}
    if kind == "terms":
        groups: dict[Any, list] = {}
        for d in docs:
            for v in set(values(d, p["field"])):
                groups.setdefault(v, []).append(d)
        (path, direction), = p["order"].items() if "order" in p else [("_count", "desc")]
        keyed = sorted(groups, key=lambda k: k)
        if path == "_count":
            keyed.sort(key=lambda k: len(groups[k]), reverse=direction == "desc")
        elif direction == "desc":
            keyed.reverse()
        top = keyed[:p["size"]]
        return {"doc_count_error_upper_bound": 0,
                "sum_other_doc_count": sum(len(groups[k]) for k in keyed[p["size"]:]),
                "buckets": [bucket({"key": k}, groups[k]) for k in top]}
    if kind == "histogram":
        iv = p["interval"]
        groups = {}
        for d in docs:
            for k in {math.floor(v / iv) * iv for v in values(d, p["field"])}:
                groups.setdefault(float(k), []).append(d)
        keys = sorted(groups)
        if p["min_doc_count"] == 0 and keys:
            first, last = round(keys[0] / iv), round(keys[-1] / iv)
            keys = [i * iv for i in range(first, last + 1)]
        return {"buckets": [bucket({"key": float(k)}, groups.get(float(k), [])) for k in keys]}
    if kind == "range":
        out = []
        for r in p["ranges"]:
            lo, hi = r.get("from", -math.inf), r.get("to", math.inf)
            members = [d for d in docs if any(lo <= v < hi for v in values(d, "x"))]
            head: dict[str, Any] = {"key": ("*" if lo == -math.inf else f"{float(lo)}") + "-"
                                    + ("*" if hi == math.inf else f"{float(hi)}")}
            if lo != -math.inf:
                head["from"] = float(lo)
            if hi != math.inf:
                head["to"] = float(hi)
            out.append(bucket(head, members))
        return {"buckets": sorted(out, key=lambda b: (b.get("from", -math.inf),
                                                      b.get("to", math.inf)))}
    if kind == "filter":
        (field, value), = p["term"].items()
        return bucket({}, [d for d in docs if value in values(d, field)])
    vals = [v for d in docs for v in values(d, p["field"])]
    n = len(vals)
    total = float(sum(vals))
    if kind == "value_count":
        return {"value": n}
    if kind == "cardinality":
        return {"value": len(set(vals))}
    if kind == "sum":
        return {"value": total}
    if kind == "avg":
        return {"value": total / n if n else None}
    if kind in ("min", "max"):
        return {"value": float((min if kind == "min" else max)(vals)) if n else None}
    return {"count": n, "min": float(min(vals)) if n else None,
            "max": float(max(vals)) if n else None, "avg": total / n if n else None,
            "sum": total}


def close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9,
                                                                abs_tol=1e-9)
    return a == b


def search(shards: int, docs: list[dict[str, Any]], aggs: dict[str, Any]) -> dict[str, Any]:
    c = LocalCluster().create("idx", shards=shards, mappings={"properties": {
        "tag": {"type": "keyword"}, "n": {"type": "long"}, "x": {"type": "double"}}})
    sources = [{k: v for k, v in d.items() if v is not None} for d in docs]
    half = len(sources) // 2   # two refreshes: several segments per shard
    c.index("idx", dict(enumerate(sources[:half])))
    c.index("idx", {i + half: s for i, s in enumerate(sources[half:])})
    return c.search("idx", {"size": 0, "aggs": aggs})["aggregations"]


@pytest.mark.young_collections
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=docs_strategy, tree=st.dictionaries(st.sampled_from(["a1", "a2"]), agg_tree(),
                                                 min_size=1, max_size=2))
def test_one_three_and_seven_shards_equal_a_single_process_computation(docs, tree):
    # documents without a keyword value never form terms buckets; keys are exact
    expected = ref_level(tree, [{k: v for k, v in d.items() if v is not None} for d in docs])
    for shards in (1, 3, 7):
        got = search(shards, docs, tree)
        assert close(got, expected), (shards, got, expected)
