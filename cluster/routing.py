"""Stable routing of a document to a shard.

Python's built-in ``hash()`` is salted per process, so it must never decide where a document
lives. We use Elasticsearch's own rule: Murmur3 (x86, 32-bit, seed 0) over the UTF-16LE bytes of
the routing value (``_id`` unless a ``routing`` parameter is given), then ``floorMod`` by the
number of shards. The same id therefore lands on the same shard in every process, every run.
"""
from __future__ import annotations

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Murmur3 x86_32 of ``data`` as a signed 32-bit int (as Java returns it). O(len(data))."""
    h = seed & _MASK
    n = len(data)
    nblocks = n // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * _C2) & _MASK
        h ^= k
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    tail = data[4 * nblocks:]
    k = 0
    if len(tail) >= 3:
        k ^= tail[2] << 16
    if len(tail) >= 2:
        k ^= tail[1] << 8
    if len(tail) >= 1:
        k ^= tail[0]
        k = (k * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * _C2) & _MASK
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def routing_hash(value: str) -> int:
    """Elasticsearch's ``Murmur3HashFunction.hash(String)``: murmur3 over UTF-16LE code units."""
    return murmur3_32(value.encode("utf-16-le"))


def shard_for(routing_value: str, number_of_shards: int) -> int:
    """The shard number for a routing value (``_id`` or explicit ``routing``)."""
    if number_of_shards <= 0:
        raise ValueError("number_of_shards must be positive")
    return routing_hash(routing_value) % number_of_shards  # Python's % is floorMod
