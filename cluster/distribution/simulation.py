"""Simulated trouble for experiments: latency, jitter, slow-down and failures per shard actor.

Off by default. ``Coordinator.simulate`` (Python ``Cluster.simulate``, HTTP ``POST /_sim/shards``)
gives chosen shard actors a :class:`Trouble`; the shard actor itself then misbehaves inside its
real methods (``term_stats``, ``query``, ``sample``, ``range``, ``fetch``), so the real code paths
run — the coordinator's timeouts, retries and partial results — not a model of them.

What one simulated call does on the shard (:meth:`ShardSimulator.run`):

1. a request whose deadline (the search's ``timeout``) has already passed is refused at once
   (:class:`ShardTimeout`) — Elasticsearch's shards stop collecting at the timeout too, and a
   shard never works through a backlog of answers nobody waits for;
2. it waits ``latency_ms`` plus an exponentially distributed jitter of mean ``jitter_ms`` (a
   long right tail, as real network and GC pauses have: p99 ≈ latency + 4.6 × jitter), but never
   past the deadline;
3. with probability ``fail_rate`` it fails with :class:`SimulatedFailure` (after the latency:
   a failure is an answer that took the network's time too);
4. it does the real work, then waits ``(slowdown - 1)`` times as long again, so the shard's own
   time (``took_ns`` in the profile) is ``slowdown`` times the real one.

The shard actor is a plain (one call at a time) Ray actor, so the wait occupies it as a slow
machine would; the deadline cap keeps a timed-out search from leaving work behind, and a call
whose caller went away (``cancel_calls.py``) stops waiting within one slice of
:data:`SLEEP_SLICE_S`. A restarted
actor comes back without trouble (its state is in memory only).
"""
from __future__ import annotations

import asyncio
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from ..engine.cancellation import Cancellation
from ..errors import IllegalArgument, ShardTimeout, SimulatedFailure, TaskCancelled
from ..engine.shard_calls import ShardCalls
from ..indices.catalog import IndexMeta

__all__ = ["KNOBS", "ShardSimulator", "ShardTimeout", "SimulatedFailure", "SimulationControl",
           "SimulationRule",
           "Trouble", "simulation_status"]

KNOBS = ("latency_ms", "jitter_ms", "slowdown", "fail_rate", "seed", "hold_merges")
SLEEP_SLICE_S = 0.02        # a simulated wait looks at its call's cancellation this often


@dataclass(frozen=True)
class Trouble:
    """The simulated misbehaviour of one shard actor."""

    latency_ms: float = 0.0     # added before every answer
    jitter_ms: float = 0.0      # mean of an exponential extra delay
    slowdown: float = 1.0       # the shard's own work takes this many times as long
    fail_rate: float = 0.0      # probability that a call fails
    seed: int | None = None     # for reproducible jitter and failures
    hold_merges: bool = False   # background merges wait half-way until this is cleared

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Trouble:
        """Validated knobs (Elasticsearch-style 400 errors for bad values)."""
        unknown = sorted(set(spec) - set(KNOBS))
        if unknown:
            raise IllegalArgument(f"unknown simulation setting [{unknown[0]}], expected one of "
                                  f"[{', '.join(KNOBS)}]")
        vals: dict[str, Any] = {}
        for k in ("latency_ms", "jitter_ms", "slowdown", "fail_rate"):
            if spec.get(k) is None:
                continue
            v = spec[k]
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise IllegalArgument(f"[{k}] must be a number, got [{v}]")
            try:
                vals[k] = float(v)
            except ValueError:
                raise IllegalArgument(f"[{k}] must be a number, got [{v}]") from None
            if not math.isfinite(vals[k]):
                raise IllegalArgument(f"[{k}] must be a finite number, got [{v}]")
        hold = spec.get("hold_merges", False)
        if not isinstance(hold, bool):
            raise IllegalArgument(f"[hold_merges] must be true or false, got [{hold}]")
        t = cls(**vals, seed=None if spec.get("seed") is None else _seed(spec["seed"]),
                hold_merges=hold)
        if t.latency_ms < 0 or t.jitter_ms < 0:
            raise IllegalArgument("[latency_ms] and [jitter_ms] must be >= 0")
        if t.slowdown < 1:
            raise IllegalArgument(f"[slowdown] must be >= 1, got [{t.slowdown}]")
        if not 0 <= t.fail_rate <= 1:
            raise IllegalArgument(f"[fail_rate] must be between 0 and 1, got [{t.fail_rate}]")
        return t

    @property
    def is_noop(self) -> bool:
        return not (self.latency_ms or self.jitter_ms or self.fail_rate or self.slowdown != 1
                    or self.hold_merges)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _seed(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        raise IllegalArgument(f"[seed] must be an integer, got [{v}]") from None


class ShardSimulator:
    """The shard-side half: runs one shard method with the configured trouble (see the module
    docstring) and remembers what it did, for the profile."""

    def __init__(self) -> None:
        self.trouble: Trouble | None = None
        self.rng = random.Random()
        self.last_delay_ns = 0      # simulated wait before the last answer (latency + jitter)
        self.last_work_ns = 0       # the last call's own time, slow-down included
        self._node: str | None = None

    def configure(self, spec: dict[str, Any] | None, salt: str = "") -> None:
        """Set the trouble; with a ``seed``, the draws are reproducible and differ per ``salt``
        (the shard), so shards given one seed do not jitter in lockstep."""
        self.trouble = None if not spec else Trouble.from_dict(spec)
        if self.trouble is not None and self.trouble.is_noop:
            self.trouble = None
        seed = self.trouble.seed if self.trouble else None
        self.rng = random.Random(None if seed is None else f"{seed}:{salt}")

    @property
    def node(self) -> str:
        """The Ray node this shard runs on (``local`` outside Ray), for profile ids."""
        if self._node is None:
            self._node = "local"
            ray = sys.modules.get("ray")   # never import Ray just to ask (in-process shards)
            try:
                if ray is not None and ray.is_initialized():
                    self._node = str(ray.get_runtime_context().get_node_id())
            except Exception:  # noqa: BLE001 - informational only
                pass
        return self._node

    def run(self, fn: Callable[..., Any], *args: Any, deadline: float | None = None,
            cancel: Cancellation | None = None) -> Any:
        """``fn(*args)`` with the configured trouble, within ``deadline`` (wall clock; or
        ``cancel``'s, which also stops the simulated waits when the caller went away)."""
        cancel = cancel or Cancellation(deadline)
        deadline = cancel.deadline
        if deadline is not None and time.time() >= deadline:
            raise ShardTimeout("the search's deadline passed before this shard started")
        t = self.trouble
        self.last_delay_ns = 0
        if t is not None:
            delay = t.latency_ms / 1000.0
            if t.jitter_ms:
                delay += self.rng.expovariate(1000.0 / t.jitter_ms)
            self._sleep(delay, cancel)
            self.last_delay_ns = int(delay * 1e9)
            if t.fail_rate and self.rng.random() < t.fail_rate:
                raise SimulatedFailure(f"simulated failure (fail_rate={t.fail_rate:g})")
        t0 = time.perf_counter_ns()
        out = fn(*args)
        work = time.perf_counter_ns() - t0
        if t is not None and t.slowdown > 1:
            self._sleep(work * (t.slowdown - 1) / 1e9, cancel)
            work = int(work * t.slowdown)
        self.last_work_ns = work
        return out

    def annotate(self, hits: Any, profile: bool) -> Any:
        """Scale a ``ShardHits``' own time by the slow-down and, when profiling, say where it
        ran and how long it was held back."""
        if self.trouble is not None and self.trouble.slowdown > 1:
            hits.took_ns = int(hits.took_ns * self.trouble.slowdown)
        if profile:
            hits.profile = {**(hits.profile or {}), "node": self.node,
                            "simulated_delay_ns": self.last_delay_ns}
        return hits

    @staticmethod
    def _sleep(seconds: float, cancel: Cancellation) -> None:
        """Wait ``seconds``, but never past the deadline, and stop when the call is cancelled."""
        if seconds <= 0:
            return
        end = time.time() + seconds
        timed_out = cancel.deadline is not None and end >= cancel.deadline
        if timed_out:
            end = cancel.deadline   # type: ignore[assignment]
        while (left := end - time.time()) > 0:
            if cancel.cancelled is not None and cancel.cancelled():
                raise TaskCancelled("the shard's simulated wait was cancelled: its caller left")
            time.sleep(min(left, SLEEP_SLICE_S))
        if timed_out:
            raise ShardTimeout("the search's deadline passed while this shard was held up")


@dataclass
class SimulationRule:
    """What the coordinator remembers of one shard's trouble (for health and ``GET /_sim``)."""

    index: str
    index_uuid: str
    shard: int
    trouble: Trouble

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "shard": self.shard, **self.trouble.to_dict()}


def simulation_status(rules: list[SimulationRule]) -> dict[str, Any]:
    """The ``simulation`` object of ``GET /_sim`` and ``GET /_cluster/health``."""
    return {"enabled": bool(rules),
            "shards": [r.to_dict() for r in sorted(rules, key=lambda r: (r.index, r.shard))]}


class SimulationControl:
    """The coordinator's side: which shards have simulated trouble (``POST /_sim``)."""

    def __init__(self, catalog: Any, backend: Any) -> None:
        self.catalog = catalog      # indices/admin.py: the indices and their expressions
        self.shards = ShardCalls(backend)
        self.rules: list[SimulationRule] = []

    async def simulate(self, index: str | None = None, shard: int | list[int] | None = None,
                       **knobs: Any) -> dict[str, Any]:
        """Give shard actors simulated latency, jitter, slow-down and failures.

        ``index`` None means every index, ``shard`` None every shard of it. Knobs all zero (or
        none) turn the trouble off for those shards. Trouble is per actor: a shard created later
        (a new index) starts without any.
        """
        trouble = Trouble.from_dict(knobs)
        names = self.catalog.resolve(index if index is not None else "_all",
                                     allow_no_indices=index is None)
        targets: list[tuple[IndexMeta, int]] = []
        for n in names:
            meta = self.catalog.indices[n]
            targets += [(meta, sid) for sid in _shard_ids(shard, meta)]
        spec = None if trouble.is_noop else trouble.to_dict()
        await asyncio.gather(*(self.shards.simulate(meta.shards[sid], spec)
                               for meta, sid in targets))
        hit = {(meta.uuid, sid) for meta, sid in targets}
        rules = [r for r in self._live_rules() if (r.index_uuid, r.shard) not in hit]
        if spec is not None:
            rules += [SimulationRule(meta.name, meta.uuid, sid, trouble) for meta, sid in targets]
        self.rules = rules
        return {"acknowledged": True, "shards": len(targets), "simulation": self.status()}

    async def clear(self) -> dict[str, Any]:
        """Turn all simulated trouble off (every shard actor is told, not only those listed)."""
        refs = [ref for m in self.catalog.indices.values() for ref in m.shards]
        await asyncio.gather(*(self.shards.simulate(ref, None) for ref in refs),
                             return_exceptions=True)
        self.rules = []
        return {"acknowledged": True, "simulation": self.status()}

    def status(self) -> dict[str, Any]:
        """What simulated trouble is on, per shard (``GET /_sim``)."""
        return simulation_status(self._live_rules())

    def _live_rules(self) -> list[SimulationRule]:
        """Rules of indices that still exist (a deleted index took its actors with it)."""
        uuids = {m.uuid for m in self.catalog.indices.values()}
        self.rules = [r for r in self.rules if r.index_uuid in uuids]
        return self.rules


def _shard_ids(shard: Any, meta: IndexMeta) -> list[int]:
    """``shard`` of a simulate call: None (all), a number or a list of numbers, each in range."""
    if shard is None:
        return list(range(meta.number_of_shards))
    raw = shard if isinstance(shard, (list, tuple)) else [shard]
    out = []
    for s in raw:
        if isinstance(s, bool) or not isinstance(s, (int, str)) or not str(s).isdigit():
            raise IllegalArgument(f"[shard] must be a shard number or a list of them, got [{s}]")
        if int(s) >= meta.number_of_shards:
            raise IllegalArgument(f"shard [{s}] does not exist: index [{meta.name}] has "
                                  f"[{meta.number_of_shards}] shards")
        out.append(int(s))
    return sorted(set(out))
