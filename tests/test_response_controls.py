"""Response controls: ``_source`` filtering (body and URL), ``track_total_hits``,
``terminate_after``, ``timeout``, ``explain``, ``max_score`` — checked against hand-made
documents, in process and over HTTP."""
from __future__ import annotations

import pytest
from inprocess import LocalCluster

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

DOC = {"title": "fox", "obj": {"a": 1, "b": {"c": 2, "d": 3}}, "arr": [{"x": 1, "y": 2}], "n": 1}


@pytest.fixture(scope="module")
def one_doc() -> LocalCluster:
    c = LocalCluster().create("r", 2)
    c.index("r", {"1": DOC})
    return c


def source(c: LocalCluster, body: dict | None = None, **params):
    hit = c.search("r", body or {}, **params)["hits"]["hits"][0]
    return hit.get("_source", "absent")


@pytest.mark.parametrize("spec,expected", [
    (True, DOC),
    (False, "absent"),
    ("title", {"title": "fox"}),
    ("obj.*", {"obj": {"a": 1, "b": {"c": 2, "d": 3}}}),
    ("obj.b", {"obj": {"b": {"c": 2, "d": 3}}}),
    (["title", "obj.b.c"], {"title": "fox", "obj": {"b": {"c": 2}}}),
    ({"includes": ["obj"], "excludes": ["obj.b.d"]}, {"obj": {"a": 1, "b": {"c": 2}}}),
    ({"excludes": ["*.c", "arr.y"]},
     {"title": "fox", "obj": {"a": 1, "b": {"d": 3}}, "arr": [{"x": 1}], "n": 1}),
    ({"includes": ["a*"]}, {"arr": [{"x": 1, "y": 2}]}),
    ({"includes": ["nope"]}, {}),
])
def test_source_filtering_in_the_body(one_doc, spec, expected) -> None:
    assert source(one_doc, {"_source": spec}) == expected


@pytest.mark.parametrize("params,expected", [
    ({"_source": "false"}, "absent"),
    ({"_source": "true"}, DOC),
    ({"_source": "title,n"}, {"title": "fox", "n": 1}),
    ({"_source_includes": "obj", "_source_excludes": "obj.a"}, {"obj": {"b": {"c": 2, "d": 3}}}),
    ({"_source_excludes": "obj,arr"}, {"title": "fox", "n": 1}),
    ({"_source_includes": "obj.b.*"}, {"obj": {"b": {"c": 2, "d": 3}}}),
])
def test_source_filtering_in_the_url(one_doc, params, expected) -> None:
    assert source(one_doc, None, **params) == expected


def test_url_source_parameters_win_over_the_body(one_doc) -> None:
    assert source(one_doc, {"_source": False}, _source_includes="n") == {"n": 1}
    assert source(one_doc, {"_source": ["title"]}, _source="false") == "absent"


# --------------------------------------------------------------------------- total hits

@pytest.fixture(scope="module")
def many() -> LocalCluster:
    """10,050 documents over three shards; the first 50 have ``small: true``."""
    c = LocalCluster().create("many", 3)
    c.bulk([{"action": "index", "index": "many", "id": str(i),
             "source": {"n": i, "small": i < 50}} for i in range(10_050)])
    return c


def total(c: LocalCluster, body: dict, **params):
    return c.search("many", {"size": 0, **body}, **params)["hits"].get("total", "absent")


def test_track_total_hits_default_is_exact_up_to_10000(many) -> None:
    assert total(many, {}) == {"value": 10_000, "relation": "gte"}
    assert total(many, {"query": {"term": {"small": True}}}) == {"value": 50, "relation": "eq"}
    assert total(many, {"query": {"range": {"n": {"lt": 10_000}}}}) \
        == {"value": 10_000, "relation": "eq"}


def test_track_total_hits_true_false_and_integer(many) -> None:
    assert total(many, {"track_total_hits": True}) == {"value": 10_050, "relation": "eq"}
    assert total(many, {"track_total_hits": False}) == "absent"
    assert total(many, {"track_total_hits": 100}) == {"value": 100, "relation": "gte"}
    assert total(many, {"track_total_hits": 10_050}) == {"value": 10_050, "relation": "eq"}
    assert total(many, {"track_total_hits": 100, "query": {"term": {"small": True}}}) \
        == {"value": 50, "relation": "eq"}
    assert total(many, {}, track_total_hits="true") == {"value": 10_050, "relation": "eq"}
    assert total(many, {}, rest_total_hits_as_int="true") == 10_050


def test_terminate_after_stops_each_shard_after_that_many_matches(many) -> None:
    r = many.search("many", {"terminate_after": 5, "size": 100})
    assert r["terminated_early"] is True
    # three shards, at most five each
    assert r["hits"]["total"] == {"value": 15, "relation": "eq"}
    assert len(r["hits"]["hits"]) == 15
    r = many.search("many", {"terminate_after": 100, "query": {"term": {"small": True}}})
    assert r["terminated_early"] is False and r["hits"]["total"]["value"] == 50
    c = LocalCluster().create("one", 1)
    c.index("one", [{"x": i} for i in range(10)])
    r = c.search("one", {"terminate_after": 3})
    assert r["terminated_early"] is True and r["hits"]["total"]["value"] == 3


def test_timeout_is_accepted(many) -> None:
    r = many.search("many", {"timeout": "2s", "size": 1})
    assert r["timed_out"] is False and len(r["hits"]["hits"]) == 1
    r = many.search("many", {"size": 1}, timeout="1m")
    assert r["timed_out"] is False


def test_max_score_follows_the_scores(many) -> None:
    r = many.search("many", {"query": {"constant_score": {"filter": {"term": {"small": True}},
                                                          "boost": 3}}})
    assert r["hits"]["max_score"] == 3.0
    r = many.search("many", {"query": {"term": {"small": True}}, "sort": ["n"]})
    assert r["hits"]["max_score"] is None and r["hits"]["hits"][0]["_score"] is None
    r = many.search("many", {"query": {"match_none": {}}})
    assert r["hits"]["max_score"] is None


# --------------------------------------------------------------------------- over HTTP

def test_http_source_track_total_hits_and_explain_parameters(es) -> None:
    es.put("/h", json={"settings": {"number_of_shards": 2}})
    for i in range(5):
        es.put(f"/h/_doc/{i}", json={"t": "fox " * (i + 1), "n": i, "o": {"a": i, "b": -i}})
    es.post("/h/_refresh")
    r = es.get("/h/_search", params={"_source_includes": "o.a", "q": "t:fox",
                                     "track_total_hits": "3", "size": "2"}).json()
    assert r["hits"]["total"] == {"value": 3, "relation": "gte"}
    assert all(h["_source"] == {"o": {"a": int(h["_id"])}} for h in r["hits"]["hits"])
    r = es.get("/h/_search", params={"explain": "true", "q": "fox", "df": "t", "size": "1",
                                     "_source": "false"}).json()
    hit = r["hits"]["hits"][0]
    assert "_source" not in hit
    assert hit["_explanation"]["value"] == hit["_score"]
    assert hit["_explanation"]["description"].startswith("weight(t:fox in ")
    assert hit["_shard"].startswith("[h][") and isinstance(hit["_node"], str)
    r = es.post("/h/_search", json={"track_total_hits": False, "terminate_after": 1,
                                    "timeout": "5s"}).json()
    assert "total" not in r["hits"] and r["terminated_early"] is True
    assert r["timed_out"] is False


def test_explain_gives_real_scores_even_when_sorting_by_a_field() -> None:
    c = LocalCluster().create("x", 2)
    c.index("x", {"1": {"t": "quick fox", "n": 2}, "2": {"t": "quick dog", "n": 1}})
    r = c.search("x", {"query": {"match": {"t": "quick"}}, "sort": ["n"], "explain": True})
    scored = c.search("x", {"query": {"match": {"t": "quick"}}})["hits"]["hits"]
    by_id = {h["_id"]: h["_score"] for h in scored}
    for h in r["hits"]["hits"]:
        assert h["_score"] is None
        assert h["_explanation"]["value"] == by_id[h["_id"]]
        assert h["_explanation"]["description"].startswith("weight(t:quick in ")

