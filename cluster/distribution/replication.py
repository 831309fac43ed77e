"""Shard groups: each shard is a primary and its replicas, kept identical by numbered commands.

The coordinator talks to a :class:`ShardGroup` per shard through :class:`ReplicatedBackend`
(the same ``ShardBackend`` protocol as the in-process backend). What a group does with a call:

* **commands** (``apply``, ``refresh``, ``set_mapping``, ``configure``) change the shard. Under
  the group's lock each gets the next *command number* and is sent to every in-sync copy; it is
  acknowledged once at least one copy has made it durable (``ShardCopy.command``), and every
  in-sync copy that could be reached has too. Sequence numbers were assigned by the coordinator
  already: copies receive the very same ops. A copy that fails is taken out of sync (``DOWN``
  when unreachable, ``INITIALIZING`` when it answered that it is behind); the monitor brings it
  back by copying what it missed from an in-sync copy (log records, or a snapshot when the log no
  longer reaches back), the last step under the lock, and only then lets it serve again.
  When no copy is reachable a write waits (bounded: ``write_timeout``) for one to come back —
  Ray restarts dead copies, which recover from their files — retrying the same command number
  (idempotent); then it fails with ``unavailable_shards_exception``. Never silently dropped.
* **reads** go to one in-sync copy, and to another if it fails. A search reads through a
  :class:`GroupSession` so that its statistics, query, fetch and explain calls all reach the
  same copy (addresses are per copy). If that copy dies between the query and the fetch
  phase, the page is fetched from another copy by sequence number instead.
* **broadcasts** (``pin``, ``unpin``, ``simulate``) go to every in-sync copy.

Why any copy gives the same answer: all copies run the same commands in the same order —
including every ``refresh``, which the coordinator sends as a command like any write — so a
refresh *generation* is the same set of visible documents on every copy. Statistics, scores
and the order of hits are computed from that set only (never from how it is cut into
segments), so they do not depend on which copy answers, nor on whether a copy was rebuilt
from a snapshot (it then refuses generations older than the snapshot rather than guess).

Divergence after a failed write: a command that reached no copy for sure (every copy failed or
timed out) may still have been applied by one that then died, and its number is given to the
next command. Every command carries its id and its predecessor's (``ShardCopy.command``), so
such a copy is recognised when it comes back (its last command is not the group's) and rebuilt
from an in-sync copy from scratch (``reset`` + snapshot): a write that was never acknowledged
cannot linger on one copy only.

The in-sync set (Elasticsearch's in-sync allocation ids): the copies that hold every
acknowledged command. A copy leaves it when a write is acknowledged without it (it failed, or was down or catching
up) — persisted (``on_change``) *before* that write is acknowledged — and joins it again once
caught up. A copy that is merely down without having missed a write stays in it. After a restart a shard continues only from an
in-sync copy; while none is back the shard is red and writes wait, rather than start from a
stale copy and lose acknowledged writes.

Placement (``ReplicatedBackend.place``): copies of one shard go to different Ray nodes. Nodes that
advertise a custom resource named ``shardsearch_node_*`` (``ray_config/``) are data nodes and a
copy is pinned to its node by that resource (it waits for the node to come back, where its
files are); otherwise copies are pinned softly to node ids (``NodeAffinitySchedulingStrategy``,
``soft=True``). A replica with no other node to go to stays ``UNASSIGNED`` (yellow health), as
in Elasticsearch, and is placed when a node joins.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .cancel_calls import awaited
from .coalescing import Coalescer
from ..errors import SearchError, actor_died, remote_cause
from .lanes import LaneClosed, LaneFinder
from ..engine.mapping import Mapping
from ..engine.shard_messages import BROADCASTS, COMMANDS, READS
from ..engine.sorting import SEQ_MASK

log = logging.getLogger("shardsearch.replication")

ADDRESSED = ("fetch", "explain")          # calls that use addresses of a query answer

STARTED = "STARTED"                        # in sync, serving
INITIALIZING = "INITIALIZING"              # reachable, catching up
UNASSIGNED = "UNASSIGNED"                  # unreachable, or not placed on any node

DEFAULT_WRITE_TIMEOUT = float(os.environ.get("SHARDSEARCH_WRITE_TIMEOUT", "30"))
COPY_CALL_TIMEOUT = 60.0                   # one copy's answer to a command
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


class CopyUnreachable(Exception):
    """An in-process copy that is 'down' (``LocalTransport``: tests without Ray)."""


def is_unreachable(exc: BaseException) -> bool:
    """The copy's process is dead, restarting, unreachable or too slow (not a domain error)."""
    inner = remote_cause(exc)
    if isinstance(inner, SearchError) and not isinstance(exc, (asyncio.TimeoutError,)):
        return False
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, CopyUnreachable)):
        return True
    name = type(exc).__name__ + " " + type(inner).__name__
    return actor_died(exc) or "GetTimeout" in name or "Unschedulable" in name \
        or "NodeDied" in name or "OwnerDied" in name or "WorkerCrashed" in name


def is_slow(exc: BaseException) -> bool:
    """A call that did not answer in time: the copy may be busy (or still starting), which
    alone is no reason to take it out of sync; Ray reports dead processes as errors."""
    return isinstance(exc, (asyncio.TimeoutError, TimeoutError))


def _is(exc: BaseException, es_type: str) -> bool:
    inner = remote_cause(exc)
    return isinstance(inner, SearchError) and inner.es_type == es_type


# --- how copies are reached ---------------------------------------------------------------------

@dataclass
class Placement:
    """Where a copy runs: a Ray node (and how it is pinned there)."""

    node_id: str | None
    resource: str | None = None     # data-node resource pinning the copy (hard)


class CopyTransport(Protocol):
    def spawn(self, spec: dict[str, Any], placement: Placement) -> Any: ...
    async def call(self, handle: Any, method: str, *args: Any,
                   timeout: float | None = None) -> Any: ...
    def kill(self, handle: Any) -> None: ...
    def nodes(self) -> list[dict[str, Any]]: ...


class RayTransport:
    """Copies as Ray actors (``shard_copy.copy_actor_class``), restarted by Ray when they die."""

    def __init__(self) -> None:
        from .shard_copy import copy_actor_class
        self._cls = copy_actor_class()
        self._queues: dict[str, Coalescer] = {}
        self._lanes = LaneFinder()   # copies on this node: reads over their fast lane
        self._nodes_at = 0.0
        self._nodes: list[dict[str, Any]] = []

    def spawn(self, spec: dict[str, Any], placement: Placement) -> Any:
        opts: dict[str, Any] = {"name": f"shardsearch:{spec['index']}:{spec['shard']}:"
                                        f"{spec['copy']}:{uuidlib.uuid4().hex[:8]}",
                                "lifetime": None}
        if placement.resource is not None:
            opts["resources"] = {placement.resource: 0.001}
        elif placement.node_id is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(placement.node_id,
                                                                         soft=True)
        return self._cls.options(**opts).remote(
            spec["index"], spec["shard"], spec["mapping"], spec["copy"], spec["uuid"],
            spec["data_dir"], spec["settings"])

    async def call(self, handle: Any, method: str, *args: Any,
                   timeout: float | None = None) -> Any:
        if method in READS:
            async def read() -> Any:
                lane = await self._lanes.get(handle)
                if lane is not None:
                    try:
                        return await lane.call(method, *args)
                    except LaneClosed:
                        pass   # the copy's process changed: a read may run again, via Ray
                # through Ray, reads may share an actor call (commands keep their own)
                return await self._coalescer(handle).call(method, *args)
            return await (read() if timeout is None else asyncio.wait_for(read(), timeout))
        ref = getattr(handle, method).remote(*args)

        async def wait() -> Any:
            return await ref
        if timeout is None:
            return await wait()
        return await asyncio.wait_for(wait(), timeout)

    def _coalescer(self, handle: Any) -> Coalescer:
        """One queue per copy: a copy runs one call at a time anyway, so searches that
        arrive while it is busy go to it together (see ``coalescing.py``)."""
        key = handle._actor_id.hex()
        c = self._queues.get(key)
        if c is None:
            async def one(method: str, args: tuple, kwargs: dict) -> Any:
                return await awaited(getattr(handle, method).remote(*args, **kwargs))

            async def many(calls: list) -> list:
                return await awaited(handle.many.remote(calls))
            c = self._queues[key] = Coalescer(one, many, limit=1)
        return c

    def kill(self, handle: Any) -> None:
        import ray
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    def nodes(self) -> list[dict[str, Any]]:
        """Alive Ray nodes: ``{"id", "resource", "address"}`` (cached for a second)."""
        now = time.monotonic()
        if now - self._nodes_at > 1.0:
            import ray
            out = []
            for n in ray.nodes():
                if not n.get("Alive"):
                    continue
                res = sorted(k for k in n.get("Resources", {}) if k.startswith("shardsearch_node"))
                out.append({"id": n["NodeID"], "resource": res[0] if res else None,
                            "address": n.get("NodeManagerAddress")})
            self._nodes = sorted(out, key=lambda d: (d["resource"] or "", d["id"]))
            self._nodes_at = now
        return self._nodes


class LocalHandle:
    """An in-process copy that tests can crash and restart (its files stay)."""

    def __init__(self, spec: dict[str, Any], node: str | None) -> None:
        self.spec = spec
        self.node = node
        self.obj: Any = None
        self.alive = False
        self.restart()

    def restart(self) -> None:
        from .shard_copy import ShardCopy
        s = self.spec
        self.obj = ShardCopy(s["index"], s["shard"], s["mapping"], s["copy"], s["uuid"],
                             s["data_dir"], s["settings"])
        self.alive = True

    def crash(self) -> None:
        self.alive = False
        if self.obj is not None and self.obj.wal is not None:
            self.obj._stop.set()
            self.obj.wal.close()    # nothing more is written; what was synced stays
        self.obj = None


class LocalTransport:
    """Copies as objects in this process, on simulated nodes (pure-logic tests, no Ray)."""

    def __init__(self, nodes: list[str] | None = None) -> None:
        self.node_names = list(nodes or ["local"])
        self.handles: list[LocalHandle] = []
        self.absent: set[tuple[int, int]] = set()   # (shard, copy) spawned down (node away)

    def spawn(self, spec: dict[str, Any], placement: Placement) -> LocalHandle:
        h = LocalHandle(spec, placement.node_id)
        if (spec["shard"], spec["copy"]) in self.absent:
            h.crash()
        self.handles.append(h)
        return h

    async def call(self, handle: LocalHandle, method: str, *args: Any,
                   timeout: float | None = None) -> Any:
        await asyncio.sleep(0)
        if not handle.alive:
            raise CopyUnreachable(f"copy {handle.spec['copy']} of [{handle.spec['index']}]"
                                  f"[{handle.spec['shard']}] is down")
        return getattr(handle.obj, method)(*args)

    def kill(self, handle: LocalHandle) -> None:
        handle.crash()

    def nodes(self) -> list[dict[str, Any]]:
        return [{"id": n, "resource": None, "address": n} for n in self.node_names]


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
            raise NoShardAvailable(f"[{self.index}][{self.shard}] no in-sync copy to refresh",
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
                if targets:
                    op = self.next_op
                    outs = await asyncio.gather(
                        *(self._call(c, "command", op, method, args, cmd_id, self.last_id,
                                     timeout=COPY_CALL_TIMEOUT)
                          for c in targets), return_exceptions=True)
                    ok: list[Any] = []
                    failed = 0
                    for c, o in zip(targets, outs):
                        if not isinstance(o, BaseException):
                            c.last_op, c.last_id = op, cmd_id
                            ok.append(o)
                            continue
                        failed += 1
                        if _is(o, "shard_not_in_sync_exception"):
                            c.state = INITIALIZING
                            c.last_op = int(remote_cause(o).extra.get("last_op", -1))
                        elif _is(o, "shard_copy_diverged_exception"):
                            c.state, c.diverged = INITIALIZING, True
                        elif is_unreachable(o):
                            self.mark_down(c, o)
                        else:
                            # the command itself failed (a bug): the copy reloaded itself from
                            # its files; take it out of sync, and report the error when alone
                            c.state = INITIALIZING
                            if len(targets) == 1:
                                raise o
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
            if isinstance(o, BaseException):
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
            raise NoShardAvailable(f"[{self.index}][{self.shard}] no copy is available",
                                   index=self.index, shard=str(self.shard))
        outs = await asyncio.gather(*(self._call(c, method, *args, timeout=COPY_CALL_TIMEOUT)
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
                            if attempt == 0 and _is(e, "shard_copy_diverged_exception"):
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
                         "last_op": c.last_op, "reason": c.reason,
                         "generation": c.info.get("generation"),
                         "max_seq": c.info.get("max_seq"),
                         "pins": c.info.get("pins", 0) if c.state == STARTED else 0})
        return rows


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


# --- one search's view of a group -----------------------------------------------------------------

class GroupSession:
    """One search's reads of one shard: every call reaches the same copy while it lives.

    Addresses in a query answer are per copy; when the copy that gave them dies, ``fetch``
    goes to another copy by sequence number (``ShardCopy.fetch_seqs``) and ``explain`` fails.
    """

    def __init__(self, group: ShardGroup) -> None:
        self.group = group
        self.copy: Copy | None = None
        self.addr_copy: Copy | None = None
        self._seq_of: dict[int, int] = {}

    def _remember(self, method: str, out: Any) -> None:
        hits = out[1] if method in ("range", "window") else out
        addr = getattr(hits, "addr", None)
        ties = getattr(hits, "ties", None)
        if addr is not None and ties is not None:
            seqs = np.asarray(ties, dtype=np.int64) & np.int64(SEQ_MASK)
            self._seq_of.update(zip((int(a) for a in addr), (int(s) for s in seqs)))

    async def call(self, method: str, args: tuple) -> Any:
        g = self.group
        if method in COMMANDS:
            return await g.command(method, args)
        if method in BROADCASTS:
            return await g.broadcast(method, args)
        tried: set[int] = set()
        last: BaseException | None = None
        waits = 0
        while True:
            c = self.copy if self.copy is not None and self.copy.state == STARTED \
                and self.copy.no not in tried else g.pick(tried)
            if c is None:
                if last is not None and not is_unreachable(last):
                    raise last
                raise NoShardAvailable(f"[{g.index}][{g.shard}] no copy of the shard is "
                                       "available" + (f": {type(last).__name__}" if last else ""),
                                       index=g.index, shard=str(g.shard))
            m, a = method, args
            if method in ADDRESSED and self.addr_copy is not None and c is not self.addr_copy:
                if method == "explain":
                    raise NoShardAvailable(f"[{g.index}][{g.shard}] the copy that answered the "
                                           "query phase is gone", index=g.index,
                                           shard=str(g.shard))
                addrs = list(args[0])
                profile = bool(args[2]) if len(args) > 2 else False
                m, a = "fetch_seqs", ([self._seq_of.get(int(x), -1) for x in addrs], profile)
            try:
                out = await g._call(c, m, *a)
            except BaseException as e:  # noqa: BLE001 - failover decides
                if _is(e, "shard_generation_ahead_exception") and waits < 100:
                    waits += 1
                    await asyncio.sleep(0.02)   # a refresh is still reaching this copy
                    continue
                if is_unreachable(e):
                    g.mark_down(c, e)
                elif not _is(e, "search_context_missing_exception") or m == "pin":
                    raise
                tried.add(c.no)
                self.copy = None
                last = e
                continue
            self.copy = c
            if method in ("query", "range", "window"):
                self.addr_copy = c
                self._remember(method, out)
            return out


# --- the backend the coordinator uses -------------------------------------------------------------

class ReplicatedBackend:
    """``ShardBackend`` over shard groups (``transport``: Ray actors or in-process copies).

    ``data_dir`` None keeps copies in memory only (tests, notebooks): a copy that dies comes
    back empty and is refilled from another copy if there is one.
    """

    def __init__(self, transport: Any = None, data_dir: str | None = None,
                 write_timeout: float = DEFAULT_WRITE_TIMEOUT) -> None:
        self.transport = transport if transport is not None else RayTransport()
        self.data_dir = None if data_dir is None else str(data_dir)
        self.write_timeout = write_timeout
        self.groups: list[ShardGroup] = []
        self.on_change: Any = None       # called with a group whose record changed
        self._monitor: asyncio.Task | None = None
        self._tick = 0

    # --- ShardBackend -------------------------------------------------------------------------

    def create(self, index: str, shard: int, mapping: Mapping, *, replicas: int = 0,
               settings: dict[str, Any] | None = None, uuid: str | None = None) -> ShardGroup:
        g = ShardGroup(self, index, shard, uuid or index, mapping, settings or {}, replicas)
        for c in g.copies:
            self.place(g, c, force=c.no == 0)
            if c.handle is not None:
                c.state, c.last_op = STARTED, -1
                g.in_sync_set.add(c.no)
        self.groups.append(g)
        self._ensure_monitor()
        return g

    async def call(self, ref: Any, method: str, *args: Any) -> Any:
        if isinstance(ref, GroupSession):
            return await ref.call(method, args)
        return await GroupSession(ref).call(method, args)

    def destroy(self, ref: ShardGroup) -> None:
        ref.destroyed = True
        if ref in self.groups:
            self.groups.remove(ref)
        handles = [c.handle for c in ref.copies if c.handle is not None]
        for c in ref.copies:
            c.handle, c.state = None, UNASSIGNED

        async def drop_then_kill() -> None:
            outs = [self.transport.call(h, "drop", timeout=5.0) for h in handles]
            await asyncio.gather(*outs, return_exceptions=True)
            for h in handles:
                self.transport.kill(h)
        try:
            asyncio.get_running_loop().create_task(drop_then_kill())
        except RuntimeError:
            for h in handles:
                self.transport.kill(h)

    def session(self, refs: list[Any]) -> list[Any]:
        """Per-search views of the groups (see :class:`GroupSession`)."""
        return [GroupSession(r) if isinstance(r, ShardGroup) else r for r in refs]

    async def describe(self, ref: Any) -> list[dict[str, Any]]:
        return await ref.describe()

    def reconfigure(self, refs: list[Any], settings: dict[str, Any], replicas: int) -> None:
        """Index settings changed: copies added or removed, and the copies' own settings
        (``index.translog.*``) sent as a command."""
        for ref in refs:
            if len(ref.copies) != 1 + replicas:
                self.set_replicas(ref, replicas)
            mine = {k: v for k, v in settings.items() if k.startswith("translog.")}
            if mine:
                self.configure(ref, mine)

    def configure(self, ref: ShardGroup, settings: dict[str, Any]) -> None:
        """Changed index settings (durability...): a ``configure`` command, in write order."""
        async def run() -> None:
            try:
                await ref.command("configure", (settings,))
            except Exception as e:  # noqa: BLE001 - the copies also read it from their snapshot
                log.warning("configure [%s][%s] failed: %r", ref.index, ref.shard, e)
        try:
            asyncio.get_running_loop().create_task(run())
        except RuntimeError:
            ref.settings.update(settings)

    def set_replicas(self, ref: ShardGroup, replicas: int) -> None:
        """``number_of_replicas`` changed: add copies (they catch up) or remove the last ones."""
        want = 1 + max(0, replicas)
        while len(ref.copies) > want:
            c = ref.copies.pop()
            ref.in_sync_set.discard(c.no)
            if c.handle is not None:
                self.transport.kill(c.handle)
        while len(ref.copies) < want:
            c = Copy(len(ref.copies))
            ref.copies.append(c)
            self.place(ref, c)
            if c.handle is not None:
                c.state = INITIALIZING

    def nodes(self) -> list[dict[str, Any]]:
        try:
            return self.transport.nodes()
        except Exception:  # noqa: BLE001 - informational
            return []

    # --- placement ----------------------------------------------------------------------------

    def place(self, g: ShardGroup, c: Copy, force: bool = False) -> None:
        """Start copy ``c`` on a node holding no other copy of its shard (the least loaded);
        ``force`` (a primary) takes any node when there is no such one."""
        if c.handle is not None:
            return
        nodes = self.nodes()
        data = [n for n in nodes if n["resource"]] or nodes
        if not data:
            data = [{"id": None, "resource": None}]
        taken = {o.placement.node_id for o in g.copies
                 if o is not c and o.handle is not None and o.placement is not None}
        free = [n for n in data if n["id"] not in taken]
        if not free:
            if not force:
                c.state, c.reason = UNASSIGNED, "no other node to place a replica on"
                return
            free = data
        load: dict[Any, int] = {}
        for og in self.groups:
            for oc in og.copies:
                if oc.handle is not None and oc.placement is not None:
                    load[oc.placement.node_id] = load.get(oc.placement.node_id, 0) + 1
        rot = (g.shard + c.no) % len(free)
        ordered = free[rot:] + free[:rot]
        node = min(ordered, key=lambda n: load.get(n["id"], 0))
        c.placement = Placement(node["id"], node["resource"])
        c.handle = self.transport.spawn(g.spec(c.no), c.placement)
        c.reason = None
        if c.state == UNASSIGNED and not force:
            c.state = INITIALIZING   # a new copy starts empty: the monitor fills it
        g._persist()

    # --- monitor ------------------------------------------------------------------------------

    def _ensure_monitor(self) -> None:
        if self._monitor is not None and not self._monitor.done():
            return
        try:
            self._monitor = asyncio.get_running_loop().create_task(self._monitor_loop())
        except RuntimeError:
            self._monitor = None

    async def _monitor_loop(self) -> None:
        while self.groups:
            await asyncio.sleep(MONITOR_INTERVAL)
            await self.maintain()

    async def maintain(self) -> None:
        """One monitor round over every group (also called directly by tests)."""
        self._tick += 1
        ping_started = self._tick % 2 == 0
        groups = list(self.groups)
        outs = await asyncio.gather(*(g.maintain(ping_started) for g in groups),
                                    return_exceptions=True)
        for g, o in zip(groups, outs):
            if isinstance(o, BaseException):
                log.warning("monitoring [%s][%s] failed: %r", g.index, g.shard, o)

    # --- recovery -----------------------------------------------------------------------------

    def open(self, index: str, shard: int, mapping: Mapping, *, replicas: int,
             settings: dict[str, Any], uuid: str, record: dict[str, Any] | None = None
             ) -> ShardGroup:
        """A group for an existing shard: its copies start and recover from their files (on
        the data nodes recorded for them, if any); nothing is in sync until
        :func:`recover_group` has heard from them."""
        g = ShardGroup(self, index, shard, uuid, mapping, settings, replicas)
        record = record or {}
        places = list(record.get("placements") or [])
        g.in_sync_set = set(record.get("in_sync", range(len(g.copies))))
        g.needs_base = True
        for c in g.copies:
            res = places[c.no] if c.no < len(places) else None
            if res is not None:      # back to the node that holds its files
                c.placement = Placement(None, res)
                c.handle = self.transport.spawn(g.spec(c.no), c.placement)
            else:
                self.place(g, c, force=c.no in g.in_sync_set)
            if c.handle is not None:
                c.state = INITIALIZING
        self.groups.append(g)
        self._ensure_monitor()
        return g


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
        c.info, c.last_op, c.last_id = o, int(o["last_op"]), o.get("last_id")
        got.append(c)
    for c in g.copies:
        if c not in got and c.state != UNASSIGNED:
            c.state, c.reason = UNASSIGNED, c.reason or "node not in the cluster"
    if got and not g._adopt_base(got):
        log.error("[%s][%s]: no in-sync copy is back yet (in-sync: %s); the shard waits for "
                  "one", g.index, g.shard, sorted(g.in_sync_set))
    return [c.info for c in got if c.state == STARTED]
