"""``_bulk`` update items with a ``script``, through the official client's ``helpers.bulk``
over real HTTP and Ray: each item runs as ``POST /{index}/_update/{id}`` with its body would —
``ctx.op`` noop/delete, ``upsert`` and ``scripted_upsert``, stored scripts by ``id``, the
item's ``_source`` and ``if_seq_no`` — and a failing script fails only its item."""
from __future__ import annotations

from typing import Any

import pytest
from elasticsearch import Elasticsearch, helpers

INDEX = "bsu"


@pytest.fixture
def docs(esc: Elasticsearch) -> Elasticsearch:
    esc.indices.create(index=INDEX, settings={"number_of_shards": 2})
    helpers.bulk(esc, ({"_index": INDEX, "_id": str(i), "n": i, "tags": ["a"]}
                       for i in range(1, 4)), refresh=True)
    return esc


META = {"_index", "_id", "_source", "if_seq_no", "if_primary_term", "routing"}


def _ndjson(action: dict[str, Any]) -> list[dict[str, Any]]:
    """An action line (``META`` keys; ``_source`` is the item's source filter) and a body."""
    meta = {k: v for k, v in action.items() if k in META}
    body = {k: v for k, v in action.items() if k not in META and k != "_op_type"}
    return [{action["_op_type"]: meta}, body]


def _bulk(client: Elasticsearch, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items of one ``_bulk`` of ``actions`` (helpers' action dicts), in order."""
    ops = [x for a in actions for x in _ndjson(a)]
    resp = client.bulk(operations=ops, refresh=True)
    return [next(iter(item.values())) for item in resp["items"]]


def _source(client: Elasticsearch, doc_id: str) -> Any:
    return client.get(index=INDEX, id=doc_id)["_source"]


def test_helpers_bulk_runs_scripted_updates_with_params(docs: Elasticsearch) -> None:
    ok, errors = helpers.bulk(docs, ({"_op_type": "update", "_index": INDEX, "_id": str(i),
                                      "script": {"source": "ctx._source.n += params.by",
                                                 "params": {"by": 10}}}
                                     for i in range(1, 4)), refresh=True)
    assert (ok, errors) == (3, [])
    assert [_source(docs, str(i))["n"] for i in range(1, 4)] == [11, 12, 13]


def test_ctx_op_noop_and_delete_give_their_results(docs: Elasticsearch) -> None:
    items = _bulk(docs, [
        {"_op_type": "update", "_index": INDEX, "_id": "1", "script": "ctx.op = 'noop'"},
        {"_op_type": "update", "_index": INDEX, "_id": "2", "script": "ctx.op = 'delete'"},
        {"_op_type": "update", "_index": INDEX, "_id": "3", "script": "ctx._source.n = 0"}])
    assert [(i["status"], i["result"], i["_version"]) for i in items] == \
        [(200, "noop", 1), (200, "deleted", 2), (200, "updated", 2)]
    assert not docs.exists(index=INDEX, id="2")


def test_upsert_and_scripted_upsert_create_missing_documents(docs: Elasticsearch) -> None:
    script = {"source": "ctx._source.n = (ctx._source.n ?: 0) + 5"}
    items = _bulk(docs, [
        {"_op_type": "update", "_index": INDEX, "_id": "u1", "script": script,
         "upsert": {"n": 1}},
        {"_op_type": "update", "_index": INDEX, "_id": "u2", "script": script,
         "upsert": {}, "scripted_upsert": True},
        {"_op_type": "update", "_index": INDEX, "_id": "u2", "script": script,
         "upsert": {}, "scripted_upsert": True}])
    assert [(i["status"], i["result"]) for i in items] == \
        [(201, "created"), (201, "created"), (200, "updated")]
    assert _source(docs, "u1") == {"n": 1} and _source(docs, "u2") == {"n": 10}


def test_a_failing_script_fails_only_its_item(docs: Elasticsearch) -> None:
    items = _bulk(docs, [
        {"_op_type": "update", "_index": INDEX, "_id": "1", "script": "ctx._source.x.y = 1"},
        {"_op_type": "update", "_index": INDEX, "_id": "2", "script": "ctx._source.n = nope"},
        {"_op_type": "update", "_index": INDEX, "_id": "nope", "script": "ctx._source.n = 1"},
        {"_op_type": "update", "_index": INDEX, "_id": "3", "script": "ctx._source.n = 30"}])
    run, compile_, missing, good = items
    assert run["status"] == 400 and run["error"]["type"] == "illegal_argument_exception"
    assert run["error"]["reason"] == "failed to execute script"
    assert run["error"]["caused_by"]["type"] == "script_exception"
    assert compile_["status"] == 400
    assert compile_["error"]["caused_by"]["reason"] == "compile error"
    assert missing["status"] == 404
    assert missing["error"]["type"] == "document_missing_exception"
    assert good["result"] == "updated" and _source(docs, "3")["n"] == 30
    assert _source(docs, "1")["n"] == 1


def test_a_stored_script_id_runs_and_a_missing_one_fails_its_item(docs: Elasticsearch) -> None:
    docs.put_script(id="add", script={"lang": "painless",
                                      "source": "ctx._source.n += params.by"})
    items = _bulk(docs, [
        {"_op_type": "update", "_index": INDEX, "_id": "1",
         "script": {"id": "add", "params": {"by": 100}}},
        {"_op_type": "update", "_index": INDEX, "_id": "2", "script": {"id": "gone"}}])
    assert items[0]["result"] == "updated" and _source(docs, "1")["n"] == 101
    assert items[1]["status"] == 400
    assert items[1]["error"]["reason"] == "failed to execute script"
    assert items[1]["error"]["caused_by"]["type"] == "resource_not_found_exception"


def test_item_source_and_if_seq_no_apply_to_scripted_items(docs: Elasticsearch) -> None:
    seq = docs.get(index=INDEX, id="1")["_seq_no"]
    items = _bulk(docs, [
        {"_op_type": "update", "_index": INDEX, "_id": "1", "_source": {"includes": ["n"]},
         "if_seq_no": seq, "if_primary_term": 1, "script": "ctx._source.n = 7"},
        {"_op_type": "update", "_index": INDEX, "_id": "1", "if_seq_no": seq,
         "if_primary_term": 1, "script": "ctx._source.n = 8"}])
    assert items[0]["get"]["_source"] == {"n": 7}
    assert items[1]["status"] == 409
    assert items[1]["error"]["type"] == "version_conflict_engine_exception"


def test_a_script_writes_after_the_writes_before_it(docs: Elasticsearch) -> None:
    items = _bulk(docs, [
        {"_op_type": "index", "_index": INDEX, "_id": "1", "n": 50},
        {"_op_type": "update", "_index": INDEX, "_id": "1", "script": "ctx._source.n *= 2"},
        {"_op_type": "update", "_index": INDEX, "_id": "1", "script": "ctx._source.n += 1"}])
    assert [i["_version"] for i in items] == [2, 3, 4]
    assert _source(docs, "1")["n"] == 101


def test_the_bulk_source_parameter_is_the_default_of_update_items(docs: Elasticsearch) -> None:
    ops = [{"update": {"_index": INDEX, "_id": "1"}}, {"script": "ctx._source.n = 5"},
           {"update": {"_index": INDEX, "_id": "2", "_source": False}},
           {"script": "ctx._source.n = 6"}]
    items = docs.bulk(operations=ops, source_includes=["n"])["items"]
    assert items[0]["update"]["get"]["_source"] == {"n": 5}
    assert "get" not in items[1]["update"]


def test_an_array_in_an_action_line_is_a_malformed_line(docs: Elasticsearch,
                                                       es: Any) -> None:
    raw = b'{"update": {"_index": "bsu", "_id": "1", "_source": ["n"]}}\n' \
          b'{"script": "ctx._source.n = 1"}\n'
    r = es.post("/_bulk", content=raw, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["reason"] == ("Malformed action/metadata line [1], expected a "
                                           "simple value for field [_source] but found "
                                           "[START_ARRAY]")
