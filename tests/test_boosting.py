"""``boosting``: the positive query's hits, their scores times ``negative_boost`` where the
negative query matches; Elasticsearch's parse errors for what it refuses."""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import ParsingError
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.query.score_nodes import FunctionScore

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPINGS = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"}}}
DOCS = {"1": {"title": "quick fox", "tag": "a"}, "2": {"title": "quick dog", "tag": "b"},
        "3": {"title": "lazy dog", "tag": "a"}}


def _boosting(negative_boost=0.5, **extra) -> dict:
    return {"boosting": {"positive": {"match": {"title": "quick"}},
                         "negative": {"term": {"tag": "a"}},
                         "negative_boost": negative_boost, **extra}}


def test_boosting_is_the_positive_score_times_the_negative_boost_where_negative_matches() -> None:
    q = parse_query(_boosting(0.25, boost=2))
    assert isinstance(q, FunctionScore) and q.boost == 2
    assert q.score_mode == q.boost_mode == "multiply"
    assert [f.weight for f in q.functions] == [0.25]


@pytest.mark.parametrize("body, reason", [
    ({"negative": {"match_all": {}}, "negative_boost": 1},
     "[boosting] query requires 'positive' query to be set'"),
    ({"positive": {"match_all": {}}, "negative_boost": 1},
     "[boosting] query requires 'negative' query to be set'"),
    ({"positive": {"match_all": {}}, "negative": {"match_all": {}}},
     "[boosting] query requires 'negative_boost' to be set to be a positive value'"),
    (_boosting(-0.5)["boosting"],
     "[boosting] query requires 'negative_boost' to be set to be a positive value'"),
    (_boosting(x=1)["boosting"], "[boosting] query does not support [x]"),
])
def test_boosting_refuses_what_elasticsearch_refuses(body, reason) -> None:
    with pytest.raises(ParsingError) as info:
        parse_query({"boosting": body})
    assert info.value.reason == reason


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def c(request) -> LocalCluster:
    c = LocalCluster().create("bq", request.param, MAPPINGS)
    assert c.index("bq", DOCS)["errors"] is False
    return c


def _scores(c: LocalCluster, query: dict) -> dict[str, float]:
    return {h["_id"]: h["_score"] for h in c.search("bq", {"query": query})["hits"]["hits"]}


def test_boosting_demotes_only_the_negative_matches(c) -> None:
    plain = _scores(c, {"match": {"title": "quick"}})
    boosted = _scores(c, _boosting(0.5))
    assert set(boosted) == set(plain) == {"1", "2"}
    assert boosted["2"] == plain["2"]
    assert boosted["1"] == pytest.approx(plain["1"] * 0.5, rel=1e-6)
    assert _scores(c, _boosting(0))["1"] == 0.0
