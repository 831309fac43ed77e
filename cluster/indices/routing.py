"""Stable routing of a document to a shard.

Python's built-in ``hash()`` is salted per process, so it must never decide where a document
lives. We use Elasticsearch's own rule: Murmur3 (x86, 32-bit, seed 0) over the UTF-16LE bytes of
the routing value (``_id`` unless a ``routing`` parameter is given), then ``floorMod`` by the
number of shards. The same id therefore lands on the same shard in every process, every run.
"""
from __future__ import annotations

import numpy as np

from ..engine.murmur3 import C1, C2, MASK, murmur3_32
from .preference import parse_preference


def routing_hash(value: str) -> int:
    """Elasticsearch's ``Murmur3HashFunction.hash(String)``: murmur3 over UTF-16LE code units."""
    return murmur3_32(value.encode("utf-16-le"))


def shard_for(routing_value: str, number_of_shards: int) -> int:
    """The shard number for a routing value (``_id`` or explicit ``routing``)."""
    if number_of_shards <= 0:
        raise ValueError("number_of_shards must be positive")
    return routing_hash(routing_value) % number_of_shards  # Python's % is floorMod


def routing_hashes(values: list[str]) -> np.ndarray:
    """``routing_hash`` of many values at once (int64[n]): values of one length are hashed
    together, column by column, with NumPy's wrapping uint32 arithmetic. O(total length),
    a fraction of a microsecond per value where the scalar loop takes several."""
    out = np.empty(len(values), dtype=np.int64)
    encoded = [v.encode("utf-16-le") for v in values]
    by_len: dict[int, list[int]] = {}
    for i, b in enumerate(encoded):
        by_len.setdefault(len(b), []).append(i)
    c1, c2 = np.uint32(C1), np.uint32(C2)
    for n, idx in by_len.items():
        rows = np.frombuffer(b"".join([encoded[i] for i in idx]), dtype=np.uint8)
        rows = rows.reshape(len(idx), n)
        h = np.zeros(len(idx), dtype=np.uint32)
        nblocks = n // 4
        if nblocks:
            blocks = np.ascontiguousarray(rows[:, :4 * nblocks]).view("<u4")
            for j in range(nblocks):
                k = blocks[:, j] * c1
                k = (k << np.uint32(15)) | (k >> np.uint32(17))
                h ^= k * c2
                h = (h << np.uint32(13)) | (h >> np.uint32(19))
                h = h * np.uint32(5) + np.uint32(0xE6546B64)
        tail = rows[:, 4 * nblocks:].astype(np.uint32)
        if tail.shape[1]:
            k = np.zeros(len(idx), dtype=np.uint32)
            for t in range(tail.shape[1] - 1, -1, -1):
                k ^= tail[:, t] << np.uint32(8 * t)
            k = k * c1
            k = (k << np.uint32(15)) | (k >> np.uint32(17))
            h ^= k * c2
        h ^= np.uint32(n & MASK)
        h ^= h >> np.uint32(16)
        h = h * np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h = h * np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
        out[idx] = h.view(np.int32)
    return out


def shards_for(routing_values: list[str], number_of_shards: int) -> np.ndarray:
    """``shard_for`` of many routing values at once (int64[n])."""
    if number_of_shards <= 0:
        raise ValueError("number_of_shards must be positive")
    return routing_hashes(routing_values) % number_of_shards   # NumPy's % is floorMod too


def parse_shards_preference(preference: str | None) -> frozenset[int] | None:
    """``preference=_shards:0,2`` (optionally ``|<other preference>``): the shard numbers a
    search is restricted to, or None when the preference does not restrict shards (the rest of
    the preference chooses among copies: ``preference.py``)."""
    return parse_preference(preference).shards


def selected_shards(number_of_shards: int, routing: str | None,
                    preference: str | None) -> list[int]:
    """The shards of one index a search visits: all, or those of ``routing`` (comma-separated
    routing values, each to its shard) intersected with ``preference=_shards:...``."""
    shards = set(range(number_of_shards))
    if routing is not None:
        shards &= {shard_for(r, number_of_shards) for r in routing.split(",") if r != ""}
    only = parse_shards_preference(preference)
    if only is not None:
        shards &= only
    return sorted(shards)
