"""A shard's bounded cache of decompressed ``_source`` blocks.

A page's documents are scattered: each of its ~10 hits per shard usually sits in its own
compressed block, and decompressing a block costs about as much CPU as scoring the page. Pages
are read again and again (a refreshed dashboard, the next page of the same query, a fetch after
a query-and-fetch), so a shard keeps its recently decompressed blocks.

Storage never lies: a block is keyed by its segment's ``uid`` (unique in the process, never
reused) and its number, and segments are immutable — deletes and updates change visibility, not
stored bytes, and a merge writes a new segment under a new ``uid``. So an entry can only ever be
stale-but-unreachable, never wrong; the least recently used ones go when the bytes run over.
"""
from __future__ import annotations

from collections import OrderedDict

SOURCE_CACHE_BYTES = 16 << 20   # per shard (``ShardCore.source_cache``); 0 disables it
ENTRY_BYTES = 160               # key tuple, bytes header and dict node: counted with the data


class BlockCache:
    """LRU of ``(segment uid, block) -> decompressed prefix of the block``, bounded in bytes.

    A prefix is kept because a block is decompressed only up to the last document a page needs;
    a later read that needs more decompresses again and replaces the entry. O(1) per access.
    """

    __slots__ = ("max_bytes", "bytes", "_blocks", "hits", "misses")

    def __init__(self, max_bytes: int = SOURCE_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._blocks: OrderedDict[tuple[int, int], bytes] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[int, int], need: int) -> bytes | None:
        """The cached prefix of block ``key`` if it holds at least ``need`` bytes."""
        data = self._blocks.get(key)
        if data is None or len(data) < need:
            self.misses += 1
            return None
        self._blocks.move_to_end(key)
        self.hits += 1
        return data

    def put(self, key: tuple[int, int], data: bytes) -> None:
        """Keep ``data`` for ``key`` (replacing a shorter prefix), evicting the oldest blocks."""
        if len(data) + ENTRY_BYTES > self.max_bytes:
            return
        old = self._blocks.pop(key, None)
        if old is not None:
            self.bytes -= len(old) + ENTRY_BYTES
        self._blocks[key] = data
        self.bytes += len(data) + ENTRY_BYTES
        while self.bytes > self.max_bytes:
            _, gone = self._blocks.popitem(last=False)
            self.bytes -= len(gone) + ENTRY_BYTES

    def drop_segments(self, uids: set[int]) -> None:
        """Forget the blocks of segments that are gone (merged away and retired): their memory
        goes back at once instead of when they age out."""
        for key in [k for k in self._blocks if k[0] in uids]:
            self.bytes -= len(self._blocks.pop(key)) + ENTRY_BYTES

    def __len__(self) -> int:
        return len(self._blocks)
