"""How the coordinator reaches a shard copy: Ray actors, or in-process copies for tests.

A transport spawns a copy where its :class:`Placement` says, calls it with a timeout, kills it
and lists the nodes. ``is_unreachable`` tells a dead, restarting or silent copy (which leaves
the in-sync set) from a copy that answered with an error of the request.
"""
from __future__ import annotations

import asyncio
import time
import uuid as uuidlib
from dataclasses import dataclass
from typing import Any, Protocol

from ..engine.shard_messages import READS
from ..errors import SearchError, actor_died, remote_cause
from .cancel_calls import awaited
from .coalescing import Coalescer
from .lanes import LaneClosed, LaneFinder


_UNSENT = object()   # a lane call that never left (``RayTransport._write_by_lane``)


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
    """Copies as Ray actors (:func:`copy_actor_class`), restarted by Ray when they die."""

    def __init__(self) -> None:
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
        """``method`` on the copy: reads and writes over its lane when it has one, the rest
        (and what the lane could not send) through Ray; ``timeout`` bounds all of it, the
        lane's lookup included (it asks the copy through Ray)."""
        run = self._reach(handle, method, args)
        return await (run if timeout is None else asyncio.wait_for(run, timeout))

    async def _reach(self, handle: Any, method: str, args: tuple) -> Any:
        if method in READS:
            lane = await self._lanes.get(handle)
            if lane is not None:
                try:
                    return await lane.call(method, *args)
                except LaneClosed:
                    pass   # the copy's process changed: a read may run again, via Ray
            # through Ray, reads may share an actor call (commands keep their own)
            return await self._coalescer(handle).call(method, *args)
        if method == "command" and args[1] == "apply":
            lane = await self._lanes.get(handle)
            if lane is not None:
                out = await self._write_by_lane(lane, args)
                if out is not _UNSENT:
                    return out
        return await getattr(handle, method).remote(*args)

    @staticmethod
    async def _write_by_lane(lane: Any, args: tuple) -> Any:
        """A write command over the copy's lane: a bulk's batches are large, and Ray would
        pass each through its object store (and the raylet) on top of its per-call cost.
        Commands are numbered and sent one at a time per group (``shard_group.py``), so the
        order holds whichever way each goes; a lane that breaks once the command left makes
        the copy unreachable, as a dead actor does (the group retries by command id)."""
        try:
            return await lane.call("command", *args)
        except LaneClosed as e:
            if not e.sent:
                return _UNSENT   # never left this process: Ray's call sends it
            raise CopyUnreachable(str(e)) from None

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
                            "address": n.get("NodeManagerAddress"),
                            "memory": n.get("Resources", {}).get("memory"),
                            "name": node_name(n["NodeID"], res[0] if res else None,
                                              n.get("NodeManagerHostname"))})
            self._nodes = sorted(out, key=lambda d: (d["resource"] or "", d["id"]))
            self._nodes_at = now
        return self._nodes


def node_name(node_id: str, resource: str | None, hostname: str | None) -> str:
    """A node's name as ``_cat`` shows it: its data-node resource (``node_2``), else its host
    and the start of its Ray id (several Ray nodes may share one host)."""
    if resource is not None:
        return resource.removeprefix("shardsearch_")
    return f"{hostname or 'ray'}-{node_id[:8]}"


class LocalHandle:
    """An in-process copy that tests can crash and restart (its files stay)."""

    def __init__(self, spec: dict[str, Any], node: str | None) -> None:
        self.spec = spec
        self.node = node
        self.obj: Any = None
        self.alive = False
        self.restart()

    def restart(self) -> None:
        from .lanes import serialized
        from .shard_copy import ShardCopy
        s = self.spec
        self.obj = serialized(ShardCopy)(s["index"], s["shard"], s["mapping"], s["copy"], s["uuid"],
                             s["data_dir"], s["settings"])
        self.alive = True

    def crash(self) -> None:
        self.alive = False
        if self.obj is not None:
            self.obj.close_merges()
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
        if method == "force_merge":   # waits for the copy's merge thread: not on the loop
            return await asyncio.to_thread(handle.obj.force_merge, *args)
        return getattr(handle.obj, method)(*args)

    def kill(self, handle: LocalHandle) -> None:
        handle.crash()

    def nodes(self) -> list[dict[str, Any]]:
        return [{"id": n, "resource": None, "address": n, "name": n} for n in self.node_names]


def copy_actor_class() -> Any:
    """The Ray actor class of a shard copy: restarts by itself (and recovers from its files).

    ``max_task_retries=0``: a call in flight when the process dies fails (the group retries
    writes itself, idempotently, by command number); it is never re-run behind our back.
    """
    import ray

    from .lanes import serialized
    from .shard_copy import ShardCopy

    def force_merge(self: Any, *args: Any) -> int:
        return ShardCopy.force_merge(self, *args)
    # a force merge waits for the copy's merge thread in its own concurrency group, so the
    # default group (one call at a time) goes on serving searches and writes meanwhile
    cls = type("ShardCopy", (serialized(ShardCopy),), {
        "force_merge": ray.method(concurrency_group="merges")(force_merge)})
    return ray.remote(max_restarts=-1, max_task_retries=0, num_cpus=0,
                      concurrency_groups={"merges": 4})(cls)
