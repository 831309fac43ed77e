"""Position-aware queries (``intervals``) sent to shardsearch (3 shards) and to a real
OpenSearch node (1 shard): the same hits in the same order, scores within the suite's
tolerance. A table, not generated: each row is a rule or filter of its own.
"""
from __future__ import annotations

import pytest

from .corpus import INDEX
from .test_differential import check

pytestmark = pytest.mark.slow


def _match(query: str, **opts: object) -> dict:
    return {"match": {"query": query, **opts}}


INTERVALS = {
    "term": _match("banana"),
    "unordered": _match("apple banana"),
    "ordered": _match("apple banana", mode="ordered"),
    "phrase": _match("apple banana", mode="ordered", max_gaps=0),
    "max_gaps": _match("apple cherry", max_gaps=2),
    "no_overlap": _match("apple banana apple", mode="unordered_no_overlap"),
    "repeated_term": _match("apple apple", mode="ordered"),
    "three_terms": _match("banana cherry delta"),
    "all_of_ordered": {"all_of": {"intervals": [_match("apple"), _match("cherry")],
                                  "mode": "ordered", "max_gaps": 3}},
    "all_of_disjunction": {"all_of": {"intervals": [
        {"any_of": {"intervals": [_match("banana"), _match("cherry")]}}, _match("apple")],
        "mode": "ordered"}},
    "wide_disjunction": {"all_of": {"intervals": [
        {"any_of": {"intervals": [_match("banana"), _match("cherry delta")]}}, _match("apple")]}},
    "nested_ordered": {"all_of": {"intervals": [_match("apple banana", mode="ordered"),
                                                _match("cherry")],
                                  "mode": "ordered", "max_gaps": 5}},
    "repeated_unordered": _match("apple banana apple", max_gaps=3),
    "any_of": {"any_of": {"intervals": [_match("delta echo"), _match("fox")]}},
    "prefix": {"all_of": {"intervals": [_match("apple"), {"prefix": {"prefix": "ba"}}]}},
    "wildcard": {"wildcard": {"pattern": "ch?rr*"}},
    "fuzzy": {"fuzzy": {"term": "bananna"}},
    "regexp": {"regexp": {"pattern": "del.a"}},
    "containing": _match("apple cherry", filter={"containing": _match("banana")}),
    "not_containing": _match("apple cherry", filter={"not_containing": _match("banana")}),
    "contained_by": _match("banana", filter={"contained_by": _match("apple cherry")}),
    "not_contained_by": _match("banana", filter={"not_contained_by": _match("apple cherry")}),
    "overlapping": _match("apple banana", filter={"overlapping": _match("banana cherry")}),
    "not_overlapping": _match("apple banana",
                              filter={"not_overlapping": _match("banana cherry")}),
    "before": _match("banana", filter={"before": _match("cherry")}),
    "after": _match("banana", filter={"after": _match("cherry")}),
}


@pytest.mark.parametrize("name", sorted(INTERVALS))
@pytest.mark.parametrize("field", ["body", "title"])
def test_intervals_agree_with_opensearch(pair, name, field):
    body = {"query": {"intervals": {field: INTERVALS[name]}}, "size": 50}
    check(pair, "POST", f"/{INDEX}/_search", body)


def test_boosted_intervals_agree_with_opensearch(pair):
    body = {"query": {"intervals": {"body": {**_match("apple banana"), "boost": 2.5}}}}
    check(pair, "POST", f"/{INDEX}/_search", body)
