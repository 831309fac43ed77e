"""``preference``: ``_shards:`` restricts a search, ``_count``, scroll and point-in-time search to
those shards; the other forms choose among a shard's copies, stably; what Elasticsearch refuses
is refused with its text. Pure rules, then the real server (Ray + uvicorn)."""
from __future__ import annotations

import json

import httpx
import pytest

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.indices.preference import Preference, order_copies, parse_preference


def test_shards_and_a_following_preference_are_both_read() -> None:
    assert parse_preference("_shards:0,1|_local") == Preference(frozenset({0, 1}), "local")
    assert parse_preference("_shards:2") == Preference(frozenset({2}))
    assert parse_preference("_shards:1|abc") == Preference(frozenset({1}), "custom", key="abc")
    assert parse_preference("_prefer_nodes:a,b") == Preference(None, "prefer_nodes", ("a", "b"))


@pytest.mark.parametrize("text,es_type,reason", [
    ("_shards:x", "number_format_exception", 'For input string: "x"'),
    ("_primary", "illegal_argument_exception", "no Preference for [_primary]"),
    ("_shards:0|_nope", "illegal_argument_exception", "no Preference for [_nope]"),
])
def test_what_elasticsearch_refuses_is_refused_with_its_text(text: str, es_type: str,
                                                               reason: str) -> None:
    with pytest.raises(IllegalArgument) as e:
        parse_preference(text)
    assert e.value.es_type == es_type and e.value.reason == reason


def test_a_custom_string_always_picks_the_same_copies() -> None:
    copies = [(0, "n1"), (1, "n2"), (2, "n3")]
    pref = parse_preference("user-42")
    first = [order_copies(pref, copies, f"[i][{s}]", "n1") for s in range(4)]
    assert first == [order_copies(pref, copies, f"[i][{s}]", "n1") for s in range(4)]
    assert all(sorted(o) == [0, 1, 2] for o in first)
    starts = {order_copies(parse_preference(f"u{k}"), copies, "[i][0]", None)[0]
              for k in range(30)}
    assert starts == {0, 1, 2}     # different keys spread over the copies


def test_local_and_node_preferences_order_or_restrict_copies() -> None:
    copies = [(0, "n1"), (1, "n2")]
    assert order_copies(parse_preference("_local"), copies, "[i][0]", "n2") == [1, 0]
    assert order_copies(parse_preference("_only_local"), copies, "[i][0]", "n2") == [1]
    assert order_copies(parse_preference("_prefer_nodes:n2"), copies, "[i][0]", None) == [1, 0]
    assert order_copies(parse_preference("_only_nodes:n1"), copies, "[i][0]", None) == [0]
    assert order_copies(parse_preference("_shards:1"), copies, "[i][0]", None) is None
    with pytest.raises(IllegalArgument, match=r"no data nodes with criteria \[zz\]"):
        order_copies(parse_preference("_only_nodes:zz"), copies, "[i][0]", None)


# --------------------------------------------------------------------------- the server

@pytest.fixture
def pidx(es: httpx.Client) -> httpx.Client:
    es.put("/p", json={"settings": {"number_of_shards": 3}})
    lines = []
    for i in range(30):
        lines += [json.dumps({"index": {"_index": "p", "_id": str(i)}}), json.dumps({"n": i})]
    r = es.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert not r.json()["errors"]
    return es


def _ids(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {h["_id"] for h in r.json()["hits"]["hits"]}


def test_shards_with_a_following_preference_restricts_search_scroll_and_pit(
        pidx: httpx.Client) -> None:
    one = _ids(pidx.get("/p/_search?size=100&preference=_shards:1"))
    r = pidx.get("/p/_search?size=100&preference=_shards:0,1|_local")
    assert r.json()["_shards"]["total"] == 2 and one < _ids(r)
    s = pidx.post("/p/_search?scroll=1m&preference=_shards:1", json={"size": 100})
    assert s.json()["_shards"]["total"] == 1 and _ids(s) == one
    pit = pidx.post("/p/_pit?keep_alive=1m").json()["id"]
    r = pidx.post("/_search?preference=_shards:1", json={"size": 100, "pit": {"id": pit}})
    assert r.json()["_shards"]["total"] == 1 and _ids(r) == one
    assert pidx.get("/p/_count?preference=_shards:1|abc").json()["count"] == len(one)


def test_a_shard_number_the_index_does_not_have_selects_no_shard(pidx: httpx.Client) -> None:
    r = pidx.get("/p/_search?preference=_shards:7")
    assert r.status_code == 200 and r.json()["_shards"]["total"] == 0


def test_a_custom_preference_answers_the_same_every_time(pidx: httpx.Client) -> None:
    answers = {json.dumps(pidx.get("/p/_search?size=5&sort=n&preference=u1").json()["hits"])
               for _ in range(3)}
    assert len(answers) == 1


@pytest.mark.parametrize("pref,reason", [("_primary", "no Preference for [_primary]"),
                                         ("_shards:a", 'For input string: "a"')])
def test_a_bad_preference_is_a_400(pidx: httpx.Client, pref: str, reason: str) -> None:
    for path in ("/p/_search", "/p/_count"):
        r = pidx.get(path, params={"preference": pref})
        assert r.status_code == 400 and r.json()["error"]["reason"] == reason, r.text
