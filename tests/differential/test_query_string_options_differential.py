"""``query_string`` options against a real OpenSearch node: ``phrase_slop`` (quoted phrases
without ``~N``, and unquoted text of ``type: phrase``), ``allow_leading_wildcard: false`` (its
error), ``escape: true`` (the text taken literally) and ``quote_field_suffix`` (quoted text on
``field + suffix`` when mapped) and ``time_zone`` (date ranges, and a date written for one
date field). Same hits, same scores, same errors
(ours on 3 shards, OpenSearch on 1)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from .test_differential import check

pytestmark = pytest.mark.slow

INDEX = "qsopts"
TITLES = ["quick brown fox", "quick fox", "the fox is quick and brown", "lazy dog",
          "fox+dog (pair)", "foxes run quickly", "brown dog jumps over the quick fox"]


def _load(client: Any, shards: int) -> None:
    client.delete(f"/{INDEX}")
    r = client.put(f"/{INDEX}", json={"settings": {"number_of_shards": shards,
                                                   "number_of_replicas": 0},
                                      "mappings": {"properties": {
                                          "title": {"type": "text", "fields": {
                                              "exact": {"type": "keyword"},
                                              "ws": {"type": "text", "analyzer": "whitespace"}}},
                                          "body": {"type": "text"}, "d": {"type": "date"},
                                          "tag": {"type": "keyword"}}}})
    assert r.status_code == 200, r.text
    lines = []
    for i, t in enumerate(TITLES):
        src = {"title": t, "body": " ".join(reversed(t.split())), "tag": t,
               "d": f"2020-01-0{1 + i // 3}T{(i * 7) % 24:02d}:30:00Z"}
        lines += [orjson.dumps({"index": {"_index": INDEX, "_id": str(i)}}), orjson.dumps(src)]
    r = client.post("/_bulk", params={"refresh": "true"}, content=b"\n".join(lines) + b"\n",
                    headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"], r.text[:2000]


@pytest.fixture(scope="module")
def opts_pair(pair: Any) -> Iterator[Any]:
    _load(pair.theirs, 1)
    _load(pair.ours, 3)
    yield pair
    pair.ours.delete(f"/{INDEX}")
    pair.theirs.delete(f"/{INDEX}")


def _qs(query: str, **opts: Any) -> dict[str, Any]:
    where = {} if "fields" in opts else {"default_field": "title"}
    return {"query_string": {"query": query, **where, **opts}}


CASES = [
    _qs('"quick fox"', phrase_slop=0), _qs('"quick fox"', phrase_slop=1),
    _qs('"quick fox"', phrase_slop=4), _qs('"fox quick"', phrase_slop=2),
    _qs('"quick fox"~0', phrase_slop=3), _qs('"quick fox"~', phrase_slop=2),
    _qs('"quick fox" OR lazy', phrase_slop=3, fields=["title", "body"]),
    _qs("quick fox", phrase_slop=3, type="phrase", fields=["title", "body"]),
    _qs("quick fox", phrase_slop=3, type="phrase"),
    _qs("fox*", allow_leading_wildcard=False), _qs("*", allow_leading_wildcard=False),
    _qs("f?x", allow_leading_wildcard=False), _qs("*ox", allow_leading_wildcard=True),
    _qs(r"\*ox", allow_leading_wildcard=False),
    _qs("fox+dog (pair)", escape=True), _qs("fox*", escape=True),
    _qs("lazy -dog", escape=True), _qs("quick AND fox", escape=True),
    _qs('"quick fox"', escape=True), _qs("title:fox", escape=True, fields=["body"]),
    _qs('"quick fox" OR brown', quote_field_suffix=".exact"),
    _qs('"quick fox" dog', quote_field_suffix=".ws", fields=["title^2", "body"]),
    _qs('body:"quick fox" OR title:"lazy dog"', quote_field_suffix=".exact"),
    _qs('"quick fox"~2', quote_field_suffix=".nope"),
    {"simple_query_string": {"query": '"quick fox" | lazy', "fields": ["title", "body"],
                             "quote_field_suffix": ".exact"}},
    _qs("d:[2020-01-01 TO 2020-01-02]", time_zone="+05:00"),
    _qs("d:{2020-01-01 TO *}", time_zone="Europe/Paris"),
    _qs("d:2020-01-01", time_zone="-03:00"), _qs("d:2020-01-02", time_zone="+09:00"),
    _qs("d:>=2020-01-02T00:00:00", time_zone="-10:00"),
    _qs("d:<2020-01-02 OR quick", time_zone="+10:00"),
    {"query_string": {"query": "2020-01-01", "default_field": "d", "time_zone": "-08:00"}},
    {"query_string": {"query": "2020-01-01", "fields": ["d"], "time_zone": "-08:00"}},
    _qs("d:[now-10y TO 2020-01-02||/d]", time_zone="+03:00"),
    _qs('"Quick Fox" OR Quick', quote_analyzer="whitespace"),
    _qs('"quick fox" OR Quick', quote_analyzer="keyword", fields=["tag", "title"]),
    _qs('"the fox" OR lazy', quote_analyzer="stop", analyzer="whitespace"),
    _qs('"Quick Fox"', analyzer="whitespace"),
]


@pytest.mark.parametrize("query", CASES)
def test_query_string_options_score_as_opensearch(opts_pair: Any, query: Any) -> None:
    check(opts_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


ERRORS = [
    _qs("*ox", allow_leading_wildcard=False), _qs("?ox", allow_leading_wildcard=False),
    _qs("title:*o*", allow_leading_wildcard=False, fields=["body"]),
    _qs("quick OR *ox", allow_leading_wildcard=False),
    _qs("d:[2020-01-01 TO *]", time_zone="Mars/Olympus"), _qs("quick", time_zone="nope"),
    _qs('"quick fox"', quote_analyzer="nope"), _qs("quick", quote_analyzer="nope"),
]


@pytest.mark.parametrize("query", ERRORS)
def test_leading_wildcards_fail_as_opensearch(opts_pair: Any, query: Any) -> None:
    check(opts_pair, "POST", f"/{INDEX}/_search", {"query": query})
