"""Murmur3 (x86, 32-bit), as Lucene's ``StringHelper.murmurhash3_x86_32`` and Elasticsearch's
``Murmur3HashFunction`` compute it: the stable hash behind routing (``indices/routing.py``) and
slicing (``query/slicing.py``). Python's ``hash()`` is salted per process and never used.
"""
from __future__ import annotations

C1 = 0xCC9E2D51
C2 = 0x1B873593
MASK = 0xFFFFFFFF


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Murmur3 x86_32 of ``data`` as a signed 32-bit int (as Java returns it). O(len(data))."""
    h = seed & MASK
    n = len(data)
    nblocks = n // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * C1) & MASK
        k = ((k << 15) | (k >> 17)) & MASK
        k = (k * C2) & MASK
        h ^= k
        h = ((h << 13) | (h >> 19)) & MASK
        h = (h * 5 + 0xE6546B64) & MASK
    tail = data[4 * nblocks:]
    k = 0
    if len(tail) >= 3:
        k ^= tail[2] << 16
    if len(tail) >= 2:
        k ^= tail[1] << 8
    if len(tail) >= 1:
        k ^= tail[0]
        k = (k * C1) & MASK
        k = ((k << 15) | (k >> 17)) & MASK
        k = (k * C2) & MASK
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h
