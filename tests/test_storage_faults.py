"""Storage that never lies: damage on disk is reported, never silently truncated or deleted.

Real files throughout. A shard copy (``ShardCopy``, in process) for each kind of damage; the
real coordinator and shard groups over ``LocalTransport`` for a damaged replica rebuilt from a
healthy copy; ``shardsearch serve`` as its own process (real Ray, real uvicorn) for what a
client sees; ``shardsearch check`` as a subprocess. A full disk is simulated at the file layer
(``.inject-enospc`` in a copy's directory makes its writes raise ``OSError(ENOSPC)``).
"""
from __future__ import annotations

import asyncio
import logging
import pickle
import subprocess
from pathlib import Path

import httpx
import orjson
import pytest

from conftest import free_port
from service_proc import EXE, ServeProcess
from test_replication import Service, corpus, docs_of
from test_storage import Writer, open_copy, state

from shardsearch.cluster.distribution.copy_errors import CopyCorrupted
from shardsearch.cluster.distribution.shard_copy import DiskFull, ShardCopy
from shardsearch.cluster.distribution.shard_service import ShardService
from shardsearch.cluster.distribution.shard_group import STARTED
from shardsearch.cluster.engine.damage import FAULT_ENOSPC, MANIFEST
from shardsearch.cluster.engine.exact_json import UnstorableValue
from shardsearch.cluster.engine.meta_store import MetaStore
from shardsearch.cluster.engine.snapshot_store import encode_snapshot
from shardsearch.cluster.engine.storage import (decode_value, encode_command, encode_op,
                                                encode_pickled, encode_value, frame)
from shardsearch.cluster.engine.writes import WriteOp

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


def log_file(c: ShardCopy) -> Path:
    return next(p for p in Path(c.dir).iterdir() if p.name.startswith("log-"))


def loaded(tmp_path: Path, batches: int = 5) -> tuple[ShardCopy, list[dict]]:
    """A copy with ``batches`` acknowledged bulks of 3 documents; its state after each."""
    MetaStore(tmp_path).save({"name": "books", "uuid": "uuid-1", "created_ms": 1,
                              "number_of_shards": 1, "number_of_replicas": 0, "settings": {}})
    c = open_copy(tmp_path)
    w = Writer(c)
    states = []
    for b in range(batches):
        w.index({f"d{b}-{i}": {"title": f"hello {b} {i}"} for i in range(3)}, refresh=True)
        states.append(state(c))
    c.wal.close()
    return c, states


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


def corrupted_dirs(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("corrupted-*") if p.is_dir())


def check(data: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, "check", str(data), *extra], capture_output=True, text=True,
                          timeout=120)


# --- one copy, each kind of damage ----------------------------------------------------------------

def test_a_flipped_byte_in_the_middle_of_the_log_fails_the_copy_and_keeps_the_file(
        tmp_path: Path) -> None:
    c, _ = loaded(tmp_path)
    log = log_file(c)
    before = log.read_bytes()
    flip(log, len(before) // 3)
    damaged = log.read_bytes()
    again = open_copy(tmp_path)
    assert again.failure and log.name in again.failure and "not a torn tail" in again.failure
    assert "intact records follow" in again.failure
    assert again.position()["failed"] and again.last_op == -1
    assert log.read_bytes() == damaged              # nothing truncated, nothing deleted


class _OpensAFile:
    """A value whose unpickling would run code: ``open(path, "w")``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def _hostile(op: WriteOp) -> dict:
    """``op`` encoded as a damaged or hostile file would hold it: its fields pickled as they
    are, past the check every write passes (``encode_value`` refuses them)."""
    return {**encode_op(WriteOp(op.op, op.id, op.seq, op.source)),
            "fields": encode_pickled(pickle.dumps(op.fields, protocol=5))}


def test_a_stored_value_that_names_code_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    value = {"title": [_OpensAFile(sentinel)]}
    tagged = encode_pickled(pickle.dumps(value, protocol=5))      # as a hostile file holds it
    with pytest.raises(pickle.UnpicklingError, match=r"io\.open"):
        decode_value(tagged)
    with pytest.raises(UnstorableValue, match=r"io\.open"):     # and a write never stores it
        encode_value(value)
    assert not sentinel.exists()
    assert decode_value(encode_value({"t": [("a", 1), b"x", 1.5, None]})) == \
        {"t": [("a", 1), b"x", 1.5, None]}                     # plain data still reads


def test_a_log_record_naming_code_fails_the_copy_runs_nothing_and_keeps_the_file(
        tmp_path: Path) -> None:
    c, _ = loaded(tmp_path, batches=2)
    sentinel = tmp_path / "ran"
    op = WriteOp(op="index", id="evil", seq=99, source=b"{}",
                 fields={"title": [_OpensAFile(sentinel)]})            # type: ignore[list-item]
    body = {"id": "c-evil", "prev": c.last_id, "ops": [_hostile(op)], "mapping": None,
            "refresh": False}
    log = log_file(c)
    with log.open("ab") as f:
        f.write(frame(encode_command(c.last_op + 1, "apply", body)))
    written = log.read_bytes()
    again = open_copy(tmp_path)
    assert again.failure and f"command {c.last_op + 1}" in again.failure
    assert "cannot be read" in again.failure and "io.open" in again.failure
    assert again.position()["failed"] and not sentinel.exists()
    assert log.read_bytes() == written              # nothing truncated, nothing deleted
    r = check(tmp_path)                             # the offline check finds it too
    assert r.returncode == 1 and log.name in r.stdout and "cannot be read" in r.stdout
    assert "cutting here loses 1 commands (1 documents" in r.stdout
    assert not sentinel.exists() and log.read_bytes() == written


def test_a_snapshot_buffer_naming_code_fails_the_copy_and_check_and_runs_nothing(
        tmp_path: Path) -> None:
    c, _ = loaded(tmp_path, batches=1)
    c = open_copy(tmp_path)
    sentinel = tmp_path / "ran"
    op = WriteOp(op="index", id="evil", seq=99, source=b"{}",
                 fields={"title": [_OpensAFile(sentinel)]})            # type: ignore[list-item]
    ShardService.apply(c, [op], None, False)   # buffered past the log (no write stores it)
    c.flush()                                  # the snapshot keeps its pickled fields
    c.wal.close()
    again = open_copy(tmp_path)
    assert again.failure and "newest snapshot" in again.failure
    assert "io.open" in again.failure and not sentinel.exists()
    r = check(tmp_path)
    assert r.returncode == 1 and ".snap" in r.stdout and "cannot be read" in r.stdout
    assert not sentinel.exists()


def test_a_catch_up_sent_a_value_naming_code_changes_nothing_and_names_it(
        tmp_path: Path) -> None:
    src, _ = loaded(tmp_path / "src", batches=1)
    src = open_copy(tmp_path / "src")
    sentinel = tmp_path / "ran"
    op = WriteOp(op="index", id="evil", seq=99, source=b"{}",
                 fields={"title": [_OpensAFile(sentinel)]})            # type: ignore[list-item]
    ShardService.apply(src, [op], None, False)   # past the log (no write stores it)
    header, sections = src.export_state()
    sent = encode_snapshot(header, sections)
    dst, _ = loaded(tmp_path / "dst", batches=2)
    dst = open_copy(tmp_path / "dst")
    before = state(dst), dst.last_op
    with pytest.raises(CopyCorrupted, match="the snapshot it was sent cannot be read"):
        dst.install(sent, [])
    assert (state(dst), dst.last_op) == before and not sentinel.exists()
    record = frame(encode_command(dst.last_op + 1, "apply", {
        "id": "c-evil", "prev": dst.last_id, "ops": [_hostile(op)], "mapping": None,
        "refresh": False}))[8:]
    with pytest.raises(CopyCorrupted, match="a log record it was sent cannot be read"):
        dst.install(None, [record])
    assert (state(dst), dst.last_op) == before and not sentinel.exists()


def test_a_torn_last_record_is_cut_logged_and_everything_acknowledged_kept(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    c, states = loaded(tmp_path)
    log = log_file(c)
    size = log.stat().st_size
    with open(log, "r+b") as f:
        f.truncate(size - 7)                        # the last bulk was being written
    with caplog.at_level(logging.WARNING, logger="shardsearch.storage"):
        again = open_copy(tmp_path)
    assert again.failure is None
    assert state(again)["docs"] == states[-2]["docs"]
    assert again.recovery["cut"] and "torn" in again.recovery["cut"][0]
    assert any("torn last record" in r.getMessage() for r in caplog.records)


def test_a_bad_checksum_in_the_last_record_ending_at_eof_is_a_torn_tail(tmp_path: Path) -> None:
    c, states = loaded(tmp_path)
    log = log_file(c)
    flip(log, log.stat().st_size - 3)
    again = open_copy(tmp_path)
    assert again.failure is None and state(again)["docs"] == states[-2]["docs"]


def test_a_deleted_log_fails_the_copy_naming_the_file(tmp_path: Path) -> None:
    c, _ = loaded(tmp_path)
    log = log_file(c)
    log.unlink()
    again = open_copy(tmp_path)
    assert again.failure and log.name in again.failure and "missing" in again.failure


def test_a_copy_older_than_files_json_lists_its_files_at_open(tmp_path: Path) -> None:
    """A copy written before ``files.json`` existed: opening it (no write) lists its files,
    so a log deleted afterwards is detected at the very next open, not opened as empty."""
    c, states = loaded(tmp_path)
    manifest = Path(c.dir) / MANIFEST
    manifest.unlink()
    opened = open_copy(tmp_path)
    assert opened.failure is None and state(opened)["docs"] == states[-1]["docs"]
    assert manifest.exists()
    opened.wal.close()
    log = log_file(opened)
    log.unlink()
    again = open_copy(tmp_path)
    assert again.failure and log.name in again.failure and "missing" in again.failure


def test_a_full_disk_fails_the_write_and_loses_nothing_acknowledged(tmp_path: Path) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    w.index({"a": {"title": "hello a"}}, refresh=True)
    kept = state(c)
    size = log_file(c).stat().st_size
    (Path(c.dir) / FAULT_ENOSPC).write_text("")
    with pytest.raises(DiskFull) as err:
        w.index({"b": {"title": "hello b"}}, refresh=True)
    assert err.value.status == 429 and err.value.es_type == "cluster_block_exception"
    assert "flood-stage watermark" in err.value.reason
    assert state(c) == kept and log_file(c).stat().st_size == size   # rolled back whole
    assert c.storage_failures["write"] == 1
    (Path(c.dir) / FAULT_ENOSPC).unlink()
    w.op, w.prev = c.last_op + 1, c.last_id          # the group would resend it
    w.index({"b": {"title": "hello b"}}, refresh=True)
    assert set(state(open_copy(tmp_path))["docs"]) == {"a", "b"}


def test_a_failed_snapshot_is_retried_counted_and_reported(tmp_path: Path) -> None:
    c = open_copy(tmp_path, **{"translog.flush_threshold_size": "1kb"})
    (Path(c.dir) / FAULT_ENOSPC).write_text("snapshot")
    w = Writer(c)
    for b in range(6):
        w.index({f"{b}-{i}": {"title": "hello " * 20} for i in range(5)}, refresh=True)
    info = c.position()["storage_failures"]
    assert info["flush"] >= 1 and "No space left" in str(info["last_error"])
    assert not list(Path(c.dir).glob("snap-*")) and not list(Path(c.dir).glob(".snap-*"))
    (Path(c.dir) / FAULT_ENOSPC).unlink()
    c._flush_retry_at = 0.0                          # the back-off has passed
    w.index({"z": {"title": "hello"}}, refresh=True)
    assert list(Path(c.dir).glob("snap-*"))          # retried, and it worked
    assert len(state(open_copy(tmp_path))["docs"]) == 31


# --- shardsearch check ------------------------------------------------------------------------

def test_check_a_clean_data_dir_exits_0(tmp_path: Path) -> None:
    loaded(tmp_path)
    r = check(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "clean" in r.stdout


def test_check_reports_each_damage_naming_the_file(tmp_path: Path) -> None:
    c, _ = loaded(tmp_path / "a")
    flip(log_file(c), log_file(c).stat().st_size // 3)
    r = check(tmp_path / "a")
    assert r.returncode == 1 and log_file(c).name in r.stdout and "DAMAGE" in r.stdout
    c, _ = loaded(tmp_path / "b")
    log_file(c).unlink()
    r = check(tmp_path / "b")
    assert r.returncode == 1 and "missing" in r.stdout and "log-" in r.stdout
    c, _ = loaded(tmp_path / "c", batches=1)
    meta = tmp_path / "c" / "indices" / "uuid-1" / "meta.json"
    meta.write_bytes(b'{"name": "books", garbage')
    r = check(tmp_path / "c")
    assert r.returncode == 1 and str(meta) in r.stdout and "unreadable" in r.stdout
    meta.unlink()
    r = check(tmp_path / "c")
    assert r.returncode == 1 and str(meta) in r.stdout and "missing" in r.stdout


def test_check_repair_keeps_the_intact_prefix_and_says_what_it_dropped(tmp_path: Path) -> None:
    c, states = loaded(tmp_path)
    log = log_file(c)
    original = log.read_bytes()
    records = _record_offsets(original)
    flip(log, records[2] + 12)                       # inside the third record (of five)
    r = check(tmp_path, "--repair")
    assert r.returncode == 0, r.stdout
    assert "dropped 3 commands (6 documents in the readable ones)" in r.stdout
    aside = corrupted_dirs(tmp_path)
    assert aside and (aside[0] / log.name).read_bytes() != log.read_bytes()
    assert (aside[0] / "REASON.txt").exists()
    again = open_copy(tmp_path)
    assert again.failure is None and state(again)["docs"] == states[1]["docs"]
    assert check(tmp_path).returncode == 0


def test_check_repair_refuses_a_data_dir_a_service_holds(tmp_path: Path) -> None:
    from shardsearch.cluster.engine.meta_store import DataDirLock
    loaded(tmp_path)
    lock = DataDirLock(tmp_path)
    try:
        r = check(tmp_path, "--repair")
        assert r.returncode == 2 and "in use" in r.stderr
    finally:
        lock.release()
    assert check(tmp_path / "nowhere").returncode == 2


def _record_offsets(data: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(data):
        out.append(pos)
        pos += 8 + int.from_bytes(data[pos:pos + 4], "little")
    return out


def test_check_finds_a_gap_in_the_command_numbers(tmp_path: Path) -> None:
    c, _ = loaded(tmp_path)
    log = log_file(c)
    data = log.read_bytes()
    offs = _record_offsets(data) + [len(data)]
    log.write_bytes(data[:offs[1]] + data[offs[2]:])   # record 1 cut out, frames intact
    r = check(tmp_path)
    assert r.returncode == 1 and "jump" in r.stdout
    assert open_copy(tmp_path).failure                  # and the service refuses it too


# --- replicas: a damaged copy is rebuilt from a healthy one -------------------------------------

def test_a_damaged_replica_is_rebuilt_from_the_healthy_copy(tmp_path: Path) -> None:
    async def main() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("b", {"settings": {"number_of_shards": 1, "number_of_replicas": 1}})
        await s.bulk("b", corpus(6))
        await s.bulk("b", corpus(6, start=6))
        await s.bulk("b", corpus(6, start=12))
        g = s.group("b")
        d1 = Path(g.copies[1].handle.obj.dir)
        s.close()
        log = next(d1.glob("log-*.wal"))
        flip(log, log.stat().st_size // 3)
        t = await Service(tmp_path).start()
        g = t.group("b")
        assert g.copies[1].state != STARTED and "corrupted" in g.copies[1].reason
        health = await t.coord.health()
        assert health["status"] == "yellow"
        assert any(p["kind"] == "damaged_copy" and p["copy"] == 1
                   for p in health["storage_problems"])
        await t.settle()
        assert g.copies[1].state == STARTED
        assert docs_of(g.copies[1].handle) == docs_of(g.copies[0].handle)
        assert len(docs_of(g.copies[1].handle)) == 18
        aside = corrupted_dirs(d1)
        assert aside and (aside[0] / log.name).exists()     # moved aside, not deleted
        assert "storage_problems" not in await t.coord.health()
        t.close()
    asyncio.run(main())


# --- the service: what a client sees (real Ray, real uvicorn) -----------------------------------

ARGS = ["--num-cpus", "2", "--object-store-mb", "80"]


def _bulk(c: httpx.Client, index: str, start: int, n: int) -> httpx.Response:
    lines = []
    for i in range(start, start + n):
        lines.append(orjson.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(orjson.dumps({"title": f"doc {i}", "n": i}))
    return c.post("/_bulk?refresh=true", content=b"\n".join(lines) + b"\n",
                  headers={"content-type": "application/x-ndjson"})


def _copy_dir(data: Path, uuid: str) -> Path:
    return data / "indices" / uuid / "0" / "0"


@pytest.mark.slow
def test_the_service_reports_each_damage_and_keeps_serving_the_rest(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = free_port()
    names = ["good", "bad", "nolog", "nometa", "garbled"]
    svc = ServeProcess(port, [*ARGS, "--data-dir", str(data)], log=tmp_path / "serve1.log",
                       env={"SHARDSEARCH_WRITE_TIMEOUT": "5"})
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            uuids = {}
            for n in names:
                assert c.put(f"/{n}", json={"settings": {"number_of_shards": 1,
                                                         "number_of_replicas": 0}}
                             ).status_code == 200
                for b in range(3):
                    assert not _bulk(c, n, b * 10, 10).json()["errors"]
                uuids[n] = c.get(f"/{n}/_settings").json()[n]["settings"]["index"]["uuid"]
    finally:
        svc.stop()
    log = next(_copy_dir(data, uuids["bad"]).glob("log-*.wal"))
    flip(log, log.stat().st_size // 2)
    next(_copy_dir(data, uuids["nolog"]).glob("log-*.wal")).unlink()
    (data / "indices" / uuids["nometa"] / "meta.json").unlink()
    (data / "indices" / uuids["garbled"] / "meta.json").write_bytes(b'{"name": "garbled", ')
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "serve2.log",
                       env={"SHARDSEARCH_WRITE_TIMEOUT": "5"})
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            health = c.get("/_cluster/health").json()
            assert health["status"] == "red"
            probs = {(p["kind"], p.get("index")): p for p in health["storage_problems"]}
            assert log.name in probs[("damaged_copy", "bad")]["reason"]
            assert "missing" in probs[("damaged_copy", "nolog")]["reason"]
            assert probs[("index_directory", None)]["uuid"] == uuids["nometa"]
            assert "not JSON" in probs[("index_directory", "garbled")]["reason"]
            rows = {r["index"]: r for r in c.get("/_cat/indices?format=json&h=health,index,"
                                                 "docs.count,health.reason").json()}
            assert rows["good"]["health"] == "green" and rows["good"]["docs.count"] == "30"
            assert rows["bad"]["health"] == "red" and log.name in rows["bad"]["health.reason"]
            assert rows[uuids["nometa"]]["health"] == "red"
            assert rows["garbled"]["health"] == "red"
            shards = {r["index"]: r for r in c.get("/_cat/shards?format=json&h=index,state,"
                                                   "unassigned.reason").json()}
            assert shards["bad"]["state"] == "UNASSIGNED"
            assert "corrupted" in shards["bad"]["unassigned.reason"]
            # every request that touches the damaged index says why
            r = c.post("/bad/_search", json={"query": {"match_all": {}}})
            assert r.status_code == 503, r.text
            assert r.json()["error"]["type"] == "search_phase_execution_exception"
            assert log.name in r.text and "no_shard_available_action_exception" in r.text
            item = _bulk(c, "bad", 100, 1).json()["items"][0]["index"]
            assert item["status"] == 503
            assert item["error"]["type"] == "unavailable_shards_exception"
            assert log.name in item["error"]["reason"]
            r = c.post("/garbled/_search", json={})
            assert r.status_code == 404 and "not JSON" in r.json()["error"]["storage_problem"]
            # the rest serves
            r = c.post("/good/_search", json={"query": {"match_all": {}}})
            assert r.json()["hits"]["total"]["value"] == 30
            # a full disk: the bulk's items fail with ES's flood-stage answer, nothing is lost
            fault = _copy_dir(data, uuids["good"]) / FAULT_ENOSPC
            fault.write_text("")
            items = _bulk(c, "good", 100, 5).json()["items"]
            assert {i["index"]["status"] for i in items} == {429}
            assert items[0]["index"]["error"]["type"] == "cluster_block_exception"
            assert "flood-stage watermark" in items[0]["index"]["error"]["reason"]
            r = c.put("/good/_doc/one", json={"title": "one"})
            assert r.status_code == 429 and r.json()["error"]["type"] == \
                "cluster_block_exception"
            row = c.get("/_cat/shards/good?format=json&h=index,storage.failures").json()[0]
            assert row["storage.failures"] == "flush=0,sync=0,write=2"
            fault.unlink()
            assert not _bulk(c, "good", 200, 5).json()["errors"]
            assert c.get("/good/_count").json()["count"] == 35
    finally:
        svc.stop()
    # nothing was deleted: the damaged files and the orphan directory are all still there
    assert log.exists() and (data / "indices" / uuids["nometa"]).is_dir()
    assert (data / "indices" / uuids["garbled"] / "meta.json").exists()
    r = check(data)
    assert r.returncode == 1 and log.name in r.stdout and "meta.json" in r.stdout


def test_health_lists_storage_problems_only_when_there_are_some() -> None:
    from shardsearch.cluster.indices.health import cluster_health
    ok = [{"index": "a", "shard": 0, "copy": 0, "prirep": "p", "state": "STARTED"}]
    assert "storage_problems" not in cluster_health(ok)
    flush = [{**ok[0], "storage_failures": {"flush": 3, "sync": 0, "write": 0,
                                            "last_error": "flush failed: [Errno 28]"}}]
    h = cluster_health(flush)
    assert h["status"] == "green"          # still serving: the log holds everything
    assert h["storage_problems"] == [{"kind": "failed_background_io", "index": "a", "shard": 0,
                                      "copy": 0, "flush": 3, "sync": 0, "write": 0,
                                      "last_error": "flush failed: [Errno 28]"}]
    orphan = {"index": None, "uuid": "u", "path": "/d/indices/u", "reason": "meta.json is missing"}
    h = cluster_health(ok, dir_problems=[orphan])
    assert h["status"] == "red" and h["storage_problems"][0]["kind"] == "index_directory"


def test_zeros_after_the_last_record_are_a_torn_tail_not_records(tmp_path: Path) -> None:
    c, states = loaded(tmp_path)
    with open(log_file(c), "ab") as f:
        f.write(b"\0" * 64)                  # a file system that extended the file, unwritten
    again = open_copy(tmp_path)
    assert again.failure is None and state(again)["docs"] == states[-1]["docs"]
