"""``search_after`` pages read from a query's cached order (``engine/after_page.py``) equal the
matching path's pages, and never outlive their snapshot.

In process (``LocalBackend``: the real coordinator and shard code, no Ray): the rule is about the
shard's answer, whatever carries it.
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

WORDS = ["red", "fox", "dog", "red fox", "red red dog"]


async def _cluster(docs: list[dict[str, Any]], shards: int) -> Coordinator:
    c = Coordinator(LocalBackend())
    c.create_index("d", {"settings": {"number_of_shards": shards,
                                      "max_result_window": 100_000},
                         "mappings": {"properties": {"tag": {"type": "keyword"},
                                                     "n": {"type": "long"},
                                                     "text": {"type": "text"}}}})
    half = max(1, len(docs) // 2)   # two refreshes: more than one segment
    for k in range(0, len(docs), half):
        await c.bulk([{"action": "index", "index": "d", "id": str(i), "source": d}
                      for i, d in enumerate(docs[k:k + half], start=k)], refresh=True)
    return c


def _ids(resp: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(h["_id"], h["_score"], h.get("sort")) for h in resp["hits"]["hits"]]


def _cached_orders(c: Coordinator) -> int:
    return sum(len(s.core.__dict__.get("_sorted_cache", {}))
               for s in c.indices["d"].shards)


async def _walk(c: Coordinator, body: dict[str, Any], size: int, repeat: int
                ) -> list[list[tuple[str, Any, Any]]]:
    """Every page of ``body`` by ``search_after``, each asked ``repeat`` times (later asks are
    served by the cached order); all asks of a page must agree."""
    pages, after = [], None
    for _ in range(200):
        b = dict(body, size=size, **({"search_after": after} if after is not None else {}))
        got = [await c.search(parse_search(("d",), {}, dict(b))) for _ in range(repeat)]
        assert all(_ids(g) == _ids(got[0]) for g in got)
        assert all(g["hits"]["total"] == got[0]["hits"]["total"] for g in got)
        assert all(g["hits"]["max_score"] == got[0]["hits"]["max_score"] for g in got)
        if not got[0]["hits"]["hits"]:
            return pages
        pages.append(_ids(got[0]))
        after = got[0]["hits"]["hits"][-1]["sort"]
    raise AssertionError("the walk did not end")


doc = st.fixed_dictionaries({}, optional={
    "tag": st.one_of(st.sampled_from(["a", "b", "bb", "", "é"]),
                     st.lists(st.sampled_from(["a", "q"]), min_size=1, max_size=2)),
    "n": st.integers(-3, 3), "text": st.sampled_from(WORDS)})
SORTS = [[{"_score": "desc"}, {"_doc": "asc"}],
         [{"tag": {"order": "desc", "missing": "_first"}}, {"n": "asc"}],
         [{"tag": "asc"}, {"_doc": "desc"}],
         [{"n": {"order": "desc", "missing": "_last"}}, {"_score": "asc"}, {"_doc": "asc"}],
         [{"_doc": "asc"}]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(doc, min_size=0, max_size=70), shards=st.integers(1, 3),
       sort=st.sampled_from(SORTS), size=st.integers(1, 9),
       query=st.sampled_from([None, {"match": {"text": "red"}}, {"match": {"text": "fox dog"}}]))
def test_search_after_pages_from_the_cached_order_equal_the_matching_path(
        docs, shards, sort, size, query) -> None:
    body: dict[str, Any] = {"sort": sort, "track_scores": True}
    if query is not None:
        body["query"] = query

    async def run() -> tuple[list[Any], list[Any], list[Any]]:
        c = await _cluster(docs, shards)
        walked = await _walk(c, body, size, repeat=3)
        everything = await c.search(parse_search(("d",), {}, dict(body, size=200)))
        fresh = await _walk(await _cluster(docs, shards), body, size, repeat=1)
        return walked, fresh, _ids(everything)

    walked, fresh, everything = asyncio.run(run())
    assert walked == fresh
    if "_doc" in sort[-1]:   # a unique tie-break: the walk is every hit once, in order
        assert [h for page in walked for h in page] == everything
    else:   # rows tied with a page's last hit on every key are skipped, as in Elasticsearch
        assert {h[0] for page in walked for h in page} <= {h[0] for h in everything}


def test_a_query_paged_twice_by_search_after_is_served_from_one_cached_order() -> None:
    docs = [{"n": i % 7, "text": WORDS[i % len(WORDS)]} for i in range(300)]
    body = {"query": {"match": {"text": "red"}}, "sort": [{"_score": "desc"}, {"_doc": "asc"}]}

    async def run() -> tuple[int, int, list[Any]]:
        c = await _cluster(docs, 2)
        first = await _walk(c, body, 10, repeat=1)
        before = _cached_orders(c)
        second = await _walk(c, body, 10, repeat=1)
        one_page = await c.search(parse_search(("d",), {}, dict(body, size=1000)))
        return before, _cached_orders(c), [first, second, _ids(one_page)]

    before, after, (first, second, one_page) = asyncio.run(run())
    assert first == second and len(first) > 3
    assert [h for page in first for h in page] == one_page   # bisection over > 64 rows
    assert before == 2 and after == 2   # one order per shard, shared by every page of the walk


def test_the_cached_order_never_serves_a_later_snapshot_the_old_matches() -> None:
    docs = [{"n": i, "text": "red"} for i in range(40)]
    body = {"query": {"match": {"text": "red"}}, "sort": [{"n": "asc"}], "size": 5,
            "search_after": [9]}

    async def run() -> tuple[list[Any], list[Any], int]:
        c = await _cluster(docs, 2)
        for _ in range(3):   # the order is now cached
            old = await c.search(parse_search(("d",), {}, dict(body)))
        await c.bulk([{"action": "index", "index": "d", "id": "new", "source":
                       {"n": 10, "text": "red"}},
                      {"action": "delete", "index": "d", "id": "11"}], refresh=True)
        new = [await c.search(parse_search(("d",), {}, dict(body))) for _ in range(3)]
        assert all(_ids(r) == _ids(new[0]) for r in new)
        return _ids(old), _ids(new[0]), new[0]["hits"]["total"]["value"]

    old, new, total = asyncio.run(run())
    assert [i for i, _, _ in old] == ["10", "11", "12", "13", "14"]
    assert [i for i, _, _ in new] == ["10", "new", "12", "13", "14"]
    assert total == 40


def test_a_bad_search_after_is_refused_alike_before_and_after_the_order_is_cached() -> None:
    from shardsearch.cluster.errors import SearchPhaseExecution
    docs = [{"n": i, "text": "red"} for i in range(30)]
    body = {"sort": [{"n": "asc"}], "size": 5}

    async def run() -> list[Any]:
        c = await _cluster(docs, 2)
        await _walk(c, body, 5, repeat=3)   # the order of this query is cached now
        errors = []
        for _ in range(3):
            with pytest.raises(SearchPhaseExecution) as e:
                await c.search(parse_search(("d",), {}, dict(body, search_after=["x"])))
            errors.append(e.value.to_cause())
        return errors

    errors = asyncio.run(run())
    assert all(e == errors[0] for e in errors)
    assert "Failed to parse search_after value for field [n]." in str(errors[0])


def test_a_nan_sort_value_keeps_the_matching_path_s_pages() -> None:
    """``compare_rows`` never counts a NaN as after a key while the cached order puts NaN
    last: with a NaN among the sort values, every ask takes the matching path."""
    async def go() -> list[list[tuple[str, Any, Any]]]:
        c = await _cluster([{"n": i % 5} for i in range(150)], 1)
        body = {"sort": [{"_script": {"type": "number", "order": "asc", "script": {
            "source": "Math.sqrt(doc['n'].value - 2)"}}}, {"_doc": "asc"}],
            "search_after": [0.5, 0]}
        return [_ids(await c.search(parse_search(("d",), {}, dict(body, size=200))))
                for _ in range(3)]
    pages = asyncio.run(go())
    assert pages[0] == pages[1] == pages[2] and len(pages[0]) == 60
