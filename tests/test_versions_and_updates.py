"""Optimistic concurrency, versions and partial updates over HTTP, as Elasticsearch answers them:
every write answers with ``_seq_no`` and ``_primary_term``; a failed condition is a 409
``version_conflict_engine_exception`` with Elasticsearch's text (also per item in ``_bulk``);
``_update`` merges, upserts, detects no-ops and retries on conflict. The clients' own methods
(``update``, ``index`` with ``if_seq_no``, ``helpers.bulk`` with updates) drive the same paths."""
from __future__ import annotations

import json
import threading

import httpx
import pytest
from elasticsearch import ConflictError
from elasticsearch import helpers as es_helpers
from opensearchpy import ConflictError as OsConflictError
from opensearchpy import helpers as os_helpers

NDJSON = {"content-type": "application/x-ndjson"}


def _error(resp: httpx.Response) -> dict:
    return resp.json()["error"]


def test_every_write_answers_with_seq_no_and_primary_term(es) -> None:
    for resp in (es.put("/v/_doc/1", json={"a": 1}), es.post("/v/_doc", json={"a": 2}),
                 es.put("/v/_create/2", json={"a": 3}), es.post("/v/_update/1", json={"doc": {"a": 4}}),
                 es.delete("/v/_doc/2")):
        body = resp.json()
        assert isinstance(body["_seq_no"], int) and body["_primary_term"] == 1, body


def test_if_seq_no_guards_index_and_delete_with_elasticsearchs_text(es) -> None:
    first = es.put("/v/_doc/1", json={"a": 1}).json()
    second = es.put(f"/v/_doc/1?if_seq_no={first['_seq_no']}&if_primary_term=1",
                    json={"a": 2})
    assert second.status_code == 200
    stale = es.put(f"/v/_doc/1?if_seq_no={first['_seq_no']}&if_primary_term=1", json={"a": 3})
    assert stale.status_code == 409
    err = _error(stale)
    assert err["type"] == "version_conflict_engine_exception"
    assert err["reason"] == (f"[1]: version conflict, required seqNo [{first['_seq_no']}], "
                             f"primary term [1]. current document has seqNo "
                             f"[{second.json()['_seq_no']}] and primary term [1]")
    wrong_term = es.delete(f"/v/_doc/1?if_seq_no={second.json()['_seq_no']}&if_primary_term=2")
    assert wrong_term.status_code == 409
    missing = es.put("/v/_doc/9?if_seq_no=0&if_primary_term=1", json={"a": 1})
    assert missing.status_code == 409 and "but no document was found" in _error(missing)["reason"]


@pytest.mark.parametrize("params, text", [
    ("if_seq_no=1", "ifSeqNo is set, but primary term is [0]"),
    ("if_primary_term=1", "ifSeqNo is unassigned, but primary term is [1]"),
    ("version=3", "internal versioning can not be used for optimistic concurrency control"),
    ("version_type=external", "illegal version value [-3] for version type [EXTERNAL]"),
    ("version=2&version_type=external&if_seq_no=1&if_primary_term=1",
     "compare and write operations can not be used with version type [external]"),
])
def test_inconsistent_conditions_are_refused_before_writing(es, params, text) -> None:
    resp = es.put(f"/v/_doc/1?{params}", json={"a": 1})
    assert resp.status_code == 400
    assert _error(resp)["type"] == "action_request_validation_exception"
    assert text in _error(resp)["reason"]


def test_external_versions_must_grow_and_external_gte_may_repeat(es) -> None:
    made = es.put("/v/_doc/1?version=5&version_type=external", json={"a": 1})
    assert made.status_code == 201 and made.json()["_version"] == 5
    same = es.put("/v/_doc/1?version=5&version_type=external", json={"a": 2})
    assert same.status_code == 409
    assert _error(same)["reason"] == ("[1]: version conflict, current version [5] is higher or "
                                      "equal to the one provided [5]")
    gte = es.put("/v/_doc/1?version=5&version_type=external_gte", json={"a": 3})
    assert gte.status_code == 200 and gte.json()["_version"] == 5
    lower = es.put("/v/_doc/1?version=4&version_type=external_gte", json={"a": 4})
    assert _error(lower)["reason"] == ("[1]: version conflict, current version [5] is higher "
                                       "than the one provided [4]")
    assert es.put("/v/_doc/1?version=9&version_type=external", json={"a": 5}).json()[
        "_version"] == 9
    create = es.put("/v/_create/2?version=3&version_type=external", json={"a": 1})
    assert create.status_code == 400 and "create operations only support internal versioning" \
        in _error(create)["reason"]


def test_op_type_create_refuses_an_existing_document(es) -> None:
    es.put("/v/_doc/1", json={"a": 1})
    resp = es.put("/v/_doc/1?op_type=create", json={"a": 2})
    assert resp.status_code == 409
    assert _error(resp)["reason"] == ("[1]: version conflict, document already exists "
                                      "(current version [1])")


def test_get_with_a_different_version_is_a_conflict(es) -> None:
    es.put("/v/_doc/1", json={"a": 1})
    es.put("/v/_doc/1", json={"a": 2})
    assert es.get("/v/_doc/1?version=2").status_code == 200
    resp = es.get("/v/_doc/1?version=1")
    assert resp.status_code == 409
    assert _error(resp)["reason"] == ("[1]: version conflict, current version [2] is different "
                                      "than the one provided [1]")


def test_hits_show_seq_no_and_primary_term_when_asked(es) -> None:
    w = es.put("/v/_doc/1?refresh=true", json={"a": 1}).json()
    hit = es.post("/v/_search", json={"seq_no_primary_term": True}).json()["hits"]["hits"][0]
    assert (hit["_seq_no"], hit["_primary_term"]) == (w["_seq_no"], 1)
    plain = es.post("/v/_search", json={}).json()["hits"]["hits"][0]
    assert "_seq_no" not in plain


def test_bulk_items_fail_alone_with_their_409(es) -> None:
    es.put("/v/_doc/1", json={"a": 1})
    body = "".join(json.dumps(x) + "\n" for x in [
        {"index": {"_index": "v", "_id": "1", "if_seq_no": 99, "if_primary_term": 1}}, {"a": 2},
        {"create": {"_index": "v", "_id": "1"}}, {"a": 3},
        {"index": {"_index": "v", "_id": "2", "version": 4, "version_type": "external"}}, {"a": 4},
        {"index": {"_index": "v", "_id": "1", "op_type": "create"}}, {"a": 5},
        {"update": {"_index": "v", "_id": "1", "if_seq_no": 99, "if_primary_term": 1}},
        {"doc": {"a": 6}},
    ])
    items = es.post("/_bulk", content=body, headers=NDJSON).json()["items"]
    assert [next(iter(i.values()))["status"] for i in items] == [409, 409, 201, 409, 409]
    assert items[3]["create"]["error"]["type"] == "version_conflict_engine_exception"
    assert items[2]["index"]["_version"] == 4


def test_update_deep_merges_doc_and_detects_noops(es, esc, osc) -> None:
    es.put("/u/_doc/1", json={"a": 1, "o": {"x": 1, "y": 2}, "l": [1, 2]})
    r = esc.update(index="u", id="1", doc={"o": {"y": 3, "z": 4}, "l": [3]})
    assert r["result"] == "updated"
    assert es.get("/u/_doc/1").json()["_source"] == {"a": 1, "o": {"x": 1, "y": 3, "z": 4},
                                                    "l": [3]}
    noop = osc.update(index="u", id="1", body={"doc": {"a": 1}})
    assert noop["result"] == "noop" and noop["_version"] == r["_version"]
    forced = es.post("/u/_update/1", json={"doc": {"a": 1}, "detect_noop": False}).json()
    assert forced["result"] == "updated" and forced["_version"] == r["_version"] + 1


def test_update_upserts_and_reports_missing_documents(es, esc) -> None:
    missing = es.post("/u/_update/1", json={"doc": {"a": 1}})
    assert missing.status_code == 404
    assert _error(missing)["type"] == "document_missing_exception"
    assert _error(missing)["reason"] == "[1]: document missing"
    made = es.post("/u/_update/1", json={"doc": {"a": 1}, "upsert": {"a": 0}})
    assert made.status_code == 201 and made.json()["result"] == "created"
    assert es.get("/u/_doc/1").json()["_source"] == {"a": 0}
    assert esc.update(index="u", id="2", doc={"b": 2}, doc_as_upsert=True)["result"] == "created"
    assert es.get("/u/_doc/2").json()["_source"] == {"b": 2}


def test_update_returns_the_source_it_wrote_when_asked(es) -> None:
    es.put("/u/_doc/1", json={"a": 1, "b": 2})
    r = es.post("/u/_update/1?_source_includes=b&refresh=true", json={"doc": {"b": 3}}).json()
    assert r["get"]["found"] is True and r["get"]["_source"] == {"b": 3}
    assert r["get"]["_seq_no"] == r["_seq_no"] and r.get("forced_refresh") is True
    r = es.post("/u/_update/1", json={"doc": {"b": 4}, "_source": True}).json()
    assert r["get"]["_source"] == {"a": 1, "b": 4}
    assert "get" not in es.post("/u/_update/1", json={"doc": {"b": 5}}).json()


def test_update_honours_if_seq_no_and_routing(es) -> None:
    w = es.put("/u/_doc/1?routing=k", json={"a": 1}).json()
    stale = es.post(f"/u/_update/1?routing=k&if_seq_no={w['_seq_no'] + 7}&if_primary_term=1",
                    json={"doc": {"a": 2}})
    assert stale.status_code == 409
    ok = es.post(f"/u/_update/1?routing=k&if_seq_no={w['_seq_no']}&if_primary_term=1",
                 json={"doc": {"a": 2}})
    assert ok.status_code == 200
    assert es.get("/u/_doc/1?routing=k").json()["_source"] == {"a": 2}


def test_a_scripted_update_honours_if_seq_no_and_source(es) -> None:
    seq = es.put("/u/_doc/1", json={"a": 1, "b": 2}).json()["_seq_no"]
    body = {"script": {"source": "ctx._source.a += 1"}}
    stale = es.post(f"/u/_update/1?if_seq_no={seq + 5}&if_primary_term=1", json=body)
    assert stale.status_code == 409, stale.text
    ok = es.post(f"/u/_update/1?if_seq_no={seq}&if_primary_term=1&_source_includes=a",
                 json=body)
    assert ok.status_code == 200 and ok.json()["get"]["_source"] == {"a": 2}, ok.text


@pytest.mark.parametrize("body, params, text", [
    ({"doc": {"a": 1}}, "?lang=painless", "[lang] is not supported"),
    ({"doc": {"a": 1}, "colour": 1}, "", "[UpdateRequest] unknown field [colour]"),
    ({"upsert": {"a": 1}}, "", "script or doc is missing"),
    ({"doc": {"a": 1}}, "?if_seq_no=1&if_primary_term=1&retry_on_conflict=2",
     "compare and write operations can not be retried"),
    ({"doc": {"a": 1}}, "?version=2", "internal versioning can not be used"),
])
def test_update_refuses_what_it_does_not_do(es, body, params, text) -> None:
    resp = es.post(f"/u/_update/1{params}", json=body)
    assert resp.status_code == 400, resp.text
    assert text in _error(resp)["reason"]


def test_bulk_updates_see_the_writes_before_them(es, esc, osc) -> None:
    actions = [{"_op_type": "index", "_index": "u", "_id": "1", "_source": {"n": 1}},
               {"_op_type": "update", "_index": "u", "_id": "1", "doc": {"m": 2}},
               {"_op_type": "update", "_index": "u", "_id": "1", "doc": {"n": 3}},
               {"_op_type": "update", "_index": "u", "_id": "2", "doc": {"n": 1},
                "doc_as_upsert": True}]
    ok, errors = es_helpers.bulk(esc, actions, refresh=True)
    assert ok == 4 and not errors
    assert es.get("/u/_doc/1").json()["_source"] == {"n": 3, "m": 2}
    ok, errors = os_helpers.bulk(osc, [{"_op_type": "update", "_index": "u", "_id": "2",
                                        "doc": {"n": 2}}], refresh=True)
    assert ok == 1 and es.get("/u/_doc/2").json()["_source"] == {"n": 2}


def test_clients_raise_their_conflict_errors(es, esc, osc) -> None:
    es.put("/u/_doc/1", json={"a": 1})
    with pytest.raises(ConflictError):
        esc.index(index="u", id="1", document={"a": 2}, if_seq_no=99, if_primary_term=1)
    with pytest.raises(OsConflictError):
        osc.create(index="u", id="1", body={"a": 2})


def test_concurrent_read_modify_write_loses_no_acknowledged_increment(es, base_url) -> None:
    """N threads, each reading the counter and writing it + 1 with ``if_seq_no``: the final
    value equals the number of writes the service acknowledged (no lost update)."""
    es.put("/counter", json={"settings": {"number_of_shards": 3, "number_of_replicas": 1}})
    es.put("/counter/_doc/c", json={"n": 0})
    acked = [0] * 4

    def worker(k: int) -> None:
        with httpx.Client(base_url=base_url, timeout=60) as c:
            for _ in range(8):
                doc = c.get("/counter/_doc/c").json()
                r = c.put(f"/counter/_doc/c?if_seq_no={doc['_seq_no']}&if_primary_term="
                          f"{doc['_primary_term']}", json={"n": doc["_source"]["n"] + 1})
                assert r.status_code in (200, 409), r.text
                acked[k] += r.status_code == 200
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(acked) >= 1
    assert es.get("/counter/_doc/c").json()["_source"]["n"] == sum(acked)


def test_retry_on_conflict_lets_concurrent_updates_all_land(es, base_url) -> None:
    es.put("/counter2/_doc/c", json={"n": 0, "seen": {}})

    def worker(k: int) -> None:
        with httpx.Client(base_url=base_url, timeout=60) as c:
            for j in range(5):
                r = c.post("/counter2/_update/c?retry_on_conflict=50",
                           json={"doc": {"seen": {f"w{k}_{j}": True}}})
                assert r.status_code == 200, r.text
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(es.get("/counter2/_doc/c").json()["_source"]["seen"]) == 15
