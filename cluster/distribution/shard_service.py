"""The shard's remote interface: a thin shell over the engine's :class:`ShardCore`.

It adds what only a hosted shard needs — simulated trouble and the deadline of each search call
(``simulation.py``), whether the caller of the running call went away (``cancel_calls.py``),
the node it runs on, writes' results as one JSON text — and nothing of a shard's data or
logic, which stays in ``engine/shard.py``.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import orjson

from ..engine.cancellation import Cancellation
from ..engine.mapping import Mapping
from ..engine.flushing import INDEX_BUFFER_DOCS
from ..engine.merge_runner import MergeRunner
from ..engine.merging import ForceMerge
from ..engine.scoring import Stats
from ..engine.shard import ShardCore
from ..engine.shard_messages import FetchedDoc, ShardHits, ShardQuery
from ..engine.writes import WriteBatch, WriteOp
from ..errors import ShardTimeout, TaskCancelled
from .cancel_calls import cancelled_predicate
from .lanes import own_lock
from .lazy_addons import install_lazy_addons
from .simulation import ShardSimulator

# in a shard copy's worker this module is imported before Ray makes its serialization context
install_lazy_addons()


class ShardService:
    """The shard's remote interface: a thin shell over :class:`ShardCore`.

    Hosted by :class:`~.shard_copy.ShardCopy` (a Ray actor) in the service, and in-process
    by ``LocalBackend`` in unit tests.
    """

    background_merges = False   # a shard copy merges on a background thread (merge_runner.py)

    def __init__(self, index: str, shard: int, mapping: Mapping) -> None:
        self.core = ShardCore(index, shard, mapping)
        if self.background_merges:
            # a bounded write buffer: segments built when it fills (``flushing.py``)
            self.core.flush_docs = INDEX_BUFFER_DOCS
            # the lock every call holds (``lanes.serialized``), shared with the merge thread;
            # kept (with the runner) when a reset or reload builds a new core
            lock = self.__dict__.setdefault("_serial_lock", threading.RLock())
            if "merger" not in self.__dict__:
                self.merger = MergeRunner(lock, lambda: self.core)
            self.core.merge_due = self.merger.kick
        self.sim = ShardSimulator()   # simulated trouble, off by default (simulation.py)
        self.stopped = {"timed_out": 0, "cancelled": 0}   # search calls cut short, by why

    def apply(self, ops: list[WriteOp] | WriteBatch, mapping: Mapping | None = None,
              refresh: bool = False) -> tuple[list[dict[str, Any]], int]:
        results = self.core.apply(ops, mapping)
        gen = self.core.refresh() if refresh else self.core.generation
        if isinstance(ops, WriteBatch):
            # a batch's thousands of results cross as one JSON text: far cheaper to send and
            # read than as many pickled dicts (and JSON-safe, as a copy's last result must be)
            return orjson.dumps(results).decode(), gen
        return results, gen

    def refresh(self) -> int:
        return self.core.refresh()

    def set_mapping(self, mapping: Mapping) -> None:
        self.core.set_mapping(mapping)

    # search calls run through ``self.sim``: a deadline, cancellation, simulated trouble

    def _run(self, fn: Callable[..., Any], *args: Any, deadline: float | None) -> Any:
        """``fn(*args, cancel)`` through the simulator; a call cut short is counted."""
        cancel = Cancellation(deadline, cancelled_predicate())
        try:
            out = self.sim.run(fn, *args, cancel, cancel=cancel)
        except ShardTimeout:
            self.stopped["timed_out"] += 1
            raise
        except TaskCancelled:
            self.stopped["cancelled"] += 1
            raise
        if getattr(out, "timed_out", False):
            self.stopped["timed_out"] += 1
        return out

    def query(self, q: ShardQuery) -> ShardHits:
        return self.sim.annotate(self._run(self.core.query, q, deadline=q.deadline), q.profile)

    def term_stats(self, fields: list[str], terms: list[tuple[str, str]],
                   generation: int | None, deadline: float | None = None
                   ) -> tuple[Stats, int]:
        return self._run(self.core.term_stats, fields, terms, generation, deadline=deadline)

    def sample(self, q: ShardQuery, samples: int
               ) -> tuple[int, list[Any], list[int], list[str]]:
        return self._run(self.core.sample, q, samples, deadline=q.deadline)

    def range(self, q: ShardQuery, lo: list[Any] | None, hi: list[Any] | None,
              limit: int) -> tuple[int, ShardHits]:
        below, hits = self._run(self.core.range, q, lo, hi, limit, deadline=q.deadline)
        return below, self.sim.annotate(hits, q.profile)

    def window(self, q: ShardQuery, start: int, limit: int) -> tuple[int, ShardHits]:
        below, hits = self._run(self.core.window, q, start, limit, deadline=q.deadline)
        return below, self.sim.annotate(hits, q.profile)

    def fetch(self, addrs: list[int], deadline: float | None = None, profile: bool = False
              ) -> Any:
        """The page's documents; with ``profile``, ``(docs, timings)``."""
        docs = self.sim.run(self.core.fetch, addrs,
                            cancel=Cancellation(deadline, cancelled_predicate()))
        if not profile:
            return docs
        return docs, {"took_ns": self.sim.last_work_ns, "node": self.sim.node,
                      "simulated_delay_ns": self.sim.last_delay_ns}

    def simulate(self, spec: dict[str, Any] | None) -> None:
        """Set (or with None clear) this shard's simulated trouble (``simulation.py``)."""
        self.sim.configure(spec, salt=f"{self.core.index}/{self.core.shard}")
        if self.background_merges:
            gate = self.__dict__.setdefault("_merge_gate", threading.Event())
            if self.sim.trouble is not None and self.sim.trouble.hold_merges:
                gate.clear()
                self.merger.pause = self._hold_merge
            else:
                gate.set()

    def _hold_merge(self) -> None:
        """``hold_merges``: the merge thread waits half-way until the knob is cleared or the
        copy closes (the shard's lock is not held meanwhile)."""
        gate = self.__dict__["_merge_gate"]
        while not gate.wait(0.05) and not self.merger.closed:
            pass

    def explain(self, q: ShardQuery, addrs: list[int]) -> tuple[str, list[dict[str, Any]]]:
        """(node id, explanations) for the page's hits on this shard."""
        return node_id(), self.core.explain(q, addrs)

    def inner_hits(self, q: ShardQuery, addrs: list[int]) -> list[dict[str, Any]]:
        """The ``inner_hits`` of the page's hits on this shard."""
        return self.core.inner_hits(q, addrs)

    def get(self, doc_id: str) -> FetchedDoc | None:
        return self.core.get(doc_id)

    def generation(self) -> int:
        return self.core.generation

    def pin(self, key: str, generation: int | None = None) -> int:
        return self.core.pin(key, generation)

    def unpin(self, keys: list[str]) -> int:
        return self.core.unpin(keys)

    def pinned_generations(self) -> dict[int, int]:
        return self.core.pinned_generations()

    @own_lock
    def force_merge(self, max_num_segments: int | None, only_expunge_deletes: bool,
                    flush: bool) -> int:
        """``_forcemerge`` on this copy (merges are per copy: segments are not replicated);
        ``flush`` then writes a snapshot where the copy has files (``ShardCopy.flush``).

        With background merges it waits for the copy's merge thread without holding the
        shard's lock (searches and writes go on; a Ray actor runs it in its own concurrency
        group), and a caller that goes away stops it after the merge in flight."""
        if not self.background_merges:
            merges = self.core.force_merge(max_num_segments, only_expunge_deletes)
            if flush:
                self._flush_if_on_disk()
            return merges
        req = self.merger.force(ForceMerge(max_num_segments, only_expunge_deletes),
                                self._flush_if_on_disk if flush else None)
        try:
            return req.wait(cancelled_predicate())
        except InterruptedError as e:
            raise TaskCancelled(f"force merge stopped: {e}") from None

    def _flush_if_on_disk(self) -> None:
        """After a force merge (the shard's lock held): a snapshot where the copy has files."""
        if getattr(self, "dir", None) is not None:
            self.flush()  # type: ignore[attr-defined]

    def close_merges(self) -> None:
        """Abandon background merges (the copy is dropped or its process stops)."""
        merger = self.__dict__.get("merger")
        if merger is not None:
            merger.close()

    def info(self) -> dict[str, Any]:
        node = None
        try:
            import ray
            if ray.is_initialized():
                node = ray.get_runtime_context().get_node_id()
        except Exception:  # noqa: BLE001 - informational only
            node = None
        return {"index": self.core.index, "shard": self.core.shard,
                "generation": self.core.generation, "docs": self.core.doc_count(nested=True),
                "segments": len(self.core.segments), "max_seq": self.core.max_seq,
                "segment_list": self.core.segments_info(), "merges": dict(self.core.merges),
                "merging": bool(getattr(self.__dict__.get("merger"), "running", False)),
                "pins": len(self.core.pins), "node_id": node, "stopped_calls": dict(self.stopped),
                "counters": dict(self.core.counters)}


def node_id() -> str:
    """The Ray node this shard runs on (``local`` outside Ray)."""
    try:
        import ray
        if ray.is_initialized():
            return str(ray.get_runtime_context().get_node_id())
    except Exception:  # noqa: BLE001 - informational only
        pass
    return "local"

