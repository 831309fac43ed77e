"""A segment's ``_id`` column: every id's UTF-8 bytes in one buffer, and a hash index.

A Python string per document cost ~65 bytes (GCIDE: 4.1 MiB per shard of 63,000 documents),
and the shard's live map kept those strings as dictionary keys. Here an id costs its bytes, its
offset, and 8 bytes of index (a CRC-32 and a row, sorted by the CRC): ~25 bytes. Strings are
made only for the rows asked for (a fetched page, a query on ``_id``).

Lookups (:meth:`IdColumn.rows_of`) are a binary search on the CRC then a byte comparison, so a
collision costs a comparison, never a wrong answer. CRC-32 is stable across processes.
"""
from __future__ import annotations

import zlib
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

import numpy as np

from .postings import narrow


def encode_id(doc_id: str) -> bytes:
    """An id's bytes as stored (lone surrogates kept: any Python string round-trips)."""
    return doc_id.encode("utf-8", "surrogatepass")


class IdColumn:
    """``_id`` of rows ``0..n-1``; indexable like the object array it replaces."""

    __slots__ = ("blob", "offsets", "hashes", "rows")

    def __init__(self, ids: list[str]) -> None:
        enc = [encode_id(i) for i in ids]
        n = len(enc)
        offsets = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=n), out=offsets[1:])
        self.blob = b"".join(enc)
        self.offsets = narrow(offsets)
        crc = np.fromiter(map(zlib.crc32, enc), dtype=np.uint32, count=n)
        order = np.argsort(crc, kind="stable")
        self.hashes = crc[order]
        self.rows = narrow(order, n)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def _one(self, i: int) -> str:
        o = self.offsets
        return self.blob[int(o[i]):int(o[i + 1])].decode("utf-8", "surrogatepass")

    def __getitem__(self, key: Any) -> Any:
        """A row: its id; rows (array, mask or slice): an object array of ids."""
        n = len(self)
        if isinstance(key, (int, np.integer)):
            i = int(key) + (n if int(key) < 0 else 0)
            if not 0 <= i < n:
                raise IndexError(key)
            return self._one(i)
        if isinstance(key, slice):
            k = np.arange(*key.indices(n))
        else:   # rows or a mask, without an O(n) index array per call (a fetch reads ~10)
            k = np.asarray(key)
            k = np.flatnonzero(k) if k.dtype == bool else np.where(k < 0, k + n, k)
            if len(k) and (int(k.min()) < 0 or int(k.max()) >= n):
                raise IndexError(key)
        blob = self.blob
        out = np.empty(len(k), dtype=object)
        out[:] = [blob[a:b].decode("utf-8", "surrogatepass") for a, b in
                  zip(self.offsets[k].tolist(), self.offsets[k + 1].tolist())]
        return out

    def __iter__(self) -> Iterator[str]:
        return (self._one(i) for i in range(len(self)))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self[:]

    def tolist(self) -> list[str]:
        return list(self)

    def rows_of(self, doc_id: str) -> list[int]:
        """The rows holding ``doc_id`` (ascending). O(log n)."""
        return self.rows_of_encoded(encode_id(doc_id), zlib.crc32(encode_id(doc_id)))

    def rows_of_encoded(self, key: bytes, crc: int) -> list[int]:
        """:meth:`rows_of` for an id already encoded and hashed (a lookup over many columns)."""
        # bisect on a memoryview: a fraction of ``np.searchsorted``'s per-call cost, which
        # a write pays once per segment
        h = memoryview(self.hashes)
        lo = hi = bisect_left(h, crc)
        while hi < len(h) and h[hi] == crc:
            hi += 1
        if lo == hi:
            return []
        o, blob = self.offsets, self.blob
        found = [r for r in self.rows[lo:hi].tolist() if blob[int(o[r]):int(o[r + 1])] == key]
        return sorted(found)

    def mask_of(self, ids: list[str]) -> np.ndarray:
        """bool[n]: the rows whose id is one of ``ids``."""
        mask = np.zeros(len(self), dtype=bool)
        for doc_id in ids:
            mask[self.rows_of(str(doc_id))] = True
        return mask
