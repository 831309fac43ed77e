"""Writes as they travel to a shard: one :class:`WriteOp` per write, or a bulk request's
writes for one shard as columns (:class:`WriteBatch`, built by :class:`BatchBuilder`).

The shard applies them in ``ShardCore.apply``; here is only their shape on the wire and in
the write-ahead log.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np


@dataclass
class WriteOp:
    """One write as the coordinator sends it to the shard that owns the ``_id``."""

    op: str                      # index | create | delete | update
    id: str
    seq: int
    source: bytes | None = None  # JSON bytes (index/create), partial doc (update)
    fields: dict[str, list[Any]] | None = None   # parsed values; None: the shard parses source
    routing: str | None = None
    doc_as_upsert: bool = False
    upsert: bytes | None = None
    if_seq_no: int | None = None
    if_primary_term: int | None = None
    version: int | None = None          # with version_type external / external_gte
    version_type: str | None = None


_OP_CODES = {"index": "i", "create": "c", "delete": "d", "update": "u"}
_OP_NAMES = {v: k for k, v in _OP_CODES.items()}
_EXTRA = ("doc_as_upsert", "upsert", "if_seq_no", "if_primary_term", "version", "version_type")


class WriteBatch:
    """The writes of one bulk request for one shard, column by column.

    A bulk load sends thousands of writes per call: as columns (one string of op codes, the
    ids, the sequence numbers, every ``_source`` in one bytes object cut by ``offsets``) they
    cross to the shard, and into its log, for a fraction of the cost of one object per write.
    The rare per-write options (``if_seq_no``, upserts...) travel in ``extra``, by position.
    """

    __slots__ = ("ops", "ids", "seqs", "sources", "offsets", "routing", "extra")

    def __init__(self, ops: str, ids: list[str], seqs: np.ndarray, sources: bytes,
                 offsets: np.ndarray, routing: list[str | None] | None = None,
                 extra: dict[int, dict[str, Any]] | None = None) -> None:
        self.ops = ops
        self.ids = ids
        self.seqs = seqs
        self.sources = sources
        self.offsets = offsets      # int64[n + 1]; a write without source has an empty slice
        self.routing = routing      # None when no write has one
        self.extra = extra or {}

    @classmethod
    def of(cls, ops: list[WriteOp]) -> WriteBatch:
        """The columns of ``ops`` (``WriteBatch.of(ops).writes() == ops``)."""
        srcs = [op.source or b"" for op in ops]
        offsets = np.zeros(len(ops) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in srcs], out=offsets[1:])
        routing = [op.routing for op in ops]
        extra: dict[int, dict[str, Any]] = {}
        for i, op in enumerate(ops):
            e = {k: v for k in _EXTRA if (v := getattr(op, k)) is not None and v is not False}
            if op.source is None and op.op != "delete":
                e["no_source"] = True
            if op.fields is not None:
                e["fields"] = op.fields
            if e:
                extra[i] = e
        return cls("".join(_OP_CODES[op.op] for op in ops), [op.id for op in ops],
                   np.fromiter((op.seq for op in ops), dtype=np.int64, count=len(ops)),
                   b"".join(srcs), offsets,
                   routing if any(r is not None for r in routing) else None, extra)

    def __len__(self) -> int:
        return len(self.ids)

    def writes(self) -> list[WriteOp]:
        """One :class:`WriteOp` per write, in order (built column by column)."""
        offs = self.offsets.tolist()
        src = self.sources
        out = list(map(WriteOp, [_OP_NAMES[code] for code in self.ops], self.ids,
                       self.seqs.tolist(), [src[a:b] for a, b in zip(offs, offs[1:])],
                       repeat(None), self.routing or repeat(None)))
        if "d" in self.ops:   # a delete without source has none (not an empty one)
            for w in out:
                if w.op == "delete" and not w.source:
                    w.source = None
        for i, e in self.extra.items():
            w = out[i]
            for k, v in e.items():
                if k == "no_source":
                    w.source = None
                else:
                    setattr(w, k, v)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (WriteBatch, (self.ops, self.ids, self.seqs, self.sources, self.offsets,
                             self.routing, self.extra))


class BatchBuilder:
    """Collects one shard's writes of a bulk request, column by column (``build``)."""

    __slots__ = ("positions", "ops", "ids", "seqs", "sources", "lengths", "routing", "extra")

    def __init__(self) -> None:
        self.positions: list[int] = []     # the writes' places in the request
        self.ops: list[str] = []
        self.ids: list[str] = []
        self.seqs: list[int] = []
        self.sources: list[bytes] = []
        self.lengths: list[int] = []
        self.routing: list[str | None] | None = None
        self.extra: dict[int, dict[str, Any]] = {}

    @classmethod
    def of(cls, writes: list[tuple[int, Any, str, str, int, bytes | None, str | None,
                                   dict[str, Any] | None]]) -> BatchBuilder:
        """The batch of ``(position, index, op, id, seq, source, routing, extra)`` rows (the
        index is not kept), column by column: what ``add`` does row by row, transposed in C."""
        b = cls()
        if not writes:
            return b
        pos, _, ops, ids, seqs, srcs, routing, extra = zip(*writes)
        b.positions, b.ids, b.seqs = list(pos), list(ids), list(seqs)
        b.ops = [_OP_CODES[op] for op in ops]
        b.sources = [src for src in srcs if src is not None]
        if len(b.sources) == len(srcs):
            b.lengths = list(map(len, srcs))
        else:
            b.lengths = [0 if src is None else len(src) for src in srcs]
        if any(r is not None for r in routing):
            b.routing = list(routing)
        for i, (op, src, e) in enumerate(zip(ops, srcs, extra)):
            if src is None and op != "delete":
                e = dict(e or {}, no_source=True)
            if e:
                b.extra[i] = e
        return b

    def add(self, pos: int, op: str, doc_id: str, seq: int, source: bytes | None,
            routing: str | None = None, extra: dict[str, Any] | None = None) -> None:
        i = len(self.ids)
        self.positions.append(pos)
        self.ops.append(_OP_CODES[op])
        self.ids.append(doc_id)
        self.seqs.append(seq)
        if source is not None:
            self.sources.append(source)
            self.lengths.append(len(source))
        else:
            self.lengths.append(0)
            if op != "delete":
                extra = dict(extra or {}, no_source=True)
        if routing is not None and self.routing is None:
            self.routing = [None] * i
        if self.routing is not None:
            self.routing.append(routing)
        if extra:
            self.extra[i] = extra

    def build(self) -> WriteBatch:
        offsets = np.zeros(len(self.ids) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        return WriteBatch("".join(self.ops), self.ids, np.asarray(self.seqs, dtype=np.int64),
                          b"".join(self.sources), offsets, self.routing, self.extra)


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``patch`` merged into ``base`` object by object, as a partial update merges."""
    out = dict(base)
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out

