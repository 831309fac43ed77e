"""Never accept and ignore: ``query_string``, ``simple_query_string``, ``prefix``,
``wildcard`` and ``regexp`` options this server does not implement are refused with a 400
naming them, unless their value is Elasticsearch's default (which cannot change an answer).
Real Ray, real uvicorn."""
from __future__ import annotations

from typing import Any

import httpx
import pytest


@pytest.fixture
def idx(es: httpx.Client) -> httpx.Client:
    es.put("/t", json={"mappings": {"properties": {"title": {"type": "text"},
                                                   "k": {"type": "keyword"}}}})
    for i, t in enumerate(["quick brown fox", "lazy dog", "foxes run"]):
        es.put(f"/t/_doc/{i}?refresh=true", json={"title": t, "k": t})
    return es


def _search(es: httpx.Client, query: dict[str, Any]) -> httpx.Response:
    return es.post("/t/_search", json={"query": query})


QS_NON_DEFAULT = [
    ("enable_position_increments", False), ("max_determinized_states", 500),
    ("rewrite", "scoring_boolean"), ("rewrite", "top_terms_5"),
]
QS_DEFAULT = [
    ("allow_leading_wildcard", True), ("enable_position_increments", "true"),
    ("phrase_slop", 0), ("escape", False), ("allow_leading_wildcard", "false"),
    ("max_determinized_states", 10000),
    ("rewrite", "constant_score"), ("rewrite", "constant_score_blended"),
    ("rewrite", "constant_score_boolean"),
]


@pytest.mark.parametrize("key,value", QS_NON_DEFAULT)
def test_query_string_option_other_than_default_is_refused_by_name(idx, key, value) -> None:
    r = _search(idx, {"query_string": {"query": "fox*", "default_field": "title", key: value}})
    assert r.status_code == 400, r.text
    reason = r.json()["error"]["reason"]
    assert f"[{key}]" in reason or f"{key} [{value}]" in reason


@pytest.mark.parametrize("key,value", QS_DEFAULT)
def test_query_string_option_at_default_is_accepted(idx, key, value) -> None:
    r = _search(idx, {"query_string": {"query": "fox*", "default_field": "title", key: value}})
    assert r.status_code == 200, r.text
    assert {h["_id"] for h in r.json()["hits"]["hits"]} == {"0", "2"}


@pytest.mark.parametrize("kind", ["query_string", "simple_query_string"])
def test_quote_field_suffix_over_a_field_pattern_is_refused_by_name(idx, kind) -> None:
    r = _search(idx, {kind: {"query": "\"lazy dog\"", "fields": ["ti*"],
                             "quote_field_suffix": ".exact"}})
    assert r.status_code == 400 and "[quote_field_suffix]" in r.json()["error"]["reason"]


@pytest.mark.parametrize("kind,value", [("prefix", "fox"), ("wildcard", "fox*"),
                                        ("regexp", "fox.*")])
@pytest.mark.parametrize("rewrite", ["scoring_boolean", "top_terms_boost_3"])
def test_multi_term_scoring_rewrite_is_refused_by_name(idx, kind, value, rewrite) -> None:
    r = _search(idx, {kind: {"title": {"value": value, "rewrite": rewrite}}})
    assert r.status_code == 400, r.text
    assert f"rewrite [{rewrite}]" in r.json()["error"]["reason"]


@pytest.mark.parametrize("kind,value", [("prefix", "fox"), ("wildcard", "fox*"),
                                        ("regexp", "fox.*")])
@pytest.mark.parametrize("rewrite", ["constant_score", "constant_score_boolean"])
def test_multi_term_constant_rewrite_gives_the_constant_score(idx, kind, value, rewrite) -> None:
    r = _search(idx, {kind: {"title": {"value": value, "rewrite": rewrite, "boost": 2}}})
    assert r.status_code == 200, r.text
    assert [h["_score"] for h in r.json()["hits"]["hits"]] == [2.0, 2.0]


def test_unknown_rewrite_fails_as_elasticsearch_does(idx) -> None:
    r = _search(idx, {"prefix": {"title": {"value": "fox", "rewrite": "nope"}}})
    assert r.status_code == 400
    assert "Failed to parse rewrite_method [nope]" in r.json()["error"]["reason"]


@pytest.mark.parametrize("key,value", [("max_determinized_states", 20),
                                       ("flags_value", 1)])
def test_regexp_option_other_than_default_is_refused_by_name(idx, key, value) -> None:
    r = _search(idx, {"regexp": {"title": {"value": "fox.*", key: value}}})
    assert r.status_code == 400, r.text
    assert f"[{key}]" in r.json()["error"]["reason"]


@pytest.mark.parametrize("key,value", [("max_determinized_states", 10000),
                                       ("flags_value", 65535), ("flags_value", -1)])
def test_regexp_option_at_default_is_accepted(idx, key, value) -> None:
    r = _search(idx, {"regexp": {"title": {"value": "fox.*", key: value}}})
    assert r.status_code == 200, r.text
    assert {h["_id"] for h in r.json()["hits"]["hits"]} == {"0", "2"}


def _qs_ids(es: httpx.Client, query: str, **opts: Any) -> set[str]:
    r = _search(es, {"query_string": {"query": query, "default_field": "title", **opts}})
    assert r.status_code == 200, r.text
    return {h["_id"] for h in r.json()["hits"]["hits"]}


def test_phrase_slop_applies_to_phrases_without_a_tilde(idx) -> None:
    assert _qs_ids(idx, '"quick fox"') == set()
    assert _qs_ids(idx, '"quick fox"', phrase_slop=1) == {"0"}
    assert _qs_ids(idx, '"quick fox"~0', phrase_slop=1) == set()


def test_negative_phrase_slop_is_refused_by_name(idx) -> None:
    r = _search(idx, {"query_string": {"query": '"a b"', "phrase_slop": -1}})
    assert r.status_code == 400 and "[phrase_slop]" in r.json()["error"]["reason"]


@pytest.mark.parametrize("text", ["*ox", "?ox", "title:*ox*"])
def test_leading_wildcard_refused_when_not_allowed(idx, text) -> None:
    r = _search(idx, {"query_string": {"query": text, "default_field": "title",
                                       "allow_leading_wildcard": False}})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["root_cause"][0]["type"] == "query_shard_exception", err
    assert err["failed_shards"][0]["reason"]["caused_by"]["reason"] == (f"Cannot parse '{text}': '*' or '?' not allowed as "
                                          "first character in WildcardQuery")


def test_trailing_wildcard_and_star_allowed_without_leading_wildcards(idx) -> None:
    assert _qs_ids(idx, "fox*", allow_leading_wildcard=False) == {"0", "2"}
    assert _qs_ids(idx, "*", allow_leading_wildcard=False) == {"0", "1", "2"}


def test_escape_takes_every_operator_literally(idx) -> None:
    assert _qs_ids(idx, "fox*") == {"0", "2"}
    assert _qs_ids(idx, "fox*", escape=True) == {"0"}
    assert _qs_ids(idx, "lazy -dog", escape=True) == {"1"}


@pytest.fixture
def suffixed(es: httpx.Client) -> httpx.Client:
    es.put("/s", json={"mappings": {"properties": {
        "title": {"type": "text", "fields": {"exact": {"type": "keyword"}}},
        "body": {"type": "text"}}}})
    for i, t in enumerate(["lazy dog", "the lazy dog"]):
        es.put(f"/s/_doc/{i}?refresh=true", json={"title": t, "body": t})
    return es


@pytest.mark.parametrize("kind", ["query_string", "simple_query_string"])
def test_quote_field_suffix_sends_quoted_text_to_the_suffixed_field(suffixed, kind) -> None:
    def ids(query: str, field: str) -> set[str]:
        r = suffixed.post("/s/_search", json={"query": {kind: {
            "query": query, "fields": [field], "quote_field_suffix": ".exact"}}})
        assert r.status_code == 200, r.text
        return {h["_id"] for h in r.json()["hits"]["hits"]}
    assert ids('"lazy dog"', "title") == {"0"}      # title.exact: the whole value
    assert ids("lazy", "title") == {"0", "1"}       # unquoted text stays on title
    assert ids('"lazy dog"', "body") == {"0", "1"}  # no body.exact: body itself


@pytest.fixture
def dated(es: httpx.Client) -> httpx.Client:
    es.put("/d", json={"mappings": {"properties": {"d": {"type": "date"}}}})
    for i, d in enumerate(["2020-01-01T00:30:00Z", "2020-01-01T12:00:00Z"]):
        es.put(f"/d/_doc/{i}?refresh=true", json={"d": d})
    return es


@pytest.mark.parametrize("query", ["d:2020-01-01", "d:[2020-01-01 TO 2020-01-01]"])
def test_time_zone_shifts_the_dates_of_the_query_string(dated, query) -> None:
    def ids(**opts: Any) -> set[str]:
        r = dated.post("/d/_search", json={"query": {"query_string": {"query": query, **opts}}})
        assert r.status_code == 200, r.text
        return {h["_id"] for h in r.json()["hits"]["hits"]}
    assert ids() == {"0", "1"}
    assert ids(time_zone="-03:00") == {"1"}


def test_quote_analyzer_analyzes_quoted_phrases_only(idx) -> None:
    assert _qs_ids(idx, '"Quick brown"', quote_analyzer="whitespace") == set()
    assert _qs_ids(idx, '"quick brown"', quote_analyzer="whitespace") == {"0"}
    assert _qs_ids(idx, "Lazy", quote_analyzer="whitespace") == {"1"}


def test_unknown_quote_analyzer_is_refused_even_without_phrases(idx) -> None:
    r = _search(idx, {"query_string": {"query": "lazy", "quote_analyzer": "nope"}})
    assert r.status_code == 400
    assert "quote_analyzer [nope] not found" in r.text
