"""Deep pages by sample-and-range are *identical* to the straightforward from+size merge, and
what each shard sends does not grow with ``from``."""
from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.search.request import parse_search

SORTS = [None, [{"n": "asc"}], [{"n": "desc"}, {"tag": "asc"}], [{"tag": {"order": "desc"}}],
         ["_score"], [{"f": "asc"}], ["_doc"]]
QUERIES = [None, {"match": {"text": "a"}}, {"match": {"text": "a b"}},
           {"range": {"n": {"gte": 2}}}]


async def _index(shards: int, docs: list[dict], threshold: int, samples: int,
                 backend: LocalBackend | None = None) -> Coordinator:
    c = Coordinator(backend or LocalBackend())
    c.deep_page_threshold = threshold
    c.deep_page_samples = samples
    c.create_index("d", {"settings": {"number_of_shards": shards},
                         "mappings": {"properties": {"n": {"type": "long"},
                                                     "f": {"type": "double"},
                                                     "tag": {"type": "keyword"},
                                                     "text": {"type": "text"}}}})
    third = max(1, len(docs) // 3)
    for k in range(0, len(docs), third):
        await c.bulk([{"action": "index", "index": "d", "id": str(i), "source": d}
                      for i, d in enumerate(docs[k:k + third], start=k)], refresh=True)
    return c


doc = st.fixed_dictionaries({
    "n": st.integers(0, 4), "f": st.floats(-2, 2, allow_nan=False).map(lambda x: round(x, 1)),
    "tag": st.sampled_from(["x", "y", "z"]),
    "text": st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3).map(" ".join)})


@pytest.mark.young_collections
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(doc, min_size=0, max_size=120), shards=st.integers(1, 8),
       samples=st.integers(1, 16), frm=st.integers(0, 130), size=st.integers(0, 12),
       sort=st.sampled_from(SORTS), query=st.sampled_from(QUERIES))
def test_deep_page_equals_the_straightforward_merge(docs, shards, samples, frm, size, sort,
                                                    query) -> None:
    body = {"from": frm, "size": size}
    if sort is not None:
        body["sort"] = sort
    if query is not None:
        body["query"] = query

    async def run():
        classic = await _index(shards, docs, threshold=10**9, samples=samples)
        deep = await _index(shards, docs, threshold=0, samples=samples)
        a = await classic.search(parse_search(("d",), {}, dict(body)))
        b = await deep.search(parse_search(("d",), {}, dict(body)))
        return a, b

    a, b = asyncio.run(run())
    key = lambda r: [(h["_id"], h["_score"], h.get("sort")) for h in r["hits"]["hits"]]  # noqa
    assert key(b) == key(a)
    assert b["hits"]["total"] == a["hits"]["total"]


def test_each_shard_sends_a_bounded_number_of_candidates_at_any_depth() -> None:
    """At from=9,000 of 12,000 documents the range round sends ~size + n/samples per shard."""
    docs = [{"n": i % 97, "f": 0.0, "tag": "x", "text": "a"} for i in range(12_000)]

    async def run():
        c = await _index(4, docs, threshold=0, samples=256)
        calls = []
        orig = c.backend.call

        async def spy(ref, method, *args):
            out = await orig(ref, method, *args)
            if method == "range":
                calls.append(len(out[1]))
            return out
        c.backend.call = spy  # type: ignore[method-assign]
        r = await c.search(parse_search(("d",), {}, {"from": 9_000, "size": 10,
                                                      "sort": [{"n": "asc"}]}))
        return r, calls

    r, calls = asyncio.run(run())
    assert len(r["hits"]["hits"]) == 10
    assert len(calls) == 4
    # 3,000 documents a shard, 256 samples: a sample every 12 ranks; 4 shards * 12 + 10 bound
    assert max(calls) <= 4 * 12 + 10


def _bracket_by_walking(samples, from_, size, ordr):
    """The bracket's bounds computed one sample at a time (the definition), for comparison."""
    rows = [(j, i) for j, (_, keys, _) in enumerate(samples) for i in range(len(keys))]
    seen = [0] * len(samples)
    lo, lo_lb, hi = None, 0, None
    for pos in ordr:
        j, i = rows[int(pos)]
        upper = lower = 0
        for s, (n_s, _, ranks_s) in enumerate(samples):
            if s == j:
                upper += ranks_s[i]
                lower += ranks_s[i]
                continue
            a = seen[s]
            upper += ranks_s[a] if a < len(ranks_s) else n_s
            lower += ranks_s[a - 1] + 1 if a >= 1 else 0
        if upper <= from_:
            lo, lo_lb = samples[j][1][i], lower
        if lower >= from_ + size:
            hi = samples[j][1][i]
            break
        seen[j] += 1
    return lo, hi, from_ - lo_lb + size


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 300), min_size=1, max_size=6),
       samples=st.integers(1, 20), frm=st.integers(0, 1000), size=st.integers(0, 20),
       seed=st.integers(0, 2**32 - 1))
def test_vectorised_bracket_equals_walking_the_samples(sizes, samples, frm, size, seed) -> None:
    import random

    import numpy as np
    from shardsearch.cluster.search.sample_and_range import _columns, bracket
    from shardsearch.cluster.engine.sorting import SortField, ascending_keys, order
    rng = random.Random(seed)
    sort = (SortField("n", "asc"),)
    shard_samples = []
    for s, n in enumerate(sizes):   # each shard's matches in order: (value, tie-break)
        keys = sorted([rng.randint(0, 50), (s << 40) | k] for k in range(n))
        step = max(1, -(-n // samples))
        ranks = list(range(0, n, step))
        shard_samples.append((n, [keys[r] for r in ranks], ranks))
    got = bracket(sort, ["int"], shard_samples, frm, size)
    all_keys = [k for _, keys, _ in shard_samples for k in keys]
    if not all_keys:
        assert got.lo is None and got.hi is None and got.limit == frm + size
        return
    cols, missing, ties = _columns(sort, ["int"], all_keys)
    ordr = order(ascending_keys(sort, ["int"], cols, missing, ties))
    lo, hi, limit = _bracket_by_walking(shard_samples, frm, size, np.asarray(ordr))
    assert (got.lo, got.hi, got.limit) == (lo, hi, limit)


@pytest.mark.young_collections
@pytest.mark.parametrize("shards", [1, 3])
def test_a_repeated_deep_page_sees_what_a_refresh_made_visible(shards) -> None:
    """Deep pages reuse a query's samples and sorted matches at a generation; a refresh in
    between must still show at once (the stale guess is refused, the search runs again)."""
    import asyncio
    rng = random.Random(11)
    docs = [{"n": rng.randint(0, 9), "text": rng.choice(["a b", "a", "b c"])} for _ in range(300)]

    async def run() -> None:
        c = await _index(shards, docs, threshold=0, samples=8)
        body = {"query": {"match": {"text": "a"}}, "from": 50, "size": 10}
        first = await c.search(parse_search(("d",), {}, dict(body)))
        again = await c.search(parse_search(("d",), {}, dict(body)))
        assert [h["_id"] for h in again["hits"]["hits"]] == \
            [h["_id"] for h in first["hits"]["hits"]]
        await c.bulk([{"action": "index", "index": "d", "id": f"new{i}",
                       "source": {"n": 0, "text": "a a a a"}} for i in range(80)], refresh=True)
        after = await c.search(parse_search(("d",), {}, dict(body)))
        c.deep_page_threshold = 10**9
        classic = await c.search(parse_search(("d",), {}, dict(body)))
        assert after["hits"]["total"] == classic["hits"]["total"]
        assert [h["_id"] for h in after["hits"]["hits"]] == \
            [h["_id"] for h in classic["hits"]["hits"]]
    asyncio.run(run())


@pytest.mark.young_collections
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(doc, min_size=1, max_size=120), shards=st.integers(2, 6),
       samples=st.integers(1, 8), froms=st.lists(st.integers(0, 130), min_size=2, max_size=4),
       size=st.integers(1, 12), sort=st.sampled_from(SORTS),
       query=st.sampled_from(QUERIES[1:3]))
def test_placed_deep_pages_equal_the_straightforward_merge(docs, shards, samples, froms, size,
                                                           sort, query) -> None:
    """Deep pages placed by what earlier deep pages of the query learnt (page_anchors.py):
    the same page again, neighbours and jumps, all equal to the classic merge."""
    pages = [f for f0 in froms for f in (f0, f0, f0 + size, max(0, f0 - size))]

    async def run():
        classic = await _index(shards, docs, threshold=10**9, samples=samples)
        deep = await _index(shards, docs, threshold=0, samples=samples)
        out = []
        for frm in pages:
            body = {"from": frm, "size": size, "query": query}
            if sort is not None:
                body["sort"] = sort
            a = await classic.search(parse_search(("d",), {}, dict(body)))
            b = await deep.search(parse_search(("d",), {}, dict(body)))
            out.append((a, b))
        return out

    key = lambda r: [(h["_id"], h["_score"], h.get("sort")) for h in r["hits"]["hits"]]  # noqa
    for a, b in asyncio.run(run()):
        assert key(b) == key(a)
        assert b["hits"]["total"] == a["hits"]["total"]


class _CallCounter(LocalBackend):
    """LocalBackend that records which verbs reach the shards."""

    def __init__(self) -> None:
        super().__init__()
        self.verbs: list[str] = []

    async def call(self, ref, method, *args):
        self.verbs.append(method)
        return await super().call(ref, method, *args)


@pytest.mark.young_collections
def test_a_placed_deep_page_takes_one_round_like_page_one() -> None:
    """The same deep page again (a repeat, or the next page within what the first one
    learnt) asks each shard once: a range from the page's first key, documents included."""
    rng = random.Random(5)
    docs = [{"n": i, "text": rng.choice(["a b", "a", "a c"])} for i in range(3000)]

    async def run() -> list[list[str]]:
        backend = _CallCounter()
        c = await _index(3, docs, threshold=1000, samples=16, backend=backend)
        rounds = []
        for frm in (2000, 2000, 2010):
            backend.verbs = []
            await c.search(parse_search(("d",), {}, {"query": {"match": {"text": "a"}},
                                                     "from": frm, "size": 10}))
            rounds.append(list(backend.verbs))
        return rounds

    first, again, following = asyncio.run(run())
    assert "sample" in first and "fetch" in first
    assert again == ["range"] * 3
    assert following == ["range"] * 3

