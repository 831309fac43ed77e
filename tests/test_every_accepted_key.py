"""Every body key and URL parameter ``_search`` accepts changes the answer, or is refused with a
400 that names it, or is on the short documented list of those that cannot change an answer here
(README, "What we refuse, and what we accept that cannot change an answer").

The test walks ``BODY_KEYS`` and ``SEARCH_PARAMS`` themselves: a key added to either without a
row here fails ``test_every_accepted_key_is_classified``. Real Ray, real uvicorn.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from shardsearch.cluster.search.request import (BODY_KEYS, SEARCH_PARAMS, UNSUPPORTED_BODY_KEYS,
                                                UNSUPPORTED_PARAMS)

README = Path(__file__).resolve().parent.parent / "README.md"
DOCS = {str(i): {"title": "fox jumps" if i % 2 else "dog runs", "n": i, "tag": f"t{i % 3}"}
        for i in range(12)}

# (body or params of a request, the same with the key): the two answers must differ
BODY_CHANGES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "query": ({}, {"query": {"match": {"title": "fox"}}}),
    "from": ({}, {"from": 3}),
    "size": ({}, {"size": 2}),
    "sort": ({}, {"sort": [{"n": "desc"}]}),
    "_source": ({}, {"_source": ["n"]}),
    "track_total_hits": ({"size": 0}, {"size": 0, "track_total_hits": 5}),
    "track_scores": ({"sort": ["n"]}, {"sort": ["n"], "track_scores": True}),
    "search_after": ({"sort": ["n"]}, {"sort": ["n"], "search_after": [4]}),
    "min_score": ({"query": {"match": {"title": "fox"}}},
                  {"query": {"match": {"title": "fox"}}, "min_score": 100}),
    "terminate_after": ({}, {"terminate_after": 1}),
    "explain": ({"size": 1}, {"size": 1, "explain": True}),
    "version": ({"size": 1}, {"size": 1, "version": True}),
    "seq_no_primary_term": ({"size": 1}, {"size": 1, "seq_no_primary_term": True}),
    "stored_fields": ({"size": 1}, {"size": 1, "stored_fields": ["_none_"]}),
    "docvalue_fields": ({"size": 1}, {"size": 1, "docvalue_fields": ["n"]}),
    "fields": ({"size": 1}, {"size": 1, "fields": ["n"]}),
    "profile": ({"size": 1}, {"size": 1, "profile": True}),
    "aggs": ({"size": 0}, {"size": 0, "aggs": {"m": {"max": {"field": "n"}}}}),
    "aggregations": ({"size": 0}, {"size": 0, "aggregations": {"m": {"max": {"field": "n"}}}}),
    "post_filter": ({}, {"post_filter": {"term": {"tag": "t0"}}}),
    "highlight": ({"query": {"match": {"title": "fox"}}},
                  {"query": {"match": {"title": "fox"}}, "highlight": {"fields": {"title": {}}}}),
    "rescore": ({"query": {"match": {"title": "fox"}}},
                {"query": {"match": {"title": "fox"}},
                 "rescore": {"query": {"rescore_query": {"term": {"tag": "t0"}},
                                       "rescore_query_weight": 5}}}),
    "indices_boost": ({"query": {"match": {"title": "fox"}}},
                      {"query": {"match": {"title": "fox"}}, "indices_boost": [{"acc": 2}]}),
    "collapse": ({}, {"collapse": {"field": "tag"}}),
    "suggest": ({"size": 0}, {"size": 0, "suggest": {"s": {"text": "foxx",
                                                          "term": {"field": "title"}}}}),
}
PARAM_CHANGES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "q": ({}, {"q": "title:fox"}),
    "df": ({"q": "fox"}, {"q": "fox", "df": "tag"}),
    "default_operator": ({"q": "fox dog", "df": "title"},
                         {"q": "fox dog", "df": "title", "default_operator": "AND"}),
    "analyzer": ({"q": "title:FOX"}, {"q": "title:FOX", "analyzer": "keyword"}),
    "lenient": ({"q": "n:abc"}, {"q": "n:abc", "lenient": "true"}),
    "from": ({}, {"from": "3"}),
    "size": ({}, {"size": "2"}),
    "sort": ({}, {"sort": "n:desc"}),
    "_source": ({}, {"_source": "false"}),
    "_source_includes": ({}, {"_source_includes": "n"}),
    "_source_excludes": ({}, {"_source_excludes": "n"}),
    "_source_include": ({}, {"_source_include": "n"}),
    "_source_exclude": ({}, {"_source_exclude": "n"}),
    "track_total_hits": ({"size": "0"}, {"size": "0", "track_total_hits": "5"}),
    "track_scores": ({"sort": "n"}, {"sort": "n", "track_scores": "true"}),
    "terminate_after": ({}, {"terminate_after": "1"}),
    "explain": ({"size": "1"}, {"size": "1", "explain": "true"}),
    "version": ({"size": "1"}, {"size": "1", "version": "true"}),
    "seq_no_primary_term": ({"size": "1"}, {"size": "1", "seq_no_primary_term": "true"}),
    "stored_fields": ({"size": "1"}, {"size": "1", "stored_fields": "_none_"}),
    "docvalue_fields": ({"size": "1"}, {"size": "1", "docvalue_fields": "n"}),
    "rest_total_hits_as_int": ({}, {"rest_total_hits_as_int": "true"}),
    "scroll": ({}, {"scroll": "1m"}),
    "allow_no_indices": ({"_index": "nothing*"}, {"_index": "nothing*",
                                                  "allow_no_indices": "false"}),
    "ignore_unavailable": ({"_index": "acc,missing"}, {"_index": "acc,missing",
                                                       "ignore_unavailable": "true"}),
    "expand_wildcards": ({"_index": "ac*"}, {"_index": "ac*", "expand_wildcards": "none"}),
    "preference": ({}, {"preference": "_shards:0"}),
    "routing": ({}, {"routing": "r"}),
    "typed_keys": ({"size": "0", "_body": {"aggs": {"m": {"max": {"field": "n"}}}}},
                   {"size": "0", "typed_keys": "true",
                    "_body": {"aggs": {"m": {"max": {"field": "n"}}}}}),
    "pretty": ({}, {"pretty": "true"}),
    "filter_path": ({}, {"filter_path": "hits.total"}),
    "min_score": ({"q": "title:fox"}, {"q": "title:fox", "min_score": "100"}),
    "consistent_page": ({"size": "1"}, {"size": "1", "consistent_page": "true"}),
    "include_named_queries_score": (
        {"_body": {"query": {"match": {"title": {"query": "fox", "_name": "f"}}}}},
        {"include_named_queries_score": "true",
         "_body": {"query": {"match": {"title": {"query": "fox", "_name": "f"}}}}}),
    "paging": ({"from": "5", "size": "1", "_body": {"profile": True}},
               {"from": "5", "size": "1", "paging": "deep_page", "_body": {"profile": True}}),
}
# accepted, and on the README's list of what cannot change an answer here
NO_EFFECT = {"stats", "search_type", "request_cache", "batched_reduce_size",
             "max_concurrent_shard_requests", "pre_filter_shard_size", "ccs_minimize_roundtrips",
             "human", "error_trace", "ignore_throttled", "analyze_wildcard"}
# keys whose effect another test shows, with more set-up than one request pair
ELSEWHERE = {"pit": "tests/test_cursors.py (a point in time keeps its snapshot)",
             "timeout": "tests/test_cancellation.py, tests/test_simulation.py (slow shards)",
             "allow_partial_search_results": "tests/test_simulation.py (a failing shard)"}


@pytest.fixture(scope="module")
def acc(base_url: str) -> httpx.Client:
    with httpx.Client(base_url=base_url, timeout=60) as c:
        c.delete("/acc")
        c.put("/acc", json={"settings": {"number_of_shards": 3, "number_of_replicas": 0},
                            "mappings": {"properties": {"tag": {"type": "keyword"},
                                                        "n": {"type": "long"}}}})
        lines = []
        for doc_id, doc in DOCS.items():
            lines += [json.dumps({"index": {"_index": "acc", "_id": doc_id}}), json.dumps(doc)]
        r = c.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                   headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200 and not r.json()["errors"]
        yield c
        c.delete("/acc")


def _answer(c: httpx.Client, body: dict[str, Any] | None, params: dict[str, str]) -> Any:
    """Status and body of one search, without what differs between any two answers (took,
    timings, cursor ids)."""
    params = dict(params)
    index = params.pop("_index", "acc")
    body = params.pop("_body", body)
    r = c.post(f"/{index}/_search", params=params, json=body or {})
    try:
        data = r.json()
    except ValueError:
        return r.status_code, r.text
    return r.status_code, r.text.count("\n"), json.dumps(_stable(data), sort_keys=True)


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items()
                if k not in ("took", "_scroll_id", "id") and not k.endswith(("_ns", "nanos"))}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def test_every_accepted_key_is_classified() -> None:
    body = set(BODY_CHANGES) | set(UNSUPPORTED_BODY_KEYS) | (set(ELSEWHERE) & BODY_KEYS) \
        | (NO_EFFECT & BODY_KEYS)
    assert BODY_KEYS - body == set(), "classify these body keys here"
    params = set(PARAM_CHANGES) | set(UNSUPPORTED_PARAMS) | NO_EFFECT | set(REFUSED_VALUES) \
        | set(ELSEWHERE)
    assert SEARCH_PARAMS - params == set(), "classify these URL parameters here"


@pytest.mark.parametrize("key", sorted(BODY_CHANGES))
def test_an_accepted_body_key_changes_the_answer(acc: httpx.Client, key: str) -> None:
    without, with_key = BODY_CHANGES[key]
    a, b = _answer(acc, without, {}), _answer(acc, with_key, {})
    assert b[0] == 200, b
    assert a != b, f"[{key}] accepted but the answer is the same"


@pytest.mark.parametrize("key", sorted(PARAM_CHANGES))
def test_an_accepted_url_parameter_changes_the_answer(acc: httpx.Client, key: str) -> None:
    without, with_key = PARAM_CHANGES[key]
    a, b = _answer(acc, None, without), _answer(acc, None, with_key)
    assert a != b, f"[{key}] accepted but the answer is the same: {a}"


UNSUPPORTED_VALUES: dict[str, Any] = {
    "script_fields": {"x": {"script": "1"}}, "slice": {"id": 0, "max": 2},
    "ext": {"x": {}},
    "runtime_mappings": {"r": {"type": "long"}},
}
# URL parameters accepted only with values that change nothing; others are refused by name
REFUSED_VALUES = {"force_synthetic_source": "true", "format": "yaml"}


def test_a_profile_url_parameter_is_refused_as_elasticsearch_does(acc: httpx.Client) -> None:
    r = acc.post("/acc/_search", params={"profile": "true"}, json={})
    assert r.status_code == 400 and "profile" in r.text, r.text


@pytest.mark.parametrize("key", sorted(UNSUPPORTED_BODY_KEYS))
def test_a_body_key_we_do_not_implement_is_refused_naming_it(acc: httpx.Client, key: str) -> None:
    r = acc.post("/acc/_search", json={key: UNSUPPORTED_VALUES[key]})
    assert r.status_code == 400 and key in r.text, r.text


@pytest.mark.parametrize("key", sorted(UNSUPPORTED_PARAMS))
def test_a_parameter_we_do_not_implement_is_refused_naming_it(acc: httpx.Client, key: str) -> None:
    r = acc.post("/acc/_search", params={key: "x"}, json={})
    assert r.status_code == 400 and key in r.text, r.text


@pytest.mark.parametrize("key", sorted(REFUSED_VALUES))
def test_a_parameter_value_we_do_not_implement_is_refused_naming_it(acc: httpx.Client,
                                                                     key: str) -> None:
    r = acc.post("/acc/_search", params={key: REFUSED_VALUES[key]}, json={})
    assert r.status_code == 400 and key in r.text, r.text


def test_the_readme_names_every_key_that_cannot_change_an_answer() -> None:
    section = README.read_text().split("### What we refuse, and what we accept", 1)[1]
    section = section.split("\n## ", 1)[0]
    missing = sorted(k for k in NO_EFFECT if f"`{k}`" not in section)
    assert not missing, f"README's list lacks {missing}"
