"""Merging segments changes no answer (without Ray).

A shard built by many small refreshes, with updates and deletes landing in older segments and a
point in time pinned half-way, answers every query and sort — hits, scores, sort values,
totals, aggregations — exactly the same before and after its segments are merged; the point in
time still reads its own snapshot; the policy keeps a churned shard's segment count bounded.
"""
from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.engine.merge_policy import (MergePolicy, allowed_segments, find_merge,
                                                     force_groups)
from shardsearch.cluster.search.request import parse_search

WORDS = ["alpha", "beta", "gamma", "delta"]

ops_strategy = st.lists(st.one_of(
    st.fixed_dictionaries({
        "op": st.just("index"),
        "id": st.integers(0, 40).map(str),
        "n": st.one_of(st.none(), st.integers(-3, 3), st.lists(st.integers(-3, 3), max_size=3)),
        "tag": st.one_of(st.none(), st.sampled_from(["a", "b", "c"]),
                         st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3)),
        "text": st.lists(st.sampled_from(WORDS), min_size=0, max_size=5).map(" ".join),
        "refresh": st.booleans()}),
    st.fixed_dictionaries({"op": st.just("delete"), "id": st.integers(0, 40).map(str),
                           "refresh": st.booleans()})),
    min_size=1, max_size=50)

QUERIES = [None, {"match": {"text": "alpha"}}, {"match_phrase": {"text": "beta gamma"}},
           {"term": {"tag": "a"}}, {"prefix": {"tag": "b"}},
           {"bool": {"should": [{"match": {"text": "delta"}}, {"range": {"n": {"gte": 0}}}]}},
           {"exists": {"field": "n"}}]
SORTS = [None, [{"n": "asc"}], [{"n": {"order": "desc", "mode": "max", "missing": "_first"}}],
         [{"tag": "asc"}, {"n": "desc"}], [{"tag": {"order": "desc", "mode": "max"}}],
         ["_score", {"n": "asc"}]]
AGGS = {"tags": {"terms": {"field": "tag"}}, "n": {"stats": {"field": "n"}}}


def _source(d: dict) -> dict:
    return {k: d[k] for k in ("text", "n", "tag") if d.get(k) is not None}


async def _build(ops: list[dict], shards: int) -> Coordinator:
    c = Coordinator(LocalBackend())
    c.create_index("idx", {"settings": {"number_of_shards": shards},
                           "mappings": {"properties": {
                               "n": {"type": "long"}, "text": {"type": "text"},
                               "tag": {"type": "keyword"}}}})
    for d in ops:
        item = {"action": d["op"], "index": "idx", "id": d["id"]}
        if d["op"] == "index":
            item["source"] = _source(d)
        await c.bulk([item], refresh=d["refresh"])
    await c.refresh("idx")
    return c


async def _answers(c: Coordinator, pit: str | None = None) -> list:
    out = []
    for i, q in enumerate(QUERIES):
        for s in (SORTS[i % len(SORTS)], SORTS[(i + 3) % len(SORTS)]):
            body: dict = {"size": 100, "aggs": AGGS}
            if q is not None:
                body["query"] = q
            if s is not None:
                body["sort"] = s
            if pit is not None:
                body["pit"] = {"id": pit}
            r = await c.search(parse_search(() if pit else ("idx",), {}, body))
            out.append(([(h["_id"], h["_score"], h.get("sort"), h["_source"])
                         for h in r["hits"]["hits"]], r["hits"]["total"], r["aggregations"]))
    return out


def _cores(c: Coordinator) -> list:
    return [ref.core for ref in c.admin.indices["idx"].shards]


@pytest.mark.young_collections
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, later=ops_strategy, shards=st.integers(1, 3),
       max_segments=st.integers(1, 3))
def test_a_merge_changes_no_answer_now_or_at_a_pinned_snapshot(ops, later, shards,
                                                                max_segments) -> None:
    async def run():
        c = await _build(ops, shards)
        pit = (await c.open_pit("idx", "1m"))["id"]
        at_pit = await _answers(c, pit)
        for d in later:   # updates and deletes after the snapshot, in more segments
            item = {"action": d["op"], "index": "idx", "id": d["id"]}
            if d["op"] == "index":
                item["source"] = _source(d)
            await c.bulk([item], refresh=d["refresh"])
        await c.refresh("idx")
        now = await _answers(c)
        for core in _cores(c):
            core.force_merge(max_num_segments=max_segments)
            assert len(core.segments) <= max_segments
        assert await _answers(c) == now
        assert await _answers(c, pit) == at_pit
        await c.close_pits([pit])
        for core in _cores(c):   # the snapshot released: deleted versions can go
            core.force_merge(max_num_segments=1)
            assert sum(s.n for s in core.segments) == core.doc_count()
        assert await _answers(c) == now
        return True

    assert asyncio.run(run())


@pytest.mark.young_collections
def test_churn_keeps_the_segment_count_bounded() -> None:
    """400 refreshes of one document each: never more than ``segments_per_tier`` segments
    (all are tiny: one tier), and every document found. (Marked ``young_collections``: a
    refresh's full collection would walk the test process's big heap, ~0.1 s each; the
    2,000-cycle figure is the benchmark's, ``benchmarks/churn.py``.)"""
    async def run():
        c = Coordinator(LocalBackend())
        c.create_index("idx", {"settings": {"number_of_shards": 1}})
        core = _cores(c)[0]
        worst = 0
        for i in range(400):
            await c.bulk([{"action": "index", "index": "idx", "id": str(i % 300),
                           "source": {"n": i}}], refresh=True)
            worst = max(worst, len(core.segments))
        r = await c.search(parse_search(("idx",), {}, {"size": 0}))
        return worst, r["hits"]["total"]["value"], core
    worst, total, core = asyncio.run(run())
    assert worst <= 10
    assert total == 300
    assert core.merges["dropped"] > 0          # the 100 overwritten versions were dropped


def test_policy_merges_the_smallest_similar_segments_over_the_allowed_count() -> None:
    p = MergePolicy()
    assert allowed_segments([100] * 10, p) == 10
    assert find_merge([100] * 10, [0.0] * 10, p, 1 << 30) is None
    assert find_merge([100] * 11, [0.0] * 11, p, 1 << 30) == list(range(10))
    # a big segment is not joined to small ones; the small ones merge among themselves
    sizes = [50 << 20] + [1000] * 25       # allowed: 10 at the 2mb floor, 2 above
    assert find_merge(sizes, [0.0] * 26, p, 1 << 30) == list(range(1, 11))
    # a segment with many droppable versions is rewritten alone
    assert find_merge([100, 200], [0.0, 0.5], p, 1 << 30) == [1]
    assert force_groups([5, 1, 3, 2], 2) == [1, 2, 3]
    assert force_groups([5, 1], 2) is None


def test_unknown_merge_settings_are_refused_by_name() -> None:
    import pytest
    assert MergePolicy.from_settings({"merge.policy.segments_per_tier": "5"}).segments_per_tier == 5
    assert MergePolicy.from_settings({"merge.policy.max_merged_segment": "1gb"}
                                     ).max_merged_segment == 1 << 30
    with pytest.raises(ValueError, match="index.merge.scheduler.max_thread_count"):
        MergePolicy.from_settings({"merge.scheduler.max_thread_count": 1})
    with pytest.raises(ValueError, match="segments_per_tier"):
        MergePolicy.from_settings({"merge.policy.segments_per_tier": "1"})


@pytest.mark.young_collections
def test_merged_segments_survive_a_restart(tmp_path) -> None:
    """Merges are not logged (they change no document, version or generation): a copy
    reopened from its files — snapshot after ``_forcemerge``'s flush, or log replay — holds the
    same documents at the same generation."""
    from shardsearch.cluster.distribution.shard_copy import ShardCopy
    from shardsearch.cluster.engine.mapping import Mapping
    from shardsearch.cluster.engine.writes import WriteOp

    mapping = Mapping.from_body({"properties": {"n": {"type": "long"}}})
    copy = ShardCopy("idx", 0, mapping, data_dir=str(tmp_path))
    op = 0
    for i in range(30):
        copy.command(op, "apply", ([WriteOp(op="index", id=str(i % 12), seq=i,
                                            source=b'{"n": %d}' % i)], None, True))
        op += 1
    before = sorted((d.id, d.seq, d.version) for d in copy.core.fetch(
        [a for a in copy.core.live.values()]))
    gen = copy.core.generation
    copy.force_merge(1, False, True)
    assert len(copy.core.segments) == 1
    again = ShardCopy("idx", 0, mapping, data_dir=str(tmp_path))
    assert again.core.generation == gen
    after = sorted((d.id, d.seq, d.version) for d in again.core.fetch(
        [a for a in again.core.live.values()]))
    assert after == before and len(after) == 12


def test_only_expunge_deletes_rewrites_just_the_segments_over_the_allowed_share() -> None:
    """``only_expunge_deletes``: a segment with more than ``expunge_deletes_allowed`` (10%)
    of versions no reader can see is rewritten without them; the others stay as they are."""
    from shardsearch.cluster.engine.mapping import Mapping
    from shardsearch.cluster.engine.shard import ShardCore
    from shardsearch.cluster.engine.writes import WriteOp

    core = ShardCore("idx", 0, Mapping.from_body({"properties": {"n": {"type": "long"}}}))
    core.merge_policy = MergePolicy(segments_per_tier=1e12, deletes_pct_allowed=50.0)
    seq = 0
    for block in ("a", "b"):                       # two segments of 10 documents
        core.apply([WriteOp(op="index", id=f"{block}{i}", seq=(seq := seq + 1),
                            source=b'{"n": %d}' % i) for i in range(10)])
        core.refresh()
    core.apply([WriteOp(op="delete", id=f"a{i}", seq=(seq := seq + 1)) for i in range(3)])
    core.refresh()                                 # a: 30% droppable, b: none
    a, b = core.segments
    assert core.force_merge(only_expunge_deletes=True) == 1
    assert core.segments[1] is b and core.segments[0] is not a
    assert core.segments[0].n == 7 and core.doc_count() == 17
    assert core.merges["dropped"] == 3


def test_a_refresh_runs_at_most_one_full_garbage_collection() -> None:
    """A full collection walks every tracked object of the process (~40 ms in a shard
    worker, whose heap holds Ray's and our modules' objects): a refresh frees its write buffer
    by reference counting and runs one collection, after the segment is laid out."""
    import gc

    from shardsearch.cluster.engine.mapping import Mapping
    from shardsearch.cluster.engine.shard import ShardCore
    from shardsearch.cluster.engine.writes import WriteOp

    core = ShardCore("idx", 0, Mapping.from_body({"properties": {"t": {"type": "text"}}}))
    core.apply([WriteOp(op="index", id=str(i), seq=i + 1, source=b'{"t": "a b %d"}' % i)
                for i in range(500)])
    full: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(note)
    try:
        core.refresh()
    finally:
        gc.callbacks.remove(note)
    assert len(full) == 1 and core.doc_count() == 500


def test_a_generation_merged_away_cannot_be_pinned_again() -> None:
    """What a later aggregation round or a cursor pins must read as it did: once a merge
    dropped versions an unpinned generation saw, pinning it is refused (as a copy refuses it
    through Ray), so the search starts again instead of reading other versions."""
    from shardsearch.cluster.engine.mapping import Mapping
    from shardsearch.cluster.engine.shard import ShardCore
    from shardsearch.cluster.engine.writes import WriteOp
    from shardsearch.cluster.errors import SearchContextMissing

    core = ShardCore("idx", 0, Mapping.from_body({"properties": {"n": {"type": "long"}}}))
    core.apply([WriteOp(op="index", id=str(i), seq=i + 1, source=b'{"n": 1}') for i in range(5)])
    old = core.refresh()
    assert core.pin("kept", old) == old                 # the latest: pinning works
    core.unpin(["kept"])
    core.apply([WriteOp(op="index", id=str(i), seq=i + 10, source=b'{"n": 2}')
                for i in range(5)])
    core.refresh()
    core.force_merge(1)
    assert not core.can_read(old)
    with pytest.raises(SearchContextMissing, match="no longer available"):
        core.pin("late", old)
    assert "late" not in core.pins and core.pin("now") == core.generation
