"""``nested`` fields over HTTP: the ``elasticsearch`` client against real uvicorn + Ray shards.

The mapping type round-trips, the nested query finds parents with inner hits, the nested and
reverse_nested aggregations count children and parents, and a bad path is a 400.
"""
from __future__ import annotations

from collections.abc import Iterator

import elasticsearch
import httpx
import pytest
from elasticsearch import Elasticsearch

MAPPINGS = {"properties": {
    "title": {"type": "text"},
    "comments": {"type": "nested", "properties": {
        "author": {"type": "keyword"}, "stars": {"type": "long"}}}}}
DOCS = {"1": {"title": "fox", "comments": [{"author": "ann", "stars": 5},
                                           {"author": "bob", "stars": 1}]},
        "2": {"title": "dog", "comments": [{"author": "ann", "stars": 2}]},
        "3": {"title": "cat"}}


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    client.indices.create(index="posts", settings={"number_of_shards": 2}, mappings=MAPPINGS)
    for doc_id, doc in DOCS.items():
        client.index(index="posts", id=doc_id, document=doc)
    client.indices.refresh(index="posts")
    yield client
    client.close()


def test_the_nested_type_round_trips_in_the_mapping(esc):
    props = esc.indices.get_mapping(index="posts")["posts"]["mappings"]["properties"]
    assert props["comments"]["type"] == "nested"


def test_nested_query_with_inner_hits_over_http(esc):
    r = esc.search(index="posts", query={"nested": {
        "path": "comments", "query": {"term": {"comments.author": "bob"}},
        "inner_hits": {}}})
    assert r["hits"]["total"]["value"] == 1
    hit = r["hits"]["hits"][0]
    inner = hit["inner_hits"]["comments"]["hits"]["hits"]
    assert (hit["_id"], inner[0]["_nested"], inner[0]["_source"]) == \
        ("1", {"field": "comments", "offset": 1}, {"author": "bob", "stars": 1})
    assert esc.count(index="posts", query={"term": {"comments.author": "bob"}})["count"] == 0


def test_nested_and_reverse_nested_aggregations_over_http(esc):
    r = esc.search(index="posts", size=0, aggs={"c": {"nested": {"path": "comments"}, "aggs": {
        "who": {"terms": {"field": "comments.author"},
                "aggs": {"docs": {"reverse_nested": {}}}}}}})
    c = r["aggregations"]["c"]
    assert c["doc_count"] == 3
    assert [(b["key"], b["doc_count"], b["docs"]["doc_count"]) for b in c["who"]["buckets"]] \
        == [("ann", 2, 2), ("bob", 1, 1)]


def test_a_path_that_is_not_nested_is_a_400(esc):
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="posts", query={"nested": {"path": "title",
                                                    "query": {"match_all": {}}}})
    assert e.value.meta.status == 400
    assert "is not of nested type" in str(e.value.body)
