"""Field aliases against the real OpenSearch node: the same documents in both (ours over three
shards), queries, sorts, aggregations, ``fields`` and highlights through an alias, the field
mapping API and the errors of bad aliases and of writes to an alias, compared."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from .loading import loaded_pair

INDEX = "diff_alias"
MAPPING = {"properties": {
    "n": {"type": "long"}, "num": {"type": "alias", "path": "n"},
    "title": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
    "headline": {"type": "alias", "path": "title"},
    "label": {"type": "alias", "path": "title.raw"}}}
WORDS = ["red fox", "blue fox", "red hen", "green frog", "red red fox", "old blue hen"]
DOCS = {str(i): {"n": (i * 7) % 5, "title": WORDS[i % len(WORDS)]} for i in range(1, 19)}


@pytest.fixture(scope="module")
def both(opensearch_url: str, base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with loaded_pair(base_url, opensearch_url, INDEX, MAPPING, DOCS) as pair:
        yield pair


def _send(both: Any, method: str, path: str, body: Any = None) -> tuple[Any, Any]:
    ours, theirs = both
    a = ours.request(method, path, json=body)
    b = theirs.request(method, path, json=body)
    assert a.status_code == b.status_code, (a.text, b.text)
    return a.json(), b.json()


def _hits(resp: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(h["_id"], round(h["_score"] or 0, 4), h.get("sort"), h.get("fields"),
             h.get("highlight")) for h in resp["hits"]["hits"]]


@pytest.mark.parametrize("body", [
    {"query": {"term": {"num": 2}}, "sort": ["_doc"], "size": 20},
    {"query": {"range": {"num": {"gte": 3}}}, "sort": [{"num": "desc"}, {"label": "asc"}],
     "size": 20},
    {"query": {"match": {"headline": "red fox"}}, "size": 20},
    {"query": {"query_string": {"query": "headline:hen OR num:4"}}, "size": 20},
    {"query": {"query_string": {"query": "fox", "fields": ["head*"]}}, "size": 20},
    {"query": {"multi_match": {"query": "blue", "fields": ["headline", "title"]}}, "size": 20},
    {"query": {"prefix": {"label": "red"}}, "sort": [{"num": "asc"}, "label"], "size": 20},
    {"query": {"wildcard": {"label": "*hen"}}, "sort": ["label", {"n": "desc"}], "size": 20},
    {"query": {"exists": {"field": "num"}}, "sort": [{"label": "desc"}, "num"], "size": 5},
    {"query": {"match": {"headline": "fox"}}, "fields": ["num", "label"], "size": 20,
     "highlight": {"fields": {"headline": {}}}},
    {"collapse": {"field": "num"}, "sort": [{"label": "asc"}], "size": 10},
])
def test_searches_through_an_alias_agree_with_opensearch(both, body) -> None:
    ours, theirs = _send(both, "POST", f"/{INDEX}/_search", body)
    assert ours["hits"]["total"] == theirs["hits"]["total"]
    assert _hits(ours) == _hits(theirs)


def test_aggregations_on_an_alias_agree_with_opensearch(both) -> None:
    body = {"size": 0, "aggs": {"t": {"terms": {"field": "label"}},
                                "h": {"histogram": {"field": "num", "interval": 2}},
                                "s": {"stats": {"field": "num"}}}}
    ours, theirs = _send(both, "POST", f"/{INDEX}/_search", body)
    assert ours["aggregations"] == theirs["aggregations"]


@pytest.mark.parametrize("fields", ["num", "label", "num,title", "l*"])
def test_the_field_mapping_api_agrees_with_opensearch(both, fields) -> None:
    ours, theirs = _send(both, "GET", f"/{INDEX}/_mapping/field/{fields}")
    assert ours == theirs


def test_field_caps_reports_the_target_type_as_opensearch(both) -> None:
    ours, theirs = _send(both, "GET", f"/{INDEX}/_field_caps?fields=num,label,headline")
    for caps in ours["fields"].values():   # Elasticsearch 8's key, which OpenSearch lacks
        for cap in caps.values():
            assert cap.pop("metadata_field") is False
    assert ours["fields"] == theirs["fields"]


@pytest.mark.parametrize("props", [
    {"x": {"type": "alias", "path": "nope"}},
    {"x": {"type": "alias", "path": "o"}, "o": {"properties": {"k": {"type": "keyword"}}}},
    {"x": {"type": "alias", "path": "y"}, "y": {"type": "alias", "path": "k"},
     "k": {"type": "keyword"}},
    {"x": {"type": "alias", "path": "n.k"},
     "n": {"type": "nested", "properties": {"k": {"type": "keyword"}}}},
    {"x": {"type": "alias"}}])
def test_invalid_aliases_fail_as_in_opensearch(both, props) -> None:
    ours, theirs = _send(both, "PUT", "/diff_alias_bad", {"mappings": {"properties": props}})
    assert ours["error"]["type"] == theirs["error"]["type"]
    assert ours["error"]["reason"] == theirs["error"]["reason"]


def test_writing_to_an_alias_fails_as_in_opensearch(both) -> None:
    ours, theirs = _send(both, "PUT", f"/{INDEX}/_doc/x", {"num": 1})
    assert ours["error"] == theirs["error"]


def test_changing_an_alias_path_to_a_missing_field_fails_as_in_opensearch(both) -> None:
    body = {"properties": {"num": {"type": "alias", "path": "missing"}}}
    ours, theirs = _send(both, "PUT", f"/{INDEX}/_mapping", body)
    assert ours["error"]["reason"] == theirs["error"]["reason"]
