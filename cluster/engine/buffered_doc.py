"""A document version waiting in a shard's write buffer for the next refresh: one bytes object.

A buffered document used to be a slotted object with its ``seq`` and source length as Python
ints beside its bytes: ~160 bytes of Python's small-object allocator per document, 14 MiB
for one copy's half of GCIDE, spread over 14 of its 1 MiB arenas while the load's requests
come and go. CPython frees an arena only when all of it is free, and the few objects a load
leaves alive (a counter's int, a cache entry, a sequence number) sit among those documents:
measured with ``benchmarks/refresh_memory.py``, dropping the buffer after a load freed one of
the 14 arenas it had added. Here the whole version (header, ``_id``, routing, ``_source``,
the pickled parsed fields) is one ``bytes`` object (a subclass with no attributes), which
CPython allocates outside those arenas from 512 bytes on (all but 240 of 63,181 documents
for half of GCIDE); the buffer keeps only its ``_id`` keys among them.

Layout: ``seq``, ``version`` (int64), ``_id`` length, routing length (-1: none), ``_source``
length (uint32/int32), deleted flag (uint8); then the ``_id`` and routing (UTF-8), the
``_source``, the pickled fields (read, and unpickled, at refresh).
"""
from __future__ import annotations

import pickle
import struct
from typing import Any

_HEAD = struct.Struct("<qqIiIB")


class BufferedDoc(bytes):
    """One buffered version (see the module docstring); read through its properties."""

    __slots__ = ()

    def __new__(cls, id: str, seq: int, version: int, source: bytes,
                fields: dict[str, list[Any]], routing: str | None = None,
                deleted: bool = False) -> BufferedDoc:
        key = id.encode()
        route = b"" if routing is None else routing.encode()
        head = _HEAD.pack(seq, version, len(key), -1 if routing is None else len(route),
                          len(source), deleted)
        return super().__new__(cls, b"".join((head, key, route, source,
                                              pickle.dumps(fields, protocol=5))))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and copied) as its bytes: ``__new__`` takes the parts, not the bytes."""
        return _restored, (bytes(self),)

    def columns(self) -> tuple[str, int, int, str | None]:
        """``(id, seq, version, routing)`` in one pass (a segment build reads them for every
        document)."""
        seq, version, n_id, n_route = _HEAD.unpack_from(self)[:4]
        at = _HEAD.size + n_id
        return (self[_HEAD.size:at].decode(), seq, version,
                None if n_route < 0 else self[at:at + n_route].decode())

    def _source_at(self) -> tuple[int, int]:
        """Where the ``_source`` starts, and its length."""
        n_id, n_route, cut = _HEAD.unpack_from(self)[2:5]
        return _HEAD.size + n_id + max(n_route, 0), cut

    @property
    def id(self) -> str:
        return self[_HEAD.size:_HEAD.size + _HEAD.unpack_from(self)[2]].decode()

    @property
    def seq(self) -> int:
        return _HEAD.unpack_from(self)[0]  # type: ignore[no-any-return]

    @property
    def version(self) -> int:
        return _HEAD.unpack_from(self)[1]  # type: ignore[no-any-return]

    @property
    def routing(self) -> str | None:
        return self.columns()[3]

    @property
    def deleted(self) -> bool:
        return bool(_HEAD.unpack_from(self)[5])

    @property
    def source(self) -> bytes:
        at, cut = self._source_at()
        return self[at:at + cut]

    @property
    def fields(self) -> dict[str, list[Any]]:
        return pickle.loads(self.pickled_fields)  # type: ignore[no-any-return]

    @property
    def pickled_fields(self) -> memoryview:
        """``fields`` as kept (a snapshot stores them so, without unpickling them)."""
        at, cut = self._source_at()
        return memoryview(self)[at + cut:]


def _restored(data: bytes) -> BufferedDoc:
    """A :class:`BufferedDoc` from its bytes (unpickling)."""
    return bytes.__new__(BufferedDoc, data)
