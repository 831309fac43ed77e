"""When a shard copy writes a snapshot of its state (``translog_settings.flush_due``): an
explicit ``index.translog.flush_threshold_size`` as set; by default also not before the log
since the last snapshot is as large as that snapshot. Snapshots are incremental
(``snapshot_store.py``), so a long bulk load's snapshots cost linear work either way."""
from __future__ import annotations

from pathlib import Path

import pytest

from shardsearch.cluster.distribution import translog_settings
from shardsearch.cluster.distribution.shard_copy import ShardCopy
from shardsearch.cluster.distribution.translog_settings import flush_due
from tests.test_storage import Writer, open_copy, state

EXPLICIT_2KB = {"translog.flush_threshold_size": "2kb"}


@pytest.fixture(autouse=True)
def small_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 2kb default threshold, so that a few thousand small documents show the schedule."""
    monkeypatch.setattr(translog_settings, "DEFAULT_FLUSH_THRESHOLD", 2048)


def test_an_explicit_flush_threshold_is_obeyed_as_set() -> None:
    assert flush_due(EXPLICIT_2KB, 2048, 10 << 20)
    assert not flush_due(EXPLICIT_2KB, 2047, 0)


def test_by_default_the_log_may_grow_to_the_last_snapshots_size() -> None:
    assert flush_due({}, 2048, 0)
    assert not flush_due({}, 2047, 0)
    assert not flush_due({}, 5000, 5001)
    assert flush_due({}, 5001, 5001)


def _load(path: Path, batches: int, **settings: str) -> tuple[ShardCopy, int]:
    """A copy loaded with ``batches`` of 20 documents, and the bytes of the snapshots it
    wrote meanwhile."""
    c = open_copy(path, **settings)
    w = Writer(c)
    written = 0
    for b in range(batches):
        before = c.core.counters["flush_total"]
        w.index({f"{b}-{i}": {"title": f"hello world {b} {i}", "n": i} for i in range(20)})
        if c.core.counters["flush_total"] != before:
            written += c.snaps.written_bytes
    return c, written


def test_default_snapshots_of_a_load_cost_no_more_than_its_log_and_its_last_snapshot(
        tmp_path: Path) -> None:
    c, written = _load(tmp_path / "default", 80)
    whole, _ = _load(tmp_path / "whole", 80, **{"translog.flush_threshold_size": "1gb"})
    assert whole.wal is not None and whole.core.counters["flush_total"] == 0
    assert c.core.counters["flush_total"] >= 2
    assert written <= whole.wal.bytes_since_snapshot + c.snaps.latest_bytes


def test_snapshot_work_grows_linearly_with_the_load_whatever_the_threshold(
        tmp_path: Path) -> None:
    small = _load(tmp_path / "a", 40)[1], _load(tmp_path / "b", 40, **EXPLICIT_2KB)[1]
    large = _load(tmp_path / "c", 160)[1], _load(tmp_path / "d", 160, **EXPLICIT_2KB)[1]
    assert large[0] < 6 * small[0]          # four times the documents: about four times
    assert large[1] < 6 * small[1]          # a snapshot every 2kb: each writes what is new


def test_a_copy_recovers_the_same_state_whatever_the_snapshot_schedule(tmp_path: Path) -> None:
    c, _ = _load(tmp_path, 60)
    before = state(c)
    assert c.core.counters["flush_total"] >= 2
    again = open_copy(tmp_path)
    assert again.recovery["snapshot"] is not None and again.recovery["replayed"] > 0
    assert state(again) == before


def test_the_default_threshold_grows_with_the_snapshot_only_up_to_512mb() -> None:
    cap = translog_settings.MAX_DEFAULT_FLUSH_THRESHOLD
    assert cap == 512 << 20
    assert not flush_due({}, cap - 1, 10 * cap)
    assert flush_due({}, cap, 10 * cap)


def test_a_reopened_copy_remembers_its_last_snapshots_size(tmp_path: Path) -> None:
    c, _ = _load(tmp_path, 60)
    assert c.snaps.latest_bytes > 0
    again = open_copy(tmp_path)
    assert again.snaps.latest_bytes == c.snaps.latest_bytes


def test_a_copy_catching_up_over_a_long_log_gets_a_snapshot_not_the_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c, _ = _load(tmp_path, 10, **{"translog.flush_threshold_size": "1gb"})
    assert c.wal is not None and c.wal.bytes_since_snapshot > 1000
    short = c.export_since(0)
    assert short["snapshot"] is None and len(short["records"]) == c.last_op > 0
    monkeypatch.setattr(translog_settings, "CATCH_UP_LOG_BYTES", 1000)
    long = c.export_since(0)
    assert long["snapshot"] is not None and long["records"] == []
    follower = open_copy(tmp_path / "follower")
    follower.install(long["snapshot"], long["records"])
    assert state(follower) == state(c)
