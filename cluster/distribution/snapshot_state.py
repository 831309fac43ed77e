"""A shard copy's state as snapshot records, and back.

``export_whole`` writes everything (format 1: what a copy catching up receives);
``SnapshotParts`` plans an incremental snapshot (format 2, ``snapshot_store.py``): it
remembers which segments and which slice of the write buffer the part files already hold,
so a flush encodes only what changed since the last one — the new segments and the documents
buffered since — plus a manifest. A bulk load's snapshots then encode each document once,
not once per snapshot. ``restore`` rebuilds a copy from either format's records.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..engine.doc_parsing import stored_fields
from ..engine.mapping import Mapping
from ..engine.merge_policy import MergePolicy
from ..engine.segment import NEVER, BufferedDoc, Segment
from ..engine.shard import ShardCore
from ..engine.snapshot_store import (PARTS_FORMAT, built_records, encode_snapshot, part_entry,
                                     part_name)
from ..engine.storage import decode_bytes, decode_mapping, decode_value, encode_bytes, \
    encode_mapping, encode_pickled
from .copy_answers import from_json_safe, json_safe
from .shard_service import ShardService

SNAPSHOT_CHUNK = 2000
TAIL = 64     # buffered documents remembered to find where the buffer's new ones start
SHORT_CHAIN = 8   # buffer parts a chain may have before new parts absorb the smaller ones


def _chunks(kind: str, key: str, items: list[Any], size: int) -> list[dict[str, Any]]:
    return [{"kind": kind, key: items[i:i + size]} for i in range(0, len(items), size)]


def _buffer_rows(docs: Any) -> list[list[Any]]:
    """Buffered documents as records; their fields as the buffer keeps them, pickled (reading
    ``fields`` would unpickle each document's, most of the cost of a snapshot)."""
    rows = []
    for d in docs:
        doc_id, seq, version, routing = d.columns()
        rows.append([doc_id, seq, version, encode_bytes(d.source), routing,
                     encode_pickled(d.pickled_fields)])
    return rows


def _header(copy: Any) -> dict[str, Any]:
    core = copy.core
    return {"index": core.index, "shard": core.shard, "copy": copy.copy,
            "last_op": copy.last_op, "last_id": copy.last_id, "generation": core.generation,
            "max_seq": core.max_seq, "mapping": encode_mapping(core.mapping),
            "settings": copy.settings, "last_result": json_safe(copy.last_result),
            "created": time.time()}


def _tombstones(core: ShardCore) -> list[dict[str, Any]]:
    tombs = [[k, s, v] for k, (s, v) in core.tombstones.items()]
    return _chunks("tombstones", "items", tombs, SNAPSHOT_CHUNK * 5)


def export_whole(copy: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The copy's whole state as snapshot records (documents visible at the current
    generation, the write buffer, delete tombstones). O(documents)."""
    core = copy.core
    gen = core.generation
    docs: list[list[Any]] = []
    for seg in list(core.segments):
        rows = np.flatnonzero(seg.visible(gen)).tolist()
        for i, source in zip(rows, seg.sources.take(rows)):
            docs.append([str(seg.ids[i]), int(seg.seq[i]), int(seg.version[i]),
                         encode_bytes(source), seg.routing[i],
                         bool(seg.deleted_gen[i] != NEVER)])
    sections = _chunks("docs", "docs", docs, SNAPSHOT_CHUNK)
    for k, seg in enumerate(core.pending_segments()):   # built, not yet visible (flushing.py)
        sections += built_records(k, _segment_rows(seg), _dead(seg))
    sections += _chunks("buffer", "docs", _buffer_rows(core.buffer.values()), SNAPSHOT_CHUNK)
    return _header(copy), sections + _tombstones(core)


def _segment_rows(seg: Segment) -> list[list[list[Any]]]:
    """Every row of a segment as ``[id, seq, version, source, routing]``, in chunks."""
    rows = list(range(len(seg.ids)))
    docs = [[str(seg.ids[i]), int(seg.seq[i]), int(seg.version[i]), encode_bytes(src),
             seg.routing[i]] for i, src in zip(rows, seg.sources.take(rows))]
    return [docs[i:i + SNAPSHOT_CHUNK] for i in range(0, len(docs), SNAPSHOT_CHUNK)]


def _dead(seg: Segment) -> list[int]:
    """Rows of a pending segment replaced or deleted since it was built."""
    return np.flatnonzero(seg.deleted_gen != NEVER).tolist()


def _segment_part(seg: Segment) -> bytes:
    """Every row of a segment (immutable but for its deletes, which the manifest states)."""
    return encode_snapshot({"format": PARTS_FORMAT, "part": "segment", "rows": len(seg.ids)},
                           [{"kind": "rows", "docs": c} for c in _segment_rows(seg)])


def _visibility(i: int, seg: Segment, gen: int) -> dict[str, Any] | None:
    vis = seg.visible(gen)
    dead = np.flatnonzero(~vis)
    pending = np.flatnonzero(vis & (seg.deleted_gen != NEVER))
    if not dead.size and not pending.size:
        return None
    return {"kind": "visibility", "segment": i, "dead": dead.tolist(),
            "pending": pending.tolist()}


def _since(buffer: dict[str, BufferedDoc], tail: list[tuple[str, int]] | None
           ) -> list[BufferedDoc] | None:
    """The documents buffered after the newest of ``tail`` still there, in order; None when
    none of them is (replaced or deleted since: where the new ones start is unknown), or
    ``tail`` is unknown.

    A write always moves its id to the end of the buffer, so what follows that document was
    written after the last snapshot. O(new documents)."""
    if tail is None:
        return None
    marks = set(tail)
    out: list[BufferedDoc] = []
    for d in reversed(buffer.values()):
        if (d.id, d.seq) in marks:
            out.reverse()
            return out
        out.append(d)
    if tail:
        return None
    out.reverse()
    return out


def _tail(buffer: dict[str, BufferedDoc]) -> list[tuple[str, int]]:
    """The buffer's last documents as ``(id, seq)``: a write has a sequence number of its own,
    so the pair names that very version (without keeping it, and its memory, alive)."""
    out = []
    for d in reversed(buffer.values()):
        if len(out) >= TAIL:
            break
        out.append((d.id, d.seq))
    return out


class SnapshotParts:
    """What the part files already hold for one ``ShardCore``: its segments (by uid) and the
    buffer chain of its current generation."""

    def __init__(self, core: ShardCore | None = None) -> None:
        self.core = core
        self.segments: dict[int, dict[str, Any]] = {}
        self.chain: list[dict[str, Any]] = []
        self.chain_gen = -1
        self.marks: list[list[tuple[str, int]] | None] = []   # per part: the buffer's end
                                                                # after it

    @classmethod
    def resumed(cls, copy: Any, header: dict[str, Any]) -> SnapshotParts:
        """After loading an incremental snapshot its pending segments' parts are theirs again
        (rebuilt from those rows, in order) and its buffer chain goes on (the buffer was
        restored in the chain's order); its visible segments were rebuilt into one, written
        anew."""
        out = cls(copy.core)
        if header.get("format") != PARTS_FORMAT:
            return out
        built = header.get("built_segments", [])
        if len(built) != len(copy.core.pending):
            return out        # the restored buffer was built too: no part holds it as it is
        for seg, e in zip(copy.core.pending, built):
            out.segments[seg.uid] = {k: e[k] for k in ("part", "bytes", "crc")}
        if header["buffer_parts"]:
            out.chain, out.chain_gen = list(header["buffer_parts"]), copy.core.generation
            out.marks = [None for _ in out.chain[:-1]] + [_tail(copy.core.buffer)]
        return out

    def plan(self, copy: Any, first_part: int
             ) -> tuple[bytes, dict[str, bytes], int, dict[str, Any]]:
        """``(manifest, new parts by name, bytes a load reads, state to commit)``."""
        core: ShardCore = copy.core
        gen = core.generation
        new: dict[str, bytes] = {}

        def add(data: bytes) -> dict[str, Any]:
            name = part_name(first_part + len(new))
            new[name] = data
            return part_entry(name, data)

        segs: dict[int, dict[str, Any]] = {}
        sections: list[dict[str, Any]] = []
        for i, seg in enumerate(list(core.segments)):
            segs[seg.uid] = self.segments.get(seg.uid) or add(_segment_part(seg))
            vis = _visibility(i, seg, gen)
            if vis is not None:
                sections.append(vis)
        shown = list(segs.values())
        built = []
        for seg in core.pending_segments():   # built, not yet refreshed (``flushing.py``)
            segs[seg.uid] = self.segments.get(seg.uid) or add(_segment_part(seg))
            built.append({**segs[seg.uid], "dead": _dead(seg)})
        chain, marks, docs = self._buffer_plan(core.buffer, gen)
        if docs:
            chain = chain + [{**add(encode_snapshot(
                {"format": PARTS_FORMAT, "part": "buffer"},
                _chunks("buffer", "docs", _buffer_rows(docs), SNAPSHOT_CHUNK))),
                "docs": len(docs)}]
            marks = marks + [_tail(core.buffer)]
        header = {**_header(copy), "format": PARTS_FORMAT, "segments": shown,
                  "buffer_parts": chain, "buffer_docs": len(core.buffer),
                  "built_segments": built}
        manifest = encode_snapshot(header, sections + _tombstones(core))
        total = len(manifest) + sum(e["bytes"] for e in header["segments"] + chain + built)
        state = {"segments": segs, "chain": chain, "gen": gen, "marks": marks}
        return manifest, new, total, state

    def _buffer_plan(self, buffer: dict[str, BufferedDoc], gen: int
                     ) -> tuple[list[dict[str, Any]], list[Any], list[BufferedDoc]]:
        """``(parts kept, their marks, documents for a new part)``. The new part takes the
        documents buffered since the last one, and also those of the parts before it that are
        not larger (a binary counter, once the chain is ``SHORT_CHAIN`` long): a manifest names
        O(log) parts and a document is re-encoded O(log) times however often flushes come."""
        if self.chain_gen != gen:
            return [], [], list(buffer.values())
        start = len(self.chain)
        docs = _since(buffer, self.marks[-1]) if start else list(buffer.values())
        while docs is not None and start > 0 and start >= SHORT_CHAIN and \
                self.chain[start - 1]["docs"] <= len(docs):
            start -= 1
            docs = _since(buffer, self.marks[start - 1]) if start else list(buffer.values())
        if docs is None:               # where the new documents start is unknown: all again
            return [], [], list(buffer.values())
        return self.chain[:start], self.marks[:start], docs

    def commit(self, state: dict[str, Any]) -> None:
        """The planned snapshot is on disk: later ones build on it."""
        self.segments, self.chain = state["segments"], state["chain"]
        self.chain_gen, self.marks = state["gen"], state["marks"]


def restore(copy: Any, header: dict[str, Any], sections: list[dict[str, Any]]) -> None:
    """Rebuild ``copy`` from snapshot records: one segment of generation ``G`` holding every
    document visible at ``G`` (built by the shard's own refresh), the pending segments built
    again, then the buffer (built as it fills past the bound, as writes are)."""
    mapping = decode_mapping(header["mapping"]) or Mapping()
    ShardService.__init__(copy, header["index"], header["shard"], mapping)
    core: ShardCore = copy.core
    gen = int(header["generation"])
    retired: list[str] = []
    for s in sections:
        if s["kind"] != "docs":
            continue
        for doc_id, seq, version, src, routing, deleted_next in s["docs"]:
            source = decode_bytes(src) or b"{}"
            core.buffer[doc_id] = BufferedDoc(doc_id, seq, version, source,
                                              stored_fields(source, mapping, doc_id), routing)
            if deleted_next:
                retired.append(doc_id)
    if core.buffer:
        core.generation = gen - 1
        core.refresh()                    # the shard's own segment build, at ``gen``
        for doc_id in retired:
            seg, i = core.locate(core.live.pop(doc_id))
            seg.deleted_gen[i] = gen + 1
    core.generation = gen
    _restore_pending(core, [s for s in sections if s["kind"] == "built"], mapping)
    for s in sections:
        if s["kind"] == "buffer":
            for doc_id, seq, version, src, routing, fields in s["docs"]:
                source = decode_bytes(src) or b"{}"   # fields None: an older snapshot's
                core.buffer[doc_id] = BufferedDoc(doc_id, seq, version, source, (   # built row
                    stored_fields(source, mapping, doc_id) if fields is None
                    else decode_value(fields)), routing)
                core.maybe_flush()
        elif s["kind"] == "tombstones":
            for doc_id, seq, version in s["items"]:
                core.tombstones[doc_id] = (int(seq), int(version))
    core.max_seq = int(header["max_seq"])
    copy.settings = dict(header.get("settings") or copy.settings)
    core.merge_policy = MergePolicy.from_settings(copy.settings)
    copy.last_op = int(header["last_op"])
    copy.last_id = header.get("last_id")
    copy.last_result = from_json_safe(header.get("last_result"))
    copy.min_generation = gen
    copy.parts = SnapshotParts.resumed(copy, header)


def _restore_pending(core: ShardCore, records: list[dict[str, Any]], mapping: Mapping) -> None:
    """The pending segments of ``built`` records (a segment's records are consecutive), each
    built again from its rows in order as soon as they are read: one segment's parsed
    documents at a time."""
    docs: list[BufferedDoc] = []
    dead: list[int] = []
    for n, r in enumerate(records):
        dead += r["dead"]
        for doc_id, seq, version, src, routing in r["docs"]:
            source = decode_bytes(src) or b"{}"
            docs.append(BufferedDoc(doc_id, seq, version, source,
                                    stored_fields(source, mapping, doc_id), routing))
        if n + 1 == len(records) or records[n + 1]["segment"] != r["segment"]:
            core.restore_pending(docs, dead)
            docs, dead = [], []
