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


MULTI_FIELD = {
    "match_bool_prefix": {"match_bool_prefix": {"body": "apple banana ch"}},
    "match_bool_prefix_and": {"match_bool_prefix": {"body": {"query": "apple ba",
                                                             "operator": "and"}}},
    "match_bool_prefix_msm": {"match_bool_prefix": {"title": {
        "query": "apple banana ch", "minimum_should_match": 2}}},
    "bool_prefix": {"multi_match": {"query": "apple ch", "type": "bool_prefix",
                                    "fields": ["title^2", "body"]}},
    "most_fields_tie": {"multi_match": {"query": "apple cherry", "type": "most_fields",
                                        "tie_breaker": 0.3, "fields": ["title^2", "body"]}},
    "best_fields_and": {"multi_match": {"query": "apple cherry delta", "operator": "and",
                                        "fields": ["title^2", "body"], "tie_breaker": 0.5}},
    "phrase_slop": {"multi_match": {"query": "apple cherry", "type": "phrase", "slop": 2,
                                    "fields": ["title", "body"]}},
    "slop_with_bool_prefix": {"multi_match": {"query": "apple", "type": "bool_prefix",
                                              "slop": 2, "fields": ["title"]}},
    "fuzziness_with_phrase": {"multi_match": {"query": "apple", "type": "phrase",
                                              "fuzziness": 1, "fields": ["title"]}},
}


@pytest.mark.parametrize("name", sorted(MULTI_FIELD))
def test_multi_field_queries_agree_with_opensearch(pair, name):
    check(pair, "POST", f"/{INDEX}/_search", {"query": MULTI_FIELD[name], "size": 50})


def _near(*words: str, slop: int = 0, in_order: bool = True) -> dict:
    return {"span_near": {"clauses": [{"span_term": {"body": w}} for w in words],
                          "slop": slop, "in_order": in_order}}


SPANS = {
    "term": {"span_term": {"body": "apple"}},
    "near_ordered": _near("apple", "cherry", slop=2),
    "near_three": _near("banana", "apple", "cherry", slop=4),
    "near_unordered": _near("apple", "cherry", slop=1, in_order=False),
    "or": {"span_or": {"clauses": [{"span_term": {"body": "delta"}},
                                   {"span_term": {"body": "fox"}}]}},
    "first": {"span_first": {"match": {"span_term": {"body": "banana"}}, "end": 3}},
    "not": {"span_not": {"include": {"span_term": {"body": "banana"}},
                         "exclude": {"span_term": {"body": "apple"}}, "pre": 1}},
    "containing": {"span_containing": {"big": _near("apple", "cherry", slop=3),
                                       "little": {"span_term": {"body": "banana"}}}},
    "within": {"span_within": {"big": _near("apple", "cherry", slop=3),
                               "little": {"span_term": {"body": "banana"}}}},
}


@pytest.mark.parametrize("name", sorted(SPANS))
def test_span_queries_agree_with_opensearch(pair, name):
    check(pair, "POST", f"/{INDEX}/_search", {"query": SPANS[name], "size": 50})

