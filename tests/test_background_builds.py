"""Segments built from the write buffer while writes go on stay invisible until the next refresh
and lose nothing (``engine/flushing.py``; a shard copy in process, no Ray).

A build can be held half-way (a ``threading.Event`` the build thread waits on, opened by the
test: no clock), so the writes, reads and snapshots that meet a build in flight are exercised
deterministically.
"""
from __future__ import annotations

import gc
import threading
from pathlib import Path

import orjson
import pytest

from shardsearch.cluster.distribution.shard_copy import ShardCopy
from shardsearch.cluster.engine.gcpause import gc_paused
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.shard_messages import ShardQuery
from shardsearch.cluster.engine.sorting import SCORE_SORT
from shardsearch.cluster.engine.writes import WriteOp

MAPPING = {"properties": {"title": {"type": "text"}, "n": {"type": "long"}}}
BOUND_S = 120   # a bound on waiting for the build thread (never reached when all is well)
FLUSH_DOCS = 4


class Gate:
    """The test hook: the first build that reaches it waits until it is opened."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()

    def __call__(self) -> None:
        if not self.reached.is_set():
            self.reached.set()
            assert self.opened.wait(BOUND_S), "the test never opened the gate"


class Writer:
    """Feeds a copy numbered commands the way a shard group does (ids chained)."""

    def __init__(self, copy: ShardCopy) -> None:
        self.copy, self.op, self.prev, self.seq = copy, copy.last_op + 1, copy.last_id, 0
        self.log: list[tuple[str, tuple]] = []   # what was sent, to run again elsewhere

    def send(self, method: str, *args: object) -> object:
        self.log.append((method, args))
        cmd_id = f"c{self.op}"
        out = self.copy.command(self.op, method, tuple(args), cmd_id, self.prev)
        self.op, self.prev = self.op + 1, cmd_id
        return out

    def ops(self, *ops: tuple) -> list[dict]:
        """``(op, id, source or None, extra kwargs)`` tuples as one apply command."""
        batch = []
        for op, doc_id, src, *extra in ops:
            batch.append(WriteOp(op, doc_id, self.seq, None if src is None else orjson.dumps(src),
                                 **(extra[0] if extra else {})))
            self.seq += 1
        results, _ = self.send("apply", batch, None, False)
        return results

    def index(self, *ids: str, word: str = "hello") -> list[dict]:
        return self.ops(*[("index", i, {"title": f"{word} {i}", "n": len(i)}) for i in ids])


def open_copy(path: Path | None, flush_docs: int | None = FLUSH_DOCS) -> ShardCopy:
    c = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1",
                  None if path is None else str(path), {})
    c.core.flush_docs = flush_docs
    return c


def hits(c: ShardCopy) -> list[tuple[str, int, float]]:
    """(id, version, score) of every match of a scored query at the copy's generation."""
    q = parse_query({"match": {"title": "hello"}})
    st, gen = c.core.term_stats(["title"], [("title", "hello")])
    h = c.core.query(ShardQuery(query=q, sort=SCORE_SORT, k=1000, index_rank=0, generation=gen,
                                stats=st))
    docs = c.core.fetch(h.addr.tolist())
    return sorted((d.id, d.version, round(float(s), 6)) for d, s in zip(docs, h.scores))


def visible(c: ShardCopy) -> tuple[int, int]:
    """(documents counted, documents in the term statistics) at the copy's generation."""
    return c.core.doc_count(), c.core.term_stats(["title"], [("title", "hello")])[0].num_docs


def test_a_background_built_segment_is_invisible_until_the_refresh_and_visible_after() -> None:
    c = open_copy(None)
    w = Writer(c)
    w.index(*"abcde")
    c.core.land_build()
    assert len(c.core.pending) == 1 and c.core.segments == []
    assert visible(c) == (0, 0) and hits(c) == []
    assert [c.get(i).version for i in "abcde"] == [1] * 5      # real-time get sees them
    gen = w.send("refresh")
    assert gen == 1 and c.core.pending == [] and visible(c) == (5, 5)
    assert [h[0] for h in hits(c)] == list("abcde")


def test_writes_to_documents_being_built_keep_real_time_get_versions_and_conditions() -> None:
    c = open_copy(None)
    gate = Gate()
    c.core.build_pause = gate
    w = Writer(c)
    w.index("a", "b", "c", "d")
    assert gate.reached.wait(BOUND_S) and set(c.core.building) == set("abcd")
    assert c.get("b").version == 1 and orjson.loads(c.get("b").source)["title"] == "hello b"
    seq_a = c.get("a").seq
    stale = w.ops(("index", "a", {"title": "hello stale"}, {"if_seq_no": seq_a + 100}))
    assert stale[0]["status"] == 409
    out = w.ops(("index", "a", {"title": "hello again"}, {"if_seq_no": seq_a}),
                ("delete", "b", None),
                ("update", "c", {"n": 42}),
                ("create", "d", {"title": "hello dup"}))
    assert [r["status"] for r in out] == [200, 200, 200, 409]
    assert c.get("a").version == 2 and c.get("b") is None
    assert orjson.loads(c.get("c").source) == {"title": "hello c", "n": 42}
    gate.opened.set()
    w.send("refresh")
    assert visible(c) == (3, 3)
    assert hits(c) == hits(without_builds(w)) and len(hits(c)) == 3


def without_builds(w: Writer) -> ShardCopy:
    """The same commands run on a copy that builds segments only at refresh."""
    plain = Writer(open_copy(None, flush_docs=None))
    for method, args in w.log:
        plain.send(method, *args)
    return plain.copy


def test_refresh_waits_for_the_build_in_flight_and_makes_it_visible() -> None:
    c = open_copy(None)
    gate = Gate()
    c.core.build_pause = gate
    w = Writer(c)
    w.index(*"abcd")
    assert gate.reached.wait(BOUND_S)
    w.index("e")                                           # the next buffer
    done = threading.Event()
    t = threading.Thread(target=lambda: (w.send("refresh"), done.set()))
    t.start()
    assert not done.wait(0.2), "the refresh did not wait for the build in flight"
    gate.opened.set()
    t.join(BOUND_S)
    assert done.is_set() and c.core.generation == 1 and visible(c) == (5, 5)


def test_a_snapshot_with_pending_segments_recovers_everything_and_shows_nothing_early(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index("v1", "v2", word="hello")
    w.send("refresh")                                       # two visible documents
    w.index(*"abcdefgh")                                    # builds in the background
    w.ops(("delete", "b", None), ("index", "c", {"title": "hello c2"}))
    c.core.land_build()
    assert c.core.pending
    before = {i: (d.seq, d.version, d.source) for i in ["v1", "v2", *"abcdefgh"]
              if (d := c.get(i)) is not None}
    c.flush()                                               # a snapshot with pending rows
    again = open_copy(tmp_path)
    assert again.recovery["snapshot"] is not None
    assert {i: (d.seq, d.version, d.source) for i in before if (d := again.get(i))} == before
    assert visible(again) == visible(c) == (2, 2)           # nothing visible early
    again.command(w.op, "refresh", (), f"c{w.op}", w.prev)
    w.send("refresh")
    assert visible(again) == visible(c) == (9, 9)
    assert hits(again) == hits(c)


def test_closing_a_copy_during_a_build_leaves_no_thread_running() -> None:
    c = open_copy(None)
    gate = Gate()
    c.core.build_pause = gate
    Writer(c).index(*"abcd")
    assert gate.reached.wait(BOUND_S)
    threads = list(c.core._builder._threads)
    assert threads and all(t.is_alive() for t in threads)
    closer = threading.Thread(target=c.close_merges)
    closer.start()
    gate.opened.set()
    closer.join(BOUND_S)
    assert not closer.is_alive()
    assert not any(t.is_alive() for t in threads) and c.core._builder is None


def test_a_failed_build_keeps_its_documents_buffered() -> None:
    c = open_copy(None)

    def fail() -> None:
        raise RuntimeError("simulated build failure")

    c.core.build_pause = fail
    w = Writer(c)
    w.index(*"abcd")
    c.core.land_build()
    assert c.core.pending == [] and set(c.core.buffer) == set("abcd")
    c.core.build_pause = None
    w.index("e")
    w.send("refresh")
    assert visible(c) == (5, 5) and [h[0] for h in hits(c)] == list("abcde")


@pytest.mark.parametrize("flush_docs", [1, 3, 7])
def test_background_builds_change_no_answer(flush_docs: int) -> None:
    built, plain = open_copy(None, flush_docs), open_copy(None, None)
    for c in (built, plain):
        w = Writer(c)
        w.index(*[f"d{i}" for i in range(10)])
        w.ops(("delete", "d3", None), ("update", "d4", {"n": 7}), ("index", "d5", {"title": "x"}))
        w.index(*[f"e{i}" for i in range(6)], word="hello hello")
        w.send("refresh")
        w.index("late")                                     # acknowledged, not yet searchable
    assert built.core.segments and len(built.core.segments) > len(plain.core.segments)
    assert hits(built) == hits(plain) and visible(built) == visible(plain)
    ids = [f"d{i}" for i in range(10)] + [f"e{i}" for i in range(6)] + ["late"]
    assert [built.get(i) for i in ids] == [plain.get(i) for i in ids]


def test_the_collector_stays_paused_until_the_last_thread_leaves_gc_paused() -> None:
    inside, leave = threading.Event(), threading.Event()

    def build() -> None:
        with gc_paused():
            inside.set()
            assert leave.wait(BOUND_S)

    assert gc.isenabled()
    t = threading.Thread(target=build)
    t.start()
    assert inside.wait(BOUND_S)
    with gc_paused(keep=True):   # a write while a build runs
        assert not gc.isenabled()
    assert not gc.isenabled(), "the write turned the collector back on under the build"
    gc.unfreeze()
    leave.set()
    t.join(BOUND_S)
    assert gc.isenabled()


def test_an_incremental_snapshot_writes_a_pending_segment_once_and_reuses_it_after_refresh(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index(*"abcdefgh")
    c.core.land_build()
    (seg,) = c.core.pending
    c.flush()
    first = c.parts.segments[seg.uid]
    w.index("late")
    c.flush()
    assert c.parts.segments[seg.uid] == first                 # not written again
    w.send("refresh")
    c.flush()
    assert c.parts.segments[seg.uid] == first                 # the visible segment's part
    assert [s.uid for s in c.core.segments][0] == seg.uid and not c.parts.chain
    assert {p.name for p in tmp_path.rglob("*.part")} == {
        e["part"] for e in c.parts.segments.values()} and len(c.parts.segments) == 2


def test_a_copy_recovered_from_pending_segments_snapshots_and_recovers_again(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index(*"abcdefgh")
    w.ops(("delete", "b", None))
    w.index("x", "y")
    c.core.land_build()
    c.flush()                                       # pending segment + buffer chain
    again = open_copy(tmp_path)
    w2 = Writer(again)
    w2.op, w2.prev, w2.seq = w.op, w.prev, w.seq
    w2.index("z")
    again.flush()                                   # the restored buffer, whole
    w2.ops(("delete", "c", None))                   # in the log only
    third = open_copy(tmp_path)
    assert third.recovery["replayed"] == 1
    want = {i: (d.seq, d.version, d.source) for i in "abcdefghxyz" if (d := again.get(i))}
    assert {i: (d.seq, d.version, d.source) for i in "abcdefghxyz" if (d := third.get(i))} \
        == want and set(want) == set("adefghxyz")
    third.command(w2.op, "refresh", (), f"c{w2.op}", w2.prev)
    assert visible(third) == (9, 9)
