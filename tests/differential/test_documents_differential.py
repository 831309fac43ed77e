"""Multi-document APIs, versions and updates against the real OpenSearch node: the same requests
to both, and the answers compared — statuses, error types, results, versions, documents.

``_seq_no`` itself is not compared: here a write refused at its shard has used a sequence number
already (the coordinator numbers writes as they arrive), so numbers can have gaps where
OpenSearch's have none; both are valid ``if_seq_no`` values, and the conflict texts agree
otherwise (checked below with the numbers each system reported).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from .compare import compare
from .corpus import INDEX

pytestmark = pytest.mark.slow
SCRATCH = "diffdocs"


@pytest.fixture
def scratch(pair) -> Iterator[Any]:
    """An empty one-shard index ``diffdocs`` on both systems."""
    for client in (pair.ours, pair.theirs):
        client.delete(f"/{SCRATCH}")
        r = client.put(f"/{SCRATCH}", json={"settings": {"number_of_shards": 1,
                                                         "number_of_replicas": 0}})
        assert r.status_code == 200, r.text
    yield pair
    for client in (pair.ours, pair.theirs):
        client.delete(f"/{SCRATCH}")


def _core(status: int, body: Any) -> tuple[Any, ...]:
    """What must agree for a write, get or update: status, error type, result, version,
    found, source."""
    if "error" in body and isinstance(body["error"], dict):
        return status, body["error"]["type"]
    return (status, body.get("result"), body.get("_version"), body.get("found"),
            body.get("_source"), (body.get("get") or {}).get("_source"))


def _both(pair: Any, method: str, path: str, body: Any = None) -> tuple[Any, Any]:
    ours, theirs = pair.send(method, path, body)
    assert _core(*ours) == _core(*theirs), (method, path, body, ours, theirs)
    return ours, theirs


def test_mget_agrees_with_opensearch(pair) -> None:
    body = {"docs": [{"_index": INDEX, "_id": "1"}, {"_index": INDEX, "_id": "nope"},
                     {"_index": INDEX, "_id": "2", "_source": ["title"]},
                     {"_index": "missing-index", "_id": "1"}]}
    ours, theirs = pair.send("POST", "/_mget", body)
    assert ours[0] == theirs[0] == 200
    for a, b in zip(ours[1]["docs"], theirs[1]["docs"]):
        assert (a["_id"], a.get("found"), a.get("_source"), a.get("_version")) == \
               (b["_id"], b.get("found"), b.get("_source"), b.get("_version"))
        assert (a.get("error") or {}).get("type") == (b.get("error") or {}).get("type")
    for bad in ({}, {"docs": []}, {"docs": [{"_id": "1"}]}):
        ours, theirs = pair.send("POST", "/_mget", bad)
        assert (ours[0], ours[1]["error"]["type"]) == (theirs[0], theirs[1]["error"]["type"])


def test_msearch_agrees_with_opensearch(pair) -> None:
    searches = [({"index": INDEX}, {"query": {"match": {"title": "apple"}}, "size": 5}),
                ({"index": INDEX}, {"query": {"term": {"tag": "alpha"}}, "sort": ["n", "uid"]}),
                ({"index": "missing-index"}, {}),
                ({"index": INDEX}, {"size": 0, "track_total_hits": 7})]
    raw = b"".join(orjson.dumps(h) + b"\n" + orjson.dumps(b) + b"\n" for h, b in searches)
    answers = []
    for client in (pair.ours, pair.theirs):
        r = client.post("/_msearch", content=raw,
                        headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200, r.text
        answers.append(r.json()["responses"])
    for a, b in zip(*answers):
        assert a["status"] == b["status"]
        if "error" in a:
            assert a["error"]["type"] == b["error"]["type"]
            continue
        assert compare((200, a), (200, b)) == []


def test_versions_and_conditions_agree_with_opensearch(scratch) -> None:
    p = f"/{SCRATCH}/_doc"
    first, _ = _both(scratch, "PUT", f"{p}/1", {"a": 1})
    _both(scratch, "PUT", f"{p}/1?op_type=create", {"a": 2})
    _both(scratch, "PUT", f"/{SCRATCH}/_create/1", {"a": 2})
    _both(scratch, "PUT", f"{p}/1?if_seq_no=999&if_primary_term=1", {"a": 2})
    _both(scratch, "PUT", f"{p}/1?if_seq_no=1", {"a": 2})
    _both(scratch, "PUT", f"{p}/1?version=3", {"a": 2})
    _both(scratch, "PUT", f"{p}/2?version=5&version_type=external", {"a": 1})
    _both(scratch, "PUT", f"{p}/2?version=5&version_type=external", {"a": 2})
    _both(scratch, "PUT", f"{p}/2?version=5&version_type=external_gte", {"a": 3})
    _both(scratch, "PUT", f"{p}/2?version=4&version_type=external_gte", {"a": 4})
    _both(scratch, "DELETE", f"{p}/2?version=7&version_type=external")
    _both(scratch, "GET", f"{p}/1?version=1")
    _both(scratch, "GET", f"{p}/1?version=2")
    ours, theirs = scratch.send("PUT", f"{p}/2?version=6&version_type=external", {"a": 5})
    assert (ours[0], ours[1]["error"]["reason"]) == (theirs[0], theirs[1]["error"]["reason"])
    # a stale if_seq_no: the same text with each system's own numbers
    for client in (scratch.ours, scratch.theirs):
        seq = client.get(f"{p}/1").json()["_seq_no"]
        r = client.put(f"{p}/1?if_seq_no={seq + 5}&if_primary_term=1", json={"a": 9})
        assert r.status_code == 409
        assert r.json()["error"]["reason"] == (
            f"[1]: version conflict, required seqNo [{seq + 5}], primary term [1]. current "
            f"document has seqNo [{seq}] and primary term [1]")


def test_updates_agree_with_opensearch(scratch) -> None:
    u = f"/{SCRATCH}/_update"
    _both(scratch, "POST", f"{u}/1", {"doc": {"a": 1}})
    _both(scratch, "POST", f"{u}/1", {"doc": {"a": 1}, "upsert": {"a": 0, "o": {"x": 1}}})
    _both(scratch, "POST", f"{u}/1", {"doc": {"o": {"y": 2}}, "_source": True})
    _both(scratch, "POST", f"{u}/1", {"doc": {"a": 0}})
    _both(scratch, "POST", f"{u}/1", {"doc": {"a": 0}, "detect_noop": False})
    _both(scratch, "POST", f"{u}/1?_source_includes=o", {"doc": {"o": {"x": 5}}})
    _both(scratch, "POST", f"{u}/2", {"doc": {"b": 1}, "doc_as_upsert": True})
    _both(scratch, "POST", f"{u}/2?if_seq_no=999&if_primary_term=1", {"doc": {"b": 2}})
    _both(scratch, "POST", f"{u}/2?retry_on_conflict=3", {"doc": {"b": 3}})
    _both(scratch, "GET", f"/{SCRATCH}/_doc/1")
    _both(scratch, "GET", f"/{SCRATCH}/_doc/2")


def test_bulk_item_conflicts_agree_with_opensearch(scratch) -> None:
    lines = [{"index": {"_index": SCRATCH, "_id": "1"}}, {"a": 1},
             {"create": {"_index": SCRATCH, "_id": "1"}}, {"a": 2},
             {"update": {"_index": SCRATCH, "_id": "1"}}, {"doc": {"b": 1}},
             {"update": {"_index": SCRATCH, "_id": "1", "if_seq_no": 999,
                         "if_primary_term": 1}}, {"doc": {"b": 2}},
             {"index": {"_index": SCRATCH, "_id": "2", "version": 3,
                        "version_type": "external"}}, {"a": 3},
             {"index": {"_index": SCRATCH, "_id": "2", "version": 2,
                        "version_type": "external"}}, {"a": 4},
             {"update": {"_index": SCRATCH, "_id": "3"}}, {"doc": {"c": 1}},
             {"delete": {"_index": SCRATCH, "_id": "4"}}]
    raw = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    answers = []
    for client in (scratch.ours, scratch.theirs):
        r = client.post("/_bulk", content=raw, headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200, r.text
        answers.append([(k, v["status"], v.get("result"), v.get("_version"),
                         (v.get("error") or {}).get("type"))
                        for item in r.json()["items"] for k, v in item.items()])
    assert answers[0] == answers[1]
