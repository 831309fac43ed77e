"""Stored scripts against the real OpenSearch node: the same ``_scripts`` answers (shapes,
statuses, error types and texts) and the same results when a search or an update names a
stored Painless script by id.

The peer node is built without OpenSearch's ``lang-mustache`` module (it refuses ``lang:
mustache``), so a search template is checked by sending the body we render to the peer's
``_search``: the same hits and scores as our ``_search/template``; the rendering itself is
checked by the tables of ``tests/test_search_templates_unit.py``."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import Pair

PLUS = {"script": {"lang": "painless", "source": "doc['n'].value * params.k + doc['uid'].value"}}


@pytest.fixture
def stored(pair: Pair) -> Iterator[Pair]:
    for client in (pair.ours, pair.theirs):
        assert client.put("/_scripts/diff_plus", json=PLUS).status_code == 200
    yield pair
    for client in (pair.ours, pair.theirs):
        client.delete("/_scripts/diff_plus")
        client.delete("/_scripts/diff_bad")


def test_get_and_delete_answer_the_same(stored: Pair) -> None:
    ours, theirs = stored.send("GET", "/_scripts/diff_plus")
    assert ours == theirs
    assert stored.send("GET", "/_scripts/diff_nope")[0] == \
        stored.send("GET", "/_scripts/diff_nope")[1] == (404, {"_id": "diff_nope",
                                                             "found": False})
    ours, theirs = stored.send("DELETE", "/_scripts/diff_nope")
    assert ours[0] == theirs[0] == 404
    assert ours[1]["error"]["type"] == theirs[1]["error"]["type"]
    assert ours[1]["error"]["reason"] == theirs[1]["error"]["reason"]


@pytest.mark.parametrize("path, body", [
    ("/_scripts/diff_bad", {"script": {"source": "1"}}),
    ("/_scripts/diff_bad", {"script": {"lang": "painless"}}),
    ("/_scripts/diff_bad", {"script": {"lang": "expression", "source": "1"}}),
    ("/_scripts/diff_bad", {"scrip": {"lang": "painless", "source": "1"}}),
    ("/_scripts/diff_bad", {"script": {"lang": "painless", "source": "1",
                                       "options": {"a": "b"}}}),
    ("/_scripts/diff_bad/score", {"script": {"lang": "painless", "source": "params.a +"}}),
    ("/_scripts/diff_bad/nope", {"script": {"lang": "painless", "source": "1"}}),
])
def test_a_bad_put_is_refused_with_the_same_error(stored: Pair, path: str,
                                                  body: dict[str, Any]) -> None:
    ours, theirs = stored.send("PUT", path, body)
    assert ours[0] == theirs[0] == 400
    for key in ("type", "reason"):
        assert ours[1]["error"][key] == theirs[1]["error"][key], (ours, theirs)


def _hits(resp: tuple[int, Any]) -> list[tuple[str, Any]]:
    status, body = resp
    assert status == 200, body
    return [(h["_id"], h.get("fields"), h.get("sort")) for h in body["hits"]["hits"]]


def test_a_stored_script_gives_the_same_fields_and_order(stored: Pair) -> None:
    ref = {"id": "diff_plus", "params": {"k": 1000}}
    body = {"size": 12, "query": {"range": {"n": {"gte": 3}}},
            "script_fields": {"v": {"script": ref}},
            "sort": [{"_script": {"type": "number", "order": "desc", "script": ref}}]}
    ours, theirs = stored.send("POST", "/diff/_search", body)
    assert _hits(ours) == _hits(theirs)


def test_a_stored_script_scores_the_same(stored: Pair) -> None:
    body = {"size": 10, "query": {"script_score": {"query": {"match": {"title": "apple"}},
                                                   "script": {"id": "diff_plus",
                                                              "params": {"k": 3}}}}}
    ours, theirs = stored.send("POST", "/diff/_search", body)
    assert [(h["_id"], h["_score"]) for h in ours[1]["hits"]["hits"]] == \
        [(h["_id"], h["_score"]) for h in theirs[1]["hits"]["hits"]]


def test_missing_and_misused_references_fail_alike(stored: Pair) -> None:
    missing = {"script_fields": {"v": {"script": {"id": "diff_nope"}}}}
    ours, theirs = stored.send("POST", "/diff/_search", missing)
    assert ours[0] == theirs[0] == 404
    assert ours[1]["error"]["root_cause"] == theirs[1]["error"]["root_cause"]
    ours, theirs = stored.send("POST", "/diff/_update/d001", {"script": {"id": "diff_nope"}})
    assert ours[0] == theirs[0] == 400
    assert ours[1]["error"]["reason"] == theirs[1]["error"]["reason"]
    assert ours[1]["error"]["caused_by"] == theirs[1]["error"]["caused_by"]
    with_lang = {"script_fields": {"v": {"script": {"id": "diff_plus", "lang": "painless"}}}}
    ours, theirs = stored.send("POST", "/diff/_search", with_lang)
    assert ours[0] == theirs[0] == 400
    assert ours[1]["error"]["reason"] == theirs[1]["error"]["reason"]


@pytest.mark.parametrize("template, params", [
    ({"query": {"match": {"title": "{{q}}"}}, "size": "{{size}}"}, {"q": "apple", "size": 7}),
    ('{"query": {"terms": {"tag": {{#toJson}}tags{{/toJson}}}}, "sort": [{"uid": "asc"}]}',
     {"tags": ["alpha", "beta"]}),
    ('{"query": {"range": {"n": {"gte": {{lo}}{{^lo}}0{{/lo}}, "lte": {{hi}}}}}, '
     '"sort": [{"n": "desc"}, {"uid": "asc"}], "size": 15}', {"hi": 4}),
    ('{"query": {"query_string": {"query": "{{#join delimiter=\' OR \'}}words{{/join '
     'delimiter=\' OR \'}}", "default_field": "body"}}, "size": 10}',
     {"words": ["mango", "kilo"]}),
])
def test_a_template_finds_what_opensearch_finds_for_its_rendering(
        pair: Pair, template: Any, params: dict[str, Any]) -> None:
    """The peer has no mustache: it searches the body we render, which must give the same
    hits (and scores) as our ``_search/template``."""
    r = pair.ours.post("/_render/template", json={"source": template, "params": params})
    assert r.status_code == 200, r.text
    rendered = r.json()["template_output"]
    ours = pair.ours.post("/diff/_search/template", json={"source": template, "params": params})
    theirs = pair.theirs.post("/diff/_search", json=rendered)
    assert ours.status_code == theirs.status_code == 200, (ours.text, theirs.text)
    mine, peer = ours.json()["hits"]["hits"], theirs.json()["hits"]["hits"]
    assert [h["_id"] for h in mine] == [h["_id"] for h in peer]
    assert [h["_score"] or 0.0 for h in mine] == \
        pytest.approx([h["_score"] or 0.0 for h in peer], rel=1e-6)   # null when sorted
    assert ours.json()["hits"]["total"] == theirs.json()["hits"]["total"]
