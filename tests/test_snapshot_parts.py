"""Incremental snapshots (``snapshot_store.py``, ``snapshot_state.py``): a flush writes only
the segments and buffered documents no part holds yet, a copy recovers the same state from
them, a damaged or missing part is reported naming it, and a whole (format 1) snapshot written
by an older version still loads."""
from __future__ import annotations

from pathlib import Path

import pytest

from shardsearch.cluster.engine.check import check_copy
from shardsearch.cluster.engine.snapshot_store import decode_snapshot, encode_snapshot
from shardsearch.cluster.engine.storage import decode_value, encode_value
from tests.test_storage import Writer, load, open_copy, state

pytestmark = pytest.mark.young_collections

EVERY_FLUSH = {"translog.flush_threshold_size": "1gb"}   # flushes only when asked


def _docs(lo: int, hi: int) -> dict[str, dict]:
    return {str(i): {"title": f"hello world {i} " + "x" * 200, "n": i} for i in range(lo, hi)}


def _parts(c) -> list[Path]:
    return sorted(p for p in Path(c.dir).iterdir() if p.name.startswith("part-"))


def _manifest(c) -> dict:
    snap = next(p for p in Path(c.dir).iterdir() if p.name.startswith("snap-"))
    return decode_snapshot(snap.read_bytes(), str(snap))[0]


def test_a_flush_writes_only_the_documents_buffered_since_the_last_one(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    w = Writer(c)
    w.index(_docs(0, 200))
    c.flush()
    first = c.snaps.written_bytes
    w.index(_docs(200, 210))
    c.flush()
    assert c.snaps.written_bytes < first / 5       # ten documents, not two hundred and ten
    assert c.snaps.latest_bytes > 5 * c.snaps.written_bytes   # a load reads all of them
    assert len(_manifest(c)["buffer_parts"]) == 2 and len(_parts(c)) == 2
    before = state(c)
    assert state(open_copy(tmp_path)) == before


def test_a_segment_is_written_once_and_its_deletes_go_in_the_manifest(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    w = Writer(c)
    w.index(_docs(0, 100), refresh=True)
    c.flush()
    seg_part = _manifest(c)["segments"][0]["part"]
    w.delete("7")
    w.index({"8": {"title": "hello again"}})
    c.flush()
    assert _manifest(c)["segments"][0]["part"] == seg_part
    assert c.snaps.written_bytes < c.snaps.latest_bytes / 5
    w.send("refresh")
    w.delete("9")
    c.flush()
    before = state(c)
    assert check_copy(Path(c.dir)) == []          # whole parts: nothing to report
    again = open_copy(tmp_path)
    assert state(again) == before and "7" not in again.core.live


def test_overwrites_and_deletes_in_the_buffer_between_flushes_recover_exactly(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    w = Writer(c)
    w.index(_docs(0, 100))
    c.flush()
    w.index({"3": {"title": "hello three again"}, "150": {"title": "hello new"}})
    w.delete("4")
    w.delete("150")
    w.index({"4": {"title": "hello four is back"}})
    c.flush()
    w.delete("99")               # the last document of the first part: the chain restarts
    c.flush()
    w.index({"200": {"title": "hello after"}})
    before = state(c)
    again = open_copy(tmp_path)
    assert state(again) == before
    assert list(again.core.buffer) == list(c.core.buffer)   # the buffer's order, too


def test_the_mixed_load_recovers_the_same_state_with_a_flush_after_every_command(
        tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "1b"})
    load(Writer(c))
    before = state(c)
    again = open_copy(tmp_path)
    assert again.recovery["replayed"] == 0 and state(again) == before
    w = Writer(again)
    w.index(_docs(500, 520))
    after = state(again)
    assert state(open_copy(tmp_path)) == after


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete"])
def test_a_damaged_or_missing_part_fails_the_copy_naming_the_part(tmp_path: Path,
                                                                  damage: str) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    w = Writer(c)
    w.index(_docs(0, 50), refresh=True)
    w.index(_docs(50, 60))
    c.flush()
    part = _parts(c)[0]
    data = bytearray(part.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
        part.write_bytes(bytes(data))
    elif damage == "truncate":
        part.write_bytes(bytes(data[:-10]))
    else:
        part.unlink()
    again = open_copy(tmp_path)
    assert again.failure is not None and part.name in again.failure
    assert again.last_op == -1
    findings = check_copy(Path(c.dir))
    assert any(part.name in f.path and f.severity == "damage" for f in findings)


def test_a_part_the_manifest_does_not_name_is_refused(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    w = Writer(c)
    w.index(_docs(0, 20))
    c.flush()
    part = _parts(c)[0]
    other = open_copy(tmp_path / "other", **EVERY_FLUSH)
    Writer(other).index(_docs(100, 120))
    other.flush()
    part.write_bytes(_parts(other)[0].read_bytes())        # whole, but another part
    again = open_copy(tmp_path)
    assert again.failure is not None and part.name in again.failure


def test_a_whole_snapshot_written_by_an_older_version_still_loads(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    load(Writer(c))
    header, sections = c.export_state()
    assert header.get("format") is None                     # format 1: whole, as before
    for sec in sections:                  # fields as JSON, as older versions wrote them
        if sec["kind"] == "buffer":
            sec["docs"] = [[*d[:5], encode_value(decode_value(d[5]))] for d in sec["docs"]]
            assert all(d[5][0] == "j" for d in sec["docs"])
    whole = encode_snapshot(header, sections)
    c.snaps.prune(c.snaps.write(c.last_op, whole), whole)
    c.wal.restart_after(c.last_op)
    Writer(c).index({"late": {"title": "hello late"}})
    before = state(c)
    again = open_copy(tmp_path)
    assert again.failure is None and again.recovery["snapshot"] is not None
    assert state(again) == before
    again.flush()                                           # and goes on incrementally
    assert _manifest(again)["format"] == 2
    assert state(open_copy(tmp_path)) == before


def test_a_buffer_count_that_does_not_match_the_manifest_is_refused(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **EVERY_FLUSH)
    Writer(c).index(_docs(0, 20))
    c.flush()
    snap = next(p for p in Path(c.dir).iterdir() if p.name.startswith("snap-"))
    header, sections = decode_snapshot(snap.read_bytes(), str(snap))
    header["buffer_docs"] = 21
    header.pop("kind")
    snap.write_bytes(encode_snapshot(header, sections))
    again = open_copy(tmp_path)
    assert again.failure is not None and snap.name in again.failure
    assert "buffer parts hold 20 documents" in again.failure


def test_many_small_flushes_keep_the_buffer_chain_logarithmic_and_exact(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "1b"})
    w = Writer(c)
    for b in range(100):
        w.index(_docs(b * 3, b * 3 + 3))
    chain = _manifest(c)["buffer_parts"]
    assert c.core.counters["flush_total"] >= 100 and len(chain) <= 16
    assert sum(e["docs"] for e in chain) == len(c.core.buffer) == 300
    before = state(c)
    assert state(open_copy(tmp_path)) == before


def test_a_flush_whose_old_files_cannot_be_removed_still_stands_and_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new manifest is taken as the copy's own before any old file goes: an I/O error
    while removing them (here the directory's fsync) is counted, and the next snapshot never
    names a part that was deleted."""
    import shardsearch.cluster.engine.snapshot_store as store
    c = open_copy(tmp_path, **EVERY_FLUSH)
    w = Writer(c)
    for b in range(12):                       # a chain long enough for the next to absorb it
        w.index(_docs(b * 3, b * 3 + 3))
        c.flush()
    real = store.fsync_dir

    def fails_once(path: Path) -> None:
        monkeypatch.setattr(store, "fsync_dir", real)
        raise OSError(5, "EIO")
    monkeypatch.setattr(store, "fsync_dir", fails_once)
    w.index(_docs(100, 140))
    c.flush()                                 # stands: only the clean-up failed
    assert c.storage_failures["flush"] == 1
    for i in range(100, 139):
        w.delete(str(i))
    w.index({"late": {"title": "hello late"}})
    c.flush()
    before = state(c)
    again = open_copy(tmp_path)
    assert again.failure is None and state(again) == before


def test_a_flush_before_any_command_writes_nothing(tmp_path: Path) -> None:
    """A copy with no command has nothing to snapshot (a snapshot named for op -1 was never
    read back nor removed)."""
    c = open_copy(tmp_path, **EVERY_FLUSH)
    assert c.flush() == -1
    assert not [p for p in Path(c.dir).iterdir() if p.name.startswith(("snap-", "part-"))]
    Writer(c).index(_docs(0, 3))
    c.flush()
    assert [p.name for p in Path(c.dir).iterdir() if p.name.startswith("snap-")] == \
        ["snap-0000000000000000.snap"]
