"""One copy of a shard (primary or replica): a :class:`~.shard_service.ShardService` that
persists every command before acknowledging it and rebuilds itself from disk on (re)start.

Every change to a shard reaches its copies as a numbered *command* (``command(op_no, ...)``),
numbered by the coordinator's :class:`~cluster.replication.ShardGroup`: ``apply`` (a
``WriteBatch``, or a list of ``WriteOp``), ``refresh``, ``set_mapping`` or ``configure``. A copy
runs command ``n`` only right after ``n - 1``:

* ``n <= last_op`` — a retry of something already done: the last command's results are
  answered again (idempotent), older ones are refused;
* ``n > last_op + 1`` — the copy missed commands (it was down): :class:`CopyBehind`, and the
  group catches it up from another copy (``export_since`` / ``install``) before using it again.

Each command also carries its own id and the id of the command before it (log matching, as in
Raft): a copy whose last command is not the one the group committed under that number (it ran
a write that failed everywhere else and was never acknowledged) refuses to go on with
:class:`CopyDiverged`, and the group rebuilds it from an in-sync copy (``reset`` + snapshot).

Because copies run the same commands in the same order they hold the same documents with the
same sequence numbers, versions and *refresh generations*: a generation means the same set of
visible documents on every copy, so statistics, scores and the order of hits do not depend on
which copy answers. (Segment addresses do differ between copies; a search reads one copy per
shard, see ``replication.GroupSession``.)

Durability (``index.translog.durability``): with ``request`` (the default) the command is
applied, appended to the write-ahead log and ``fsync``-ed before the call returns — the
coordinator acknowledges only after that; with ``async`` the log is synced every
``index.translog.sync_interval`` (5s) by a background thread. When the log since the last
snapshot outgrows ``index.translog.flush_threshold_size`` (64mb here) the copy writes a snapshot
of its state — incremental: only what its part files do not hold yet (``snapshot_state.py``) —
and starts a fresh log, so recovery replays only the tail (left at its default, the threshold
grows with the last snapshot up to 512mb: ``translog_settings``).

A copy rebuilt from a snapshot of generation ``G`` can answer any generation ``>= G`` exactly
(``min_generation``); an older one (a point in time opened before the crash) is refused with
``search_context_missing_exception`` rather than answered wrongly.
"""
from __future__ import annotations

import errno
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .coalescing import run_many
from ..errors import IllegalArgument
from .lanes import ThreadLane
from ..engine.mapping import Mapping
from ..engine.shard_messages import READS, FetchedDoc, ShardQuery
from ..engine.merge_policy import MergePolicy
from ..engine.shard_counters import count, dir_bytes
from ..engine.writes import WriteBatch
from .copy_answers import pack, unpack
from .copy_errors import (CopyBehind, CopyCorrupted, CopyDiverged, DiskFull,  # noqa: F401
                          GenerationAhead, GenerationGone)
from ..indices.node_metrics import sample as node_sample
from .shard_service import ShardService, node_id
from .translog_settings import catch_up_by_records, flush_due, translog_settings
from ..engine.damage import MANIFEST, data_files, move_aside, note_files
from ..engine.exact_json import UnstorableValue
from ..engine.snapshot_store import (SnapshotStore, check_readable, decode_snapshot,
                                     encode_snapshot)
from ..engine.storage import (StorageCorrupt, WriteAheadLog, command_args, copy_dir,
                              decode_command, encode_batch, encode_command, encode_mapping,
                              encode_op, UNREADABLE, unreadable_as_corrupt)
from .snapshot_state import SnapshotParts, export_whole, restore

log = logging.getLogger("shardsearch.storage")


class ShardCopy(ShardService):
    """A shard copy with a write-ahead log and snapshots (``data_dir`` None: memory only)."""

    background_merges = True

    def __init__(self, index: str, shard: int, mapping: Mapping, copy: int = 0,
                 index_uuid: str | None = None, data_dir: str | None = None,
                 settings: dict[str, Any] | None = None) -> None:
        super().__init__(index, shard, mapping)
        self.copy = copy
        self.index_uuid = index_uuid or index
        self.settings = dict(settings or {})
        self.last_op = -1
        self.last_id: str | None = None
        self.last_result: Any = None
        self.min_generation = 0
        self.started_at = time.time()
        self.recovery: dict[str, Any] = {"snapshot": None, "replayed": 0, "cut": []}
        self.failure: str | None = None     # damaged files: why this copy cannot serve
        self.storage_failures: dict[str, Any] = {"flush": 0, "sync": 0, "write": 0,
                                                  "last_error": None}
        self._flush_retry_at = 0.0
        self.dir = None if data_dir is None else copy_dir(data_dir, self.index_uuid, shard, copy)
        self.wal: WriteAheadLog | None = None
        self.snaps: SnapshotStore | None = None
        self.parts = SnapshotParts()      # what the snapshot part files hold (``flush``)
        self._syncer: threading.Thread | None = None
        self._stop = threading.Event()
        if self.dir is not None:
            self.snaps = SnapshotStore(self.dir)
            self.wal = WriteAheadLog(self.dir)
            with self._serial_lock:   # the replay's refreshes wake the merge thread
                self._open_files()
        self._configure_syncer()
        self.core.merge_policy = MergePolicy.from_settings(self.settings)  # validated upstream

    @property
    def last_result(self) -> Any:
        """The last command's answer, given again to a retry of that command."""
        return unpack(self._last_result)

    @last_result.setter
    def last_result(self, value: Any) -> None:
        self._last_result = pack(value)

    # --- recovery ---------------------------------------------------------------------------

    def _open_files(self) -> None:
        """Recover; damaged files leave the copy *failed* (empty, taking no commands, its
        files untouched) with the reason, instead of serving less than it acknowledged."""
        try:
            self._recover()
            self._note_files_if_unlisted()
        except (StorageCorrupt, CopyBehind) as e:
            self.failure = str(e)
            log.error("shard [%s][%s] copy [%s] cannot open its files: %s", self.core.index,
                      self.core.shard, self.copy, e)
            ShardService.__init__(self, self.core.index, self.core.shard, self.core.mapping)
            self.last_op, self.last_id, self.last_result, self.min_generation = -1, None, None, 0
            if self.wal is not None:
                self.wal.close()

    def _note_files_if_unlisted(self) -> None:
        """A copy written before ``files.json`` existed lists its files now, at open, so a
        log deleted later is found at the next open rather than after the next write."""
        assert self.dir is not None
        if not (self.dir / MANIFEST).exists():
            try:
                note_files(self.dir)
            except OSError as e:   # a full disk at open: listed at the next file change
                self._count("write", e)

    def _recover(self) -> None:
        """Newest snapshot (if any), then every log record after it; a torn tail is cut."""
        assert self.snaps is not None and self.wal is not None
        snap = self.snaps.latest()
        if snap is not None:
            header, sections = snap
            with unreadable_as_corrupt(self.dir, "the newest snapshot"):
                check_readable(header, sections)
            self._restore(header, sections)
            self.recovery["snapshot"] = header["last_op"]
        for op_no, payload in self.wal.recover(self.last_op):
            if op_no != self.last_op + 1:
                raise CopyBehind(f"log of [{self.core.index}][{self.core.shard}] copy "
                                 f"[{self.copy}] jumps from command {self.last_op} to {op_no}",
                                 last_op=self.last_op)
            with unreadable_as_corrupt(self.dir, f"the log's command {op_no}"):
                cmd = decode_command(payload)
                args = command_args(cmd)
            self.last_result = self._execute(cmd["kind"], args)
            self.last_op, self.last_id = op_no, cmd.get("id")
            self.recovery["replayed"] += 1
        self.recovery["cut"] = list(self.wal.cut)

    # --- commands ---------------------------------------------------------------------------

    @staticmethod
    def _body_of(method: str, args: tuple) -> dict[str, Any]:
        if method == "apply":
            ops, mapping, refresh = (list(args) + [None, False])[:3]
            if isinstance(ops, WriteBatch):
                return {"batch": encode_batch(ops), "mapping": encode_mapping(mapping),
                        "refresh": bool(refresh)}
            return {"ops": [encode_op(o) for o in ops], "mapping": encode_mapping(mapping),
                    "refresh": bool(refresh)}
        if method == "set_mapping":
            return {"mapping": encode_mapping(args[0])}
        if method == "configure":
            return {"settings": dict(args[0])}
        return {}

    def _execute(self, method: str, args: tuple) -> Any:
        if method == "apply":
            return ShardService.apply(self, *args)
        if method == "refresh":
            return ShardService.refresh(self)
        if method == "set_mapping":
            return ShardService.set_mapping(self, args[0])
        if method == "configure":
            self.settings.update({k: v for k, v in args[0].items() if v is not None})
            for k in [k for k, v in args[0].items() if v is None]:
                self.settings.pop(k, None)
            self._configure_syncer()
            self.core.merge_policy = MergePolicy.from_settings(self.settings)
            return None
        raise ValueError(f"unknown shard command [{method}]")

    def command(self, op_no: int, method: str, args: tuple, cmd_id: str | None = None,
                prev_id: str | None = None) -> Any:
        """Run command ``op_no`` (see the module docstring); durable before it returns.

        ``cmd_id`` names the command (a retry repeats it), ``prev_id`` the one it follows.
        """
        where = f"[{self.core.index}][{self.core.shard}] copy [{self.copy}]"
        if self.failure is not None:
            raise CopyCorrupted(f"{where} is damaged: {self.failure}")
        if op_no == self.last_op and cmd_id is not None and cmd_id == self.last_id:
            return self.last_result                       # a retry of what was just done
        if op_no <= self.last_op:
            raise CopyDiverged(f"{where} ran another command {self.last_op} than the one sent",
                               last_op=self.last_op)
        if op_no != self.last_op + 1:
            raise CopyBehind(f"{where} is at command {self.last_op}, cannot run {op_no}",
                             last_op=self.last_op)
        if cmd_id is not None and prev_id != self.last_id:
            raise CopyDiverged(f"{where}: command {self.last_op} is not the one the group "
                               "committed", last_op=self.last_op)
        try:
            result = self._execute(method, args)
        except Exception:
            self._reload()   # never keep a half-applied command in memory
            raise
        if self.wal is not None:
            try:
                payload = encode_command(op_no, method, {"id": cmd_id, "prev": prev_id,
                                                         **self._body_of(method, args)})
            except UnstorableValue:
                self._reload()   # refused before the log: nothing of it stays, on disk or here
                raise
            mark = self.wal.mark()
            try:
                self.wal.append(op_no, payload)
                if translog_settings(self.settings)[0] == "request":
                    self.wal.sync()
            except OSError as e:
                # not durable, so not done: cut it from the log and from memory
                self.wal.rollback(mark)
                self._count("write", e)
                self._reload()
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise DiskFull(self.core.index) from None
                raise
        self.last_op, self.last_id = op_no, cmd_id
        self.last_result = result
        self._maybe_snapshot()
        return result

    def reset(self, mapping: Mapping | None = None) -> dict[str, Any]:
        """Forget everything: the group refills this copy from another. Damaged files are
        moved into ``corrupted-<time>/`` (never deleted); a diverged history is removed."""
        ShardService.__init__(self, self.core.index, self.core.shard,
                              mapping or self.core.mapping)
        self.last_op, self.last_id, self.last_result, self.min_generation = -1, None, None, 0
        if self.dir is not None:
            if self.wal is not None:
                self.wal.close()
            names = data_files(self.dir) + [MANIFEST]
            if self.failure is not None:
                aside = move_aside(self.dir, names, f"{self.failure}\nrebuilt from another "
                                   "copy of the shard")
                log.warning("shard [%s][%s] copy [%s]: damaged files moved to %s; rebuilding "
                            "from another copy", self.core.index, self.core.shard, self.copy,
                            aside)
            else:
                for n in names:
                    (self.dir / n).unlink(missing_ok=True)
            self.failure = None
            self.snaps = SnapshotStore(self.dir)
            self.wal = WriteAheadLog(self.dir)
        return self.position()

    def _reload(self) -> None:
        if self.dir is None:
            return
        mapping = self.core.mapping
        ShardService.__init__(self, self.core.index, self.core.shard, mapping)
        self.last_op, self.last_id, self.last_result, self.min_generation = -1, None, None, 0
        if self.wal is not None:
            self.wal.close()
        self.snaps = SnapshotStore(self.dir)
        self.wal = WriteAheadLog(self.dir)
        self._open_files()

    # direct writes would bypass the log: only numbered commands change a copy
    def apply(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a shard copy changes only through command(op_no, 'apply', ...)")

    def refresh(self) -> int:
        raise TypeError("a shard copy changes only through command(op_no, 'refresh', ())")

    def set_mapping(self, mapping: Mapping) -> None:
        raise TypeError("a shard copy changes only through command(op_no, 'set_mapping', ...)")

    # --- durability ------------------------------------------------------------------------

    def _configure_syncer(self) -> None:
        if self.wal is None:
            return
        durability, interval, _ = translog_settings(self.settings)
        if durability == "async" and self._syncer is None:
            self._stop.clear()
            self._syncer = threading.Thread(target=self._sync_loop, name="translog-sync",
                                            daemon=True)
            self._syncer.start()
        elif durability == "request" and self._syncer is not None:
            self._stop.set()
            self._syncer = None
            self.wal.sync()

    def _sync_loop(self) -> None:
        while not self._stop.is_set():
            interval = translog_settings(self.settings)[1]
            if self._stop.wait(interval):
                return
            wal = self.wal
            if wal is not None:
                try:
                    wal.sync()
                except (OSError, ValueError) as e:
                    self._count("sync", e)     # retried at the next interval

    def _maybe_snapshot(self) -> None:
        if self.wal is None or self.snaps is None:
            return
        due = flush_due(self.settings, self.wal.bytes_since_snapshot, self.snaps.latest_bytes)
        if not due or time.monotonic() < self._flush_retry_at:
            return
        try:
            self.flush()
            self._flush_retry_at = 0.0
        except OSError as e:
            # the log still holds everything: retried later (backing off), counted, reported
            n = self._count("flush", e)
            self._flush_retry_at = time.monotonic() + min(60.0, 0.5 * 2 ** min(n, 7))

    def _count(self, what: str, e: BaseException) -> int:
        """A background (or write) failure of the files: counted and shown in ``info``."""
        f = self.storage_failures
        f[what] += 1
        f["last_error"] = f"{what} failed: {e}"
        log.error("shard [%s][%s] copy [%s]: %s failed (%d so far): %s", self.core.index,
                  self.core.shard, self.copy, what, f[what], e)
        return int(f[what])

    def flush(self) -> int:
        """Write a snapshot of the current state and start a fresh log (ES's *flush*): only
        what the part files do not hold yet is encoded (``snapshot_state.SnapshotParts``)."""
        if self.wal is None or self.snaps is None or self.last_op < 0:
            return self.last_op      # no command yet: nothing a snapshot could hold
        t0 = time.perf_counter_ns()
        if self.parts.core is not self.core:     # rebuilt since: its parts are unknown
            self.parts = SnapshotParts(self.core)
        manifest, new, total, state = self.parts.plan(self, self.snaps.next_part())
        path = self.snaps.write(self.last_op, manifest, new, total)
        self.parts.commit(state)
        self.wal.restart_after(self.last_op)
        count(self.core.counters, "flush", 1, t0)
        try:
            self.snaps.prune(path, manifest)
        except OSError as e:     # the snapshot stands; the old files go at the next one
            self._count("flush", e)
        return self.last_op

    # --- snapshots: state <-> records (``snapshot_state.py``) ------------------------------

    def export_state(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The copy's whole state as snapshot records. O(documents)."""
        return export_whole(self)

    def _restore(self, header: dict[str, Any], sections: list[dict[str, Any]]) -> None:
        restore(self, header, sections)

    # --- catching up ----------------------------------------------------------------------

    def export_since(self, after_op: int) -> dict[str, Any]:
        """What a copy at ``after_op`` needs to reach this one: the log records after it, or
        (when the log no longer reaches back, or in memory) a snapshot of the current state."""
        if self.failure is not None:
            raise CopyCorrupted(f"[{self.core.index}][{self.core.shard}] copy [{self.copy}] is "
                                f"damaged: {self.failure}")
        if after_op >= self.last_op:
            return {"last_op": self.last_op, "snapshot": None, "records": []}
        if self.wal is not None and catch_up_by_records(self.wal.bytes_since_snapshot):
            self.wal.sync()
            records = self.wal.records_after(after_op)
            if records is not None:
                return {"last_op": self.last_op, "snapshot": None, "records": records}
        header, sections = self.export_state()
        return {"last_op": self.last_op, "snapshot": encode_snapshot(header, sections),
                "records": []}

    @contextmanager
    def _unreadable_sent(self, what: str) -> Iterator[None]:
        """Catch-up data that cannot be decoded fails the catch-up before it changes anything
        (the sending copy's damage, named), instead of leaving this copy half replaced."""
        try:
            yield
        except UNREADABLE as e:
            raise CopyCorrupted(f"catch-up of [{self.core.index}][{self.core.shard}] copy "
                                f"[{self.copy}]: {what} it was sent cannot be read: "
                                f"{e!r}") from None

    def install(self, snapshot: bytes | None, records: list[bytes]) -> dict[str, Any]:
        """Catch up: take a snapshot (replacing everything) and/or run log records in order.
        Everything sent is decoded before anything changes."""
        with self._unreadable_sent("a log record"):
            decoded = [(payload, cmd, int(cmd["op"]), command_args(cmd))
                       for payload in records for cmd in [decode_command(payload)]]
        if snapshot is not None:
            header, sections = decode_snapshot(snapshot, f"snapshot sent to [{self.core.index}]"
                                               f"[{self.core.shard}] copy [{self.copy}]")
            with self._unreadable_sent("the snapshot"):   # before anything is replaced
                check_readable(header, sections)
            self._restore(header, sections)
            if self.snaps is not None and self.wal is not None:
                path = self.snaps.write(self.last_op, snapshot)
                self.wal.restart_after(self.last_op)
                self.snaps.prune(path, snapshot)
        for payload, cmd, op_no, args in decoded:
            if op_no < self.last_op:
                continue
            if op_no == self.last_op:
                if cmd.get("id") != self.last_id:
                    raise CopyDiverged(f"catch-up: command {op_no} differs on this copy",
                                       last_op=self.last_op)
                continue
            if op_no != self.last_op + 1:
                raise CopyBehind(f"catch-up records jump from {self.last_op} to {op_no}",
                                 last_op=self.last_op)
            if cmd.get("prev") != self.last_id:
                raise CopyDiverged(f"catch-up: command {self.last_op} differs on this copy",
                                   last_op=self.last_op)
            self.last_result = self._execute(cmd["kind"], args)
            if self.wal is not None:
                self.wal.append(op_no, payload)
            self.last_op, self.last_id = op_no, cmd.get("id")
        if self.wal is not None:
            self.wal.sync()
        self._maybe_snapshot()
        return self.position()

    # --- reads that name a generation: refuse one this copy cannot reproduce --------------------

    def _check_generation(self, gen: int | None) -> None:
        if gen is not None and gen > self.core.generation:
            raise GenerationAhead(f"generation [{gen}] of shard [{self.core.index}]"
                                  f"[{self.core.shard}] not reached yet on copy [{self.copy}]")
        if gen is not None and (gen < self.min_generation or not self.core.can_read(gen)):
            raise GenerationGone(f"generation [{gen}] of shard [{self.core.index}]"
                                 f"[{self.core.shard}] is no longer available on copy "
                                 f"[{self.copy}] (rebuilt at generation "
                                 f"[{self.min_generation}], or merged since)")

    # (arguments passed through as they come: the shard's signatures may grow)
    def query(self, q: ShardQuery, *args: Any, **kwargs: Any) -> Any:
        self._check_generation(q.generation)
        return super().query(q, *args, **kwargs)

    def term_stats(self, fields: list[str], terms: list[tuple[str, str]],
                   generation: int | None, *args: Any, **kwargs: Any) -> Any:
        self._check_generation(generation)
        return super().term_stats(fields, terms, generation, *args, **kwargs)

    def sample(self, q: ShardQuery, *args: Any, **kwargs: Any) -> Any:
        self._check_generation(q.generation)
        return super().sample(q, *args, **kwargs)

    def range(self, q: ShardQuery, *args: Any, **kwargs: Any) -> Any:
        self._check_generation(q.generation)
        return super().range(q, *args, **kwargs)

    def window(self, q: ShardQuery, *args: Any, **kwargs: Any) -> Any:
        self._check_generation(q.generation)
        return super().window(q, *args, **kwargs)

    def pin(self, key: str, generation: int | None = None, *args: Any, **kwargs: Any) -> int:
        self._check_generation(generation)
        return super().pin(key, generation, *args, **kwargs)

    def fetch_seqs(self, seqs: list[int], profile: bool = False) -> Any:
        """The fetch phase by sequence number instead of address: used when the copy that
        answered the query phase died before the fetch (addresses are per copy, sequence
        numbers are not). O(documents) per call; only on failover."""
        want = np.asarray(seqs, dtype=np.int64)
        found: dict[int, FetchedDoc] = {}
        for seg in self.core.segments:
            idx = np.flatnonzero(np.isin(seg.seq, want)).tolist()
            for i, source in zip(idx, seg.sources.take(idx)):
                found[int(seg.seq[i])] = FetchedDoc(str(seg.ids[i]), source,
                                                    int(seg.version[i]), int(seg.seq[i]),
                                                    seg.routing[i])
        missing = [s for s in seqs if int(s) not in found]
        if missing:
            raise GenerationGone(f"documents with seq_no {missing[:5]} are no longer on shard "
                                 f"[{self.core.index}][{self.core.shard}] copy [{self.copy}]")
        docs = [found[int(s)] for s in seqs]
        return (docs, {"took_ns": 0, "node": node_id(), "simulated_delay_ns": 0}) if profile \
            else docs

    # --- state ----------------------------------------------------------------------------

    def position(self) -> dict[str, Any]:
        """Where this copy is (cheap: the coordinator's monitor calls it every second)."""
        return {"copy": self.copy, "last_op": self.last_op, "last_id": self.last_id,
                "generation": self.core.generation,
                "max_seq": self.core.max_seq, "min_generation": self.min_generation,
                "mapping_version": self.core.mapping.version, "pid": os.getpid(),
                "node_id": node_id(), "persistent": self.dir is not None,
                "started_at": self.started_at, "failed": self.failure,
                "storage_failures": dict(self.storage_failures)}

    def mapping_state(self) -> dict[str, Any] | None:
        return encode_mapping(self.core.mapping)

    def many(self, calls: list[tuple[str, tuple, dict]]) -> list[tuple[bool, Any]]:
        """Several read calls in one actor call (``coalescing.py``), run in order."""
        if any(m not in READS for m, _, _ in calls):
            raise IllegalArgument("only reads can share an actor call")
        return run_many(self, calls)

    def lane(self) -> tuple[str, str]:
        """``(node id, socket path)`` of this copy's fast lane (``lanes.py``), started on
        first use: a coordinator on the same node sends its reads and write commands there."""
        lane = self.__dict__.get("_lane")
        if lane is None:
            lane = self.__dict__["_lane"] = ThreadLane(self, READS | {"command"})
        return node_id(), lane.path

    def info(self) -> dict[str, Any]:
        out = super().info()
        out.update(self.position())
        out["recovery"] = self.recovery
        out["host"] = node_sample(self.dir)   # this process and its machine (_cat/nodes)
        if self.dir is not None:   # the bytes of its files on disk
            out["store_bytes"] = dir_bytes(self.dir)
        return out

    def drop(self) -> None:
        """Delete this copy's files (its index was deleted); the actor is killed next."""
        self._stop.set()
        self.close_merges()
        if self.wal is not None:
            self.wal.close()
            self.wal = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
