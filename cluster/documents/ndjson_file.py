"""Reading an NDJSON file as bulk items: plain documents or Elasticsearch ``_bulk`` pairs.

``shardsearch load`` and ``Cluster.load`` accept what users have on disk: one document per line
(an export, a corpus) or a ``_bulk`` body (action line, then source line), gzipped or not, from a
file or standard input. Both become the same items, so the two loaders agree. A line that is not
JSON is never skipped silently: it becomes a :class:`BadLine` that the loader reports and counts
as an error (the exit status says so).
"""
from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

ACTIONS = ("index", "create", "update", "delete")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class Item:
    """One write: the action line (a dict, Elasticsearch's shape) and its source (or None)."""
    action: dict[str, Any]
    source: bytes | None
    line: int                        # 1-based line of the action (or of the document)


@dataclass
class BadLine:
    """A line that could not be read; reported, never dropped silently."""
    line: int
    reason: str


class Source:
    """An NDJSON input (path or ``-`` for stdin), gzip detected by its magic bytes."""

    def __init__(self, path: str) -> None:
        raw: IO[bytes] = (io.BufferedReader(_Stdin()) if path == "-"  # type: ignore[arg-type]
                          else open(path, "rb"))
        self.raw = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
        self.size = None if path == "-" else Path(path).stat().st_size
        self.gzipped = self.raw.peek(2)[:2] == _GZIP_MAGIC
        self.stream: IO[bytes] = gzip.GzipFile(fileobj=self.raw) if self.gzipped else self.raw
        self.consumed = 0            # bytes read from the input (compressed, for gzip)

    def lines(self) -> Iterator[bytes]:
        for line in self.stream:
            self.consumed = self.raw.tell() if self.size is not None else self.consumed + len(line)
            yield line

    def close(self) -> None:
        self.stream.close()
        self.raw.close()


class _Stdin(io.RawIOBase):
    """Standard input as a raw byte stream (``sys.stdin.buffer`` cannot be peeked portably)."""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        import sys
        data = sys.stdin.buffer.read1(len(b)) if hasattr(sys.stdin.buffer, "read1") \
            else sys.stdin.buffer.read(len(b))
        b[:len(data)] = data
        return len(data)


def is_action(value: Any) -> bool:
    """Whether a parsed line is a ``_bulk`` action line (``{"index": {...}}`` and its kin)."""
    return (isinstance(value, dict) and len(value) == 1
            and next(iter(value)) in ACTIONS and isinstance(next(iter(value.values())), dict))


def items(lines: Iterator[bytes], index: str | None, id_field: str | None
          ) -> Iterator[Item | BadLine]:
    """Bulk items from NDJSON lines: ``_bulk`` pairs pass through (``index`` fills a missing
    ``_index``); plain documents become ``index`` actions, ``_id`` from ``id_field`` if given."""
    pending: Item | None = None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            pending = None
            yield BadLine(n, f"not JSON: {e}")
            continue
        if pending is not None:
            pending.source = line.rstrip(b"\r\n")
            yield pending
            pending = None
            continue
        if is_action(value):
            kind, meta = next(iter(value.items()))
            if index is not None:
                meta.setdefault("_index", index)
            item = Item({kind: meta}, None, n)
            if kind == "delete":
                yield item
            else:
                pending = item
            continue
        if not isinstance(value, dict):
            yield BadLine(n, f"a document must be a JSON object, not {type(value).__name__}")
            continue
        yield _document(value, line, n, index, id_field)
    if pending is not None:
        yield BadLine(pending.line, "an action line without its source line at the end")


def _document(doc: dict[str, Any], line: bytes, n: int, index: str | None,
              id_field: str | None) -> Item | BadLine:
    meta: dict[str, Any] = {} if index is None else {"_index": index}
    if id_field is not None:
        if doc.get(id_field) is None:
            return BadLine(n, f"no [{id_field}] in the document (--id-field)")
        meta["_id"] = str(doc[id_field])
    return Item({"index": meta}, line.rstrip(b"\r\n"), n)


def bulk_body(batch: list[Item]) -> bytes:
    """The ``_bulk`` NDJSON body of a batch of items."""
    parts = []
    for it in batch:
        parts.append(orjson.dumps(it.action))
        if it.source is not None:
            parts.append(it.source)
    return b"\n".join(parts) + b"\n"
