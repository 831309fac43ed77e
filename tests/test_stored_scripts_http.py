"""Stored scripts and search templates over real HTTP (uvicorn + Ray), through the official
``elasticsearch`` and ``opensearch-py`` clients: ``_scripts`` answers as Elasticsearch does, a
stored script works wherever an inline one does, and templates render, search and multi-search
(README "Stored scripts and search templates")."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from elasticsearch import NotFoundError
from elasticsearch import helpers as es_helpers
from opensearchpy import OpenSearch

DOCS = [{"_id": str(i), "n": i, "title": f"book {i}", "tag": "odd" if i % 2 else "even"}
        for i in range(6)]
TEMPLATE = {"query": {"term": {"tag": "{{tag}}"}}, "size": "{{size}}",
            "sort": [{"n": "asc"}]}


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    client.indices.create(index="books", settings={"number_of_shards": 2},
                          mappings={"properties": {"tag": {"type": "keyword"},
                                                   "n": {"type": "integer"},
                                                   "title": {"type": "text"}}})
    es_helpers.bulk(client, [{"_index": "books", **d} for d in DOCS], refresh=True)
    yield client
    for script_id in ("plus", "by_tag", "twice", "bad", "ctx_plus"):
        es.delete(f"/_scripts/{script_id}")
    client.close()


def _ids(resp: Any) -> list[str]:
    return [h["_id"] for h in resp["hits"]["hits"]]


def test_put_get_delete_answer_as_elasticsearch(esc: Elasticsearch, es: httpx.Client) -> None:
    assert esc.put_script(id="plus", script={"lang": "painless",
                                             "source": "doc['n'].value + params.k"}
                          )["acknowledged"] is True
    got = esc.get_script(id="plus")
    assert dict(got) == {"_id": "plus", "found": True, "script": {
        "lang": "painless", "source": "doc['n'].value + params.k"}}
    r = es.get("/_scripts/missing")
    assert r.status_code == 404 and r.json() == {"_id": "missing", "found": False}
    assert esc.delete_script(id="plus")["acknowledged"] is True
    with pytest.raises(NotFoundError) as e:
        esc.delete_script(id="plus")
    assert e.value.body["error"]["type"] == "resource_not_found_exception"
    assert e.value.body["error"]["reason"] == \
        "stored script [plus] does not exist and cannot be deleted"


def test_a_template_object_is_stored_as_its_json_text(es: httpx.Client, esc: Elasticsearch
                                                     ) -> None:
    assert es.put("/_scripts/by_tag", json={"script": {"lang": "mustache", "source": TEMPLATE}}
                  ).status_code == 200
    stored = es.get("/_scripts/by_tag").json()["script"]
    assert stored["lang"] == "mustache" and isinstance(stored["source"], str)
    assert stored["options"] == {"content_type": "application/json"}
    assert '"{{tag}}"' in stored["source"]


@pytest.mark.parametrize("body, error_type, reason", [
    ({"script": {"source": "1"}}, "illegal_argument_exception",
     "must specify lang for stored script"),
    ({"script": {"lang": "painless"}}, "illegal_argument_exception",
     "must specify source for stored script"),
    ({"script": {"lang": "expression", "source": "1"}}, "illegal_argument_exception",
     "unable to put stored script with unsupported lang [expression]"),
    ({"scrip": {"lang": "painless", "source": "1"}}, "parsing_exception",
     "unexpected field [scrip], expected [script]"),
    ({"script": {"lang": "painless", "source": "params.a +"}}, "script_exception",
     "compile error"),
])
def test_a_bad_stored_script_is_refused_at_put(es: httpx.Client, esc: Elasticsearch,
                                               body: dict[str, Any], error_type: str,
                                               reason: str) -> None:
    r = es.put("/_scripts/bad", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["type"] == error_type and r.json()["error"]["reason"] == reason
    assert es.get("/_scripts/bad").status_code == 404


def test_an_unknown_context_is_refused_by_name(es: httpx.Client, esc: Elasticsearch) -> None:
    r = es.put("/_scripts/bad/nope", json={"script": {"lang": "painless", "source": "1"}})
    assert r.status_code == 400
    assert r.json()["error"]["caused_by"]["reason"] == "Unknown context [nope]"
    assert es.put("/_scripts/bad/score", json={"script": {"lang": "painless", "source": "1"}}
                  ).status_code == 200


def test_a_stored_script_works_where_an_inline_one_does(esc: Elasticsearch) -> None:
    esc.put_script(id="plus", script={"lang": "painless", "source": "doc['n'].value + params.k"})
    ref = {"id": "plus", "params": {"k": 10}}
    r = esc.search(index="books", query={"term": {"tag": "odd"}}, sort=[{"n": "asc"}],
                   script_fields={"p": {"script": ref}})
    assert [h["fields"]["p"] for h in r["hits"]["hits"]] == [[11], [13], [15]]
    r = esc.search(index="books", query={"script_score": {"query": {"match_all": {}},
                                                          "script": ref}}, size=2)
    assert _ids(r) == ["5", "4"] and r["hits"]["hits"][0]["_score"] == 15.0
    r = esc.search(index="books", query={"function_score": {"functions": [
        {"script_score": {"script": ref}}], "boost_mode": "replace"}}, size=1)
    assert _ids(r) == ["5"]
    r = esc.search(index="books", sort=[{"_script": {"type": "number", "order": "desc",
                                                     "script": ref}}], size=2)
    assert _ids(r) == ["5", "4"]


def test_a_stored_script_updates_documents(esc: Elasticsearch) -> None:
    esc.put_script(id="ctx_plus", script={"lang": "painless",
                                          "source": "ctx._source.n += params.k"})
    ref = {"id": "ctx_plus", "params": {"k": 100}}
    esc.update(index="books", id="1", script=ref, refresh=True)
    assert esc.get(index="books", id="1")["_source"]["n"] == 101
    r = esc.update_by_query(index="books", query={"term": {"tag": "even"}}, script=ref,
                            refresh=True)
    assert r["updated"] == 3
    assert esc.get(index="books", id="2")["_source"]["n"] == 102



def test_a_missing_stored_script_is_elasticsearchs_error(es: httpx.Client,
                                                         esc: Elasticsearch) -> None:
    r = es.post("/books/_update/1", json={"script": {"id": "gone"}})
    assert r.status_code == 400 and r.json()["error"]["reason"] == "failed to execute script"
    assert r.json()["error"]["caused_by"] == {
        "type": "resource_not_found_exception",
        "reason": "unable to find script [gone] in cluster state"}
    r = es.post("/books/_search", json={"script_fields": {"x": {"script": {"id": "gone"}}}})
    assert r.status_code == 404
    assert r.json()["error"]["root_cause"][0]["reason"] == \
        "unable to find script [gone] in cluster state"
    esc.put_script(id="plus", script={"lang": "painless", "source": "1"})
    r = es.post("/books/_search", json={"script_fields": {"x": {"script": {
        "id": "plus", "lang": "painless"}}}})
    assert r.status_code == 400
    assert r.json()["error"]["reason"] == "illegally specified <lang> for a stored script"


def test_search_template_inline_and_stored(esc: Elasticsearch) -> None:
    r = esc.search_template(index="books", source=TEMPLATE, params={"tag": "odd", "size": 2})
    assert _ids(r) == ["1", "3"]
    esc.put_script(id="by_tag", script={"lang": "mustache", "source": TEMPLATE})
    r = esc.search_template(index="books", id="by_tag", params={"tag": "even", "size": 5})
    assert _ids(r) == ["0", "2", "4"]


def test_search_template_explain_and_profile(es: httpx.Client, esc: Elasticsearch) -> None:
    body = {"source": {"query": {"match": {"title": "{{q}}"}}}, "params": {"q": "book"},
            "explain": True}
    hit = es.post("/books/_search/template", json=body).json()["hits"]["hits"][0]
    assert "_explanation" in hit
    r = es.post("/books/_search/template?profile=true", json={**body, "explain": False})
    assert "profile" in r.json()
    hit = es.post("/books/_search/template?explain=true",
                  json={**body, "explain": False}).json()["hits"]["hits"][0]
    assert "_explanation" in hit
    r = es.post("/books/_search/template?q=x", json=body)
    assert r.status_code == 400 and "[q]" in r.json()["error"]["reason"]


def test_render_template_returns_the_rendered_body(esc: Elasticsearch, es: httpx.Client
                                                   ) -> None:
    r = esc.render_search_template(source=TEMPLATE, params={"tag": 'a"b', "size": 3})
    # a quoted "{{size}}" stays a string, as in Elasticsearch (the search reads "3" as 3)
    assert r["template_output"] == {"query": {"term": {"tag": 'a"b'}}, "size": "3",
                                    "sort": [{"n": "asc"}]}
    esc.put_script(id="by_tag", script={"lang": "mustache", "source": TEMPLATE})
    r = es.post("/_render/template/by_tag", json={"params": {"tag": "x", "size": 1}})
    assert r.json()["template_output"]["query"] == {"term": {"tag": "x"}}


def test_a_template_that_does_not_render_json_is_a_400(es: httpx.Client,
                                                       esc: Elasticsearch) -> None:
    r = es.post("/_render/template", json={"source": "{\"size\": {{n}} ", "params": {"n": 1}})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "x_content_parse_exception"
    r = es.post("/_search/template", json={"id": "gone"})
    assert r.status_code == 404
    assert r.json()["error"]["reason"] == "unable to find script [gone] in cluster state"
    r = es.post("/_search/template", json={"source": "{}", "nope": 1})
    assert r.status_code == 400 and "[nope]" in r.json()["error"]["reason"]


def test_msearch_template_answers_each_item_in_its_place(esc: Elasticsearch) -> None:
    esc.put_script(id="by_tag", script={"lang": "mustache", "source": TEMPLATE})
    r = esc.msearch_template(index="books", search_templates=[
        {}, {"id": "by_tag", "params": {"tag": "odd", "size": 1}},
        {}, {"source": "{\"query\": {{x}", "params": {}},
        {"index": "books"}, {"source": TEMPLATE, "params": {"tag": "even", "size": 2}},
        {}, {"id": "gone"},
    ], max_concurrent_searches=2)
    first, broken, third, missing = r["responses"]
    assert _ids(first) == ["1"] and first["status"] == 200
    assert broken["status"] == 400 and "error" in broken
    assert _ids(third) == ["0", "2"]
    assert missing["status"] == 404
    assert missing["error"]["type"] == "resource_not_found_exception"


def test_opensearch_py_client(esc: Elasticsearch, base_url: str) -> None:
    client = OpenSearch(hosts=[base_url], timeout=60)
    try:
        assert client.put_script(id="twice", body={"script": {
            "lang": "painless", "source": "doc['n'].value * 2"}})["acknowledged"]
        assert client.get_script(id="twice")["script"]["source"] == "doc['n'].value * 2"
        r = client.search(index="books", body={"query": {"term": {"tag": "odd"}},
                                               "sort": [{"n": "asc"}], "script_fields": {
            "t": {"script": {"id": "twice"}}}})
        assert [h["fields"]["t"] for h in r["hits"]["hits"]] == [[2], [6], [10]]
        r = client.search_template(index="books", body={"source": TEMPLATE,
                                                        "params": {"tag": "odd", "size": 1}})
        assert _ids(r) == ["1"]
        r = client.render_search_template(body={"source": TEMPLATE,
                                                "params": {"tag": "q", "size": 4}})
        assert r["template_output"]["size"] == "4"
        r = client.msearch_template(index="books", body=[
            {}, {"source": TEMPLATE, "params": {"tag": "even", "size": 1}}])
        assert _ids(r["responses"][0]) == ["0"]
        assert client.delete_script(id="twice")["acknowledged"]
    finally:
        client.close()


def test_msearch_items_name_stored_scripts_and_fail_alone(es: httpx.Client,
                                                         esc: Elasticsearch) -> None:
    esc.put_script(id="plus", script={"lang": "painless", "source": "doc['n'].value + params.k"})
    body = ('{}\n{"query": {"ids": {"values": ["2"]}}, "script_fields": {"p": {"script": '
            '{"id": "plus", "params": {"k": 1}}}}}\n'
            '{}\n{"script_fields": {"p": {"script": {"id": "gone"}}}}\n')
    r = es.post("/books/_msearch", content=body,
                headers={"content-type": "application/x-ndjson"}).json()["responses"]
    assert r[0]["hits"]["hits"][0]["fields"]["p"] == [3]
    assert r[1]["status"] == 404 and r[1]["error"]["type"] == "resource_not_found_exception"


def test_render_by_path_id_wins_over_a_body_template(es: httpx.Client,
                                                     esc: Elasticsearch) -> None:
    esc.put_script(id="by_tag", script={"lang": "mustache", "source": TEMPLATE})
    r = es.post("/_render/template/by_tag", json={"source": {"size": 0},
                                                  "params": {"tag": "t", "size": 1}})
    assert r.json()["template_output"]["query"] == {"term": {"tag": "t"}}
