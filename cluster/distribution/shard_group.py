"""One shard's group of copies: numbered commands, reads, broadcasts, catch-up and recovery.

See ``replication.py`` for how a group keeps its copies identical; this module is the group
itself (:class:`ShardGroup`) and :func:`recover_group`, which continues a reopened shard from its
furthest in-sync copy.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..engine.exact_json import UnstorableValue
from ..engine.mapping import Mapping
from ..errors import SearchError, remote_cause
from .copy_waits import COPY_CALL_TIMEOUT, command_timeout, gather_answers
from .transport import Placement, is_slow, is_unreachable

if TYPE_CHECKING:
    from .replication import ReplicatedBackend

log = logging.getLogger("shardsearch.replication")

STARTED = "STARTED"                        # in sync, serving
INITIALIZING = "INITIALIZING"              # reachable, catching up
UNASSIGNED = "UNASSIGNED"                  # unreachable, or not placed on any node

DEFAULT_WRITE_TIMEOUT = float(os.environ.get("SHARDSEARCH_WRITE_TIMEOUT", "30"))
PING_TIMEOUT = 2.0
MONITOR_INTERVAL = 0.5


class NoShardAvailable(SearchError):
    """No copy of the shard could answer a read."""

    es_type = "no_shard_available_action_exception"
    status = 503


class ShardUnavailable(SearchError):
    """No copy of the shard could take a write within the timeout."""

    es_type = "unavailable_shards_exception"
    status = 503


def has_error_type(exc: BaseException, es_type: str) -> bool:
    """A copy answered with this Elasticsearch error (not a transport failure)."""
    inner = remote_cause(exc)
    return isinstance(inner, SearchError) and inner.es_type == es_type


# --- one shard: its copies ------------------------------------------------------------------------

@dataclass
class Copy:
    """The coordinator's view of one copy of a shard."""

    no: int
    handle: Any = None              # None: not placed (UNASSIGNED)
    placement: Placement | None = None
    state: str = UNASSIGNED
    last_op: int = -1
    last_id: str | None = None
    diverged: bool = False          # holds a command the group never committed: rebuild it
    busy: bool = False              # a catch-up is running
    info: dict[str, Any] = field(default_factory=dict)   # last position() answer
    reason: str | None = None


class ShardGroup:
    """One shard's copies and its command order (see the module docstring)."""

    def __init__(self, backend: ReplicatedBackend, index: str, shard: int, index_uuid: str,
                 mapping: Mapping, settings: dict[str, Any], replicas: int) -> None:
        self.backend = backend
        self.index = index
        self.shard = shard
        self.uuid = index_uuid
        self.mapping = mapping
        self.settings = dict(settings)
        self.copies: list[Copy] = []
        self.next_op = 0
        self.last_id: str | None = None      # id of command ``next_op - 1``
        self.pending_mapping = False
        self.stalled = False
        self.destroyed = False
        self.in_sync_set: set[int] = set()     # copies holding every acknowledged command
        self.needs_base = False                # reopened, and no in-sync copy answered yet
        self._lock: asyncio.Lock | None = None
        self._rr = shard
        for no in range(1 + replicas):
            self.copies.append(Copy(no))

    @property
    def lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def __repr__(self) -> str:
        return f"<ShardGroup [{self.index}][{self.shard}] " + \
            " ".join(f"{c.no}:{c.state}@{c.last_op}" for c in self.copies) + ">"

    def spec(self, no: int) -> dict[str, Any]:
        return {"index": self.index, "shard": self.shard, "copy": no, "uuid": self.uuid,
                "mapping": self.mapping, "settings": self.settings,
                "data_dir": self.backend.data_dir}

    @property
    def started(self) -> list[Copy]:
        return [c for c in self.copies if c.state == STARTED]

    def primary(self) -> Copy:
        """The acting primary: the lowest-numbered in-sync copy (copy 0 unless it is down)."""
        started = self.started
        return started[0] if started else self.copies[0]

    async def _call(self, c: Copy, method: str, *args: Any, timeout: float | None = None
                    ) -> Any:
        return await self.backend.transport.call(c.handle, method, *args, timeout=timeout)

    def mark_down(self, c: Copy, exc: BaseException) -> None:
        if c.state != UNASSIGNED:
            log.warning("copy %s of [%s][%s] is down: %s", c.no, self.index, self.shard,
                        type(exc).__name__)
        c.state, c.reason = UNASSIGNED, type(exc).__name__

    def take_damaged(self, c: Copy, info: dict[str, Any]) -> bool:
        """A copy whose files are damaged (its ``position`` says ``failed``) never serves: it
        stays out (UNASSIGNED, with the reason) until it is rebuilt from a healthy copy."""
        if not info.get("failed"):
            return False
        if c.state == STARTED or not (c.reason or "").startswith("corrupted"):
            log.error("copy %s of [%s][%s] is damaged: %s", c.no, self.index, self.shard,
                      info["failed"])
        c.info, c.state, c.diverged = info, UNASSIGNED, True
        c.reason = f"corrupted: {info['failed']}"
        return True

    def unavailable_reason(self) -> str:
        """Why the copies that do not serve do not (for errors and health)."""
        return "; ".join(f"copy [{c.no}]: {c.reason}" for c in self.copies
                         if c.state != STARTED and c.reason)

    def all_damaged(self) -> bool:
        """No copy serves, none is catching up, and some copy is damaged: a write cannot
        succeed by waiting (it fails at once instead of after the write timeout)."""
        return not self.started and not any(c.busy for c in self.copies) and \
            any((c.reason or "").startswith("corrupted") for c in self.copies)

    def in_sync(self, c: Copy) -> bool:
        return c.last_op == self.next_op - 1 and c.last_id == self.last_id

    def _persist(self) -> None:
        """The in-sync set or placements changed: the index metadata records them."""
        hook = self.backend.on_change
        if hook is not None and not self.destroyed:
            hook(self)

    def record(self) -> dict[str, Any]:
        """What the index metadata keeps of this shard (see ``durability.py``)."""
        return {"in_sync": sorted(self.in_sync_set),
                "placements": [c.placement.resource if c.placement is not None else None
                               for c in self.copies]}

    # --- commands -------------------------------------------------------------------------------

    async def command(self, method: str, args: tuple) -> Any:
        """Number the command, make it durable on every in-sync copy, return its result."""
        if method == "set_mapping":
            self.mapping = args[0]
            if not self.started or self.stalled:
                self.pending_mapping = True      # sent before the next command that runs
                return None
        if method == "configure":
            self.settings.update({k: v for k, v in args[0].items() if v is not None})
        if method == "refresh" and (self.stalled or not self.started):
            why = self.unavailable_reason()
            raise NoShardAvailable(f"[{self.index}][{self.shard}] no in-sync copy to refresh"
                                   + (f" ({why})" if why else ""),
                                   index=self.index, shard=str(self.shard))
        async with self.lock:
            if self.pending_mapping and method != "set_mapping":
                self.pending_mapping = False
                await self._run("set_mapping", (self.mapping,))
            return await self._run(method, args)

    async def _run(self, method: str, args: tuple) -> Any:
        deadline = time.monotonic() + self.backend.write_timeout
        cmd_id = uuidlib.uuid4().hex
        try:
            while True:
                targets = self.started
                if not targets:
                    self.stalled = True
                    await self._revive(cmd_id)
                    targets = self.started
                    if not targets and self.all_damaged():
                        raise ShardUnavailable(
                            f"[{self.index}][{self.shard}] primary shard is not active: "
                            f"{self.unavailable_reason()}", index=self.index,
                            shard=str(self.shard))
                if targets:
                    op = self.next_op
                    timeout = command_timeout(method, args)
                    outs = await gather_answers(
                        [self._call(c, "command", op, method, args, cmd_id, self.last_id,
                                    timeout=timeout) for c in targets], timeout)
                    ok: list[Any] = []
                    errors: list[BaseException] = []
                    full: list[Copy] = []
                    failed = 0
                    for c, o in zip(targets, outs):
                        if not isinstance(o, BaseException):
                            c.last_op, c.last_id = op, cmd_id
                            ok.append(o)
                            continue
                        failed += 1
                        if has_error_type(o, "shard_not_in_sync_exception"):
                            c.state = INITIALIZING
                            c.last_op = int(remote_cause(o).extra.get("last_op", -1))
                        elif has_error_type(o, "shard_copy_diverged_exception"):
                            c.state, c.diverged = INITIALIZING, True
                        elif is_unreachable(o):
                            self.mark_down(c, o)
                        elif has_error_type(o, "cluster_block_exception") \
                                or isinstance(remote_cause(o), UnstorableValue):
                            # rolled back (a full disk; a value refused before the log):
                            # still at the group's command
                            full.append(c)
                            errors.append(o)
                        else:
                            # the command itself failed (a bug, damage): the copy reloaded
                            # itself from its files; take it out of sync
                            c.state = INITIALIZING
                            errors.append(o)
                    if not ok and errors and len(errors) == len(targets):
                        raise errors[0]          # every copy refused it: say why, at once
                    for c in full:
                        c.state = INITIALIZING   # the others ran it: this one catches up
                    if ok:
                        self.next_op, self.last_id = op + 1, cmd_id
                        self.stalled = False
                        # every copy that does not hold this write leaves the in-sync set
                        # (targets that failed, and copies that were down or catching up)
                        stale = {c.no for c in self.copies if c.last_id != cmd_id}
                        if stale & self.in_sync_set:
                            self.in_sync_set -= stale
                            self._persist()      # before the write is acknowledged
                        return _with_shards(ok[0], len(self.copies), len(ok), failed)
                if time.monotonic() > deadline:
                    raise ShardUnavailable(
                        f"[{self.index}][{self.shard}] primary shard is not active Timeout: "
                        f"[{self.backend.write_timeout:g}s], no copy of the shard could take "
                        f"the [{method}] command", index=self.index, shard=str(self.shard))
                await asyncio.sleep(0.2)
        finally:
            self.stalled = False

    async def _revive(self, cmd_id: str) -> None:
        """No copy is in sync: find out where the reachable ones are and start those that are.

        A reachable copy at the group's last command is in sync, and so is one that already ran
        the command in flight (``cmd_id``: its answer was lost; the retry returns it). When every
        reachable copy is behind, acknowledged commands are gone (``async`` durability, or
        memory-only copies): with files the furthest copy becomes the truth (logged); a
        memory-only copy that came back empty stays out.
        """
        cands = [c for c in self.copies if c.handle is not None]
        outs = await asyncio.gather(*(self._call(c, "position", timeout=PING_TIMEOUT)
                                      for c in cands), return_exceptions=True)
        reach = []
        for c, o in zip(cands, outs):
            if isinstance(o, BaseException) or self.take_damaged(c, o):
                continue
            c.info, c.last_op, c.last_id = o, int(o["last_op"]), o.get("last_id")
            reach.append(c)
        if not reach:
            return
        if self.needs_base:
            self._adopt_base(reach)
            return
        started = False
        for c in reach:
            if self.in_sync(c) or (c.last_op == self.next_op and c.last_id == cmd_id):
                c.state, c.diverged, c.reason = STARTED, False, None
                started = True
            elif c.state != STARTED:
                c.state = INITIALIZING
        if started:
            return
        base = [c for c in reach if c.no in self.in_sync_set]
        if not base:
            return                  # only stale copies answer: wait for an in-sync one
        best = max(base, key=lambda c: (c.last_op, -c.no))
        if not best.info.get("persistent"):
            for c in reach:
                c.reason = "lost its data (memory only)"
            return
        log.error("[%s][%s]: no reachable copy holds the last acknowledged command %s: "
                  "continuing from copy %s at %s (async durability loses the last writes)",
                  self.index, self.shard, self.next_op - 1, best.no, best.last_op)
        self.next_op, self.last_id = best.last_op + 1, best.last_id
        best.state, best.diverged, best.reason = STARTED, False, None
        self.in_sync_set = {best.no}
        self._persist()

    def _adopt_base(self, reach: list[Copy]) -> bool:
        """A reopened shard continues from its furthest reachable in-sync copy (if any)."""
        base = [c for c in reach if c.no in self.in_sync_set] if self.in_sync_set else reach
        if not base:
            for c in reach:
                c.state, c.reason = INITIALIZING, "waiting for an in-sync copy"
            return False
        best = max(base, key=lambda c: (c.last_op, -c.no))
        self.next_op, self.last_id = best.last_op + 1, best.last_id
        self.needs_base = False
        for c in reach:   # same last command id: the same history (log matching)
            c.state = STARTED if self.in_sync(c) else INITIALIZING
        self.in_sync_set |= {c.no for c in reach if c.state == STARTED}
        return True

    # --- reads and broadcasts -------------------------------------------------------------------

    def pick(self, exclude: set[int]) -> Copy | None:
        """An in-sync copy not yet tried (round robin: replicas share the reads)."""
        cands = [c for c in self.started if c.no not in exclude]
        if not cands:
            return None
        self._rr += 1
        return cands[self._rr % len(cands)]

    async def broadcast(self, method: str, args: tuple) -> Any:
        targets = self.started
        if not targets:
            why = self.unavailable_reason()
            raise NoShardAvailable(f"[{self.index}][{self.shard}] no copy is available"
                                   + (f" ({why})" if why else ""),
                                   index=self.index, shard=str(self.shard))
        # a force merge waits for its merges (bounded by their count, FORCE_MERGE_MAX_STEPS)
        timeout = None if method == "force_merge" else COPY_CALL_TIMEOUT
        outs = await asyncio.gather(*(self._call(c, method, *args, timeout=timeout)
                                      for c in targets), return_exceptions=True)
        first: Any = None
        err: BaseException | None = None
        got = False
        for c, o in zip(targets, outs):
            if isinstance(o, BaseException):
                if is_unreachable(o):
                    self.mark_down(c, o)
                err = err or o
            elif not got:
                first, got = o, True
        if not got:
            assert err is not None
            raise err
        return first

    # --- keeping copies in sync (the monitor) ---------------------------------------------------

    async def maintain(self, ping_started: bool) -> None:
        """Probe copies; catch up those that are reachable but out of sync; place unassigned."""
        if self.destroyed:
            return
        for c in self.copies:
            if c.handle is None:
                self.backend.place(self, c)
        probe = [c for c in self.copies if c.handle is not None and not c.busy
                 and (c.state != STARTED or ping_started)]
        outs = await asyncio.gather(*(self._call(c, "position", timeout=PING_TIMEOUT)
                                      for c in probe), return_exceptions=True)
        reached = []
        for c, o in zip(probe, outs):
            if isinstance(o, BaseException):
                if c.state != UNASSIGNED and not is_slow(o):
                    self.mark_down(c, o)
                continue
            reached.append((c, o))
        damaged = [c for c, o in reached if self.take_damaged(c, o)]
        reached = [(c, o) for c, o in reached if c not in damaged]
        if self.started:
            for c in damaged:          # rebuilt from a healthy copy (its files moved aside)
                if not c.busy:
                    c.state, c.busy = INITIALIZING, True
                    asyncio.get_running_loop().create_task(self._catch_up(c))
        for c, o in reached:
            restarted = c.info.get("started_at") not in (None, o.get("started_at"))
            c.info = o
            if c.state == STARTED:
                if restarted and not self.lock.locked() and \
                        (int(o["last_op"]), o.get("last_id")) != (c.last_op, c.last_id):
                    c.state = INITIALIZING      # came back without everything it had
                else:
                    continue
            c.last_op, c.last_id = int(o["last_op"]), o.get("last_id")
            if c.state == UNASSIGNED:
                c.state = INITIALIZING
        waiting = [c for c, _ in reached if c.state == INITIALIZING]
        if not waiting:
            return
        if (self.needs_base or not self.started) and not self.lock.locked():
            # no copy serves: those that answer and hold the shard's last command start again
            # (a reopened shard first picks its base among the in-sync copies)
            async with self.lock:
                if self.needs_base:
                    if self._adopt_base(waiting):
                        self._persist()
                else:
                    for c in waiting:
                        if self.in_sync(c):
                            c.state, c.reason = STARTED, None
        if not self.started:
            return                               # nothing to copy from yet
        for c in waiting:
            if c.state == INITIALIZING and not c.busy:
                c.busy = True
                asyncio.get_running_loop().create_task(self._catch_up(c))

    async def _catch_up(self, c: Copy) -> None:
        """Bring ``c`` to the group's last command from an in-sync copy, then start it.

        The bulk of the copying runs without the lock (writes go on); the last step — what was
        written meanwhile — runs under it, so no command can slip in before ``c`` serves.
        """
        try:
            for final in (False, True):
                if final:
                    await self.lock.acquire()
                try:
                    src = next((s for s in self.started if s is not c), None)
                    if src is None:
                        return
                    for attempt in range(2):
                        if c.diverged or c.last_op > src.last_op or (
                                c.last_op == src.last_op and c.last_id != src.last_id):
                            pos = await self._call(c, "reset", self.mapping,
                                                   timeout=COPY_CALL_TIMEOUT)
                            c.diverged = False
                            c.last_op, c.last_id = int(pos["last_op"]), pos.get("last_id")
                        pkg = await self._call(src, "export_since", c.last_op,
                                               timeout=COPY_CALL_TIMEOUT)
                        try:
                            pos = await self._call(c, "install", pkg["snapshot"], pkg["records"],
                                                   timeout=COPY_CALL_TIMEOUT * 5)
                        except Exception as e:  # noqa: BLE001
                            if attempt == 0 and has_error_type(e, "shard_copy_diverged_exception"):
                                c.diverged = True
                                continue
                            raise
                        c.last_op, c.last_id, c.info = int(pos["last_op"]), pos.get("last_id"), \
                            pos
                        break
                    if final and self.in_sync(c):
                        c.state, c.reason = STARTED, None
                        if c.no not in self.in_sync_set:
                            self.in_sync_set.add(c.no)
                            self._persist()
                        log.warning("copy %s of [%s][%s] is in sync again at command %s",
                                    c.no, self.index, self.shard, c.last_op)
                    elif final and c.last_id != self.last_id and c.last_op == self.next_op - 1:
                        c.diverged = True
                finally:
                    if final:
                        self.lock.release()
        except Exception as e:  # noqa: BLE001 - retried by the next monitor round
            if is_unreachable(e):
                self.mark_down(c, e)
            else:
                log.warning("catching up copy %s of [%s][%s] failed: %r", c.no, self.index,
                            self.shard, e)
        finally:
            c.busy = False

    # --- description (health, _cat/shards) ------------------------------------------------------

    async def describe(self, fresh: bool = True) -> list[dict[str, Any]]:
        """One row per copy: state, primary or replica, node, documents."""
        if fresh:
            live = [c for c in self.copies if c.handle is not None and c.state == STARTED]
            # a copy that never answered yet may still be starting (a new actor): wait longer
            outs = await asyncio.gather(*(self._call(c, "info", timeout=PING_TIMEOUT if c.info
                                                     else COPY_CALL_TIMEOUT)
                                          for c in live), return_exceptions=True)
            for c, o in zip(live, outs):
                if isinstance(o, BaseException):
                    if not is_slow(o):
                        self.mark_down(c, o)
                else:
                    c.info = o
        prim = self.primary()
        rows = []
        for c in self.copies:
            node = c.info.get("node_id") if c.handle is not None else None
            rows.append({"index": self.index, "shard": self.shard, "copy": c.no,
                         "prirep": "p" if c is prim else "r", "state": c.state,
                         "docs": c.info.get("docs") if c.state == STARTED else None,
                         "node_id": node if c.state != UNASSIGNED else None,
                         "pid": c.info.get("pid") if c.state != UNASSIGNED else None,
                         "host": c.info.get("host") if c.state == STARTED else None,
                         "last_op": c.last_op, "reason": c.reason,
                         "generation": c.info.get("generation"),
                         "max_seq": c.info.get("max_seq"),
                         "segment_list": c.info.get("segment_list") if c.state == STARTED
                         else None,
                         "pins": c.info.get("pins", 0) if c.state == STARTED else 0,
                         "counters": c.info.get("counters") if c.state == STARTED else None,
                         "store_bytes": c.info.get("store_bytes"),
                         "merging": bool(c.info.get("merging")) and c.state == STARTED,
                         "merges": c.info.get("merges") if c.state == STARTED else None,
                         "storage_failures": _failures(c.info)})
        return rows


def _failures(info: dict[str, Any]) -> dict[str, Any] | None:
    """The copy's counts of failed flushes, syncs and writes, when there were any."""
    f = info.get("storage_failures") or {}
    return dict(f) if any(f.get(k) for k in ("flush", "sync", "write")) else None


def _with_shards(result: Any, total: int, ok: int, failed: int) -> Any:
    """An ``apply`` answer ``(results, generation)`` that also carries the copies' counts."""
    if isinstance(result, tuple) and len(result) == 2:
        return ApplyResult(result, {"total": total, "successful": ok, "failed": failed})
    return result


class ApplyResult(tuple):
    """``(results, generation)`` plus ``shards``: Elasticsearch's per-item ``_shards``."""

    def __new__(cls, pair: tuple, shards: dict[str, int]) -> ApplyResult:
        self = super().__new__(cls, pair)
        self.shards = shards
        return self

    def __reduce__(self):
        return (ApplyResult, (tuple(self), self.shards))


async def recover_group(g: ShardGroup, timeout: float = 300.0) -> list[dict[str, Any]]:
    """Wait for the copies of a reopened shard to load their files, and continue the shard's
    history from its furthest in-sync copy. Copies on nodes that are not in the cluster now
    are not waited for (the monitor takes them when their node is back). Returns the answers
    of the copies that answered."""
    alive = {n["resource"] for n in g.backend.nodes() if n.get("resource")}
    live = [c for c in g.copies if c.handle is not None and
            (c.placement is None or c.placement.resource is None
             or c.placement.resource in alive)]
    outs = await asyncio.gather(*(g._call(c, "position", timeout=timeout) for c in live),
                                return_exceptions=True)
    got = []
    for c, o in zip(live, outs):
        if isinstance(o, BaseException):
            log.error("copy %s of [%s][%s] did not recover: %r", c.no, g.index, g.shard, o)
            c.state, c.reason = UNASSIGNED, f"recovery: {type(o).__name__}"
            continue
        if g.take_damaged(c, o):
            continue
        c.info, c.last_op, c.last_id = o, int(o["last_op"]), o.get("last_id")
        got.append(c)
    for c in g.copies:
        if c not in got and c.state != UNASSIGNED:
            c.state, c.reason = UNASSIGNED, c.reason or "node not in the cluster"
    if got and not g._adopt_base(got):
        log.error("[%s][%s]: no in-sync copy is back yet (in-sync: %s); the shard waits for "
                  "one", g.index, g.shard, sorted(g.in_sync_set))
    return [c.info for c in got if c.state == STARTED]
