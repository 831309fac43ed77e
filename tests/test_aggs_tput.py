"""Bounded ``terms`` (TPUT and the key-order cut): the shard's cuts and the coordinator's rounds
as plain functions (no Ray), against a brute-force sum over simulated shards; then through the
in-process cluster (real shards and search path) with adversarial and Zipf data.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from shardsearch.cluster.engine.aggs.parse import parse_aggs
from shardsearch.cluster.engine.aggs.partials import Keyed
from shardsearch.cluster.engine.aggs.tput import Cut, TooManyShardTerms, apply_cut, check_shipped
from shardsearch.cluster.search.aggs.tput import TermsRounds, cut_for
from inprocess import LocalCluster

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


def keyed(counts: dict[Any, int]) -> Keyed:
    """A shard's whole top-level terms partial (keys in key order, as the shard groups them)."""
    keys = sorted(counts)
    dtype = object if keys and isinstance(keys[0], str) else np.int64
    return Keyed(np.zeros(len(keys), np.int64), np.array(keys, dtype=dtype),
                 np.array([counts[k] for k in keys], np.int64))


def only(part: Keyed, keys: list[Any]) -> Keyed:
    """What a shard answers for ``_keys``: those of its buckets."""
    keep = np.isin(part.keys, np.array(keys, dtype=part.keys.dtype))
    return apply_cut(Keyed(part.owner[keep], part.keys[keep], part.counts[keep]), Cut("all"))


def run_rounds(shards: list[dict[Any, int]], size: int, k: int) -> tuple[Any, int, TermsRounds]:
    """The rounds of ``search/aggs/rounds.py`` over simulated shards: (top, other, state)."""
    parts = [keyed(c) for c in shards]
    cut = Cut("top", k)
    state = TermsRounds(len(parts), size)
    for s, p in enumerate(parts):
        state.add(s, apply_cut(p, cut), first=True)
    t = state.threshold()
    for s, p in enumerate(parts):
        if state.needs_threshold(s, t):
            state.add(s, apply_cut(p, Cut("at_least", k, threshold=t)))
            state.lower_bound(s, t)
    asked = state.candidates()
    for s, keys in asked.items():
        state.add(s, only(parts[s], keys))
    state.settle(asked)
    top = state.top(cut)
    return top, state.other(top), state


def brute(shards: list[dict[Any, int]], size: int) -> tuple[list[tuple[Any, int]], int]:
    total: Counter = Counter()
    for c in shards:
        total.update(c)
    ranked = sorted(total.items(), key=lambda kc: (-kc[1], kc[0]))
    return ranked[:size], sum(total.values()) - sum(c for _, c in ranked[:size])


# --- the shard's cuts -------------------------------------------------------------------------

def test_top_cut_keeps_the_first_k_by_count_then_key_and_bounds_the_rest() -> None:
    part = keyed({"a": 3, "b": 5, "c": 3, "d": 1, "e": 3})
    got = apply_cut(part, Cut("top", 3))
    assert dict(zip(got.keys.tolist(), got.counts.tolist())) == {"a": 3, "b": 5, "c": 3}
    assert (got.total, got.distinct, got.bound) == (15, 5, 3)   # "e" (3) and "d" left out
    assert apply_cut(part, Cut("top", 9)).bound == 0            # everything shipped


def test_key_and_threshold_cuts() -> None:
    part = keyed({10: 1, 20: 7, 30: 2, 40: 9})
    assert apply_cut(part, Cut("key", 2)).keys.tolist() == [10, 20]
    assert apply_cut(part, Cut("key", 2, desc=True)).keys.tolist() == [30, 40]
    at = apply_cut(part, Cut("at_least", threshold=7))
    assert at.keys.tolist() == [20, 40] and at.bound == 6 and at.total == 19
    assert apply_cut(part, Cut("at_least", 1, threshold=2)).keys.tolist() == [20, 30]


def test_the_shipping_limit_counts_buckets_at_every_depth() -> None:
    inner = keyed({"x": 1, "y": 1})
    outer = keyed({"a": 2})
    outer.subs = {"s": inner}
    check_shipped({"t": outer}, 3)
    with pytest.raises(TooManyShardTerms) as err:
        check_shipped({"t": outer}, 2)
    assert "[search.aggs.max_shard_terms]" in err.value.reason
    assert err.value.status == 400 and err.value.es_type == "too_many_buckets_exception"


# --- which terms the rounds serve -------------------------------------------------------------

@pytest.mark.parametrize("spec, mode", [
    ({"field": "f"}, "top"),
    ({"field": "f", "order": {"_count": "desc"}}, "top"),
    ({"field": "f", "order": {"_key": "desc"}}, "key"),
    ({"field": "f", "include": "a.*", "missing": "m"}, "top"),
    ({"field": "f", "order": {"_count": "asc"}}, None),
    ({"field": "f", "order": {"m": "desc"}}, None),
    ({"field": "f", "min_doc_count": 0}, None),
    ({"field": "f", "min_doc_count": 2}, None),
])
def test_cut_for_serves_count_desc_and_key_order_with_min_doc_count_one(spec, mode) -> None:
    body = {"t": {"terms": spec}}
    if spec.get("order") == {"m": "desc"}:
        body["t"]["aggs"] = {"m": {"max": {"field": "n"}}}
    cut = cut_for(parse_aggs(body).nodes[0])
    assert (cut.mode if cut is not None else None) == mode


def test_round_one_ships_elasticsearch_s_default_shard_size() -> None:
    cut = cut_for(parse_aggs({"t": {"terms": {"field": "f", "size": 10}}}).nodes[0])
    assert cut.k == 25
    cut = cut_for(parse_aggs({"t": {"terms": {"field": "f", "size": 10,
                                               "shard_size": 3}}}).nodes[0])
    assert cut.k == 10   # never fewer than size


# --- the coordinator's rounds against brute force --------------------------------------------

def test_a_key_below_every_shard_s_top_k_but_first_overall() -> None:
    shards = [{"a": 10, "x": 9}, {"b": 10, "x": 9}, {"c": 10, "x": 9}]
    top, other, _ = run_rounds(shards, size=1, k=1)
    assert top == [("x", 27)] and other == 30
    assert (top, other) == brute(shards, 1)


def test_ties_break_on_the_key_ascending() -> None:
    shards = [{"b": 2, "a": 1, "c": 1}, {"a": 1, "c": 1, "d": 2}, {"b": 1, "d": 1}]
    for size in (1, 2, 3, 4):
        top, other, _ = run_rounds(shards, size=size, k=1)
        assert (top, other) == brute(shards, size), size


@pytest.mark.parametrize("seed", range(40))
def test_random_shards_give_the_exact_top(seed: int) -> None:
    rnd = random.Random(seed)
    m, keys = rnd.choice([1, 2, 3, 5, 7]), rnd.randint(1, 60)
    shards = []
    for _ in range(m):
        skew = rnd.random() * 3
        shards.append({k: max(1, int(rnd.paretovariate(1 + skew)) + rnd.randint(0, 3))
                       for k in rnd.sample(range(keys), rnd.randint(0, keys))})
    size = rnd.randint(1, 12)
    top, other, _ = run_rounds(shards, size=size, k=rnd.randint(size, size + 5))
    assert (top, other) == brute(shards, size)


def test_round_three_settles_candidates_exactly() -> None:
    """Over many random cases, some need round 3 (a key some shard has not reported may still
    reach the top); every one is exact."""
    rnd = random.Random(11)
    third = 0
    for _ in range(300):
        m = rnd.randint(2, 6)
        shards = [{k: rnd.randint(1, 9) for k in rnd.sample(range(30), rnd.randint(1, 30))}
                  for _ in range(m)]
        size = rnd.randint(1, 5)
        parts = [keyed(c) for c in shards]
        state = TermsRounds(m, size)
        for si, p in enumerate(parts):
            state.add(si, apply_cut(p, Cut("top", size)), first=True)
        t = state.threshold()
        for si, p in enumerate(parts):
            if state.needs_threshold(si, t):
                state.add(si, apply_cut(p, Cut("at_least", size, threshold=t)))
                state.lower_bound(si, t)
        third += bool(state.candidates())
        top, other, _ = run_rounds(shards, size=size, k=size)
        assert (top, other) == brute(shards, size)
    assert third > 10


def test_zipf_data_ships_a_small_fraction_of_the_keys() -> None:
    rnd = np.random.default_rng(7)
    distinct = 20_000
    weights = 1.0 / np.arange(1, distinct + 1) ** 1.1
    shards = []
    for s in range(3):
        draws = rnd.choice(distinct, size=200_000, p=weights / weights.sum())
        shards.append(dict(Counter(f"k{v:05d}" for v in draws.tolist())))
    top, other, state = run_rounds(shards, size=10, k=25)
    assert (top, other) == brute(shards, 10)
    for s in range(3):
        assert state.shipped[s] < state.distinct[s] / 20, (state.shipped, state.distinct)


# --- through the real shards and search path (in-process, no Ray) ----------------------------

def _cluster(shards: int, docs: list[dict[str, Any]]) -> LocalCluster:
    c = LocalCluster().create("idx", shards=shards, mappings={"properties": {
        "tag": {"type": "keyword"}, "n": {"type": "long"}}})
    c.index("idx", dict(enumerate(docs)))
    return c


def _reference(docs: list[dict[str, Any]], field: str, size: int) -> dict[str, Any]:
    groups: Counter = Counter()
    for d in docs:
        vals = d.get(field)
        groups.update(set(vals if isinstance(vals, list) else [vals]) - {None})
    ranked = sorted(groups.items(), key=lambda kc: (-kc[1], kc[0]))
    return {"doc_count_error_upper_bound": 0,
            "sum_other_doc_count": sum(groups.values()) - sum(c for _, c in ranked[:size]),
            "buckets": [{"key": k, "doc_count": c} for k, c in ranked[:size]]}


def test_cut_terms_with_sub_aggregations_equal_one_shard() -> None:
    rnd = random.Random(3)
    docs = [{"tag": [f"t{rnd.randint(0, 40)}" for _ in range(rnd.randint(1, 3))],
             "n": rnd.randint(0, 9)} for _ in range(600)]
    aggs = {"t": {"terms": {"field": "tag", "size": 4, "shard_size": 4},
                  "aggs": {"s": {"sum": {"field": "n"}},
                           "inner": {"terms": {"field": "n", "size": 2}}}},
            "k": {"terms": {"field": "n", "size": 3, "order": {"_key": "desc"}},
                  "aggs": {"c": {"value_count": {"field": "tag"}}}}}
    one = _cluster(1, docs).search("idx", {"size": 0, "aggs": aggs})["aggregations"]
    for shards in (3, 7):
        resp = _cluster(shards, docs).search("idx", {"size": 0, "aggs": aggs, "profile": True})
        assert resp["aggregations"] == one, shards
        debug = [a["debug"] for sh in resp["profile"]["shards"] for a in sh["aggregations"]
                 if a["description"] == "t"]
        assert len(debug) == shards and max(d["rounds"] for d in debug) >= 2
        assert all(d["keys_shipped"] <= d["distinct_keys"] for d in debug)
    plain = _reference(docs, "tag", 4)
    assert [(b["key"], b["doc_count"]) for b in one["t"]["buckets"]] == \
        [(b["key"], b["doc_count"]) for b in plain["buckets"]]
    assert one["t"]["sum_other_doc_count"] == plain["sum_other_doc_count"]


def test_a_segment_without_the_field_keeps_the_last_round_and_include_working() -> None:
    """The last round restricts the terms to its keys; a segment lacking the field (an
    earlier refresh) has no ranks to filter — and ``include`` the same way."""
    c = LocalCluster().create("idx", shards=1, mappings={"properties": {
        "other": {"type": "keyword"}, "cat": {"type": "keyword"}, "val": {"type": "long"}}})
    c.index("idx", {"a": {"other": "x"}})
    c.index("idx", {0: {"cat": "bar", "val": 8}, 1: {"cat": "bar", "val": 0},
                    2: {"cat": "foo", "val": 9}})
    high = {"high": {"filter": {"range": {"val": {"gte": 7}}}}}
    for terms in ({"field": "cat"}, {"field": "cat", "include": ["bar"],
                                     "order": {"_count": "asc"}}):
        resp = c.search("idx", {"size": 0, "aggs": {"c": {"terms": terms, "aggs": high}}})
        assert resp["_shards"]["failed"] == 0
        bar = resp["aggregations"]["c"]["buckets"][0]
        assert (bar["key"], bar["doc_count"], bar["high"]["doc_count"]) == ("bar", 2, 1)
