"""Pagination as a property: walking every page gives each matching document exactly once, in
exactly the order a single-shard index gives — whatever the number of shards.

The in-process backend runs the same shard and coordinator code as the service (hundreds of
examples); one smaller property runs through real Ray actors.
"""
from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.search.request import parse_search

WORDS = ["alpha", "beta", "gamma", "delta"]

docs_strategy = st.lists(
    st.fixed_dictionaries({
        "id": st.integers(0, 60).map(str),
        "n": st.one_of(st.none(), st.integers(-3, 3)),
        "tag": st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
        "text": st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    }),
    min_size=0, max_size=60)

queries = st.sampled_from([
    None,
    {"match": {"text": "alpha"}},
    {"match": {"text": "beta gamma"}},
    {"term": {"tag.keyword": "a"}},
    {"bool": {"should": [{"match": {"text": "delta"}}, {"range": {"n": {"gte": 0}}}]}},
])
sorts = st.sampled_from([
    None,
    [{"n": "asc"}],
    [{"n": {"order": "desc", "missing": "_first"}}],
    [{"tag.keyword": "asc"}, {"n": "desc"}],
    [{"tag.keyword": {"order": "desc", "missing": "_last"}}],
    ["_score", {"n": "asc"}],
    ["_doc"],
])


def _source(d: dict) -> dict:
    out = {"text": d["text"]}
    if d["n"] is not None:
        out["n"] = d["n"]
    if d["tag"] is not None:
        out["tag"] = d["tag"]
    return out


async def _build(shards: int, docs: list[dict], deletes: list[str]) -> Coordinator:
    c = Coordinator(LocalBackend())
    c.create_index("idx", {"settings": {"number_of_shards": shards},
                           "mappings": {"properties": {
                               "n": {"type": "long"}, "text": {"type": "text"},
                               "tag": {"type": "text",
                                       "fields": {"keyword": {"type": "keyword"}}}}}})
    # two batches with a refresh between them: overwrites and deletes hit older segments
    half = len(docs) // 2
    for batch in (docs[:half], docs[half:]):
        await c.bulk([{"action": "index", "index": "idx", "id": d["id"], "source": _source(d)}
                      for d in batch], refresh=True)
    if deletes:
        await c.bulk([{"action": "delete", "index": "idx", "id": i} for i in deletes],
                      refresh=True)
    return c


async def _walk(c: Coordinator, query, sort, page: int) -> list[tuple]:
    seen = []
    frm = 0
    while True:
        body = {"from": frm, "size": page}
        if query is not None:
            body["query"] = query
        if sort is not None:
            body["sort"] = sort
        resp = await c.search(parse_search(("idx",), {}, body))
        hits = resp["hits"]["hits"]
        seen.extend((h["_id"], h["_score"], tuple(h.get("sort", ()))) for h in hits)
        if len(hits) < page:
            return seen
        frm += page


@pytest.mark.young_collections
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=docs_strategy, deletes=st.lists(st.integers(0, 60).map(str), max_size=8),
       shards=st.integers(1, 8), page=st.integers(1, 7), query=queries, sort=sorts)
def test_pages_follow_one_order_whatever_the_shard_count(docs, deletes, shards, page, query,
                                                          sort) -> None:
    async def run():
        one = await _build(1, docs, deletes)
        many = await _build(shards, docs, deletes)
        full = await _walk(one, query, sort, 1000)
        walked = await _walk(many, query, sort, page)
        total = (await many.search(parse_search(("idx",), {}, {"query": query} if query else {})))
        return full, walked, total["hits"]["total"]["value"]

    full, walked, total = asyncio.run(run())
    assert walked == full
    ids = [w[0] for w in walked]
    assert len(ids) == len(set(ids)) == total


def test_the_same_walk_through_real_ray_actors(cluster) -> None:
    """A deterministic slice of the property through real shard actors and the coordinator."""
    import random
    rng = random.Random(7)
    docs = [{"text": " ".join(rng.choice(WORDS) for _ in range(3)), "n": rng.randint(0, 5)}
            for _ in range(300)]
    for shards in (1, 3, 8):
        name = f"walk{shards}"
        cluster.create_index(name, shards=shards)
        cluster.bulk(name, docs, ids=[str(i) for i in range(len(docs))], refresh=True)
    orders = {}
    for shards in (1, 3, 8):
        for sort in (None, [{"n": "desc"}]):
            seen = []
            for frm in range(0, 300, 7):
                r = cluster.search(f"walk{shards}", query={"match": {"text": "alpha beta"}},
                                   from_=frm, size=7, sort=sort)
                seen.extend((h["_id"], h["_score"]) for h in r["hits"]["hits"])
            orders[(shards, str(sort))] = seen
    for sort in (None, [{"n": "desc"}]):
        base = orders[(1, str(sort))]
        assert len({i for i, _ in base}) == len(base) > 0
        assert orders[(3, str(sort))] == base
        assert orders[(8, str(sort))] == base
    for shards in (1, 3, 8):
        cluster.delete_index(f"walk{shards}")
