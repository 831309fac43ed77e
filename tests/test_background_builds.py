"""A bounded write buffer: segments built when it fills stay invisible until the next refresh
and lose nothing (``engine/flushing.py``; a shard copy in process, no Ray).

The copies here build a segment every ``FLUSH_DOCS`` buffered documents (the service's bound is
``INDEX_BUFFER_DOCS``), so each rule is met with a handful of documents.
"""
from __future__ import annotations

import weakref
from pathlib import Path

import orjson
import pytest

from shardsearch.cluster.distribution.shard_copy import ShardCopy
from shardsearch.cluster.engine.flushing import INDEX_BUFFER_DOCS
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.shard_messages import ShardQuery
from shardsearch.cluster.engine.sorting import SCORE_SORT
from shardsearch.cluster.engine.writes import WriteOp

MAPPING = {"properties": {"title": {"type": "text"}, "n": {"type": "long"}}}
FLUSH_DOCS = 4


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


def test_a_built_segment_is_invisible_until_the_refresh_and_visible_after() -> None:
    c = open_copy(None)
    w = Writer(c)
    w.index(*"abcde")
    assert len(c.core.pending) == 1 and c.core.segments == [] and not c.core.buffer
    assert visible(c) == (0, 0) and hits(c) == []
    assert [c.get(i).version for i in "abcde"] == [1] * 5      # real-time get sees them
    w.index("f")                                                # the rest of the buffer
    gen = w.send("refresh")
    assert gen == 1 and c.core.pending == [] and len(c.core.segments) == 2
    assert visible(c) == (6, 6) and [h[0] for h in hits(c)] == list("abcdef")


def test_a_refresh_with_only_built_segments_and_an_empty_buffer_makes_them_visible() -> None:
    c = open_copy(None)
    w = Writer(c)
    w.index(*"abcdefgh")
    w.index(*"ijkl")                                            # a second build, nothing left
    assert len(c.core.pending) == 2 and not c.core.buffer
    assert w.send("refresh") == 1 and visible(c) == (12, 12) and len(c.core.segments) == 2
    assert [c.get(i).version for i in "abcdefghijkl"] == [1] * 12


def test_writes_to_documents_of_a_pending_segment_keep_real_time_get_versions_and_conditions(
        ) -> None:
    c = open_copy(None)
    w = Writer(c)
    w.index("a", "b", "c", "d")
    assert c.core.pending and not c.core.buffer
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
    w.send("refresh")
    assert visible(c) == (3, 3)
    assert hits(c) == hits(without_builds(w)) and len(hits(c)) == 3


def without_builds(w: Writer) -> ShardCopy:
    """The same commands run on a copy that builds segments only at refresh."""
    plain = Writer(open_copy(None, flush_docs=None))
    for method, args in w.log:
        plain.send(method, *args)
    return plain.copy


def test_a_snapshot_with_pending_segments_recovers_everything_and_shows_nothing_early(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index("v1", "v2", word="hello")
    w.send("refresh")                                       # two visible documents
    w.index(*"abcdefgh")                                    # a pending segment
    w.ops(("delete", "b", None), ("index", "c", {"title": "hello c2"}))
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


def test_a_failed_build_keeps_its_documents_buffered_and_is_tried_again_later(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from shardsearch.cluster.engine import segment

    c = open_copy(None)

    def fail(*args: object) -> None:
        raise RuntimeError("simulated build failure")

    monkeypatch.setattr(segment.Segment, "build", fail)
    w = Writer(c)
    w.index(*"abcd")
    assert c.core.pending == [] and set(c.core.buffer) == set("abcd")
    assert [c.get(i).version for i in "abcd"] == [1] * 4
    monkeypatch.undo()
    w.index("e")                                            # not yet: FLUSH_DOCS more first
    assert c.core.pending == [] and len(c.core.buffer) == 5
    w.index("f", "g", "h")
    assert len(c.core.pending) == 1 and not c.core.buffer
    w.send("refresh")
    assert visible(c) == (8, 8) and [h[0] for h in hits(c)] == list("abcdefgh")


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


def test_an_incremental_snapshot_writes_a_pending_segment_once_and_reuses_it_after_refresh(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index(*"abcdefgh")
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


def test_the_buffer_stays_bounded_and_replicas_build_the_same_segments() -> None:
    """The same commands fill the buffer at the same points on every copy (builds are inline),
    so two copies build the same segments (merges after a refresh run at their own pace), and
    no copy buffers FLUSH_DOCS documents or more after a write."""
    copies = [open_copy(None), open_copy(None)]
    writers = [Writer(c) for c in copies]
    for k in range(12):
        for w in writers:
            w.index(*[f"d{k}-{i}" for i in range(k % 5 + 1)])
            w.ops(("delete", f"d{k}-0", None))
            assert len(w.copy.core.buffer) < FLUSH_DOCS
    layouts = [[(list(map(str, seg.ids)), seg.deleted_gen.tolist()) for seg in c.core.pending]
               for c in copies]
    assert layouts[0] == layouts[1] and len(layouts[0]) > 2
    for w in writers:
        w.send("refresh")   # then background merges may join segments, at their own pace
    assert hits(copies[0]) == hits(copies[1]) and visible(copies[0]) == visible(copies[1])


def test_a_hosted_copy_bounds_its_buffer_at_index_buffer_docs() -> None:
    c = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", None, {})
    assert c.core.flush_docs == INDEX_BUFFER_DOCS


def test_a_refresh_whose_build_fails_keeps_the_built_segments_for_the_next_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The buffer's segment is built before the pending ones are taken: a refresh that fails
    leaves every document where it was (pending or buffered), and the next one shows them."""
    from shardsearch.cluster.engine import segment

    c = open_copy(None)
    w = Writer(c)
    w.index(*"abcd")                                            # built
    w.index("e")                                                # buffered
    assert len(c.core.pending) == 1 and len(c.core.buffer) == 1
    real = segment.Segment.build.__func__

    def fail_once(cls, *args, **kwargs):
        monkeypatch.setattr(segment.Segment, "build", classmethod(real))
        raise MemoryError("no room for the build")
    monkeypatch.setattr(segment.Segment, "build", classmethod(fail_once))
    with pytest.raises(MemoryError):
        c.core.refresh()
    assert len(c.core.pending) == 1 and len(c.core.buffer) == 1 and visible(c) == (0, 0)
    c.core.refresh()
    assert visible(c) == (5, 5) and [h[0] for h in hits(c)] == list("abcde")


def test_a_refresh_ends_a_failed_build_s_raised_bound() -> None:
    c = open_copy(None)
    c.core.flush_at = 2 * FLUSH_DOCS + 3                      # as a failed build leaves it
    c.core.refresh()
    assert c.core.flush_at == 0
    Writer(c).index(*"abcd")
    assert len(c.core.pending) == 1 and not c.core.buffer


def test_a_refresh_hands_memory_back_once_the_segments_built_from_the_buffer_are_gone(
        monkeypatch) -> None:
    """A refresh keeps compact copies of the segments it makes visible; the originals, built
    among the buffer's objects, must be gone before it trims the heap, or their memory stays
    resident until the next refresh (~35 MiB per GCIDE copy)."""
    from shardsearch.cluster.engine import shard as shard_module
    from shardsearch.cluster.engine.segment import Segment

    originals: list[weakref.ref] = []
    build = Segment.build

    def recording_build(*args: object, **kwargs: object) -> Segment:
        seg = build(*args, **kwargs)
        originals.append(weakref.ref(seg))
        return seg

    alive_at_release: list[int] = []
    release = shard_module.release_free_memory

    def recording_release(*args: object, **kwargs: object) -> None:
        alive_at_release.append(sum(r() is not None for r in originals))
        release(*args, **kwargs)

    monkeypatch.setattr(Segment, "build", staticmethod(recording_build))
    monkeypatch.setattr(shard_module, "release_free_memory", recording_release)
    c = open_copy(None)
    w = Writer(c)
    w.index("d0", "d1", "d2", "d3")                 # a pending segment
    w.index("d4", "d5")                             # and two buffered documents
    w.send("refresh")
    assert len(originals) == 2 and visible(c) == (6, 6)
    assert alive_at_release[-1] == 0


def test_a_refresh_whose_segment_copies_fail_keeps_the_originals_and_loses_nothing(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``compact_built`` copies the built segments through pickle; a copy that cannot be made
    (no memory) leaves the originals in place: every document stays addressable and the
    refresh shows them all."""
    import pickle
    import types

    from shardsearch.cluster.engine import flushing

    c = open_copy(None)
    w = Writer(c)
    w.index(*"abcd")                                            # a pending segment
    w.index("e")                                                # buffered
    real = pickle.loads
    calls = []

    def fail_once(blob: bytes) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError("no room for the copy")
        return real(blob)
    monkeypatch.setattr(flushing, "pickle", types.SimpleNamespace(
        dumps=pickle.dumps, loads=fail_once, HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL))
    with caplog.at_level("ERROR", logger="shardsearch.flushes"):
        assert w.send("refresh") == 1
    assert "originals are kept" in caplog.text
    assert visible(c) == (5, 5) and [h[0] for h in hits(c)] == list("abcde")
    assert [c.get(i).version for i in "abcde"] == [1] * 5
    w.ops(("delete", "a", None), ("index", "b", {"title": "hello b2"}))
    w.send("refresh")                                           # still correct afterwards
    assert visible(c) == (4, 4) and [h[0] for h in hits(c)] == list("bcde")
    assert hits(c) == hits(without_builds(w))


def pending_layout(c: ShardCopy) -> list[tuple[list[str], list[int], list[int]]]:
    """(ids, versions, retired generations) of each pending segment, in build order."""
    return [(list(map(str, seg.ids)), seg.version.tolist(), seg.deleted_gen.tolist())
            for seg in c.core.pending]


def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies made from here on (and their recovery) bound their buffer at FLUSH_DOCS."""
    from shardsearch.cluster.distribution import shard_service
    monkeypatch.setattr(shard_service, "INDEX_BUFFER_DOCS", FLUSH_DOCS)


def load_unrefreshed(w: Writer) -> None:
    """Many times the bound without a refresh, in batches that fill the buffer at various
    points, with documents of built segments replaced and deleted."""
    w.index("v1", "v2")
    w.send("refresh")
    for k in range(9):
        w.index(*[f"d{k}-{i}" for i in range(k % 4 + 1)])
    w.ops(("delete", "d1-0", None), ("index", "d2-1", {"title": "hello again"}),
          ("update", "d3-2", {"n": 9}), ("delete", "v1", None))


def replay(w: Writer, copy: ShardCopy) -> Writer:
    """The commands ``w`` sent, run on ``copy`` (a replica that saw them all)."""
    other = Writer(copy)
    for method, args in w.log:
        other.send(method, *args)
    return other


def test_a_copy_restarted_with_more_than_the_bound_buffered_holds_less_and_matches_one_that_did_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bounded(monkeypatch)
    c = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", str(tmp_path), {})
    w = Writer(c)
    load_unrefreshed(w)
    c.flush()                                               # pending segments as parts
    w.index("late1", "late2", "late3")                      # in the log only: replayed
    w.ops(("delete", "d4-0", None))
    stayed = replay(w, ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", None, {}))
    ids = {i for method, args in w.log if method == "apply" for i in (op.id for op in args[0])}
    again = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", str(tmp_path), {})
    assert again.recovery["snapshot"] is not None and again.recovery["replayed"] == 2
    assert len(again.core.buffer) < FLUSH_DOCS and len(again.core.pending) > 3
    assert pending_layout(again) == pending_layout(stayed.copy)
    assert [again.get(i) for i in sorted(ids)] == [stayed.copy.get(i) for i in sorted(ids)]
    assert visible(again) == visible(stayed.copy) == (2, 2)         # nothing shown early
    refresh = w.op
    again.command(refresh, "refresh", (), f"c{refresh}", w.prev)
    stayed.send("refresh")
    live = sorted(i for i in ids if stayed.copy.get(i) is not None)
    assert len(live) == len(ids) - 3
    assert [h[0] for h in hits(again)] == live and hits(again) == hits(stayed.copy)
    assert visible(again) == visible(stayed.copy) == (len(live), len(live))


def test_a_restarted_copy_writes_its_pending_segments_parts_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bounded(monkeypatch)
    c = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", str(tmp_path), {})
    load_unrefreshed(Writer(c))
    c.flush()
    written = [c.parts.segments[s.uid] for s in c.core.pending]
    again = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", str(tmp_path), {})
    again.flush()                           # the restored pending segments: parts it has
    assert [again.parts.segments[s.uid] for s in again.core.pending] == written
    third = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", str(tmp_path), {})
    assert pending_layout(third) == pending_layout(again) == pending_layout(c)
    assert third.core.buffer.keys() == c.core.buffer.keys()


def test_a_replica_caught_up_from_a_snapshot_builds_the_same_pending_segments(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bounded(monkeypatch)
    source = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", None, {})
    w = Writer(source)
    load_unrefreshed(w)
    sent = source.export_since(-1)                          # in memory: a whole snapshot
    assert sent["snapshot"] is not None
    replica = ShardCopy("books", 0, Mapping.from_body(MAPPING), 1, "uuid-1", None, {})
    replica.install(sent["snapshot"], sent["records"])
    assert len(replica.core.buffer) < FLUSH_DOCS
    assert pending_layout(replica) == pending_layout(source)
    r = Writer(replica)
    r.op, r.prev, r.seq = w.op, w.prev, w.seq
    for x in (w, r):                                        # the same writes after it
        x.index(*[f"n{i}" for i in range(6)])
        x.ops(("delete", "d5-1", None))
    assert pending_layout(replica) == pending_layout(source)
    w.send("refresh")
    r.send("refresh")
    assert hits(replica) == hits(source) and visible(replica) == visible(source)


def test_a_snapshot_buffering_more_than_the_bound_is_built_as_it_loads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot whose buffer holds more than the bound (an unbounded copy's, or an older
    version's, which kept built rows as buffered documents) loads bounded, losing nothing."""
    unbounded = ShardCopy("books", 0, Mapping.from_body(MAPPING), 0, "uuid-1", None, {})
    unbounded.core.flush_docs = None
    w = Writer(unbounded)
    load_unrefreshed(w)
    assert len(unbounded.core.buffer) > 3 * FLUSH_DOCS and not unbounded.core.pending
    bounded(monkeypatch)
    sent = unbounded.export_since(-1)
    copy = ShardCopy("books", 0, Mapping.from_body(MAPPING), 1, "uuid-1", None, {})
    copy.install(sent["snapshot"], sent["records"])
    assert len(copy.core.buffer) < FLUSH_DOCS and copy.core.pending
    ids = sorted(unbounded.core.buffer) + ["v1", "v2"]
    assert [copy.get(i) for i in ids] == [unbounded.get(i) for i in ids]
    refresh = w.op
    copy.command(refresh, "refresh", (), f"c{refresh}", w.prev)
    w.send("refresh")
    assert hits(copy) == hits(unbounded) and visible(copy) == visible(unbounded)
