"""Segments built from the write buffer while writes go on, invisible until the next refresh.

Lucene flushes its indexing buffer into a segment when the buffer fills, long before the
refresh that makes it searchable. Here the same: when the buffer holds ``INDEX_BUFFER_DOCS``
documents, a hosted shard copy hands them to one background thread that builds their
segment with ``created_gen = generation + 1`` — what no search, count or statistic of the
current generation sees — while writes fill a fresh buffer. A bulk load then builds most of
its segments while the front end is still sending documents (the shards were mostly idle),
and the final refresh only builds the rest and makes everything visible at once.

Rules (``ShardCore`` keeps them; every method runs under the host's serialisation):

* at most one build in flight per shard; a buffer that fills meanwhile waits for the next
  write after the build ends (bounded work, and segments no smaller than the threshold);
* the documents being built stay readable (``building``): real-time get, versions and
  ``if_seq_no`` checks, updates and deletes. A write that replaces or deletes one of them
  removes it from ``building``, and its row lands retired (``deleted_gen = created_gen``);
* a landed segment is *pending*: addressable and in the live map, not yet searched;
* ``refresh`` waits for the build in flight, then makes the pending segments visible with
  the segment of the rest of the buffer, all at the new generation;
* a snapshot waits for the build too; an incremental one stores each pending segment as a
  part once (``snapshot_state.py``), a whole one its rows as buffered documents;
* a failed build puts its documents back into the buffer (nothing acknowledged is lost);
* closing a shard waits for its build and drops it: no thread outlives the shard.

The builder thread touches only its own documents and segment, never the shard's state, so
it needs no lock: landing happens in the shard's own calls.
"""
from __future__ import annotations

import logging
import pickle
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .gcpause import release_free_memory
from .live_ids import LiveIds
from .mapping import Mapping
from .segment import NEVER, BufferedDoc, Segment

log = logging.getLogger("shardsearch.flushes")

# Documents per background build (GCIDE, 2 shards, batches of 5,000; the README's bulk
# paragraph): a shard's 63,000 documents make ~4 segments, 3 built while the load runs; 32,768
# gave the same wall time and memory for ~0.5 more CPU s (a bigger build left to the refresh).
INDEX_BUFFER_DOCS = 16_384


class BufferBuild:
    """One background build: the documents it took from the buffer, then their segment."""

    def __init__(self, docs: dict[str, BufferedDoc], mapping: Mapping, generation: int,
                 builder: ThreadPoolExecutor, pause: Callable[[], None] | None = None) -> None:
        self.docs = docs                    # id -> doc; an id popped meanwhile was retired
        self.order = list(docs)             # the segment's rows
        self.generation = generation
        self.segment: Segment | None = None
        self.error: BaseException | None = None
        self.pause = pause                  # a test hook, run in the thread before the build
        self._future = builder.submit(self._run, list(docs.values()), mapping.fields)

    def _run(self, docs: list[BufferedDoc], fields: dict[str, Any]) -> None:
        try:
            if self.pause is not None:
                self.pause()
            self.segment = Segment.build(docs, fields, self.generation)
        except Exception as e:  # noqa: BLE001 - the documents go back to the buffer
            self.error = e

    def done(self) -> bool:
        return self._future.done()

    def wait(self) -> None:
        self._future.result()


class Flushing:
    """The background-build half of :class:`~.shard.ShardCore` (its state is set up there)."""

    buffer: dict[str, BufferedDoc]
    building: dict[str, BufferedDoc]
    pending: list[Segment]
    by_uid: dict[int, Segment]
    live: LiveIds
    generation: int
    mapping: Mapping
    flush_docs: int | None
    build_pause: Callable[[], None] | None
    _build: BufferBuild | None
    _builder: ThreadPoolExecutor | None

    def ready_builder(self) -> None:
        """Start the builder thread while the write buffer is empty (as ``load_arrow``): the
        objects that stay with it (the thread, its frames, the mapping's cached field kinds)
        then do not land among buffered documents and pin their memory after the refresh."""
        if self.flush_docs is None or self._builder is not None:
            return
        # one thread for the shard's life: its glibc arena is the one the builds fill and
        # the one ``trim_builder`` trims (a new thread may get another arena each time)
        self._builder = ThreadPoolExecutor(1, thread_name_prefix="buffer-build")
        kinds = [ft.kind for ft in self.mapping.fields.values()]
        self._builder.submit(len, kinds).result()

    def maybe_flush(self) -> None:
        """After writes: land a finished build; start one if the buffer is full and none runs."""
        b = self._build
        if b is not None and b.done():
            self.land_build()
        if self.flush_docs is None or self._build is not None \
                or len(self.buffer) < self.flush_docs:
            return
        self.ready_builder()
        assert self._builder is not None
        self.building = self.buffer
        self.buffer = {}
        self._build = BufferBuild(self.building, self.mapping, self.generation + 1,
                                  self._builder, self.build_pause)

    def land_build(self) -> None:
        """Wait for the build in flight (if any) and add its segment as pending."""
        b = self._build
        if b is None:
            return
        b.wait()
        self._build = None
        self.building = {}
        if b.segment is None:
            log.error("background segment build failed; its documents stay buffered: %s",
                      b.error)
            self.buffer = {**b.docs, **self.buffer}
            return
        seg = b.segment
        assert b.generation == self.generation + 1, "a refresh ran past a build in flight"
        alive = np.fromiter((d in b.docs for d in b.order), dtype=bool, count=len(b.order))
        seg.deleted_gen[~alive] = b.generation      # replaced or deleted while it was built
        self.pending.append(seg)
        self.by_uid[seg.uid] = seg
        self.live.add_segment(seg.uid, seg.ids, None if alive.all() else np.flatnonzero(alive))

    def take_pending(self) -> list[Segment]:
        """The pending segments, handed to a refresh (which makes them visible)."""
        self.land_build()
        out, self.pending = self.pending, []
        return out

    def compact_built(self, segments: list[Segment]) -> list[Segment]:
        """``segments`` (built among the write buffer's objects) copied now that the buffer
        is freed, emptying the list; the live map and addresses follow the copies.

        Each is pickled, every original dropped, then the copies made: their small objects
        then fill the pages the originals and the buffer left, side by side. (A copy made
        while its original lives lands in its half-free pages and keeps them: with a segment
        per background build, one GCIDE copy's RSS was ~3-5 MiB above a pickled copy's.)
        """
        blobs = [pickle.dumps(seg, protocol=pickle.HIGHEST_PROTOCOL) for seg in segments]
        landed = {seg.uid for seg in segments if self.by_uid.pop(seg.uid, None) is not None}
        segments.clear()
        out = []
        for blob in blobs:
            seg = pickle.loads(blob)
            if seg.uid in landed:   # a pending segment: already in the live map
                self.live.rebind(seg.uid, seg.ids)
            else:
                self.live.add_segment(seg.uid, seg.ids)
            self.by_uid[seg.uid] = seg
            out.append(seg)
        return out

    def trim_builder(self) -> None:
        """Hand the builder thread's freed memory back to the system: glibc trims the top
        of a thread's arena only from that thread (``gcpause.release_free_memory``)."""
        if self._builder is not None:
            self._builder.submit(release_free_memory, False).result()

    def close_builds(self) -> None:
        """The shard is dropped or replaced: wait for the build in flight and forget it."""
        b = self._build
        if b is not None:
            b.wait()
            self._build = None
        if self._builder is not None:
            self._builder.shutdown(wait=True)
            self._builder = None

    def pending_segments(self) -> list[Segment]:
        """The pending segments with the build in flight (which this waits for), for a
        snapshot."""
        self.land_build()
        return list(self.pending)

    def pending_rows(self) -> list[tuple[str, int, int, bytes, str | None]]:
        """``(id, seq, version, source, routing)`` of the live rows of pending segments (and of
        the build in flight, which this waits for), for a whole snapshot."""
        out = []
        for seg in self.pending_segments():
            rows = np.flatnonzero(seg.deleted_gen == NEVER).tolist()
            for i, source in zip(rows, seg.sources.take(rows)):
                out.append((str(seg.ids[i]), int(seg.seq[i]), int(seg.version[i]), source,
                            seg.routing[i]))
        return out
