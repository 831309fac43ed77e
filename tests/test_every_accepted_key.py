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
    "script_fields": ({"size": 1}, {"size": 1, "script_fields": {
        "x": {"script": {"source": "doc['n'].value * params.f", "params": {"f": 2}}}}}),
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
    # without ``df`` the query string is lenient already (over ``*``, as Elasticsearch's)
    "lenient": ({"q": "n:abc", "df": "title"}, {"q": "n:abc", "df": "title", "lenient": "true"}),
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
             "slice": "tests/test_slices.py (slices of a scroll or PIT partition it)",
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


# --- _msearch, _mget and _update: their own keys ------------------------------------------------
# msearch header keys and URL parameters become the search's URL parameters (one parser:
# ``parse_search``), so the table above classifies them; only ``index``/``indices`` (the target)
# and ``max_concurrent_searches`` (how many run at once) are msearch's own.
MSEARCH_OWN = {"index": "tests/test_multi_documents.py (a header's index is searched)",
               "indices": "tests/test_multi_documents.py (the list form of index)",
               "max_concurrent_searches": "tests/test_multi_documents.py (0 is refused; the "
                                          "searches are the same at any concurrency)"}
MGET_DOC_CHANGES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "_index": ({"_id": "1"}, {"_id": "1", "_index": "nope"}),
    "_id": ({"_id": "1"}, {"_id": "2"}),
    "routing": ({"_id": "1"}, {"_id": "1", "routing": "c"}),     # "c": another shard than "1"
    "_routing": ({"_id": "1"}, {"_id": "1", "_routing": "c"}),
    "_source": ({"_id": "1"}, {"_id": "1", "_source": ["n"]}),
    "stored_fields": ({"_id": "1"}, {"_id": "1", "stored_fields": ["n"]}),
    "version": ({"_id": "1"}, {"_id": "1", "version": 9}),
    "_version": ({"_id": "1"}, {"_id": "1", "_version": 9}),
    "version_type": ({"_id": "1", "version": 9},
                     {"_id": "1", "version": 9, "version_type": "bogus"}),
    "_version_type": ({"_id": "1", "version": 9},
                      {"_id": "1", "version": 9, "_version_type": "bogus"}),
}
MGET_PARAM_CHANGES: dict[str, dict[str, str]] = {
    "routing": {"routing": "c"}, "_source": {"_source": "false"},
    "_source_includes": {"_source_includes": "n"}, "_source_excludes": {"_source_excludes": "n"},
    "stored_fields": {"stored_fields": "n"}, "realtime": {"realtime": "false"},
    "pretty": {"pretty": "true"}, "filter_path": {"filter_path": "docs._id"},
    "format": {"format": "yaml"},
}
# ``refresh`` refreshes first (same answer once refreshed: get is real-time); ``preference``
# picks a copy and every copy answers the same; ``human``/``error_trace`` are reporting aids
MGET_NO_EFFECT = {"refresh", "preference", "human", "error_trace"}
UPDATE_BODY_CHANGES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "doc": ({"doc": {"n": 7}}, {"doc": {"n": 2}}),
    "upsert": ({"doc": {"n": 1}}, {"doc": {"n": 1}, "upsert": {"n": 5}}),
    "doc_as_upsert": ({"doc": {"n": 1}}, {"doc": {"n": 1}, "doc_as_upsert": True}),
    "detect_noop": ({"doc": {"n": 7}}, {"doc": {"n": 7}, "detect_noop": False}),
    "_source": ({"doc": {"n": 8}}, {"doc": {"n": 8}, "_source": True}),
    "script": ({"doc": {"n": 9}}, {"doc": {"n": 9}, "script": "x"}),
    "scripted_upsert": ({"script": "ctx._source.n = 3", "upsert": {"n": 1}, "_source": True},
                        {"script": "ctx._source.n = 3", "upsert": {"n": 1}, "_source": True,
                         "scripted_upsert": True}),
}


def test_msearch_keys_go_through_the_search_parser() -> None:
    from shardsearch.cluster.search.msearch import HEADER_KEYS, ITEM_PARAMS, MSEARCH_PARAMS
    assert HEADER_KEYS - SEARCH_PARAMS == {"index", "indices"}
    assert ITEM_PARAMS <= SEARCH_PARAMS
    assert MSEARCH_PARAMS - ITEM_PARAMS - SEARCH_PARAMS <= set(MSEARCH_OWN)


def test_every_mget_and_update_key_is_classified() -> None:
    from shardsearch.cluster.documents.mget import DOC_KEYS, MGET_PARAMS
    from shardsearch.cluster.documents.update import BODY_KEYS as UPDATE_KEYS
    assert DOC_KEYS == set(MGET_DOC_CHANGES)
    assert MGET_PARAMS == set(MGET_PARAM_CHANGES) | MGET_NO_EFFECT
    assert UPDATE_KEYS == set(UPDATE_BODY_CHANGES)


@pytest.mark.parametrize("key", sorted(MGET_DOC_CHANGES))
def test_an_mget_document_key_changes_the_answer(acc: httpx.Client, key: str) -> None:
    without, with_key = MGET_DOC_CHANGES[key]
    a = acc.post("/acc/_mget", json={"docs": [without]})
    b = acc.post("/acc/_mget", json={"docs": [with_key]})
    assert a.json() != b.json(), f"[{key}] accepted but the answer is the same"


@pytest.mark.parametrize("key", sorted(MGET_PARAM_CHANGES))
def test_an_mget_url_parameter_changes_the_answer(acc: httpx.Client, key: str) -> None:
    a = acc.post("/acc/_mget", json={"ids": ["1"]})
    b = acc.post("/acc/_mget", params=MGET_PARAM_CHANGES[key], json={"ids": ["1"]})
    assert (a.status_code, a.text) != (b.status_code, b.text), f"[{key}] changes nothing"


@pytest.mark.parametrize("key", sorted(UPDATE_BODY_CHANGES))
def test_an_update_body_key_changes_the_answer(acc: httpx.Client, key: str) -> None:
    without, with_key = UPDATE_BODY_CHANGES[key]
    doc_id = f"upd-{key}"
    if key not in ("upsert", "doc_as_upsert", "scripted_upsert"):
        acc.put(f"/acc/_doc/{doc_id}", json={"n": 7})
    a = acc.post(f"/acc/_update/{doc_id}", json=without)
    acc.delete(f"/acc/_doc/{doc_id}")
    if key not in ("upsert", "doc_as_upsert", "scripted_upsert"):
        acc.put(f"/acc/_doc/{doc_id}", json={"n": 7})
    b = acc.post(f"/acc/_update/{doc_id}", json=with_key)
    acc.delete(f"/acc/_doc/{doc_id}")
    strip = {"_seq_no", "_version", "_shards"}
    ja = {k: v for k, v in a.json().items() if k not in strip}
    jb = {k: v for k, v in b.json().items() if k not in strip}
    assert (a.status_code, ja) != (b.status_code, jb), f"[{key}] changes nothing"


UPDATE_PARAM_CHANGES: dict[str, dict[str, str]] = {
    "_source": {"_source": "true"}, "_source_includes": {"_source_includes": "n"},
    "_source_excludes": {"_source_excludes": "n"}, "if_seq_no": {"if_seq_no": "999",
                                                                 "if_primary_term": "1"},
    "if_primary_term": {"if_seq_no": "0", "if_primary_term": "7"},
    "refresh": {"refresh": "true"}, "routing": {"routing": "c"},
    "lang": {"lang": "painless"}, "version": {"version": "3"},
    "version_type": {"version_type": "external"}, "pretty": {"pretty": "true"},
    "format": {"format": "yaml"},
}
UPDATE_PARAMS_ELSEWHERE = {
    "retry_on_conflict": "tests/test_versions_and_updates.py (concurrent updates all land)",
    # as on every write route (documents.py _WRITE_PARAMS): bounds the wait for
    # wait_for_active_shards copies (api/active_shards.py)
    "timeout": "tests/test_admin_params.py (the 503 after it runs out)",
    "wait_for_active_shards": "tests/test_admin_params.py (waits for the copies, 503 when "
                              "short), tests/test_active_shards.py",
    "require_alias": "tests/test_write_options.py", "human": "reporting aid",
    "error_trace": "reporting aid", "filter_path": "tests/test_filter_path.py",
}


def test_every_update_url_parameter_is_classified() -> None:
    from shardsearch.api.routes.documents import _UPDATE_PARAMS
    assert _UPDATE_PARAMS == set(UPDATE_PARAM_CHANGES) | set(UPDATE_PARAMS_ELSEWHERE)


@pytest.mark.parametrize("key", sorted(UPDATE_PARAM_CHANGES))
def test_an_update_url_parameter_changes_the_answer(acc: httpx.Client, key: str) -> None:
    acc.put("/acc/_doc/upd-param", json={"n": 1})
    a = acc.post("/acc/_update/upd-param", json={"doc": {"n": 2}})
    acc.put("/acc/_doc/upd-param", json={"n": 1})
    b = acc.post("/acc/_update/upd-param", params=UPDATE_PARAM_CHANGES[key],
                 json={"doc": {"n": 2}})
    acc.delete("/acc/_doc/upd-param")
    strip = {"_seq_no", "_version"}
    ja = {k: v for k, v in a.json().items() if k not in strip}
    jb = {k: v for k, v in b.json().items() if k not in strip}
    assert (a.status_code, ja, a.text.count("\n")) != (b.status_code, jb, b.text.count("\n")), \
        f"[{key}] changes nothing"
