"""A shard's live map: ``_id`` -> address (``ShardCore.locate``) of the id's live version.

A dict of 63,000 ids (GCIDE, one shard of two) cost ~3.8 MiB plus the id strings its keys
kept alive (~4.1 MiB). Here a segment's live versions are its :class:`IdColumn` (already held
by the segment) and one flag per row; only ids the segments cannot answer for (set one by one,
or left over from a merge's sources) sit in a small dict. A lookup asks the dict, then the
segments newest first: O(segments · log n).

Invariant (kept by ``ShardCore``): an id is live in at most one place, since a new version is
only added after the previous one was popped.
"""
from __future__ import annotations

import zlib
from bisect import bisect_left
from collections.abc import Iterable, Iterator

import numpy as np

from .id_column import IdColumn, encode_id


class _Block:
    __slots__ = ("ids", "alive", "base", "hashes")

    def __init__(self, uid: int, ids: IdColumn, rows: np.ndarray | None) -> None:
        self.ids = ids
        self.hashes = memoryview(ids.hashes)   # bisected without NumPy's per-call cost
        self.base = uid << 32
        if rows is None:
            self.alive = np.ones(len(ids), dtype=bool)
        else:
            self.alive = np.zeros(len(ids), dtype=bool)
            self.alive[rows] = True


class LiveIds:
    """Mapping-like (``get``, ``pop``, ``in``, ``len``, iteration, ``values``)."""

    __slots__ = ("_extra", "_blocks", "_count", "_last")

    def __init__(self) -> None:
        self._extra: dict[str, int] = {}
        self._blocks: dict[int, _Block] = {}   # segment uid -> its live rows, oldest first
        self._count = 0                        # live rows over the blocks
        self._last: tuple[str, _Block, int] | None = None   # the latest lookup's answer

    def add_segment(self, uid: int, ids: IdColumn, rows: np.ndarray | None = None) -> None:
        """Rows ``rows`` (default: all) of segment ``uid`` are the live versions of their ids."""
        block = _Block(uid, ids, rows)
        self._blocks[uid] = block
        self._count += int(block.alive.sum())

    def rebind(self, uid: int, ids: IdColumn) -> None:
        """Segment ``uid`` was copied (``Flushing.compact_built``): its block is made again
        over the copy's ids, so the original's can go and the new block's few objects sit
        with the copy's (the old block, made while a write buffer filled the heap, would
        keep one of its pages)."""
        old = self._blocks[uid]
        self._blocks[uid] = _Block(uid, ids, np.flatnonzero(old.alive))
        self._last = None

    def replace_segments(self, gone: set[int], uid: int, ids: IdColumn, rows: np.ndarray
                         ) -> None:
        """A merge: segment ``uid`` (its live ``rows``) replaces segments ``gone``. Their live
        ids the merge did not keep stay where they were (in the dict)."""
        self._last = None
        self.add_segment(uid, ids, rows)
        merged = self._blocks[uid]

        def kept(doc_id: str) -> bool:
            return any(merged.alive[i] for i in ids.rows_of(doc_id))

        for doc_id in [d for d, a in self._extra.items() if a >> 32 in gone and kept(d)]:
            del self._extra[doc_id]
        blocks = [b for b in (self._blocks.pop(u, None) for u in gone) if b is not None]
        alive = sum(int(b.alive.sum()) for b in blocks)
        self._count -= alive
        if alive == len(rows):   # the merge kept every live version: nothing left over
            return
        for block in blocks:
            for r in np.flatnonzero(block.alive).tolist():
                doc_id = block.ids[r]
                if not kept(doc_id):
                    self._extra[doc_id] = block.base + r

    def _find(self, doc_id: str) -> tuple[_Block, int] | None:
        last = self._last
        if last is not None and last[0] == doc_id and last[1].alive[last[2]]:
            return last[1], last[2]   # a write looks its id up, then retires it: one search
        key = encode_id(doc_id)
        crc = zlib.crc32(key)
        for block in reversed(self._blocks.values()):
            h = block.hashes
            i = bisect_left(h, crc)
            if i == len(h) or h[i] != crc:
                continue
            for r in block.ids.rows_of_encoded(key, crc):
                if block.alive[r]:
                    self._last = (doc_id, block, r)
                    return block, r
        return None

    def get(self, doc_id: str, default: int | None = None) -> int | None:
        addr = self._extra.get(doc_id)
        if addr is not None:
            return addr
        found = self._find(doc_id)
        return default if found is None else found[0].base + found[1]

    def pop(self, doc_id: str, default: int | None = None) -> int | None:
        addr = self._extra.pop(doc_id, None)
        if addr is not None:
            return addr
        found = self._find(doc_id)
        if found is None:
            return default
        block, r = found
        block.alive[r] = False
        self._count -= 1
        return block.base + r

    def __setitem__(self, doc_id: str, addr: int) -> None:
        self.pop(doc_id)
        self._extra[doc_id] = addr

    def update(self, pairs: Iterable[tuple[str, int]]) -> None:
        for doc_id, addr in pairs:
            self[doc_id] = addr

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self.get(doc_id) is not None

    def __len__(self) -> int:
        return len(self._extra) + self._count

    def items(self) -> Iterator[tuple[str, int]]:
        yield from self._extra.items()
        for block in self._blocks.values():
            for r in np.flatnonzero(block.alive).tolist():
                yield block.ids[r], block.base + r

    def __iter__(self) -> Iterator[str]:
        return (doc_id for doc_id, _ in self.items())

    def values(self) -> Iterator[int]:
        return (addr for _, addr in self.items())
