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
from typing import Any

import numpy as np

from ..engine.mapping import Mapping
from ..indices.preference import Preference, order_copies, parse_preference
from ..engine.shard_messages import BROADCASTS, COMMANDS
from ..engine.sorting import SEQ_MASK
from .shard_group import (DEFAULT_WRITE_TIMEOUT, INITIALIZING, MONITOR_INTERVAL,
                          STARTED, UNASSIGNED, Copy, NoShardAvailable, ShardGroup,
                          has_error_type)
from .shard_service import node_id
from .transport import Placement, RayTransport, is_unreachable

log = logging.getLogger("shardsearch.replication")

ADDRESSED = ("fetch", "explain", "inner_hits")   # calls that use addresses of a query answer

# --- one search's view of a group -----------------------------------------------------------------


class GroupSession:
    """One search's reads of one shard: every call reaches the same copy while it lives.

    Addresses in a query answer are per copy; when the copy that gave them dies, ``fetch``
    goes to another copy by sequence number (``ShardCopy.fetch_seqs``) and ``explain`` fails.
    """

    def __init__(self, group: ShardGroup, pref: Preference | None = None) -> None:
        self.group = group
        self.pref = pref or Preference()
        self.copy: Copy | None = None
        self.addr_copy: Copy | None = None
        self._seq_of: dict[int, int] = {}

    def _remember(self, method: str, out: Any) -> None:
        hits = out[1] if method in ("range", "window") else out
        addr = getattr(hits, "addr", None)
        ties = getattr(hits, "ties", None)
        if addr is not None and ties is not None:
            seqs = np.asarray(ties, dtype=np.int64) & np.int64(SEQ_MASK)
            # (``tolist``: Python ints at once, ~4x faster than ``int()`` per NumPy scalar)
            self._seq_of.update(zip(np.asarray(addr, dtype=np.int64).tolist(), seqs.tolist()))

    def _pick(self, tried: set[int]) -> Copy | None:
        """The next copy to try: the preference's order, else the group's round robin."""
        g = self.group
        if self.pref.kind is None:
            return g.pick(tried)
        started = {c.no: c for c in g.started}
        order = order_copies(self.pref, [(c.no, c.info.get("node_id")) for c in started.values()],
                             f"[{g.index}][{g.shard}]", node_id())
        if order is None:
            return g.pick(tried)
        return next((started[no] for no in order if no not in tried), None)

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
                and self.copy.no not in tried else self._pick(tried)
            if c is None:
                if last is not None and not is_unreachable(last):
                    raise last
                why = g.unavailable_reason()
                raise NoShardAvailable(f"[{g.index}][{g.shard}] no copy of the shard is "
                                       "available" + (f": {type(last).__name__}" if last else "")
                                       + (f" ({why})" if why else ""),
                                       index=g.index, shard=str(g.shard))
            m, a = method, args
            if method in ADDRESSED and self.addr_copy is not None and c is not self.addr_copy:
                if method in ("explain", "inner_hits"):
                    raise NoShardAvailable(f"[{g.index}][{g.shard}] the copy that answered the "
                                           "query phase is gone", index=g.index,
                                           shard=str(g.shard))
                addrs = list(args[0])
                profile = bool(args[2]) if len(args) > 2 else False
                m, a = "fetch_seqs", ([self._seq_of.get(int(x), -1) for x in addrs], profile)
            try:
                out = await g._call(c, m, *a)
            except BaseException as e:  # noqa: BLE001 - failover decides
                if has_error_type(e, "shard_generation_ahead_exception") and waits < 100:
                    waits += 1
                    await asyncio.sleep(0.02)   # a refresh is still reaching this copy
                    continue
                if is_unreachable(e):
                    g.mark_down(c, e)
                elif not has_error_type(e, "search_context_missing_exception") or m == "pin":
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

    def session(self, refs: list[Any], preference: str | None = None) -> list[Any]:
        """Per-search views of the groups (see :class:`GroupSession`); ``preference`` orders
        each shard's copies (``indices/preference.py``)."""
        pref = parse_preference(preference)
        return [GroupSession(r, pref) if isinstance(r, ShardGroup) else r for r in refs]

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

    def read_target(self, ref: Any) -> tuple[Any, str | None]:
        """A started copy's actor handle and node, for a reader that calls the copy directly
        (``client/data.py``); every started copy holds a point in time's pins (a broadcast)."""
        started = ref.started if isinstance(ref, ShardGroup) else []
        if not started:
            raise NoShardAvailable(f"[{ref.index}][{ref.shard}] no copy of the shard is "
                                   "available", index=ref.index, shard=str(ref.shard))
        c = started[0]
        return c.handle, c.info.get("node_id") or getattr(c.placement, "node_id", None)

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
