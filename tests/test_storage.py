"""Storage of a shard copy: framed, checksummed log and snapshots; recovery rebuilds exactly.

Pure file IO and shard logic, no Ray: ``ShardCopy`` is used in process.
"""
from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from shardsearch.cluster.engine.doc_parsing import parse_document
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.shard_messages import ShardQuery
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.writes import WriteOp
from shardsearch.cluster.distribution.shard_copy import (CopyBehind, CopyCorrupted, CopyDiverged,
                                                        GenerationGone, ShardCopy)
from shardsearch.cluster.engine.sorting import SCORE_SORT
from shardsearch.cluster.engine.meta_store import MetaStore
from shardsearch.cluster.engine.storage import (StorageCorrupt, WriteAheadLog, decode_op,
                                         encode_op, frame, scan, write_atomic)

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


class Writer:
    """Feeds a copy numbered commands the way a shard group does (ids chained)."""

    def __init__(self, copy: ShardCopy) -> None:
        self.copy = copy
        self.op = copy.last_op + 1
        self.prev = copy.last_id
        self.seq = 0
        self.mapping = Mapping()

    def send(self, method: str, *args: object) -> object:
        cmd_id = f"c{self.op}"
        out = self.copy.command(self.op, method, tuple(args), cmd_id, self.prev)
        self.op, self.prev = self.op + 1, cmd_id
        return out

    def index(self, docs: dict[str, dict], refresh: bool = False) -> object:
        ops = []
        for doc_id, src in docs.items():
            fields, _ = parse_document(src, self.mapping, doc_id)
            ops.append(WriteOp(op="index", id=doc_id, seq=self.seq, source=orjson.dumps(src),
                               fields=fields))
            self.seq += 1
        return self.send("apply", ops, self.mapping, refresh)

    def delete(self, doc_id: str) -> object:
        op = WriteOp(op="delete", id=doc_id, seq=self.seq)
        self.seq += 1
        return self.send("apply", [op], None, False)


def open_copy(path: Path, **settings: str) -> ShardCopy:
    return ShardCopy("books", 0, Mapping(), 0, "uuid-1", str(path), dict(settings))


def state(c: ShardCopy) -> dict:
    """Everything observable: documents (seq, version, source), generation, order of a search."""
    docs = {}
    for doc_id in sorted(set(c.core.live) | set(c.core.buffer)):
        d = c.core.get(doc_id)
        docs[doc_id] = (d.seq, d.version, d.source)
    return {"docs": docs, "tombstones": dict(c.core.tombstones), "generation": c.core.generation,
            "max_seq": c.core.max_seq, "last_op": c.last_op, "hits": ranked(c)}


def ranked(c: ShardCopy) -> list[tuple[int, float]]:
    """(seq, score) of every match of a scored query, in the shard's order."""
    q = parse_query({"match": {"title": "hello"}})
    st, gen = c.core.term_stats(["title"], [("title", "hello")])
    hits = c.core.query(ShardQuery(query=q, sort=SCORE_SORT, k=1000, index_rank=0,
                                   generation=gen, stats=st))
    return [(int(t), round(float(s), 6)) for t, s in zip(hits.ties, hits.scores)]


def load(w: Writer, batches: int = 6) -> None:
    for b in range(batches):
        w.index({str(i): {"title": f"hello world {'hello ' * (i % 3)}{i}", "n": i}
                 for i in range(b * 7, b * 7 + 7)}, refresh=b % 2 == 1)
    w.index({"3": {"title": "hello again three"}})          # an update (version 2)
    w.delete("5")
    w.send("refresh")
    w.index({"unrefreshed": {"title": "hello buffer"}})      # acknowledged, not yet searchable


# --- framing ------------------------------------------------------------------------------------

def test_framed_records_roundtrip_and_stop_at_the_first_bad_one() -> None:
    data = b"".join(frame(p) for p in (b"one", b"{}", b"three" * 100))
    assert scan(data) == ([b"one", b"{}", b"three" * 100], len(data), None)
    cut = data[:-7]
    got, end, problem = scan(cut)
    assert got == [b"one", b"{}"] and end == len(frame(b"one") + frame(b"{}"))
    assert "torn" in problem
    flipped = bytearray(data)
    flipped[len(frame(b"one") + frame(b"{}")) + 8 + 10] ^= 0xFF   # inside the third payload
    got, _, problem = scan(bytes(flipped))
    assert got == [b"one", b"{}"] and "checksum" in problem
    # no record is ever empty (payloads are JSON objects): zeros are not records
    assert scan(frame(b"one") + b"\0" * 16)[0] == [b"one"]


def test_write_ops_encode_bytes_and_every_field_exactly() -> None:
    op = WriteOp(op="update", id="x", seq=7, source=b'{"a":1}', fields={"bytes": ["b"]},
                 routing="r", doc_as_upsert=True, upsert=b"\xff\x00 not utf-8",
                 if_seq_no=3, if_primary_term=1)
    back = decode_op(orjson.loads(orjson.dumps(encode_op(op))), WriteOp)
    assert back == op


def test_atomic_write_replaces_whole_files(tmp_path: Path) -> None:
    p = tmp_path / "meta.json"
    write_atomic(p, b"first")
    write_atomic(p, b"second")
    assert p.read_bytes() == b"second"
    assert [x.name for x in tmp_path.iterdir()] == ["meta.json"]   # no temp file left


# --- recovery -----------------------------------------------------------------------------------

def test_replaying_the_log_reproduces_the_exact_state(tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    load(Writer(c))
    before = state(c)
    assert before["docs"]["3"][1] == 2 and "5" not in before["docs"]
    again = open_copy(tmp_path)
    assert again.recovery["replayed"] == c.last_op + 1 and again.recovery["snapshot"] is None
    assert state(again) == before


def test_recovery_from_a_snapshot_replays_only_the_tail(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "2kb"})
    load(Writer(c))
    before = state(c)
    files = sorted(os.listdir(c.dir))
    assert any(f.startswith("snap-") for f in files), files
    again = open_copy(tmp_path, **{"translog.flush_threshold_size": "2kb"})
    assert again.recovery["snapshot"] is not None
    assert 0 < again.recovery["replayed"] < c.last_op + 1
    assert state(again) == before
    # it goes on from there: more writes, another restart, still identical
    w = Writer(again)
    w.seq = before["max_seq"] + 1
    w.index({"late": {"title": "hello late"}}, refresh=True)
    assert state(open_copy(tmp_path)) == state(again)


@pytest.mark.parametrize("cut", [1, 5, 9, 20])
def test_a_torn_log_tail_is_cut_and_everything_before_it_kept(tmp_path: Path, cut: int) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index({"a": {"title": "hello a"}}, refresh=True)
    kept = state(c)
    w.index({"b": {"title": "hello b, written when the power went"}}, refresh=True)
    c.wal.close()
    log = next(p for p in Path(c.dir).iterdir() if p.name.startswith("log-"))
    size = log.stat().st_size
    with open(log, "r+b") as f:
        f.truncate(size - cut)
    again = open_copy(tmp_path)
    assert state(again) == kept
    assert again.recovery["cut"] and "torn" in again.recovery["cut"][0]
    assert log.stat().st_size < size - cut or cut >= size   # the garbage is gone from the file
    # the log goes on cleanly after the cut
    w2 = Writer(again)
    w2.seq = 10
    w2.index({"c": {"title": "hello c"}}, refresh=True)
    assert set(state(open_copy(tmp_path))["docs"]) == {"a", "c"}


def test_a_corrupt_log_tail_is_detected_by_its_checksum(tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index({"a": {"title": "hello a"}}, refresh=True)
    kept = state(c)
    w.index({"b": {"title": "hello b"}}, refresh=True)
    c.wal.close()
    log = next(p for p in Path(c.dir).iterdir() if p.name.startswith("log-"))
    data = bytearray(log.read_bytes())
    data[-3] ^= 0x55                          # a flipped bit in the last record's payload
    log.write_bytes(bytes(data))
    again = open_copy(tmp_path)
    assert state(again) == kept
    assert "checksum" in again.recovery["cut"][0]


def test_a_corrupt_snapshot_fails_loudly_naming_the_file(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "1kb"})
    load(Writer(c))
    snap = next(p for p in Path(c.dir).iterdir() if p.name.startswith("snap-"))
    data = bytearray(snap.read_bytes())
    data[len(data) // 2] ^= 0x01
    snap.write_bytes(bytes(data))
    again = open_copy(tmp_path)                  # the copy opens failed, taking no commands
    assert snap.name in again.failure and "checksum" in again.failure
    assert again.position()["failed"] == again.failure and again.last_op == -1
    with pytest.raises(CopyCorrupted, match=snap.name):
        again.command(0, "refresh", (), "x", None)
    assert snap.exists()                           # left as it was: nothing deleted


def test_a_truncated_snapshot_fails_loudly_too(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "1kb"})
    load(Writer(c))
    snap = next(p for p in Path(c.dir).iterdir() if p.name.startswith("snap-"))
    snap.write_bytes(snap.read_bytes()[:-10])
    assert snap.name in open_copy(tmp_path).failure


def test_a_hole_in_the_middle_of_the_log_is_not_a_tail(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path)
    for op in range(3):
        wal.append(op, orjson.dumps({"op": op, "kind": "refresh"}))
    wal.restart_after(-1)      # a second file, as after a snapshot of nothing
    wal.close()
    first = sorted(tmp_path.glob("log-*"))[0]
    # rebuild: file 1 holds ops 0..2 (bad middle record), file 2 holds op 3
    first.write_bytes(frame(orjson.dumps({"op": 0, "kind": "refresh"})) + b"\x01\x02garbage")
    (tmp_path / "log-0000000000000003.wal").write_bytes(
        frame(orjson.dumps({"op": 3, "kind": "refresh"})))
    with pytest.raises(StorageCorrupt):
        list(WriteAheadLog(tmp_path).recover(-1))


# --- command numbering ------------------------------------------------------------------------

def test_commands_run_in_order_once_and_retries_are_idempotent(tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    first = w.index({"a": {"title": "hello"}})
    assert c.command(0, "apply", (), "c0", None) == first          # the retry: same answer
    with pytest.raises(CopyBehind):
        c.command(5, "refresh", (), "c5", "c4")                      # a gap
    with pytest.raises(CopyDiverged):
        c.command(1, "refresh", (), "c1", "other")                   # not our history
    with pytest.raises(CopyDiverged):
        c.command(0, "refresh", (), "zz", None)                      # another command 0
    assert c.last_op == 0 and open_copy(tmp_path).last_id == "c0"


def test_a_copy_rebuilt_from_a_snapshot_refuses_older_generations(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "1kb"})
    load(Writer(c))
    again = open_copy(tmp_path)
    assert again.min_generation > 1
    with pytest.raises(GenerationGone):
        again.term_stats(["title"], [("title", "hello")], 1)
    assert again.term_stats(["title"], [("title", "hello")], None)[1] == c.core.generation


def test_async_durability_syncs_in_the_background(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.durability": "async", "translog.sync_interval": "100ms"})
    w = Writer(c)
    w.index({"a": {"title": "hello"}}, refresh=True)
    import time
    deadline = time.monotonic() + 10     # the 100 ms syncer, on however loaded a machine
    while c.wal._dirty and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not c.wal._dirty
    assert "a" in state(open_copy(tmp_path))["docs"]


def test_export_and_install_bring_a_copy_to_the_same_state(tmp_path: Path) -> None:
    src = open_copy(tmp_path / "a", **{"translog.flush_threshold_size": "2kb"})
    load(Writer(src))
    dst = ShardCopy("books", 0, Mapping(), 1, "uuid-1", str(tmp_path / "b"), {})
    pkg = src.export_since(dst.last_op)
    assert pkg["snapshot"] is not None      # the log no longer reaches back to the start
    dst.install(pkg["snapshot"], pkg["records"])
    assert state(dst) == state(src)
    # and it survives its own restart
    again = ShardCopy("books", 0, Mapping(), 1, "uuid-1", str(tmp_path / "b"), {})
    assert state(again) == state(src)


def test_index_metadata_roundtrips_and_deleted_indices_are_forgotten(tmp_path: Path) -> None:
    store = MetaStore(tmp_path)
    meta = {"number_of_shards": 1, "settings": {}}
    store.save({**meta, "name": "a", "uuid": "u1", "created_ms": 1})
    store.save({**meta, "name": "b", "uuid": "u2", "created_ms": 2})
    (tmp_path / "indices" / "orphan").mkdir()      # no meta.json: reported, never removed
    (tmp_path / "indices" / ".deleting-u0").mkdir()   # an interrupted deletion: finished
    assert [m["name"] for m in store.load_all()] == ["a", "b"]
    assert [(p["uuid"], p["reason"]) for p in store.problems] == \
        [("orphan", "meta.json is missing")]
    store.delete("u1")
    assert [m["name"] for m in store.load_all()] == ["b"]
    assert sorted(p.name for p in (tmp_path / "indices").iterdir()) == ["orphan", "u2"]
    (tmp_path / "indices" / "u2" / "meta.json").write_bytes(b'{"name": "b", not json')
    assert store.load_all() == []                  # one garbled index stops nothing else
    assert {p["uuid"]: p["index"] for p in store.problems} == {"orphan": None, "u2": "b"}
    assert (tmp_path / "indices" / "u2" / "meta.json").exists()
