"""``POST /{index}/_update/{id}`` with a ``script``, over real HTTP and Ray: the script reads and
writes ``ctx._source``, ``ctx.op`` chooses noop or delete, ``upsert`` and ``scripted_upsert``
create missing documents, and a failing script is Elasticsearch's ``failed to execute script``
wrapping the ``script_exception``."""
from __future__ import annotations

from typing import Any

import httpx
import pytest


@pytest.fixture
def doc(es: httpx.Client) -> httpx.Client:
    es.put("/upd", json={"settings": {"number_of_shards": 2}})
    r = es.put("/upd/_doc/1?refresh=true", json={"n": 1, "tags": ["a"], "name": "x"})
    assert r.status_code == 201, r.text
    return es


def _update(es: httpx.Client, body: dict[str, Any], doc_id: str = "1",
            params: str = "") -> httpx.Response:
    return es.post(f"/upd/_update/{doc_id}{params}", json=body)


def test_a_script_changes_the_source_with_params(doc: httpx.Client) -> None:
    r = _update(doc, {"script": {"source": "ctx._source.n += params.by; "
                                           "ctx._source.tags.add(params.tag)",
                                 "params": {"by": 4, "tag": "b"}}})
    assert r.status_code == 200 and r.json()["result"] == "updated", r.text
    assert r.json()["_version"] == 2
    src = doc.get("/upd/_doc/1").json()["_source"]
    assert src == {"n": 5, "tags": ["a", "b"], "name": "x"}


def test_a_bare_string_script_is_its_source(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.remove('name')"})
    assert r.status_code == 200, r.text
    assert "name" not in doc.get("/upd/_doc/1").json()["_source"]


def test_ctx_op_noop_writes_nothing(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx.op = 'noop'"})
    assert r.json()["result"] == "noop" and r.json()["_version"] == 1, r.text
    assert r.json()["_shards"]["total"] == 0


def test_ctx_op_delete_deletes_the_document(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "if (ctx._source.n == 1) { ctx.op = 'delete' }"})
    assert r.json()["result"] == "deleted", r.text
    assert doc.get("/upd/_doc/1").status_code == 404


def test_a_missing_document_without_upsert_is_document_missing(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.n = 1"}, doc_id="nope")
    assert r.status_code == 404 and r.json()["error"]["type"] == "document_missing_exception"


def test_upsert_creates_the_document_without_running_the_script(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.n += 1", "upsert": {"n": 10}}, doc_id="2")
    assert r.status_code == 201 and r.json()["result"] == "created", r.text
    assert doc.get("/upd/_doc/2").json()["_source"] == {"n": 10}


def test_scripted_upsert_runs_the_script_over_the_upsert(doc: httpx.Client) -> None:
    body = {"script": {"source": "ctx._source.n = (ctx._source.n ?: 0) + params.x",
                       "params": {"x": 3}}, "upsert": {}, "scripted_upsert": True}
    r = _update(doc, body, doc_id="3")
    assert r.json()["result"] == "created", r.text
    assert doc.get("/upd/_doc/3").json()["_source"] == {"n": 3}
    assert _update(doc, body, doc_id="3").json()["result"] == "updated"
    assert doc.get("/upd/_doc/3").json()["_source"] == {"n": 6}


def test_a_runtime_error_is_failed_to_execute_script(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.missing.x = 1"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "illegal_argument_exception"
    assert err["reason"] == "failed to execute script"
    assert err["caused_by"]["type"] == "script_exception"
    assert err["caused_by"]["caused_by"]["type"] == "null_pointer_exception"


def test_a_compile_error_is_failed_to_execute_script_naming_its_position(
        doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.n = nope"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["reason"] == "failed to execute script"
    cause = r.json()["error"]["caused_by"]
    assert cause["type"] == "script_exception" and cause["reason"] == "compile error"
    assert cause["position"]["offset"] == 16 and cause["lang"] == "painless"


def test_another_language_is_refused(doc: httpx.Client) -> None:
    r = _update(doc, {"script": {"source": "1", "lang": "mustache"}})
    assert r.status_code == 400 and "mustache" in r.text


def test_the_lang_url_parameter_must_be_painless(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.n = 2"}, params="?lang=expression")
    assert r.status_code == 400 and "expression" in r.text
    assert _update(doc, {"script": "ctx._source.n = 2"}, params="?lang=painless"
                   ).status_code == 200


def test_script_and_doc_together_are_refused(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.n = 2", "doc": {"n": 3}})
    assert r.status_code == 400 and "script and doc" in r.text


def test_a_broken_script_never_run_does_not_fail_an_upsert(doc: httpx.Client) -> None:
    r = _update(doc, {"script": "ctx._source.n = nope", "upsert": {"n": 4}}, doc_id="4")
    assert r.status_code == 201 and r.json()["result"] == "created", r.text


def test_concurrent_scripted_increments_are_never_lost(doc: httpx.Client) -> None:
    import concurrent.futures
    body = {"script": "ctx._source.n += 1"}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda _: _update(doc, body, params="?retry_on_conflict=20")
                              .status_code, range(8)))
    assert codes == [200] * 8
    assert doc.get("/upd/_doc/1").json()["_source"]["n"] == 9
