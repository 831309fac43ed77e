"""The shard's cache of decompressed ``_source`` blocks never changes a fetched document.

A shard takes random writes — new documents, updates (partial ``update`` too), deletes, with
custom routing and malformed values reported in ``_ignored`` — with refreshes and merges in
between. After every step each live document, and the addresses a query phase gave before a
merge, are fetched through the shard's cache (tiny: it evicts and replaces prefixes all the
time) and through the plain path without one: the answers are equal, and each ``_source`` is
the one last written (without Ray).
"""
from __future__ import annotations

import random

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.page_fetch import fetch_page
from shardsearch.cluster.engine.shard import ShardCore
from shardsearch.cluster.engine.source_cache import BlockCache
from shardsearch.cluster.engine.writes import WriteOp

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPING = {"properties": {"n": {"type": "integer", "ignore_malformed": True},
                          "t": {"type": "text"}}}

steps = st.lists(st.one_of(
    st.tuples(st.just("index"), st.integers(0, 30), st.integers(0, 600),
              st.sampled_from([1, "bad"]), st.sampled_from([None, "r1"])),
    st.tuples(st.just("update"), st.integers(0, 30), st.integers(0, 600)),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("refresh"),),
    st.tuples(st.just("merge"), st.integers(1, 2))), min_size=1, max_size=40)


def _check(core: ShardCore, addrs: list[int], model: dict[str, bytes] | None) -> None:
    """Cached fetch == plain fetch; sources are the model's (when given)."""
    cached = core.fetch(addrs)
    assert cached == fetch_page(core.by_uid, addrs, None)
    if model is not None:
        assert {d.id: d.source for d in cached} == {d.id: model[d.id] for d in cached}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=steps, seed=st.integers(0, 1 << 16), cache_bytes=st.sampled_from([0, 3000, 1 << 20]))
def test_fetched_documents_are_the_same_with_and_without_the_block_cache(ops, seed,
                                                                         cache_bytes) -> None:
    rng = random.Random(seed)
    core = ShardCore("idx", 0, Mapping.from_body(MAPPING))
    core.source_cache = BlockCache(cache_bytes)
    model: dict[str, bytes] = {}      # id -> source of its refreshed live version
    pending: dict[str, bytes | None] = {}
    seq = 0
    for op in ops:
        seq += 1
        kind, doc = op[0], str(op[1]) if len(op) > 1 else ""
        if kind == "index":
            src = orjson.dumps({"t": "w" * op[2], "n": op[3]})
            core.apply([WriteOp(op="index", id=doc, seq=seq, source=src, routing=op[4])])
            pending[doc] = src
        elif kind == "update" and core._current(doc) is not None:
            core.apply([WriteOp(op="update", id=doc, seq=seq, source=orjson.dumps(
                {"doc": {"t": "u" * op[2]}}))])
            pending[doc] = core._current(doc)[2]   # the merged document, as buffered
        elif kind == "delete":
            core.apply([WriteOp(op="delete", id=doc, seq=seq)])
            pending[doc] = None
        elif kind == "refresh":
            core.refresh()
            for k, v in pending.items():
                if v is None:
                    model.pop(k, None)
                else:
                    model[k] = v
            pending.clear()
        elif kind == "merge":
            before = list(core.live.values())
            core.force_merge(max_num_segments=op[1])
            _check(core, before, None)   # addresses a query phase gave before the merge
        live = list(core.live.values())
        for a in sorted(live):   # one by one: each needs a longer prefix of a new block
            _check(core, [a], None)
        for _ in range(2):
            _check(core, rng.sample(live, rng.randint(0, len(live))), None)
    core.refresh()
    model.update({k: v for k, v in pending.items() if v is not None})
    for k in [k for k, v in pending.items() if v is None]:
        model.pop(k, None)
    _check(core, list(core.live.values()), model)
    assert core.source_cache.bytes <= cache_bytes


def test_the_block_cache_stays_within_its_bytes_and_forgets_merged_away_segments() -> None:
    """Least recently used blocks go first; a shorter prefix is never served for a longer
    need; dropping a segment frees its blocks at once."""
    from shardsearch.cluster.engine.source_cache import ENTRY_BYTES

    cache = BlockCache(3 * (1000 + ENTRY_BYTES))
    for b in range(3):
        cache.put((1, b), bytes(1000))
    assert cache.get((1, 0), 1000) is not None          # (1, 0) is now the most recent
    cache.put((2, 0), bytes(1000))                      # evicts (1, 1), the least recent
    assert cache.get((1, 1), 1) is None and len(cache) == 3
    assert cache.bytes <= cache.max_bytes
    assert cache.get((1, 0), 1001) is None              # too short a prefix: a miss
    cache.drop_segments({1})
    assert len(cache) == 1 and cache.bytes == 1000 + ENTRY_BYTES
    cache.put((3, 0), bytes(cache.max_bytes))           # larger than the whole cache: not kept
    assert cache.get((3, 0), 0) is None
