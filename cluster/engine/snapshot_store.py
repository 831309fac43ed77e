"""A shard copy's snapshots on disk: whole (format 1) or incremental (format 2).

A *whole* snapshot ``snap-<last_op>.snap`` holds every record of the copy's state: header,
documents, write buffer, tombstones, footer. Rewriting all of it at every flush made a long
bulk load re-encode everything it had loaded each time. An *incremental* snapshot is a small
manifest with the same name whose header names immutable *part files* ``part-<n>.part``,
written once and shared by the following snapshots until nothing names them:

* one part per segment (all its rows, keyed in memory by the segment's uid); which rows are
  visible is in the manifest (``visibility`` records list the exceptions), since deletes
  change that and nothing else about a segment;
* a chain of buffer parts since the last refresh, each holding the buffered documents that
  arrived after the previous one: loaded in order, a later version of an id replaces (and
  moves to the end, as in the buffer) an earlier one, and an id deleted since has a tombstone
  newer than its buffered version and is dropped. The manifest states how many documents the
  buffer holds, and a chain that resolves to another number is refused;
* one part per segment built from the buffer but not yet refreshed (``flushing.py``), framed
  as a segment's; the manifest lists its rows replaced or deleted since (``dead``). It loads as
  ``built`` records (all its rows, in order, and which are dead), which a restore builds into
  the same pending segment again.

Each part is framed like a snapshot (every record CRC-checked, header and footer), and the
manifest also records its size and CRC-32: a part that is missing, shorter, altered or not
the one the manifest names raises :class:`StorageCorrupt` naming that part. Loading resolves
a manifest into the same records as a whole snapshot, so a data dir written in format 1 (by
older versions, or a snapshot a catching-up copy received) loads as before.
"""
from __future__ import annotations

import zlib
from bisect import bisect_left
from pathlib import Path
from typing import Any

import orjson

from .damage import check_fault, missing_files, note_files
from .fsync import fsync_dir
from .storage import (StorageCorrupt, _numbered, decode_bytes, decode_mapping, decode_value,
                      frame, scan, write_atomic)

WHOLE_FORMAT = 1
PARTS_FORMAT = 2
SNAPSHOT_FORMATS = (WHOLE_FORMAT, PARTS_FORMAT)


def snapshot_name(last_op: int) -> str:
    return f"snap-{last_op:016d}.snap"


def part_name(number: int) -> str:
    return f"part-{number:016d}.part"


def encode_snapshot(header: dict[str, Any], sections: list[dict[str, Any]]) -> bytes:
    """A snapshot (or a part) as bytes: header record, body records, footer record."""
    parts = [frame(orjson.dumps({"kind": "header", "format": WHOLE_FORMAT, **header}))]
    for s in sections:
        parts.append(frame(orjson.dumps(s)))
    parts.append(frame(orjson.dumps({"kind": "footer", "records": len(sections)})))
    return b"".join(parts)


def decode_snapshot(data: bytes, where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(header, sections)`` of a snapshot or part, or :class:`StorageCorrupt` naming
    ``where``."""
    payloads, _, problem = scan(data)
    if problem is not None:
        raise StorageCorrupt(where, problem)
    try:
        recs = [orjson.loads(p) for p in payloads]
    except orjson.JSONDecodeError as e:
        raise StorageCorrupt(where, f"undecodable record: {e}") from None
    if len(recs) < 2 or recs[0].get("kind") != "header" or recs[-1].get("kind") != "footer":
        raise StorageCorrupt(where, "missing header or footer (incomplete snapshot)")
    if recs[0].get("format") not in SNAPSHOT_FORMATS:
        raise StorageCorrupt(where, f"unknown snapshot format {recs[0].get('format')}")
    if recs[-1].get("records") != len(recs) - 2:
        raise StorageCorrupt(where, "record count in the footer does not match")
    return recs[0], recs[1:-1]


def check_readable(header: dict[str, Any], sections: list[dict[str, Any]]) -> None:
    """Decode every stored value of a snapshot (mapping, sources, buffered fields) without
    changing anything: what ``restore`` would fail on part-way is found before it starts
    (``storage.UNREADABLE``; a pickled value naming code included)."""
    decode_mapping(header["mapping"])
    for s in sections:
        if s["kind"] == "docs":
            for doc in s["docs"]:
                decode_bytes(doc[3])
        elif s["kind"] == "buffer":
            for doc in s["docs"]:
                decode_bytes(doc[3])
                if doc[5] is not None:        # None: an older snapshot's built row (its source)
                    decode_value(doc[5])
        elif s["kind"] == "built":
            for doc in s["docs"]:
                decode_bytes(doc[3])


def part_entry(name: str, data: bytes) -> dict[str, Any]:
    """How a manifest names a part: file name, size and CRC-32 of the whole file."""
    return {"part": name, "bytes": len(data), "crc": zlib.crc32(data)}


def read_part(directory: Path, entry: dict[str, Any], snapshot: str) -> list[dict[str, Any]]:
    """The records of a part the manifest ``snapshot`` names, checked whole."""
    path = directory / entry["part"]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StorageCorrupt(path, f"missing: snapshot {snapshot} names it") from None
    if len(data) != entry["bytes"]:
        raise StorageCorrupt(path, f"{len(data)} bytes, snapshot {snapshot} names a part of "
                             f"{entry['bytes']}")
    if zlib.crc32(data) != entry["crc"]:
        raise StorageCorrupt(path, f"checksum mismatch: not the part snapshot {snapshot} "
                             "names")
    return decode_snapshot(data, str(path))[1]


def _segment_docs(rows: list[dict[str, Any]], vis: dict[str, Any] | None
                  ) -> list[list[Any]]:
    """A segment part's visible rows as ``[id, seq, version, source, routing, deleted_next]``."""
    dead = set(vis["dead"]) if vis else set()
    pending = set(vis["pending"]) if vis else set()
    out, row = [], 0
    for rec in rows:
        for doc in rec["docs"]:
            if row not in dead:
                out.append([*doc, row in pending])
            row += 1
    return out


def built_records(segment: int, chunks: list[list[list[Any]]], dead: list[int]
                  ) -> list[dict[str, Any]]:
    """A pending segment as ``built`` records: its rows ``[id, seq, version, source, routing]``
    in order, chunk by chunk, each record naming the rows of its chunk that are ``dead``
    (replaced or deleted since the build; row numbers within the segment)."""
    dead = sorted(dead)
    out, start = [], 0
    for docs in chunks:
        end = start + len(docs)
        out.append({"kind": "built", "segment": segment, "docs": docs,
                    "dead": dead[bisect_left(dead, start):bisect_left(dead, end)]})
        start = end
    return out


def _buffer_docs(chain: list[list[dict[str, Any]]], tombs: dict[str, int]
                 ) -> list[list[Any]]:
    """The buffer a chain of buffer parts resolves to, in the buffer's order."""
    buf: dict[str, list[Any]] = {}
    for records in chain:
        for rec in records:
            for doc in rec["docs"]:
                buf.pop(doc[0], None)
                buf[doc[0]] = doc
    return [d for d in buf.values() if tombs.get(d[0], -1) < d[1]]


def resolve(directory: Path, header: dict[str, Any], sections: list[dict[str, Any]],
            where: str) -> list[dict[str, Any]]:
    """A manifest's records as a whole snapshot's: ``docs``, ``built``, ``buffer``,
    ``tombstones``."""
    tomb_sections = [s for s in sections if s["kind"] == "tombstones"]
    vis = {s["segment"]: s for s in sections if s["kind"] == "visibility"}
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(header["segments"]):
        out.append({"kind": "docs", "docs": _segment_docs(read_part(directory, entry, where),
                                                          vis.get(i))})
    tombs = {k: int(s) for t in tomb_sections for k, s, _ in t["items"]}
    chain = [read_part(directory, e, where) for e in header["buffer_parts"]]
    buf = _buffer_docs(chain, tombs)
    if len(buf) != header["buffer_docs"]:
        raise StorageCorrupt(where, f"its buffer parts hold {len(buf)} documents, the "
                             f"manifest says {header['buffer_docs']}")
    for k, e in enumerate(header.get("built_segments", [])):
        out += built_records(k, [r["docs"] for r in read_part(directory, e, where)], e["dead"])
    out.append({"kind": "buffer", "docs": buf})
    return out + tomb_sections


def named_parts(header: dict[str, Any]) -> set[str]:
    """The part files a snapshot's header names (none for a whole snapshot)."""
    entries = header.get("segments", []) + header.get("buffer_parts", []) + \
        header.get("built_segments", [])
    return {e["part"] for e in entries}


class SnapshotStore:
    """The snapshot files of one shard copy (``snap-<last_op>.snap`` and the parts the newest
    names); only the newest snapshot counts."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.latest_bytes = 0    # what loading the newest snapshot reads (0: none yet)
        self.written_bytes = 0   # what writing it wrote (its new parts and its manifest)

    def latest(self) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The newest snapshot as a whole one's records, or None if there is none. Corrupt,
        or a file the copy's ``files.json`` lists or the manifest names missing ->
        ``StorageCorrupt``."""
        gone = missing_files(self.dir)
        if gone:
            raise StorageCorrupt(self.dir / gone[0], f"missing: the copy's files.json lists "
                                 f"{', '.join(gone)} but it is not there")
        snaps = _numbered(self.dir, "snap-", ".snap")
        if not snaps:
            return None
        path = snaps[-1][1]
        data = path.read_bytes()
        header, sections = decode_snapshot(data, str(path))
        self.latest_bytes = len(data)
        if header["format"] == PARTS_FORMAT:
            sections = resolve(self.dir, header, sections, path.name)
            self.latest_bytes += sum(e["bytes"] for e in header["segments"] +
                                     header["buffer_parts"] + header.get("built_segments", []))
        return header, sections

    def next_part(self) -> int:
        """A part number no file here has (a part is never rewritten under its name)."""
        parts = _numbered(self.dir, "part-", ".part")
        return parts[-1][0] + 1 if parts else 0

    def write(self, last_op: int, data: bytes, new_parts: dict[str, bytes] | None = None,
              total_bytes: int | None = None) -> Path:
        """Store a snapshot atomically: its new parts first, then the manifest ``data``. The
        files it replaces stay until :meth:`prune`, which the caller runs once it has taken
        the new snapshot as its own (a failure in between must not leave it naming parts
        that were deleted)."""
        check_fault(self.dir, "snapshot")
        new_parts = new_parts or {}
        for name, part in new_parts.items():
            write_atomic(self.dir / name, part)
        path = self.dir / snapshot_name(last_op)
        write_atomic(path, data)
        self.written_bytes = len(data) + sum(len(p) for p in new_parts.values())
        self.latest_bytes = total_bytes if total_bytes is not None else len(data)
        return path

    def prune(self, path: Path, data: bytes) -> None:
        """Delete the snapshots older than ``path`` and the parts its manifest ``data`` does
        not name (listed as gone in ``files.json`` first). Files a failure here leaves are
        named by no manifest: the next snapshot's prune removes them."""
        keep = named_parts(decode_header(data))
        older = [p for _, p in _numbered(self.dir, "snap-", ".snap") if p != path]
        older += [p for _, p in _numbered(self.dir, "part-", ".part") if p.name not in keep]
        note_files(self.dir, drop={p.name for p in older})
        for p in older:
            p.unlink(missing_ok=True)
        fsync_dir(self.dir)


def decode_header(data: bytes) -> dict[str, Any]:
    """The header record of snapshot bytes just encoded here (no checks: see
    ``decode_snapshot`` for bytes read back)."""
    payloads, _, _ = scan(data[:8 + int.from_bytes(data[:4], "little")])
    return orjson.loads(payloads[0])
