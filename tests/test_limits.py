"""Limits with Elasticsearch's names, defaults and error texts, enforced before work starts."""
from __future__ import annotations

import pytest

from shardsearch.cluster.errors import IllegalArgument, SearchError, XContentParseError
from shardsearch.cluster.engine.limits import (MAX_JSON_DEPTH, check_immense_terms, check_json_depth,
                                        check_shards_per_node, check_source_patterns,
                                        default_max_shards_per_node)


def test_json_nested_deeper_than_the_limit_is_refused_without_recursion():
    deep: list = []
    for _ in range(MAX_JSON_DEPTH - 1):
        deep = [deep]
    check_json_depth(deep)                       # exactly the limit
    with pytest.raises(XContentParseError, match="nesting depth"):
        check_json_depth({"a": deep})


def test_an_immense_keyword_term_is_refused_with_lucenes_text():
    with pytest.raises(IllegalArgument) as e:
        check_immense_terms({"k": ["é" * 16_384]}, lambda p: "keyword")
    assert e.value.reason.startswith('Document contains at least one immense term in field="k" '
                                     "(whose UTF8 encoding is longer than the max length 32766)")
    assert e.value.reason.endswith("bytes can be at most 32766 in length; got 32768")
    check_immense_terms({"k": ["x" * 32_766]}, lambda p: "keyword")
    check_immense_terms({"t": ["x" * 40_000]}, lambda p: "text")   # analyzed into tokens


def test_too_many_source_patterns_are_refused():
    check_source_patterns(["a"] * 1024)
    with pytest.raises(IllegalArgument, match=r"\[1025\]"):
        check_source_patterns(["a"] * 1025)


def test_max_shards_per_node_is_sized_for_the_machine_memory():
    assert default_max_shards_per_node(total_mib=2048) == 6
    assert default_max_shards_per_node(total_mib=24 * 1024) == 81
    assert default_max_shards_per_node(total_mib=10**7) == 1000
    with pytest.raises(SearchError) as e:
        check_shards_per_node(adding=10, open_now=75, nodes=1, limit=81)
    assert e.value.es_type == "validation_exception" and e.value.status == 400
    assert "[cluster.max_shards_per_node]" in e.value.reason
    assert "this action would add [10] shards, but this cluster currently has [75]/[81]" \
        in e.value.reason
    check_shards_per_node(adding=10, open_now=75, nodes=2, limit=81)


def test_http_limits_answer_400_before_work(es):
    r = es.put("/lim", json={"settings": {"number_of_shards": 1024, "number_of_replicas": 0}})
    assert r.status_code == 400 and r.json()["error"]["type"] == "validation_exception"
    assert es.head("/lim").status_code == 404
    es.put("/lim", json={"mappings": {"properties": {"k": {"type": "keyword"}}}})
    r = es.put("/lim/_doc/1", json={"k": "x" * 40_000})
    assert r.status_code == 400 and "immense term" in r.json()["error"]["reason"]
    bulk = '{"index":{"_id":"2"}}\n{"k":"%s"}\n{"index":{"_id":"3"}}\n{"k":"ok"}\n' % ("y" * 40000)
    r = es.post("/lim/_bulk?refresh=true", content=bulk,
                headers={"content-type": "application/x-ndjson"})
    items = r.json()["items"]
    assert items[0]["index"]["status"] == 400 and items[1]["index"]["status"] == 201
    r = es.post("/lim/_search", json={"_source": {"includes": [f"f{i}" for i in range(5000)]}})
    assert r.status_code == 400 and "patterns" in r.json()["error"]["reason"]
    r = es.post("/lim/_search", content="[" * 600 + "]" * 600,
                headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "x_content_parse_exception"
    r = es.post("/lim/_search", content="{}", headers={"content-type": "text/plain"})
    assert r.status_code == 406
    assert r.json() == {"error": "Content-Type header [text/plain] is not supported",
                        "status": 406}
    r = es.post("/lim/_search", content="{}", headers={"content-type": ""})
    assert r.status_code == 406
    bare = es.build_request("POST", "/lim/_search", content=b"{}")
    bare.headers.pop("content-type", None)
    r = es.send(bare)
    assert r.status_code == 406
    assert r.json() == {"error": "Content-Type header is missing", "status": 406}


def test_allow_expensive_queries_false_refuses_them_as_es_does(es):
    es.put("/exp", json={"mappings": {"properties": {"k": {"type": "keyword"},
                                                     "n": {"type": "long"}}}})
    es.put("/exp/_doc/1?refresh=true", json={"k": "abc", "n": 1})
    try:
        r = es.put("/_cluster/settings",
                   json={"transient": {"search.allow_expensive_queries": False}})
        assert r.status_code == 200, r.text
        for q, name in (({"regexp": {"k": "a.*"}}, "regexp"),
                        ({"wildcard": {"k": "a*"}}, "wildcard"),
                        ({"prefix": {"k": "a"}}, "prefix"),
                        ({"query_string": {"query": "k:a*"}}, "prefix"),
                        ({"query_string": {"query": "k:a*c"}}, "wildcard"),
                        ({"function_score": {"query": {"prefix": {"k": "a"}}}}, "prefix"),
                        ({"function_score": {"functions": [{"filter": {"regexp": {"k": "a.*"}},
                                                            "weight": 2}]}}, "regexp"),
                        ({"script_score": {"query": {"match_all": {}}, "script": {"source": "1"}}},
                         "script score")):
            r = es.post("/exp/_search", json={"query": {"bool": {"filter": [q]}}})
            assert r.status_code == 400, r.text
            assert f"[{name}] queries cannot be executed when 'search.allow_expensive_queries' " \
                   "is set to false." in r.text
        r = es.post("/exp/_search", json={"query": {"range": {"k": {"gte": "a"}}}})
        assert r.status_code == 400 and "[range] queries on [text] or [keyword]" in r.text
        r = es.post("/exp/_search", json={"query": {"range": {"n": {"gte": 0}}}})
        assert r.json()["hits"]["total"]["value"] == 1
    finally:
        es.put("/_cluster/settings", json={"transient": {"search.allow_expensive_queries": None}})
    r = es.post("/exp/_search", json={"query": {"wildcard": {"k": "a*"}}})
    assert r.json()["hits"]["total"]["value"] == 1
