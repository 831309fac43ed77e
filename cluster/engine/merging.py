"""A shard's merges as Lucene runs them: pick under the lock, build outside it, swap under it.

A merge has three steps (:class:`MergeJob`):

1. **plan** (the shard's lock held, O(segments)): the policy (``merge_policy.py``) or a
   ``_forcemerge`` (:class:`ForceMerge`) names the source segments; the job notes the current
   generation ``G`` and the pinned generations.
2. **build** (no lock: searches and writes go on): the rows to keep — every version visible at
   ``G``, later, or a pinned generation — and the merged segment (``segment_merge.py``). Writes
   meanwhile only turn live versions' ``deleted_gen`` from ``NEVER`` into a generation after
   ``G``, which changes no row's fate (see ``segment_merge.kept_rows``).
3. **commit** (the lock held, O(rows of the sources)): the merged segment takes the sources'
   place. Their ``deleted_gen`` column is copied again, so versions deleted or updated while
   the merge ran come out deleted in the merged segment at the same generation, and the live
   map points into it. A pin taken meanwhile at an older generation that would lose versions
   abandons the merge (the next one plans again); so does a shard that was reset or closed.

Sources stay addressable after the swap (``retired``) until two refreshes went by and no pin
predates the merge (a fetch names addresses its query phase saw).

A shard alone (``ShardCore``) runs the three steps inline; a hosted shard copy runs them on a
background thread (``merge_runner.py``), one merge at a time per copy.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .live_ids import LiveIds
from .merge_policy import (AUTO_MERGE_MAX_BYTES, FORCE_MERGE_MAX_STEPS, MergePolicy,
                           dropped_share, find_merge, force_groups, segment_bytes)
from .segment import NEVER, Segment
from .segment_merge import droppable, kept_rows, merge_rows
from .source_cache import BlockCache


@dataclass
class MergeJob:
    """One merge: its sources and the generation and pins it was planned at."""

    owner: Any                               # the shard that planned it (commit checks it)
    sources: list[Segment]
    generation: int
    pinned: frozenset[int]
    rows: list[np.ndarray] | None = None     # kept rows per source (build)
    merged: Segment | None = None            # the new segment (build; None: nothing kept)

    def build(self, pause: Callable[[], None] | None = None) -> None:
        """Step 2, without the shard's lock. ``pause`` (a test hook) runs half-way, after the
        rows are chosen and before the segment is built."""
        self.rows = kept_rows(self.sources, self.generation, self.pinned)
        if pause is not None:
            pause()
        self.merged = merge_rows(self.sources, self.rows)


@dataclass
class ForceMerge:
    """``_forcemerge`` as a sequence of merges, each planned against the shard as it is then.

    ``max_num_segments``: the smallest segments merged into one so that N remain (again if
    refreshes meanwhile left more), then each segment with droppable versions rewritten alone (Lucene treats a segment with deletes
    as unmerged); ``only_expunge_deletes``: segments over ``expunge_deletes_allowed`` percent
    rewritten; neither: merges while the policy wants them, without the automatic size bound.
    At most ``FORCE_MERGE_MAX_STEPS`` merges."""

    max_num_segments: int | None = None
    only_expunge_deletes: bool = False
    merges: int = 0                           # merges committed
    steps: int = 0                            # merges planned
    tried: set[int] = field(default_factory=set)   # uids already rewritten alone

    def next_sources(self, core: Any) -> list[Segment] | None:
        if self.steps >= FORCE_MERGE_MAX_STEPS:
            return None
        self.steps += 1
        segs, gen, pinned = core.segments, core.generation, core.pins.values()
        if self.only_expunge_deletes:
            limit = core.merge_policy.expunge_deletes_allowed / 100.0
            return self._alone(segs, lambda s: dropped_share(droppable(s, gen, pinned)) > limit)
        if self.max_num_segments is not None:
            # again while refreshes during the merge left more than N segments
            pick = force_groups([segment_bytes(s) for s in segs], self.max_num_segments)
            if pick is not None:
                return [segs[i] for i in pick]
            return self._alone(segs, lambda s: bool(droppable(s, gen, pinned).any()))
        return core.merge_pick(core.merge_policy.max_merged_segment)

    def _alone(self, segs: list[Segment], wanted: Callable[[Segment], bool]
               ) -> list[Segment] | None:
        for s in segs:
            if s.uid not in self.tried and wanted(s):
                self.tried.add(s.uid)
                return [s]
        return None


class Merging:
    """The merge half of :class:`~.shard.ShardCore` (its state is set up there)."""

    segments: list[Segment]
    pending: list[Segment]   # built, not refreshed yet (``flushing.py``)
    by_uid: dict[int, Segment]
    live: LiveIds
    pins: dict[str, int]
    generation: int
    merge_policy: MergePolicy
    retired: list[tuple[int, list[Segment]]]
    source_cache: BlockCache
    readable_from: int
    merges: dict[str, int]
    merge_due: Callable[[], None] | None

    # --- step 1: plan --------------------------------------------------------------------------

    def merge_pick(self, max_bytes: int) -> list[Segment] | None:
        """The policy's next merge (segments up to ``max_bytes`` in all), or None."""
        pinned = self.pins.values()
        sizes = [segment_bytes(s) for s in self.segments]
        dropped = [dropped_share(droppable(s, self.generation, pinned)) for s in self.segments]
        pick = find_merge(sizes, dropped, self.merge_policy, max_bytes)
        return None if pick is None else [self.segments[i] for i in pick]

    def plan_merge(self, force: ForceMerge | None = None,
                   max_bytes: int = AUTO_MERGE_MAX_BYTES) -> MergeJob | None:
        """The next merge — of ``force``, else the policy's — or None."""
        sources = force.next_sources(self) if force is not None else self.merge_pick(max_bytes)
        if not sources:
            return None
        return MergeJob(self, sources, self.generation, frozenset(self.pins.values()))

    # --- step 3: commit ------------------------------------------------------------------------

    def commit_merge(self, job: MergeJob) -> bool:
        """Swap a built merge in (see the module docstring); False: abandoned."""
        assert job.rows is not None
        present = {s.uid for s in self.segments}
        if job.owner is not self or any(s.uid not in present for s in job.sources) \
                or self._loses_pinned(job):
            self.merges["abandoned"] += 1
            return False
        merged = job.merged
        kept = merged.n if merged is not None else 0
        lost = sum(s.n for s in job.sources) - kept
        gone = {s.uid for s in job.sources}
        at = min(i for i, s in enumerate(self.segments) if s.uid in gone)
        rest = [s for s in self.segments if s.uid not in gone]
        if merged is not None:
            # deletes and updates that hit the sources while the merge was built
            merged.deleted_gen[:] = np.concatenate([s.deleted_gen[r]
                                                    for s, r in zip(job.sources, job.rows)])
            rest.insert(at, merged)
            self.by_uid[merged.uid] = merged
            rows = np.flatnonzero(merged.deleted_gen == NEVER)   # the live versions
            self.live.replace_segments(gone, merged.uid, merged.ids, rows)
        self.segments = rest
        self.retired.append((self.generation, job.sources))
        if lost:   # versions visible only at unpinned generations before the plan are gone
            self.readable_from = max(self.readable_from, job.generation)
        self.merges["total"] += 1
        self.merges["docs"] += kept
        self.merges["dropped"] += lost
        return True

    def _loses_pinned(self, job: MergeJob) -> bool:
        """A pin taken while the merge was built, at a generation before its plan, that can
        see a version the merge dropped."""
        newer = {g for g in self.pins.values() if g < job.generation} - job.pinned
        assert job.rows is not None
        for g in newer:
            for s, r in zip(job.sources, job.rows):
                dropped = np.ones(s.n, dtype=bool)
                dropped[r] = False
                if (dropped & s.visible(g)).any():
                    return True
        return False

    # --- the three steps inline (a shard with no background thread) ------------------------

    def run_merge(self, job: MergeJob) -> bool:
        job.build()
        return self.commit_merge(job)

    def maybe_merge(self, max_bytes: int = AUTO_MERGE_MAX_BYTES) -> bool:
        """One merge if the policy wants one, inline; bounded by ``max_bytes``."""
        job = self.plan_merge(max_bytes=max_bytes)
        return job is not None and self.run_merge(job)

    def after_refresh(self) -> None:
        """A refresh may make a merge due: the host's background thread is told, or (a shard
        alone) one merge runs now."""
        if self.merge_due is not None:
            self.merge_due()
        else:
            self.maybe_merge()

    def force_merge(self, max_num_segments: int | None = None,
                    only_expunge_deletes: bool = False) -> int:
        """``_forcemerge`` inline (see :class:`ForceMerge`); returns the merges made."""
        fm = ForceMerge(max_num_segments, only_expunge_deletes)
        while (job := self.plan_merge(fm)) is not None:
            fm.merges += self.run_merge(job)
        return fm.merges

    # --- what merges leave behind -----------------------------------------------------------

    def prune_retired(self) -> None:
        """Forget merged-away segments once two refreshes went by and no pin predates them
        (a fetch names addresses a query phase gave moments before)."""
        oldest_pin = min(self.pins.values(), default=self.generation)
        keep = []
        for gen, segs in self.retired:
            if gen >= self.generation - 1 or oldest_pin <= gen:
                keep.append((gen, segs))
            else:
                for s in segs:
                    self.by_uid.pop(s.uid, None)
                self.source_cache.drop_segments({s.uid for s in segs})
        self.retired = keep

    def can_read(self, generation: int) -> bool:
        """Whether ``generation`` still reads exactly as it did (a merge dropped only versions
        no pinned or later generation can see)."""
        return generation >= self.readable_from or generation in self.pins.values()

    def segments_info(self) -> list[dict[str, Any]]:
        """Per segment: uid, rows, visible and not-visible rows, approximate bytes, whether
        searches see it (for ``_segments`` and ``_cat/segments``). A segment built from the
        write buffer and not refreshed yet (``flushing.py``) is listed unsearched, as Lucene's
        flushed-but-unopened segments are: its documents are those no write replaced since."""
        out = []
        for s in self.segments:
            vis = int(s.visible(self.generation).sum())
            out.append({"uid": s.uid, "docs": vis, "deleted": s.n - vis,
                        "bytes": segment_bytes(s), "search": True})
        for s in self.pending:
            live = int((s.deleted_gen == NEVER).sum())
            out.append({"uid": s.uid, "docs": live, "deleted": s.n - live,
                        "bytes": segment_bytes(s), "search": False})
        return out
