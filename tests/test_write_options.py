"""Write options for features this server does not have (ingest pipelines, data streams,
dynamic templates) are refused by name, never accepted and ignored; ``require_alias`` is
applied (a write whose target is not an alias fails as Elasticsearch's does)."""
from __future__ import annotations

import json

import httpx
import pytest


@pytest.fixture
def wo(es: httpx.Client) -> httpx.Client:
    es.put("/wo", json={"aliases": {"wo_alias": {"is_write_index": True}}})
    yield es
    es.delete("/wo")


def _bulk(es: httpx.Client, lines: list[dict], params: str = "") -> dict:
    body = "\n".join(json.dumps(x) for x in lines) + "\n"
    r = es.post(f"/_bulk?refresh=true{params}", content=body,
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("params, text", [
    ("pipeline=p1", "pipeline with id [p1] does not exist"),
    ("require_data_stream=true", "[require_data_stream] is not supported"),
])
def test_an_ingest_option_on_a_write_is_refused_naming_it(wo: httpx.Client, params: str,
                                                           text: str) -> None:
    r = wo.put(f"/wo/_doc/1?{params}", json={"a": 1})
    assert r.status_code == 400 and text in r.text, r.text
    r = wo.post(f"/_bulk?{params}", content='{"index":{"_index":"wo"}}\n{"a":1}\n',
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 400 and text in r.text, r.text
    assert wo.get("/wo/_count").json()["count"] == 0


def test_a_bulk_item_asking_for_a_pipeline_or_dynamic_templates_fails_alone(wo) -> None:
    out = _bulk(wo, [{"index": {"_index": "wo", "_id": "1", "pipeline": "p"}}, {"a": 1},
                     {"index": {"_index": "wo", "_id": "2",
                                "dynamic_templates": {"a": "t"}}}, {"a": 2},
                     {"index": {"_index": "wo", "_id": "3"}}, {"a": 3}])
    first, second, third = (next(iter(i.values())) for i in out["items"])
    assert "pipeline with id [p] does not exist" in first["error"]["reason"]
    assert "[dynamic_templates]" in second["error"]["reason"]
    assert third["status"] == 201
    assert wo.get("/wo/_count").json()["count"] == 1


def test_require_alias_lets_a_write_through_an_alias_and_fails_one_to_an_index(wo) -> None:
    ok = wo.put("/wo_alias/_doc/1?require_alias=true&refresh=true", json={"a": 1})
    assert ok.status_code == 201 and ok.json()["_index"] == "wo", ok.text
    bad = wo.put("/wo/_doc/2?require_alias=true", json={"a": 2})
    assert bad.status_code == 404, bad.text
    assert "[require_alias] request flag is [true] and [wo] is not an alias" in bad.text
    out = _bulk(wo, [{"index": {"_index": "wo", "_id": "3"}}, {"a": 3},
                     {"index": {"_index": "wo_alias", "_id": "4"}}, {"a": 4},
                     {"index": {"_index": "wo", "_id": "5", "require_alias": False}}, {"a": 5}],
                "&require_alias=true")
    statuses = [next(iter(i.values()))["status"] for i in out["items"]]
    assert statuses == [404, 201, 201]
    assert wo.get("/wo/_count").json()["count"] == 3


def test_a_bulk_type_is_accepted_only_as_the_one_type_there_is(wo: httpx.Client) -> None:
    out = _bulk(wo, [{"index": {"_index": "wo", "_type": "_doc", "_id": "1"}}, {"a": 1}])
    assert next(iter(out["items"][0].values()))["status"] == 201
    r = wo.post("/_bulk", content='{"index":{"_index":"wo","_type":"book","_id":"2"}}\n{"a":2}\n',
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 400 and "unknown parameter [_type]" in r.text, r.text


def test_require_alias_on_update_writes_through_the_alias_and_refuses_an_index(
        wo: httpx.Client, base_url: str) -> None:
    from elasticsearch import Elasticsearch, NotFoundError
    esc = Elasticsearch(base_url, request_timeout=60)
    esc.index(index="wo", id="1", document={"a": 1}, refresh=True)
    out = esc.update(index="wo_alias", id="1", doc={"b": 2}, require_alias=True, refresh=True)
    assert out["_index"] == "wo" and out["result"] == "updated"
    assert esc.get(index="wo", id="1")["_source"] == {"a": 1, "b": 2}
    with pytest.raises(NotFoundError) as e:
        esc.update(index="wo", id="1", doc={"c": 3}, require_alias=True)
    assert e.value.body["error"]["type"] == "index_not_found_exception"
    assert e.value.body["error"]["reason"] == (
        "no such index [wo] and [require_alias] request flag is [true] and [wo] is not an alias")
    with pytest.raises(NotFoundError):   # nothing is auto-created on the way
        esc.update(index="wo_new", id="1", doc={"c": 3}, doc_as_upsert=True, require_alias=True)
    assert wo.head("/wo_new").status_code == 404


def test_require_alias_on_a_scripted_update_is_applied_too(wo: httpx.Client) -> None:
    wo.put("/wo/_doc/1?refresh=true", json={"n": 1})
    script = {"script": {"source": "ctx._source.n += 1"}}
    assert wo.post("/wo_alias/_update/1?require_alias=true", json=script).status_code == 200
    bad = wo.post("/wo/_update/1?require_alias=true", json=script)
    assert bad.status_code == 404 and "is not an alias" in bad.text, bad.text
    assert wo.get("/wo/_doc/1").json()["_source"] == {"n": 2}


def test_require_alias_on_bulk_update_items(wo: httpx.Client) -> None:
    wo.put("/wo/_doc/1?refresh=true", json={"a": 1})
    out = _bulk(wo, [{"update": {"_index": "wo_alias", "_id": "1", "require_alias": True}},
                     {"doc": {"b": 1}},
                     {"update": {"_index": "wo", "_id": "1", "require_alias": True}},
                     {"doc": {"c": 1}},
                     {"update": {"_index": "wo", "_id": "1"}}, {"doc": {"d": 1}}])
    items = [i["update"] for i in out["items"]]
    assert [i["status"] for i in items] == [200, 404, 200]
    assert items[0]["_index"] == "wo"
    assert items[1]["error"]["type"] == "index_not_found_exception"
    assert wo.get("/wo/_doc/1").json()["_source"] == {"a": 1, "b": 1, "d": 1}
