"""Search features against a real OpenSearch node: collapse results, rescore ranking and
scores, named queries, highlight fragments, term suggestions and ``indices_boost`` — the same
requests to both systems (ours over several shards, OpenSearch over one), replies compared.
"""
from __future__ import annotations

from typing import Any

import pytest

from .compare import close
from .corpus import INDEX

pytestmark = pytest.mark.slow


def _both(pair: Any, body: dict[str, Any], params: dict[str, Any] | None = None
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    (s1, ours), (s2, theirs) = pair.send("POST", f"/{INDEX}/_search", body, params)
    assert s1 == s2 == 200, (ours, theirs)
    return ours, theirs


def _hits(resp: dict[str, Any]) -> list[dict[str, Any]]:
    return resp["hits"]["hits"]


def _same_ranking(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert [h["_id"] for h in _hits(ours)] == [h["_id"] for h in _hits(theirs)]
    for o, t in zip(_hits(ours), _hits(theirs)):
        assert close(o["_score"], t["_score"]), (o["_id"], o["_score"], t["_score"])


@pytest.mark.parametrize("body", [
    {"collapse": {"field": "n"}, "sort": [{"uid": "desc"}], "size": 8},
    {"collapse": {"field": "n"}, "sort": [{"uid": "asc"}], "from": 4, "size": 5},
    {"collapse": {"field": "n"}, "query": {"match": {"body": "apple banana"}}, "size": 6},
    {"collapse": {"field": "n", "inner_hits": {"name": "g", "size": 2, "sort": ["uid"]}},
     "sort": [{"uid": "desc"}], "size": 3},
])
def test_collapse_agrees_with_opensearch(pair, body) -> None:
    ours, theirs = _both(pair, body)
    assert ours["hits"]["total"] == theirs["hits"]["total"]
    assert [(h["_id"], h["fields"]) for h in _hits(ours)] == \
        [(h["_id"], h["fields"]) for h in _hits(theirs)]
    for o, t in zip(_hits(ours), _hits(theirs)):
        if "inner_hits" in t:
            assert [h["_id"] for h in o["inner_hits"]["g"]["hits"]["hits"]] == \
                [h["_id"] for h in t["inner_hits"]["g"]["hits"]["hits"]]
            assert o["inner_hits"]["g"]["hits"]["total"] == t["inner_hits"]["g"]["hits"]["total"]


@pytest.mark.parametrize("mode", ["total", "multiply", "avg", "max", "min"])
def test_rescore_ranking_agrees_with_opensearch(pair, mode) -> None:
    body = {"query": {"match": {"body": "apple banana"}}, "size": 15,
            "rescore": {"window_size": 20, "query": {
                "rescore_query": {"match": {"title": "cherry delta"}}, "query_weight": 0.7,
                "rescore_query_weight": 1.5, "score_mode": mode}}}
    _same_ranking(*_both(pair, body))


def test_named_queries_agree_with_opensearch(pair) -> None:
    body = {"size": 30, "query": {"bool": {"should": [
        {"match": {"title": {"query": "apple", "_name": "apple"}}},
        {"term": {"tag": {"value": "alpha", "_name": "alpha"}}},
        {"range": {"n": {"gte": 10, "_name": "big"}}}]}}}
    ours, theirs = _both(pair, body)
    _same_ranking(ours, theirs)
    assert [sorted(h.get("matched_queries", [])) for h in _hits(ours)] == \
        [sorted(h.get("matched_queries", [])) for h in _hits(theirs)]
    ours, theirs = _both(pair, body, {"include_named_queries_score": "true"})
    for o, t in zip(_hits(ours), _hits(theirs)):
        assert set(o["matched_queries"]) == set(t["matched_queries"])
        for name, score in t["matched_queries"].items():
            assert close(o["matched_queries"][name], score), (o["_id"], name)


@pytest.mark.parametrize("highlight", [
    {"fields": {"title": {}}},
    {"fields": {"title": {"type": "plain"}}},
    {"fields": {"body": {"number_of_fragments": 0}}, "pre_tags": ["["], "post_tags": ["]"]},
    {"fields": {"body": {"number_of_fragments": 0, "type": "plain"}}},
    {"fields": {"t*": {}, "body": {"number_of_fragments": 0}}, "require_field_match": False},
])
def test_highlight_fragments_agree_with_opensearch(pair, highlight) -> None:
    body = {"query": {"bool": {"should": [{"match": {"title": "apple banana"}},
                                          {"match_phrase": {"body": "apple banana"}}]}},
            "size": 10, "highlight": highlight}
    ours, theirs = _both(pair, body)
    assert [(h["_id"], h.get("highlight")) for h in _hits(ours)] == \
        [(h["_id"], h.get("highlight")) for h in _hits(theirs)]


@pytest.mark.parametrize("spec", [
    {"field": "body"},
    {"field": "title", "suggest_mode": "always", "sort": "frequency", "size": 3},
    {"field": "body", "suggest_mode": "popular", "max_edits": 1},
])
def test_term_suggestions_agree_with_opensearch(pair, spec) -> None:
    body = {"size": 0, "suggest": {"text": "aple banan cheery hotel", "s": {"term": spec}}}
    ours, theirs = _both(pair, body)
    assert _rounded(ours["suggest"]) == _rounded(theirs["suggest"])


def _rounded(value: Any) -> Any:
    """Scores as Elasticsearch's float32 prints them (``0.8333333``) compare to 6 digits."""
    if isinstance(value, dict):
        return {k: round(v, 6) if k == "score" else _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_indices_boost_agrees_with_opensearch(pair) -> None:
    body = {"query": {"match": {"title": "apple"}}, "size": 10,
            "indices_boost": [{INDEX: 2.5}]}
    _same_ranking(*_both(pair, body))


@pytest.mark.parametrize("body,params", [
    ({"collapse": {"field": "n"}}, {"scroll": "1m"}),
    ({"collapse": {"field": "title"}}, None),
    ({"collapse": {"field": "nope"}}, None),
    ({"collapse": {"field": "n"}, "rescore": {"query": {"rescore_query": {"match_all": {}}}}},
     None),
    ({"sort": ["n"], "rescore": {"query": {"rescore_query": {"match_all": {}}}}}, None),
    ({"query": {"terms": {"": ["x"]}}}, None),
    ({"suggest": {"s": {"text": "x", "term": {"field": "body", "suggest_mode": "often"}}}},
     None),
    ({"highlight": {"fields": {"title": {"type": "nope"}}}}, None),
])
def test_requests_opensearch_refuses_are_refused(pair, body, params) -> None:
    """Both refuse; ours always with a 400 (OpenSearch 2.19 answers collapse in a scroll or with
    rescore with a 500 ``search_phase_execution_exception``; Elasticsearch 8 with a 400
    validation error, as we do)."""
    (s1, ours), (s2, theirs) = pair.send("POST", f"/{INDEX}/_search", body, params)
    assert s2 >= 400, theirs
    assert s1 == 400, ours
