"""By-query, reindex, scripted updates and tasks through the official clients, unchanged:
``elasticsearch`` (9.x, and its ``helpers.reindex``) and ``opensearch-py``, against the real
uvicorn + Ray server."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from elasticsearch import helpers as es_helpers
from opensearchpy import OpenSearch

DOCS = [{"_id": str(i), "n": i, "tag": "odd" if i % 2 else "even"} for i in range(10)]


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    client.indices.create(index="src", settings={"number_of_shards": 2},
                          mappings={"properties": {"tag": {"type": "keyword"},
                                                   "n": {"type": "integer"}}})
    es_helpers.bulk(client, [{"_index": "src", **d} for d in DOCS], refresh=True)
    yield client
    client.close()


@pytest.fixture
def osc(esc: Elasticsearch, base_url: str) -> Iterator[OpenSearch]:
    client = OpenSearch(hosts=[base_url], timeout=60)
    yield client
    client.close()


def _wait(get: Any, task_id: str) -> dict[str, Any]:
    for _ in range(600):
        out = dict(get(task_id=task_id))
        if out["completed"]:
            return out
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} did not complete")


def test_elasticsearch_client_delete_and_update_by_query(esc: Elasticsearch) -> None:
    r = esc.update_by_query(index="src", query={"term": {"tag": "odd"}}, refresh=True,
                            script={"source": "ctx._source.n += params.k", "params": {"k": 100}})
    assert r["updated"] == 5
    assert esc.get(index="src", id="3")["_source"]["n"] == 103
    r = esc.delete_by_query(index="src", query={"range": {"n": {"gte": 100}}}, refresh=True)
    assert r["deleted"] == 5 and r["failures"] == []
    assert esc.count(index="src")["count"] == 5


def test_elasticsearch_client_reindex_and_tasks(esc: Elasticsearch) -> None:
    r = esc.reindex(source={"index": "src"}, dest={"index": "dst"}, refresh=True)
    assert r["created"] == 10
    r = esc.reindex(source={"index": "src", "query": {"term": {"tag": "even"}}},
                    dest={"index": "dst2"}, wait_for_completion=False, refresh=True)
    out = _wait(esc.tasks.get, r["task"])
    assert out["response"]["created"] == 5
    assert esc.count(index="dst2")["count"] == 5


def test_elasticsearch_client_scripted_update(esc: Elasticsearch) -> None:
    r = esc.update(index="src", id="1", script={"source": "ctx._source.tag = params.t",
                                                "params": {"t": "one"}}, refresh=True)
    assert r["result"] == "updated"
    assert esc.get(index="src", id="1")["_source"]["tag"] == "one"


def test_elasticsearch_helpers_reindex_copies_an_index(esc: Elasticsearch) -> None:
    ok, errors = es_helpers.reindex(esc, "src", "copy", bulk_kwargs={"refresh": True})
    assert (ok, errors) == (10, 0)     # stats_only: the number of errors
    esc.indices.refresh(index="copy")
    got = {h["_id"]: h["_source"] for h in es_helpers.scan(esc, index="copy")}
    assert got == {d["_id"]: {"n": d["n"], "tag": d["tag"]} for d in DOCS}


def test_opensearch_client_by_query_reindex_and_tasks(osc: OpenSearch) -> None:
    r = osc.update_by_query(index="src", body={"script": {"source": "ctx._source.seen = true"}},
                            params={"refresh": "true"})
    assert r["updated"] == 10
    r = osc.reindex(body={"source": {"index": "src"}, "dest": {"index": "osdst"}},
                    params={"refresh": "true", "wait_for_completion": "false"})
    out = _wait(osc.tasks.get, r["task"])
    assert out["response"]["created"] == 10
    r = osc.delete_by_query(index="osdst", body={"query": {"term": {"tag": "odd"}}},
                            params={"refresh": "true"})
    assert r["deleted"] == 5
    assert osc.count(index="osdst")["count"] == 5
