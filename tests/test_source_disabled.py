"""``_source: {enabled: false}`` in a mapping: no hit, get or aggregation shows a source, and
what needs one (an update, update-by-query, reindex) is refused as Elasticsearch refuses it;
the documents themselves are kept (the log and snapshots need them) and stay searchable."""
from __future__ import annotations

import httpx
import pytest


@pytest.fixture
def nosrc(es: httpx.Client) -> httpx.Client:
    r = es.put("/nosrc", json={"settings": {"number_of_shards": 2},
                               "mappings": {"_source": {"enabled": False},
                                            "properties": {"tag": {"type": "keyword"}}}})
    assert r.status_code == 200, r.text
    for i in range(4):
        es.put(f"/nosrc/_doc/{i}", json={"tag": "a" if i % 2 else "b", "n": i})
    es.post("/nosrc/_refresh")
    yield es
    es.delete("/nosrc")


def test_the_mapping_says_source_is_disabled(nosrc: httpx.Client) -> None:
    body = nosrc.get("/nosrc/_mapping").json()["nosrc"]["mappings"]
    assert body["_source"] == {"enabled": False}


def test_hits_gets_and_top_hits_show_no_source(nosrc: httpx.Client) -> None:
    r = nosrc.post("/nosrc/_search", json={"query": {"term": {"tag": "a"}}, "aggs": {
        "t": {"terms": {"field": "tag"}, "aggs": {"top": {"top_hits": {"size": 1}}}}}}).json()
    assert r["hits"]["total"]["value"] == 2
    assert all("_source" not in h for h in r["hits"]["hits"])
    top = r["aggregations"]["t"]["buckets"][0]["top"]["hits"]["hits"]
    assert len(top) == 1 and "_source" not in top[0]
    got = nosrc.get("/nosrc/_doc/1").json()
    assert got["found"] is True and "_source" not in got


def test_what_needs_a_source_is_refused(nosrc: httpx.Client) -> None:
    up = nosrc.post("/nosrc/_update/1", json={"doc": {"n": 9}})
    assert up.status_code == 400 and "document_source_missing_exception" in up.text, up.text
    sc = nosrc.post("/nosrc/_update/1", json={"script": {"source": "ctx._source.n = 9"}})
    assert sc.status_code == 400 and "document source missing" in sc.text, sc.text
    ubq = nosrc.post("/nosrc/_update_by_query", json={"query": {"term": {"tag": "a"}}})
    assert ubq.status_code == 400 and "didn't store _source" in ubq.text, ubq.text
    assert nosrc.post("/nosrc/_count", json={"query": {"term": {"n": 9}}}).json()["count"] == 0
    assert nosrc.get("/nosrc/_count").json()["count"] == 4


def test_source_enabled_cannot_change_after_creation(nosrc: httpx.Client) -> None:
    r = nosrc.put("/nosrc/_mapping", json={"_source": {"enabled": True}})
    assert r.status_code == 400 and "Cannot update parameter [enabled]" in r.text, r.text
