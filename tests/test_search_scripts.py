"""Search-time scripts over real HTTP and Ray: ``script_fields`` computed for the page's hits
from ``doc['f']`` doc values, ``params`` and ``params['_source']``; failures are 400s in
Elasticsearch's shape unless ``ignore_failure``."""
from __future__ import annotations

from typing import Any

import httpx
import pytest


@pytest.fixture
def shop(es: httpx.Client) -> httpx.Client:
    es.put("/shop", json={"settings": {"number_of_shards": 2}, "mappings": {"properties": {
        "price": {"type": "double"}, "qty": {"type": "integer"}, "tags": {"type": "keyword"},
        "name": {"type": "text", "fields": {"raw": {"type": "keyword"}}}}}})
    for i, (price, qty, tags) in enumerate([(2.5, 4, ["b", "a"]), (10.0, 1, []),
                                            (1.0, 7, ["c"])]):
        es.put(f"/shop/_doc/{i}", json={"price": price, "qty": qty, "tags": tags,
                                        "name": f"Item {i}"})
    es.post("/shop/_refresh")
    return es


def _fields(es: httpx.Client, script_fields: dict[str, Any], **body: Any) -> dict[str, Any]:
    r = es.post("/shop/_search", json={"sort": [{"qty": "asc"}], "script_fields": script_fields,
                                       **body})
    assert r.status_code == 200, r.text
    return {h["_id"]: h.get("fields", {}) for h in r.json()["hits"]["hits"]}


def test_script_fields_compute_from_doc_values_and_params(shop: httpx.Client) -> None:
    got = _fields(shop, {"total": {"script": {"source": "doc['price'].value * doc['qty'].value"
                                                        " * params.rate", "params": {"rate": 2}}},
                         "n_tags": {"script": "doc['tags'].size()"}})
    assert got["0"] == {"total": [20.0], "n_tags": [2]}
    assert got["1"] == {"total": [20.0], "n_tags": [0]}
    assert got["2"] == {"total": [14.0], "n_tags": [1]}


def test_doc_values_are_sorted_and_multi_fields_read_their_parent(shop: httpx.Client) -> None:
    got = _fields(shop, {"first": {"script": "doc['tags'].size() > 0 ? doc['tags'][0] : null"},
                         "raw": {"script": "doc['name.raw'].value"}})
    assert got["0"] == {"first": ["a"], "raw": ["Item 0"]}
    assert got["1"]["first"] == [None]


def test_script_fields_read_the_source_through_params(shop: httpx.Client) -> None:
    got = _fields(shop, {"upper": {"script": "params['_source']['name'].toUpperCase()"}})
    assert got["2"] == {"upper": ["ITEM 2"]}


def test_a_text_field_has_no_doc_values(shop: httpx.Client) -> None:
    r = shop.post("/shop/_search", json={"script_fields": {"x": {"script": "doc['name'].value"}}})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "search_phase_execution_exception"
    assert err["root_cause"][0]["type"] == "script_exception"
    assert "Fielddata is disabled" not in r.text and "Text fields are not optimised" in r.text


def test_a_missing_value_fails_unless_ignore_failure(shop: httpx.Client) -> None:
    script = {"script": "doc['tags'].value"}
    r = shop.post("/shop/_search", json={"script_fields": {"t": script}})
    assert r.status_code == 400 and "doesn't have a value" in r.text
    got = _fields(shop, {"t": {**script, "ignore_failure": True}})
    assert got["1"] == {} and got["0"] == {"t": ["a"]}


def test_a_compile_error_in_a_script_field_is_a_400(shop: httpx.Client) -> None:
    r = shop.post("/shop/_search", json={"script_fields": {"x": {"script": "doc['qty'].value +"}}})
    assert r.status_code == 400 and r.json()["error"]["type"] == "script_exception"


def test_the_index_limit_on_script_fields_holds(shop: httpx.Client) -> None:
    shop.put("/shop/_settings", json={"index": {"max_script_fields": 1}})
    r = shop.post("/shop/_search", json={"script_fields": {"a": {"script": "1"},
                                                           "b": {"script": "2"}}})
    assert r.status_code == 400 and "too many script_fields" in r.text
