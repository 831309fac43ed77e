"""Index management against the real OpenSearch node: aliases (their listing, filter-alias
search results, atomic actions and their errors), ``_cat/aliases``, the shape of ``_stats``,
and what a closed index answers. Both systems hold the ``diff`` corpus (``conftest.py``)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from .corpus import INDEX

FILTER = {"terms": {"tag": ["alpha", "gamma"]}}


def _both(pair, method: str, path: str, body=None, params=None):
    ours, theirs = pair.send(method, path, body, params)
    return ours, theirs


@pytest.fixture
def aliased(pair) -> Iterator[None]:
    """``diff-f`` (a filter alias) and ``diff-r`` (routing) on ``diff`` in both systems."""
    actions = {"actions": [{"add": {"index": INDEX, "alias": "diff-f", "filter": FILTER}},
                           {"add": {"index": INDEX, "alias": "diff-r", "index_routing": "a",
                                    "search_routing": "a,b"}}]}
    ours, theirs = _both(pair, "POST", "/_aliases", actions)
    assert ours[0] == theirs[0] == 200, (ours, theirs)
    yield
    _both(pair, "POST", "/_aliases", {"actions": [
        {"remove": {"index": INDEX, "aliases": ["diff-f", "diff-r"], "must_exist": False}}]})


def test_alias_listings_agree(pair, aliased):
    for path in (f"/{INDEX}/_alias", "/_alias/diff-f", f"/{INDEX}/_alias/diff-*"):
        ours, theirs = _both(pair, "GET", path)
        assert ours == theirs, path


def test_a_filter_alias_finds_what_opensearch_finds(pair, aliased):
    body = {"query": {"match": {"title": "apple"}}, "size": 50, "sort": ["n"]}
    ours, theirs = _both(pair, "POST", "/diff-f/_search", body)
    assert ours[0] == theirs[0] == 200
    assert ours[1]["hits"]["total"] == theirs[1]["hits"]["total"]
    assert [h["_id"] for h in ours[1]["hits"]["hits"]] == \
        [h["_id"] for h in theirs[1]["hits"]["hits"]]
    ours, theirs = _both(pair, "GET", "/diff-f/_count")
    assert ours[1]["count"] == theirs[1]["count"] > 0
    # named also directly: unfiltered
    ours, theirs = _both(pair, "GET", f"/diff-f,{INDEX}/_count")
    assert ours[1]["count"] == theirs[1]["count"] == 160


def test_cat_aliases_agree(pair, aliased):
    ours, theirs = _both(pair, "GET", "/_cat/aliases/diff-*",
                         params={"format": "json", "s": "alias"})
    assert ours == theirs


def test_alias_errors_agree(pair, aliased):
    cases = [("POST", "/_aliases", {"actions": [{"remove": {"index": INDEX, "alias": "nope",
                                                            "must_exist": True}}]}),
             ("POST", "/_aliases", {"actions": [{"add": {"index": INDEX, "alias": "x"}},
                                                {"add": {"index": "missing", "alias": "y"}}]}),
             ("PUT", f"/{INDEX}/_alias/{INDEX}", None),
             ("PUT", f"/{INDEX}/_alias/bad*", None)]
    for method, path, body in cases:
        ours, theirs = _both(pair, method, path, body)
        assert ours[0] == theirs[0], (path, ours, theirs)
        assert ours[1]["error"]["type"] == theirs[1]["error"]["type"], (path, ours, theirs)
    ours, theirs = _both(pair, "GET", "/_alias/x")   # the failed batch added nothing
    assert ours[0] == theirs[0] == 404


def test_a_missing_alias_is_a_404_with_the_same_body(pair, aliased):
    ours, theirs = _both(pair, "GET", "/_alias/never-made")
    assert ours == theirs


def test_stats_shape_agrees(pair):
    ours, theirs = _both(pair, "GET", f"/{INDEX}/_stats")
    assert ours[0] == theirs[0] == 200
    assert set(ours[1]) == set(theirs[1]) == {"_shards", "_all", "indices"}
    mine, their = ours[1]["indices"][INDEX]["primaries"], theirs[1]["indices"][INDEX]["primaries"]
    for group, values in mine.items():
        assert group in their, group
        shared = {"store": {"size_in_bytes", "reserved_in_bytes"}}.get(group, set(values))
        assert shared <= set(their[group]) | {"total_data_set_size_in_bytes"}, group
    assert mine["docs"]["count"] == their["docs"]["count"] == 160
    ours, theirs = _both(pair, "GET", "/_stats/fieldata")
    assert ours == theirs


def test_a_closed_index_answers_as_opensearch(pair):
    for client in (pair.ours, pair.theirs):
        client.delete("/shut")
        assert client.put("/shut", json={"settings": {"number_of_replicas": 0}}).status_code \
            == 200
    try:
        ours, theirs = _both(pair, "POST", "/shut/_close")
        assert ours[0] == theirs[0] == 200
        for method, path, body in (("POST", "/shut/_search", {}), ("GET", "/shut/_count", None),
                                   ("PUT", "/shut/_doc/1", {"a": 1})):
            ours, theirs = _both(pair, method, path, body)
            assert ours[0] == theirs[0] == 400, (path, ours, theirs)
            assert ours[1]["error"]["type"] == theirs[1]["error"]["type"] == \
                "index_closed_exception"
            assert ours[1]["error"]["reason"] == theirs[1]["error"]["reason"]
        ours, theirs = _both(pair, "GET", "/_cat/indices/shut", params={"format": "json",
                                                                        "h": "index,status"})
        assert ours == theirs
        ours, theirs = _both(pair, "POST", "/shut/_open")
        assert ours == theirs
    finally:
        for client in (pair.ours, pair.theirs):
            client.delete("/shut")
