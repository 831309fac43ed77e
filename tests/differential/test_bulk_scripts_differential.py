"""Scripted ``_bulk`` update items and the script description APIs against the real
OpenSearch node: the same bulk to both gives the same item results (status, result, version,
error type) and the same documents after; every context we list is OpenSearch's, with its
methods."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.slow
SCRATCH = "diffbulkscripts"


@pytest.fixture
def scratch(pair) -> Iterator[Any]:
    """A one-shard index with documents 1..3 (``n`` = id) on both systems."""
    for client in (pair.ours, pair.theirs):
        client.delete(f"/{SCRATCH}")
        r = client.put(f"/{SCRATCH}", json={"settings": {"number_of_shards": 1,
                                                         "number_of_replicas": 0}})
        assert r.status_code == 200, r.text
        for i in range(1, 4):
            client.put(f"/{SCRATCH}/_doc/{i}", json={"n": i, "tags": ["a"]})
    yield pair
    for client in (pair.ours, pair.theirs):
        client.delete(f"/{SCRATCH}")


def _ndjson(lines: list[Any]) -> bytes:
    return b"\n".join(orjson.dumps(x) for x in lines) + b"\n"


def _item(action: str, doc_id: str, body: dict[str, Any], **meta: Any) -> list[Any]:
    return [{action: {"_index": SCRATCH, "_id": doc_id, **meta}}, body]


def test_scripted_bulk_items_agree_with_opensearch(scratch) -> None:
    inc = {"source": "ctx._source.n += params.by", "params": {"by": 10}}
    upsert_script = {"source": "ctx._source.n = (ctx._source.n == null ? 0 : ctx._source.n)"
                               " + 5"}
    lines = (_item("update", "1", {"script": inc})
             + _item("update", "2", {"script": "ctx.op = 'noop'"})
             + _item("update", "3", {"script": "ctx.op = 'delete'"})
             + _item("update", "u1", {"script": inc, "upsert": {"n": 1}})
             + _item("update", "u2", {"script": upsert_script, "upsert": {},
                                      "scripted_upsert": True})
             + _item("update", "u2", {"script": upsert_script, "upsert": {},
                                      "scripted_upsert": True})
             + _item("update", "1", {"script": "ctx._source.x.y = 1"})
             + _item("update", "1", {"script": "ctx._source.n = nope"})
             + _item("update", "nope", {"script": inc})
             + _item("update", "1", {"script": "ctx._source.tags.add('b')"},
                     _source={"includes": ["tags"]})
             + _item("update", "2", {"script": "ctx._source.n = 20"}, _source=False)
             + _item("index", "4", {"n": 4})
             + _item("update", "4", {"script": "ctx._source.n *= 2"}))
    answers = []
    for client in (scratch.ours, scratch.theirs):
        r = client.post("/_bulk", params={"refresh": "true"}, content=_ndjson(lines),
                        headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200, r.text
        answers.append([(k, v["status"], v.get("result"), v.get("_version"),
                         (v.get("error") or {}).get("type"),
                         ((v.get("error") or {}).get("caused_by") or {}).get("type"),
                         "get" in v, (v.get("get") or {}).get("_source"))
                        for item in r.json()["items"] for k, v in item.items()])
    assert answers[0] == answers[1]
    docs = []
    for client in (scratch.ours, scratch.theirs):
        r = client.post(f"/{SCRATCH}/_search", json={"size": 20, "sort": [{"n": "asc"}]})
        docs.append([(h["_id"], h["_source"]) for h in r.json()["hits"]["hits"]])
    assert docs[0] == docs[1]


def test_every_script_context_we_list_is_opensearchs(pair) -> None:
    (s1, ours), (s2, theirs) = pair.send("GET", "/_script_context")
    assert s1 == s2 == 200
    their_contexts = {c["name"]: c["methods"] for c in theirs["contexts"]}
    for context in ours["contexts"]:
        methods = [{**m, "return_type": m["return_type"].replace("elasticsearch",
                                                                   "opensearch")}
                   for m in context["methods"]]
        their = [{**m, "params": [{**p, "type": p["type"].replace("elasticsearch",
                                                                   "opensearch")}
                                  for p in m["params"]]} for m in
                 their_contexts.get(context["name"], [])]
        ours_norm = [{**m, "params": [{**p, "type": p["type"].replace("elasticsearch",
                                                                       "opensearch")}
                                      for p in m["params"]]} for m in methods]
        assert ours_norm == their, (context["name"], their)


def test_script_languages_are_a_subset_of_opensearchs(pair) -> None:
    (s1, ours), (s2, theirs) = pair.send("GET", "/_script_language")
    assert s1 == s2 == 200
    assert set(ours["types_allowed"]) == set(theirs["types_allowed"])
    their_langs = {x["language"]: set(x["contexts"]) for x in theirs["language_contexts"]}
    for lang in ours["language_contexts"]:
        assert set(lang["contexts"]) <= their_langs[lang["language"]], (lang, their_langs)
