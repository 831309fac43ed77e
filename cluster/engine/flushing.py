"""A bounded write buffer: segments built from it when it fills, invisible until the next refresh.

Lucene flushes its indexing buffer into a segment when the buffer fills
(``indices.memory.index_buffer_size`` in Elasticsearch), long before the refresh that makes
it searchable. Here the same: when a hosted shard copy's buffer holds ``INDEX_BUFFER_DOCS``
documents after a write, the write builds their segment with ``created_gen = generation + 1``
— what no search, count or statistic of the current generation sees — and empties the
buffer. A bulk load with ``refresh_interval: -1`` then holds at most that many documents
per copy, and the final refresh sorts only the rest instead of everything loaded (a refresh's
cost per document grows with its size: ~30 µs at GCIDE ×1, ~40 at ×8).

The build runs inline, in the write that filled the buffer: on two cores shared by the front
end, the coordinator and the copies, a builder thread per copy measured no faster and kept
more memory (the README's bulk paragraph), and inline builds leave a copy's segments the same
on every replica (the same writes fill the buffer at the same point).

Rules (``ShardCore`` keeps them; every method runs under the host's serialisation):

* a built segment is *pending*: addressable and in the live map, so real-time get, versions
  and ``if_seq_no`` checks, updates and deletes see its documents; never searched before the
  next refresh. A write that replaces or deletes one of them retires its row at
  ``created_gen`` (visible at no generation);
* ``refresh`` makes the pending segments visible with the segment of the rest of the buffer,
  all at the new generation;
* a snapshot holds each pending segment's rows and which of them were retired since (an
  incremental one as a part, written once; ``snapshot_state.py``); recovery and a replica's
  catch-up build each again as a pending segment (``restore_pending``), so a restarted copy
  holds the segments of one that did not restart. Buffered documents a snapshot holds beyond
  the bound (an older snapshot's, or a failed build's) are built as the restored buffer fills;
* a failed build leaves its documents buffered (nothing acknowledged is lost) and is tried
  again once ``INDEX_BUFFER_DOCS`` more documents came.
"""
from __future__ import annotations

import logging
import pickle

import numpy as np

from .live_ids import LiveIds
from .mapping import Mapping
from .segment import NEVER, BufferedDoc, Segment

log = logging.getLogger("shardsearch.flushes")

# Documents per build: GCIDE x4 in 2 shards (252,000 per copy) makes ~4 segments per copy, under
# the merge policy's 10 per tier; 16,384 made ~15, took more CPU and memory, and the p50 of the
# searches right after the load was several times main's (README's bulk paragraph). GCIDE x1
# (63,000 per copy) builds only at refresh, as before. 32,768 (one build per copy while a GCIDE
# x1 load runs), 17 pairs interleaved with this, medians: bulk + refresh wall x0.93 (slower in 7;
# x1.00 in the 4 pairs on a quiet machine, x0.77 in 10 at load averages 4-8), CPU x0.93,
# memory/raw x0.83 (3.81 -> 3.18; one x4 pair 2.04 -> 1.63), but page-1 p50 after the load x1.14
# (x1.20 quiet) and 8-connection req/s x0.92: 2 segments per copy. Not taken for bulk speed; an
# option for memory. On a builder thread per copy (11 pairs): wall x1.01, p50 x1.09 (likely the
# GIL: the build's Python steps slow the copy's writes; the refresh waited for running builds).
INDEX_BUFFER_DOCS = 65_536


class Flushing:
    """The bounded-buffer half of :class:`~.shard.ShardCore` (its state is set up there)."""

    buffer: dict[str, BufferedDoc]
    pending: list[Segment]
    by_uid: dict[int, Segment]
    live: LiveIds
    generation: int
    mapping: Mapping
    flush_docs: int | None
    flush_at: int

    def maybe_flush(self) -> None:
        """After writes: build the buffer's segment if it holds ``flush_docs`` documents.
        O(buffered documents) when it builds, O(1) otherwise."""
        if self.flush_docs is None or len(self.buffer) < max(self.flush_docs, self.flush_at):
            return
        try:
            seg = Segment.build(list(self.buffer.values()), self.mapping.fields,
                                self.generation + 1)
        except Exception as e:  # noqa: BLE001 - the documents stay buffered
            log.error("segment build from the write buffer failed; its documents stay "
                      "buffered: %s", e)
            self.flush_at = len(self.buffer) + self.flush_docs
            return
        self.buffer = {}
        self.flush_at = 0
        self.pending.append(seg)
        self.by_uid[seg.uid] = seg
        self.live.add_segment(seg.uid, seg.ids)

    def take_pending(self) -> list[Segment]:
        """The pending segments, handed to a refresh (which makes them visible)."""
        out, self.pending = self.pending, []
        self.flush_at = 0             # a failed build's raised bound ends with the refresh
        return out

    def compact_built(self, segments: list[Segment]) -> list[Segment]:
        """``segments`` (built among the write buffer's objects) copied now that the buffer
        is freed, emptying the list; the live map and addresses follow the copies.

        Each is pickled, then the copies made: their small objects fill the pages the
        buffer left, side by side. The originals stay until every copy is made: should a
        copy fail (``MemoryError``), the originals are kept instead — the same data, in the
        heap's worse layout — rather than lost with the pending ones' addresses.
        """
        originals = list(segments)
        segments.clear()
        try:
            copies = [pickle.loads(blob) for blob in
                      [pickle.dumps(seg, protocol=pickle.HIGHEST_PROTOCOL) for seg in originals]]
        except Exception as e:  # noqa: BLE001 - the originals are the same data
            log.error("copying %d built segments failed; the originals are kept: %r",
                      len(originals), e)
            copies = originals
        for seg in copies:
            if seg.uid in self.by_uid:   # a pending segment: already in the live map
                self.live.rebind(seg.uid, seg.ids)
            else:
                self.live.add_segment(seg.uid, seg.ids)
            self.by_uid[seg.uid] = seg
        return copies

    def pending_segments(self) -> list[Segment]:
        """The pending segments, for a snapshot."""
        return list(self.pending)

    def restore_pending(self, docs: list[BufferedDoc], dead: list[int]) -> None:
        """A pending segment a snapshot holds, built again from its rows (in their order) at
        ``generation + 1``, its rows replaced or deleted since retired: a recovered copy holds
        the segments it held, as its replicas do, and its buffer stays bounded."""
        seg = Segment.build(docs, self.mapping.fields, self.generation + 1)
        seg.deleted_gen[np.asarray(dead, dtype=np.int64)] = self.generation + 1
        self.pending.append(seg)
        self.by_uid[seg.uid] = seg
        self.live.add_segment(seg.uid, seg.ids, np.flatnonzero(seg.deleted_gen == NEVER))
