"""The hot path's shortcuts give the same answers as the plain path.

Shortcuts: keyword sorts by shard-wide ordinals (no per-query string sort), documents riding
along with the query phase for small pages (query-and-fetch), and global statistics reused
while no shard has refreshed (a stale guess is detected by the shard and the search re-run),
and ``/{index}/_search`` matched before the app's other routes (it must shadow none of them).
"""
from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
import shardsearch.cluster.engine.candidates as candidates_mod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


async def _cluster(docs: list[dict[str, Any]], shards: int, batches: int = 3) -> Coordinator:
    c = Coordinator(LocalBackend())
    c.create_index("d", {"settings": {"number_of_shards": shards},
                         "mappings": {"properties": {"tag": {"type": "keyword"},
                                                     "n": {"type": "long"},
                                                     "text": {"type": "text"}}}})
    step = max(1, -(-len(docs) // batches))
    for k in range(0, len(docs), step):
        await c.bulk([{"action": "index", "index": "d", "id": str(i), "source": d}
                      for i, d in enumerate(docs[k:k + step], start=k)], refresh=True)
    return c


def _page(resp: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(h["_id"], h["_score"], h.get("sort"), h["_source"]) for h in resp["hits"]["hits"]]


tag = st.one_of(st.none(), st.sampled_from(["a", "b", "bb", "", "Z", "é", "a b"]),
                st.lists(st.sampled_from(["a", "b", "q"]), min_size=0, max_size=3))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tags=st.lists(tag, min_size=0, max_size=60), shards=st.integers(1, 3),
       order=st.sampled_from(["asc", "desc"]), missing=st.sampled_from(["_last", "_first"]),
       mode=st.sampled_from([None, "min", "max"]), frm=st.integers(0, 20),
       size=st.integers(0, 15), after=st.sampled_from([None, "a", "b", "bb", "zz", ""]),
       deep=st.booleans())
def test_keyword_sort_by_ordinals_equals_sorting_the_strings(tags, shards, order, missing,
                                                              mode, frm, size, after,
                                                              deep) -> None:
    docs = [{"n": i % 3} if t is None else {"n": i % 3, "tag": t} for i, t in enumerate(tags)]
    spec: dict[str, Any] = {"order": order, "missing": missing}
    if mode:
        spec["mode"] = mode
    body: dict[str, Any] = {"sort": [{"tag": spec}, {"n": "asc"}], "size": size}
    if after is not None:
        body["search_after"] = [after, 1]
    else:
        body["from"] = frm

    async def run() -> tuple[Any, Any]:
        c = await _cluster(docs, shards)
        if deep:
            c.deep_page_threshold, c.deep_page_samples = 0, 3
        fast = await c.search(parse_search(("d",), {}, dict(body)))
        orig = candidates_mod.keyword_ranks
        candidates_mod.keyword_ranks = lambda *a, **k: None  # type: ignore[assignment]
        try:
            plain = await c.search(parse_search(("d",), {}, dict(body)))
        finally:
            candidates_mod.keyword_ranks = orig  # type: ignore[assignment]
        return fast, plain

    fast, plain = asyncio.run(run())
    assert _page(fast) == _page(plain)


def test_query_and_fetch_returns_the_page_the_fetch_phase_returns() -> None:
    rng = random.Random(5)
    docs = [{"n": rng.randint(0, 5), "tag": rng.choice("xyz"),
             "text": " ".join(rng.choice(["a", "b", "c"]) for _ in range(3))}
            for _ in range(80)]

    async def run() -> list[tuple[Any, Any]]:
        c = await _cluster(docs, 3)
        out = []
        for body in ({"query": {"match": {"text": "a"}}, "size": 7, "from": 3},
                     {"sort": [{"n": "desc"}], "size": 10},
                     {"sort": [{"tag": "asc"}, {"n": "asc"}], "search_after": ["x", 2]}):
            c.prefetch_max = 50
            fast = await c.search(parse_search(("d",), {}, dict(body)))
            c.prefetch_max = 0
            plain = await c.search(parse_search(("d",), {}, dict(body)))
            out.append((_page(fast), _page(plain)))
        return out

    for fast, plain in asyncio.run(run()):
        assert fast == plain and fast


def test_cached_statistics_never_serve_a_stale_snapshot() -> None:
    """After a refresh the next search sees the new documents, scored with statistics that
    count them (equal to a coordinator that never cached anything)."""
    docs = [{"text": "a b"}, {"text": "a"}, {"text": "b c"}, {"text": "a a c"}]
    more = [{"text": "a"}, {"text": "c c"}, {"text": "a b c"}]
    body = {"query": {"match": {"text": "a"}}, "size": 20}

    async def run() -> tuple[Any, Any, Any]:
        c = await _cluster(docs, 2, batches=1)
        calls: list[str] = []
        orig = c.backend.call

        async def spy(ref: Any, method: str, *args: Any) -> Any:
            calls.append(method)
            return await orig(ref, method, *args)
        c.backend.call = spy  # type: ignore[method-assign]
        first = await c.search(parse_search(("d",), {}, dict(body)))
        assert calls.count("term_stats") == 2 and "fetch" not in calls   # query-and-fetch
        again = await c.search(parse_search(("d",), {}, dict(body)))   # from the cache
        assert calls.count("term_stats") == 2
        assert _page(again) == _page(first)
        await c.bulk([{"action": "index", "index": "d", "id": f"m{i}", "source": d}
                      for i, d in enumerate(more)], refresh=True)
        after = await c.search(parse_search(("d",), {}, dict(body)))
        assert calls.count("term_stats") == 4   # the stale guess was caught, then recounted
        fresh = await _cluster(docs, 2, batches=1)
        await fresh.bulk([{"action": "index", "index": "d", "id": f"m{i}", "source": d}
                          for i, d in enumerate(more)], refresh=True)
        expected = await fresh.search(parse_search(("d",), {}, dict(body)))
        return first, after, expected

    first, after, expected = asyncio.run(run())
    assert after["hits"]["total"]["value"] == first["hits"]["total"]["value"] + 2
    assert _page(after) == _page(expected)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 30_000), k=st.integers(1, 200), distinct=st.integers(1, 50_000),
       seed=st.integers(0, 2**32 - 1), skew=st.booleans())
def test_top_k_preselection_keeps_exactly_the_rows_up_to_the_kth_value(m, k, distinct, seed,
                                                                        skew) -> None:
    import numpy as np
    from shardsearch.cluster.engine.sorting import smallest_rows
    rng = np.random.default_rng(seed)
    prim = rng.integers(0, distinct, m).astype(np.float64)
    if skew:   # sorted values defeat a strided sample's guess: the fallback must catch it
        prim = np.sort(prim)[::-1].copy()
    k = min(k, m)
    kth = np.sort(prim)[k - 1]
    assert smallest_rows(prim, k).tolist() == np.flatnonzero(prim <= kth).tolist()


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 20_000), k=st.integers(1, 100), distinct=st.integers(1, 30),
       seed=st.integers(0, 2**32 - 1))
def test_shard_top_k_equals_a_full_sort(m, k, distinct, seed) -> None:
    import numpy as np
    from shardsearch.cluster.engine.candidates import top_k
    from shardsearch.cluster.engine.sorting import SortField, ascending_keys, order
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, distinct, m).astype(np.float32)
    ties = rng.permutation(m).astype(np.int64)
    sort = (SortField("_score", "desc"),)
    got = top_k(sort, ["score"], [scores], [None], ties, k)
    want = order(ascending_keys(sort, ["score"], [scores], [None], ties))[:k]
    assert got.tolist() == want.tolist()


words = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=0, max_size=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(words, min_size=0, max_size=50), shards=st.integers(1, 3),
       term=st.sampled_from(["a", "b", "A", "zz", "a b"]), min_score=st.sampled_from([None,
                                                                                    0.1, 0.5]),
       deletes=st.lists(st.integers(0, 49), max_size=8), frm=st.integers(0, 10),
       tag_query=st.booleans())
def test_one_term_match_from_the_postings_equals_the_dense_evaluation(texts, shards, term,
                                                                       min_score, deletes,
                                                                       frm, tag_query) -> None:
    import shardsearch.cluster.engine.candidates as shard_module
    docs = [{"text": " ".join(w), "tag": w[0] if w else "none", "n": i}
            for i, w in enumerate(texts)]
    query = {"match": {"tag": term}} if tag_query else {"match": {"text": term}}
    body: dict[str, Any] = {"query": query, "size": 10, "from": frm, "track_total_hits": True}
    if min_score is not None:
        body["min_score"] = min_score

    async def run() -> tuple[Any, Any]:
        c = await _cluster(docs, shards)
        gone = sorted({d for d in deletes if d < len(docs)})
        if gone:   # deleted versions stay in their segments, invisible from now on
            await c.bulk([{"action": "delete", "index": "d", "id": str(d)} for d in gone],
                         refresh=True)
        fast = await c.search(parse_search(("d",), {}, dict(body)))
        orig = shard_module.evaluate_sparse
        shard_module.evaluate_sparse = lambda *a, **k: None  # type: ignore[assignment]
        try:
            plain = await c.search(parse_search(("d",), {}, dict(body)))
        finally:
            shard_module.evaluate_sparse = orig
        return fast, plain

    fast, plain = asyncio.run(run())
    assert fast["hits"]["total"] == plain["hits"]["total"]
    assert fast["hits"]["max_score"] == plain["hits"]["max_score"]
    assert _page(fast) == _page(plain)


def _segments_overlap(route_part: str, plain_name: bool) -> bool:
    """Whether a route's path part can equal some value of the hot route's part: an index
    name not starting with ``_`` (``plain_name``) or the literal ``_search``."""
    if route_part.startswith("{"):
        return True
    return not route_part.startswith("_") if plain_name else route_part == "_search"


def test_the_first_search_route_shadows_no_other_route() -> None:
    """``/{plain index}/_search`` is matched before every other router (``api/routes/
    search.py``): no other route of the app (but the search routes it copies) may match a path
    it matches, in any method, or that route would stop being reached."""
    from shardsearch.api.app import create_app
    from shardsearch.api.routes import search as search_routes
    from starlette.routing import Route

    app = create_app(coordinator=None)   # type: ignore[arg-type]
    routes: list[Any] = []

    def walk(router: Any) -> None:
        for r in getattr(router, "routes", []):
            walk(r.original_router) if hasattr(r, "original_router") else routes.append(r)
    walk(app.router)
    own = {id(r) for r in search_routes.router.routes + search_routes.hot_router.routes}
    others = [r for r in routes if isinstance(r, Route) and id(r) not in own]
    assert len(others) > 100 and routes[0] in search_routes.hot_router.routes
    for r in others:
        parts = r.path.strip("/").split("/")
        overlaps = len(parts) == 2 and _segments_overlap(parts[0], True) \
            and _segments_overlap(parts[1], False)
        assert not overlaps, f"{r.path} {r.methods} is shadowed by the first search route"
    # (a ``{x:path}`` parameter spans parts: the probes catch those)
    # (date math such as ``<logs-{now/d}>`` is resolved to a plain name before routing)
    probes = ["/books/_search", "/logs-*,books/_search", "/.hidden/_search"]
    for r in others:
        for p in probes:
            assert not r.path_regex.match(p), (r.path, p)
    hot = search_routes.hot_router.routes[0]
    assert hot.path_regex.match("/books/_search") and not hot.path_regex.match("/_all/_search")
