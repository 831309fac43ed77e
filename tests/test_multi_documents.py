"""``_mget`` and ``_msearch`` over HTTP, through the official ``elasticsearch`` and
``opensearch-py`` clients and plain HTTP: each document or search is answered, or failed, in its
place; what fails the whole request fails it with Elasticsearch's 400."""
from __future__ import annotations

import httpx
import pytest

NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture
def books(es: httpx.Client) -> httpx.Client:
    es.put("/books", json={"settings": {"number_of_shards": 3},
                           "mappings": {"properties": {"title": {"type": "text"},
                                                       "tag": {"type": "keyword",
                                                               "store": True}}}})
    for i in range(1, 7):
        es.put(f"/books/_doc/{i}", json={"title": f"book {i}", "tag": "odd" if i % 2 else "even",
                                         "n": i})
    es.put("/books/_doc/r1?routing=alice", json={"title": "routed", "n": 100})
    es.post("/books/_refresh")
    return es


def test_mget_answers_each_document_in_its_place_with_both_clients(books, esc, osc) -> None:
    for client in (esc, osc):
        resp = client.mget(body={"docs": [{"_index": "books", "_id": "1"},
                                          {"_index": "books", "_id": "404"},
                                          {"_index": "nope", "_id": "1"},
                                          {"_index": "books", "_id": "r1", "routing": "alice"}]})
        docs = resp["docs"]
        assert [d["_id"] for d in docs] == ["1", "404", "1", "r1"]
        assert docs[0]["found"] is True and docs[0]["_source"]["n"] == 1
        assert docs[0]["_version"] == 1 and "_seq_no" in docs[0]
        assert docs[1] == {"_index": "books", "_id": "404", "found": False}
        assert docs[2]["error"]["type"] == "index_not_found_exception"
        assert docs[3]["found"] is True and docs[3]["_routing"] == "alice"
        by_ids = client.mget(index="books", body={"ids": ["2", "3"]})
        assert [d["_source"]["n"] for d in by_ids["docs"]] == [2, 3]


def test_mget_source_filters_and_stored_fields_per_document(books) -> None:
    resp = books.post("/books/_mget?_source_includes=title", json={"docs": [
        {"_id": "1"}, {"_id": "2", "_source": ["n"]}, {"_id": "3", "_source": False},
    ]}).json()["docs"]
    assert resp[0]["_source"] == {"title": "book 1"}
    assert resp[1]["_source"] == {"n": 2}
    assert "_source" not in resp[2]
    resp = books.post("/books/_mget", json={"docs": [
        {"_id": "4", "stored_fields": ["tag"]}, {"_id": "5", "stored_fields": ["tag", "_source"]},
        {"_id": "6", "stored_fields": ["title"]},     # not stored: no fields
    ]}).json()["docs"]
    assert resp[0]["fields"] == {"tag": ["even"]} and "_source" not in resp[0]
    assert resp[1]["fields"] == {"tag": ["odd"]} and resp[1]["_source"]["n"] == 5
    assert "fields" not in resp[2] and "_source" not in resp[2]


def test_mget_version_conflict_is_an_item_error(books) -> None:
    docs = books.post("/_mget", json={"docs": [{"_index": "books", "_id": "1", "version": 7},
                                               {"_index": "books", "_id": "1", "version": 1}]}
                      ).json()["docs"]
    assert docs[0]["error"]["type"] == "version_conflict_engine_exception"
    assert "current version [1] is different than the one provided [7]" in \
        docs[0]["error"]["reason"]
    assert docs[1]["found"] is True


@pytest.mark.parametrize("body, text", [
    ({}, "no documents to get"), ({"docs": []}, "no documents to get"),
    ({"docs": [{"_index": "books"}]}, "id is missing for doc 0"),
    ({"docs": [{"_id": "1"}]}, "index is missing for doc 0"),
])
def test_mget_without_documents_fails_the_request(books, body, text) -> None:
    resp = books.post("/_mget", json=body)
    assert resp.status_code == 400
    assert resp.json()["error"]["type"] == "action_request_validation_exception"
    assert text in resp.json()["error"]["reason"]


def test_mget_refuses_unknown_keys_and_realtime_false(books) -> None:
    resp = books.post("/books/_mget", json={"docs": [{"_id": "1", "colour": "red"}]})
    assert resp.status_code == 400 and "[colour]" in resp.json()["error"]["reason"]
    resp = books.post("/books/_mget?realtime=false", json={"ids": ["1"]})
    assert resp.status_code == 400 and "realtime" in resp.json()["error"]["reason"]


def _lines(*objs: object) -> str:
    import json
    return "".join(json.dumps(o) + "\n" for o in objs)


def test_msearch_answers_each_search_in_its_place_with_both_clients(books, esc, osc) -> None:
    searches = [{"index": "books"}, {"query": {"term": {"tag": "odd"}}},
                {"index": "missing"}, {"query": {"match_all": {}}},
                {}, {"query": {"match": {"title": "routed"}}, "size": 1}]
    for client in (esc, osc):
        resp = client.msearch(body=searches)
        r = resp["responses"]
        assert r[0]["hits"]["total"]["value"] == 3 and r[0]["status"] == 200
        assert r[1]["status"] == 404
        assert r[1]["error"]["root_cause"][0]["type"] == "index_not_found_exception"
        assert r[2]["hits"]["hits"][0]["_id"] == "r1"


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("path", ["/_msearch", "/books/_msearch", "/_msearch/",
                                  "/books/_msearch/"])
def test_msearch_is_served_on_get_and_post_with_and_without_an_index(books, method,
                                                                     path) -> None:
    body = _lines({}, {"query": {"match_all": {}}, "size": 0})
    resp = books.request(method, path, content=body, headers=NDJSON)
    assert resp.status_code == 200, resp.text
    assert resp.json()["responses"][0]["hits"]["total"]["value"] == 7


def test_msearch_header_keys_are_search_parameters(books) -> None:
    body = _lines({"index": "books", "routing": "alice", "preference": "_local"},
                  {"query": {"match_all": {}}},
                  {"index": ["books"], "search_type": "dfs_query_then_fetch"},
                  {"query": {"match_all": {}}, "size": 0, "track_total_hits": 2})
    r = books.post("/_msearch?rest_total_hits_as_int=false", content=body,
                   headers=NDJSON).json()["responses"]
    assert {h["_id"] for h in r[0]["hits"]["hits"]} <= {"r1", "1", "2", "3", "4", "5", "6"}
    assert r[1]["hits"]["total"] == {"value": 2, "relation": "gte"}


@pytest.mark.parametrize("body, params, text", [
    (_lines({"colour": "red"}, {}), "", "key [colour] is not supported in the metadata section"),
    (_lines({}, {"query": {"nope": {}}}), "", "unknown query [nope]"),
    (_lines({}, {}), "?max_concurrent_searches=0", "maxConcurrentSearchRequests must be positive"),
    ("", "", "no requests added"),
    (_lines({}, {}), "?size=3", "unrecognized parameter: [size]"),
])
def test_msearch_refuses_what_it_cannot_read(books, body, params, text) -> None:
    resp = books.post("/_msearch" + params, content=body, headers=NDJSON)
    assert resp.status_code == 400, resp.text
    assert text in resp.json()["error"]["reason"]


def test_msearch_runs_searches_in_a_point_in_time(books) -> None:
    pit = books.post("/books/_pit?keep_alive=1m").json()["id"]
    books.put("/books/_doc/later?refresh=true", json={"n": 0})
    body = _lines({}, {"pit": {"id": pit}, "size": 0}, {}, {"size": 0})
    r = books.post("/_msearch", content=body, headers=NDJSON).json()["responses"]
    assert r[0]["hits"]["total"]["value"] == 7      # the snapshot, not the later document
    assert r[1]["hits"]["total"]["value"] == 8
    with_index = _lines({"index": "books"}, {"pit": {"id": pit}, "size": 0})
    assert books.post("/_msearch", content=with_index, headers=NDJSON).status_code == 400
    books.request("DELETE", "/_pit", json={"id": pit})


def test_msearch_template_fails_a_missing_template_in_its_place(books) -> None:
    body = _lines({}, {"id": "no-such-template"}, {"index": "books"},
                  {"source": {"size": 0}, "params": {}})
    resp = books.post("/_msearch/template", content=body, headers=NDJSON)
    assert resp.status_code == 200
    missing, found = resp.json()["responses"]
    assert missing["status"] == 404
    assert missing["error"]["type"] == "resource_not_found_exception"
    assert found["status"] == 200 and found["hits"]["total"]["value"] == 7


@pytest.mark.parametrize("path", ["/books/_search/", "/books/_doc/1/", "/_cat/indices/",
                                  "/books/_mapping/", "/_nodes/"])
def test_a_trailing_slash_is_served_like_the_path_without_it(books, path) -> None:
    with_slash = books.get(path)
    without = books.get(path.rstrip("/"))
    assert with_slash.status_code == without.status_code == 200
    assert with_slash.headers["content-type"] == without.headers["content-type"]
