"""``function_score``, ``script_score`` and ``_script`` sorts against a real OpenSearch node:
the same corpus (ours on 3 shards, OpenSearch on 1), the same ranking, scores and sort values
within the float tolerance of ``compare.py``. Every function kind, every ``score_mode`` and
``boost_mode``, decays on numeric and date fields, ``max_boost``, ``min_score`` and ``boost``;
``distance_feature`` on a date field."""
from __future__ import annotations

import re
from typing import Any

import pytest

from .compare import close
from .corpus import INDEX
from .test_differential import check

pytestmark = pytest.mark.slow

_MATCH = {"match": {"title": "apple banana cherry"}}
_TAG_WEIGHTS = [{"filter": {"term": {"tag": "alpha"}}, "weight": 3},
                {"filter": {"term": {"tag": "beta"}}, "weight": 2},
                {"filter": {"range": {"n": {"gte": 6}}},
                 "field_value_factor": {"field": "n", "modifier": "sqrt"}},
                {"gauss": {"price": {"origin": 40, "scale": 25}}, "weight": 1.5}]


def _fvf(modifier: str, **extra: Any) -> dict[str, Any]:
    return {"function_score": {"query": _MATCH, "field_value_factor": {
        "field": "n", "factor": 1.5, "modifier": modifier, **extra}}}


FUNCTION_SCORE = [
    *[_fvf(m) for m in ("none", "log1p", "log2p", "ln1p", "ln2p", "square", "sqrt")],
    {"function_score": {"query": _MATCH, "field_value_factor": {
        "field": "price", "modifier": "log1p", "missing": 7}, "boost_mode": "sum"}},
    *[{"function_score": {"query": _MATCH, "functions": _TAG_WEIGHTS, "score_mode": sm,
                          "boost_mode": bm}}
      for sm in ("multiply", "sum", "avg", "first", "max", "min")
      for bm in ("multiply", "replace", "sum", "avg", "max", "min")],
    *[{"function_score": {shape: {"price": {"origin": 50, "scale": 20, "offset": 5,
                                            "decay": 0.3}}, "boost_mode": "replace"}}
      for shape in ("gauss", "exp", "linear")],
    *[{"function_score": {"query": _MATCH, shape: {"date": {
        "origin": "2024-05-15", "scale": "30d", "offset": "2d"}}}}
      for shape in ("gauss", "exp", "linear")],
    {"function_score": {"query": _MATCH, "functions": _TAG_WEIGHTS, "score_mode": "sum",
                        "max_boost": 2.5, "min_score": 1.2, "boost": 3}},
    {"function_score": {"weight": 4, "boost_mode": "replace"}},
    *[{"function_score": {"query": _MATCH, "weight": 2, "boost": 5, "boost_mode": bm}}
      for bm in ("replace", "sum", "avg")],
    {"function_score": {"query": {"match_all": {}}, "functions": [
        {"filter": {"term": {"tag": "gamma"}}, "weight": 2},
        {"linear": {"n": {"origin": 3, "scale": 4}}}], "score_mode": "avg"}},
]

SCRIPT_SCORE = [
    {"script_score": {"query": _MATCH, "script": {"source": "_score * 2 + doc['n'].value"}}},
    {"script_score": {"query": _MATCH, "script": {
        "source": "Math.log(2 + doc['n'].value) * params.f", "params": {"f": 1.5}},
        "min_score": 2, "boost": 2}},
    {"script_score": {"query": {"match_all": {}}, "script": {
        "source": "doc['price'].size() == 0 ? 0 : doc['price'].value / 10"}}},
    {"script_score": {"query": _MATCH, "script": {"source":
        "decayNumericGauss(params.o, 3, 1, 0.4, doc['n'].value) + saturation(_score, 2) "
        "+ sigmoid(doc['n'].value + 1, 4, 0.6) + decayNumericExp(6, 2, 0, 0.5, doc['n'].value)"
        " + decayNumericLinear(2, 5, 0, 0.2, doc['n'].value)", "params": {"o": 5}}}},
    {"function_score": {"query": _MATCH, "script_score": {"script": {
        "source": "doc['n'].value + 1"}}, "boost_mode": "sum"}},
]

DISTANCE_FEATURE = [
    {"distance_feature": {"field": "date", "origin": "2024-05-15", "pivot": "10d"}},
    {"bool": {"must": _MATCH, "should": {"distance_feature": {
        "field": "date", "origin": "2024-03-01||+1M", "pivot": "3d", "boost": 2}}}},
]

SCRIPT_SORTS = [
    {"query": _MATCH, "sort": [{"_script": {"type": "number", "order": "desc", "script": {
        "source": "doc['n'].value * 2 + (doc['price'].size() == 0 ? 0 : doc['price'].value)"}}}]},
    {"sort": [{"_script": {"type": "number", "script": {"source": "doc['n'].value % 4"}}},
              {"uid": "desc"}]},
    {"sort": [{"_script": {"type": "string", "order": "desc", "script": {
        "source": "doc['tag'].size() == 0 ? '' : doc['tag'].value"}}}]},
    {"query": _MATCH, "sort": [{"_script": {"type": "number", "script": {
        "source": "_score * 10"}}}], "track_scores": True},
]


@pytest.mark.parametrize("query", FUNCTION_SCORE + SCRIPT_SCORE + DISTANCE_FEATURE)
def test_scoring_queries_rank_and_score_as_opensearch(pair: Any, query: dict[str, Any]) -> None:
    check(pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 25})


@pytest.mark.parametrize("body", SCRIPT_SORTS)
def test_script_sorts_order_as_opensearch(pair: Any, body: dict[str, Any]) -> None:
    check(pair, "POST", f"/{INDEX}/_search", {**body, "size": 30})


ERRORS = [
    {"function_score": {"field_value_factor": {"field": "n"}, "gauss": {"n": {}}}},
    {"function_score": {"functions": [{"filter": {"match_all": {}}}]}},
    {"function_score": {"functions": [{"weight": 2}], "weight": 3}},
    {"function_score": {"score_mode": "median"}},
    {"function_score": {"boost_mode": "nope"}},
    {"function_score": {"field_value_factor": {"field": "price"}}},
    {"function_score": {"field_value_factor": {"field": "n", "modifier": "ln"}}},
    {"function_score": {"gauss": {"n": {"scale": 2}}}},
    {"script_score": {"query": {"match_all": {}},
                      "script": {"source": "-1 - doc['n'].value"}}},
    {"script_score": {"script": {"source": "1"}}},
    {"script_score": {"query": {"match_all": {}}, "script": "1"}},
    {"distance_feature": {"field": "tag", "origin": "now", "pivot": "1d"}},
    {"distance_feature": {"field": "date", "origin": "now"}},
    {"terms": {"tag": {"index": INDEX, "path": "tag"}}},
]


@pytest.mark.parametrize("query", ERRORS)
def test_bad_scoring_queries_fail_as_opensearch(pair: Any, query: dict[str, Any]) -> None:
    check(pair, "POST", f"/{INDEX}/_search", {"query": query})


def test_a_terms_lookup_finds_what_opensearch_finds(pair: Any) -> None:
    lookup = {"index": INDEX, "id": "d016", "path": "tag"}
    check(pair, "POST", f"/{INDEX}/_search", {"query": {"terms": {"tag": lookup}}, "size": 30})


EXPLAINED = [
    {"function_score": {"query": _MATCH, "boost_mode": bm, "score_mode": "sum", "max_boost": 10,
                        "functions": [*_TAG_WEIGHTS[:2],
                                      {"field_value_factor": {"field": "n", "modifier": "ln1p",
                                                              "factor": 2}},
                                      {"gauss": {"price": {"origin": 40, "scale": 25}},
                                       "weight": 1.5},
                                      {"linear": {"n": {"origin": 4, "scale": 6}}}]}}
    for bm in ("multiply", "sum", "replace", "max", "min", "avg")
] + [
    {"script_score": {"query": _MATCH, "script": {"source": "_score * params.k",
                                                  "params": {"k": 2}}, "boost": 2}},
    {"distance_feature": {"field": "date", "origin": "2024-05-15", "pivot": "10d"}},
]


def _differences(ours: dict[str, Any], theirs: dict[str, Any], path: str = "") -> list[str]:
    """Where two explanation trees differ: descriptions (Lucene's doc ids aside), values
    within the score tolerance, and the children in order."""
    def text(x: dict[str, Any]) -> str:
        return re.sub(r" in \d+\)", " in #)", x["description"])
    out = [] if text(ours) == text(theirs) and close(ours["value"], theirs["value"]) else \
        [f"{path}: {text(ours)!r}={ours['value']} / {text(theirs)!r}={theirs['value']}"]
    if len(ours["details"]) != len(theirs["details"]):
        return out + [f"{path}: {len(ours['details'])} / {len(theirs['details'])} details"]
    for i, (o, t) in enumerate(zip(ours["details"], theirs["details"])):
        out += _differences(o, t, f"{path}.{i}")
    return out


@pytest.mark.parametrize("query", EXPLAINED)
def test_explanations_read_as_opensearch_writes_them(pair: Any, query: dict[str, Any]) -> None:
    body = {"query": query, "explain": True, "size": 5}
    (_, ours), (_, theirs) = pair.send("POST", f"/{INDEX}/_search", body)
    pairs = list(zip(ours["hits"]["hits"], theirs["hits"]["hits"]))
    assert len(pairs) == 5
    for o, t in pairs:
        assert o["_id"] == t["_id"]
        assert _differences(o["_explanation"], t["_explanation"]) == []
