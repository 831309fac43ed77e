"""Span queries: which spans each builds on one document, and the queries on a small index
(1 and 3 shards answer identically), with Elasticsearch's refusals.

Documents (positions from 0)::

    1  "quick brown fox jumps"
    2  "brown quick fox"
    3  "fox quick red brown"
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.engine.query.spans import near_ordered, near_unordered
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

DOCS = {"1": {"t": "quick brown fox jumps"}, "2": {"t": "brown quick fox"},
        "3": {"t": "fox quick red brown"}}


def at(*positions: int) -> list[tuple[int, int, int]]:
    return [(p, p, 0) for p in positions]


def test_ordered_near_moves_later_clauses_forward_only() -> None:
    # quick at 0 and 5, brown at 3 and 6: 0->3 needs slop 2, 5->6 none
    assert near_ordered([at(0, 5), at(3, 6)], 2) == [(0, 3, 2), (5, 6, 0)]
    assert near_ordered([at(0, 5), at(3, 6)], 0) == [(5, 6, 0)]


def test_unordered_near_accepts_either_order_within_slop() -> None:
    assert near_unordered([at(4), at(2)], 1) == [(2, 4, 3)]   # width: the whole window
    assert near_unordered([at(4), at(2)], 0) == []


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def idx(request) -> LocalCluster:
    c = LocalCluster().create("sp", request.param, {"properties": {"t": {"type": "text"},
                                                                   "u": {"type": "text"}}})
    c.index("sp", DOCS)
    return c


def found(c: LocalCluster, q: dict) -> dict[str, float]:
    return {h["_id"]: h["_score"] for h in c.search("sp", {"query": q})["hits"]["hits"]}


def term(w: str) -> dict:
    return {"span_term": {"t": w}}


def near(*ws: str, slop: int = 0, in_order: bool = True) -> dict:
    return {"span_near": {"clauses": [term(w) for w in ws], "slop": slop, "in_order": in_order}}


def test_span_near_respects_slop_and_order(idx) -> None:
    assert set(found(idx, near("quick", "fox"))) == {"2"}
    assert set(found(idx, near("quick", "fox", slop=1))) == {"1", "2"}
    assert set(found(idx, near("fox", "quick", in_order=False))) == {"2", "3"}


def test_span_first_span_or_and_span_not(idx) -> None:
    assert set(found(idx, {"span_first": {"match": term("quick"), "end": 1}})) == {"1"}
    assert set(found(idx, {"span_or": {"clauses": [term("jumps"), term("red")]}})) == {"1", "3"}
    # brown, unless quick is right before it (doc 1); quick after it (doc 2) does not count
    assert set(found(idx, {"span_not": {"include": term("brown"), "exclude": term("quick"),
                                        "pre": 1}})) == {"2", "3"}


def test_span_containing_and_within(idx) -> None:
    big = near("quick", "brown", slop=1)
    assert set(found(idx, {"span_containing": {"big": big, "little": term("red")}})) == {"3"}
    assert set(found(idx, {"span_within": {"big": big, "little": term("red")}})) == {"3"}


def test_span_scores_are_the_same_for_one_and_three_shards() -> None:
    got = []
    for shards in (1, 3):
        c = LocalCluster().create("sp", shards, {"properties": {"t": {"type": "text"}}})
        c.index("sp", DOCS)
        got.append(found(c, near("quick", "fox", slop=2)))
    assert got[0] == got[1] and len(got[0]) == 2


@pytest.mark.parametrize("q, text", [
    ({"span_near": {"clauses": [term("quick"), {"span_term": {"u": "x"}}]}},
     "Clauses must have same field."),
    ({"span_near": {"clauses": [{"match": {"t": "x"}}]}}, "clauses must be span queries"),
    ({"span_near": {"clauses": [{"span_multi": {"match": {"prefix": {"t": "q"}}}}]}},
     "[span_multi] query is not supported by this server"),
    ({"span_not": {"include": term("a"), "exclude": term("b"), "dist": 1, "pre": 1}},
     "span_not can either use [dist] or [pre] & [post] (or none)"),
    ({"span_first": {"match": term("a")}}, "spanFirst must have [end] set for it"),
])
def test_malformed_span_queries_are_refused(idx, q, text) -> None:
    with pytest.raises(SearchError) as e:
        found(idx, q)
    assert text in str(e.value) and e.value.status == 400


def test_nesting_is_bounded_as_queries_are(idx) -> None:
    q: dict = term("quick")
    for _ in range(40):
        q = {"span_or": {"clauses": [q]}}
    with pytest.raises(SearchError) as e:
        found(idx, q)
    assert "max_nested_depth" in str(e.value) and e.value.status == 400
