"""On-disk storage of a shard copy (pure encoding + file IO, no Ray).

Design invariant 5 ("durable before acknowledged") lives here. A shard copy keeps, in its own
directory::

    snap-<last_op>.snap     snapshot of the copy's state after command ``last_op``: whole, or
                            a manifest naming immutable part files (``snapshot_store.py``)
    part-<n>.part           a part of a snapshot: a segment's rows (one built from the buffer
                            too), or a slice of the buffer
    log-<first_op>.wal      write-ahead log: every command after the snapshot, in order

Both files are sequences of *framed records*::

    [u32 little-endian payload length][u32 CRC-32 of the payload][payload]

A record whose frame is incomplete or whose CRC does not match is never decoded. Only a torn
*last* record of the newest log file (a crash in the middle of an append: an incomplete frame
at the very end, or a final record ending at EOF with a bad CRC, nothing verifiable after it —
``damage.is_torn_tail``) is cut off, and reported in ``WriteAheadLog.cut``; any other bad
record, a gap in the command numbers or a file the copy's ``files.json`` lists but that is
missing raises :class:`StorageCorrupt`. A snapshot (and every part it names) must be complete — header, body, footer,
every CRC — or loading it raises :class:`StorageCorrupt` naming the file: a snapshot replaced the log it summarises,
so there is nothing to fall back on and guessing would silently lose documents.

Payloads are JSON (``orjson``): a log record is one *command* the coordinator sent the shard
(``apply`` a :class:`~cluster.shard.WriteBatch` — its columns, ``encode_batch`` — or a list of
:class:`~cluster.shard.WriteOp`, ``refresh``, ``mapping``, ``settings``)
with the command number the coordinator assigned, so replaying the log runs the very same
commands in the very same order and reproduces the state exactly: sequence numbers, versions,
refresh generations. Bytes (``_source``) are stored as their UTF-8 text, or base64 when they
are not UTF-8.

Files are replaced atomically: write a temporary file, ``fsync`` it, ``rename`` it over the
old one, ``fsync`` the directory (``write_atomic``). Index metadata (settings, mapping, uuid)
is one JSON file per index written that way by the coordinator (``meta_store.MetaStore``).
"""
from __future__ import annotations

import base64
import dataclasses
import io
import logging
import os
import pickle
import struct
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .fsync import fsync_dir
from .damage import check_fault, is_torn_tail, next_good_record, note_files
from .exact_json import non_finite, refusal
from .writes import WriteBatch, WriteOp

log = logging.getLogger("shardsearch.storage")

_FRAME = struct.Struct("<II")
MAX_RECORD = 1 << 30           # a length beyond this is garbage, not a record


class StorageCorrupt(Exception):
    """A file that must be whole is not (a snapshot, metadata): recovery stops, naming it."""

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        super().__init__(f"corrupt shardsearch file [{path}]: {detail}")
        self.path = str(path)
        self.detail = detail

    def __reduce__(self):  # keep both fields across pickling (Ray)
        return (StorageCorrupt, (self.path, self.detail))


UNREADABLE = (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError)


@contextmanager
def unreadable_as_corrupt(path: str | os.PathLike[str], what: str) -> Iterator[None]:
    """A record whose checksum holds but whose content cannot be decoded (or names code to
    run) stops recovery as damage, naming it, instead of escaping as a crash."""
    try:
        yield
    except UNREADABLE as e:
        raise StorageCorrupt(path, f"{what} has a good checksum but cannot be read: "
                                   f"{e!r}") from None


# --- framing ------------------------------------------------------------------------------------

def frame(payload: bytes) -> bytes:
    """One framed record: length, CRC-32, payload."""
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def scan(data: bytes) -> tuple[list[bytes], int, str | None]:
    """Every whole, checksummed record at the start of ``data``.

    Returns ``(payloads, good_end, problem)``: ``good_end`` is the offset just after the last
    good record; ``problem`` says why scanning stopped early (None when ``data`` ended exactly
    after a record). O(len(data)).
    """
    out: list[bytes] = []
    pos = 0
    n = len(data)
    while pos < n:
        if n - pos < _FRAME.size:
            return out, pos, f"torn record header at offset {pos}"
        length, crc = _FRAME.unpack_from(data, pos)
        if length > MAX_RECORD or length == 0:     # no payload is empty (JSON objects)
            return out, pos, f"impossible record length {length} at offset {pos}"
        end = pos + _FRAME.size + length
        if end > n:
            return out, pos, f"torn record at offset {pos} ({n - pos} of {end - pos} bytes)"
        payload = data[pos + _FRAME.size:end]
        if zlib.crc32(payload) != crc:
            return out, pos, f"checksum mismatch at offset {pos}"
        out.append(bytes(payload))
        pos = end
    return out, pos, None


def damage_detail(data: bytes, good_end: int, problem: str, later_files: int = 0) -> str:
    """What is wrong with a file and what skipping the damage would lose."""
    nxt = next_good_record(data, good_end, MAX_RECORD)
    after = 0 if nxt is None else len(scan(data[nxt:])[0])
    out = f"{problem} of {len(data)} bytes"
    if after:
        out += f"; {after} intact records follow it"
    if later_files:
        out += f"; {later_files} later log files follow"
    return out + " (not a torn tail)"


# --- durable file helpers -----------------------------------------------------------------------

def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once: temp file, fsync, rename, fsync the dir."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)      # our own half-written temporary file, nothing else
        raise
    fsync_dir(p.parent)


# --- codecs: commands and documents as JSON -----------------------------------------------------

def encode_bytes(b: bytes | None) -> Any:
    """``_source`` bytes as JSON: its text when UTF-8 (always, for JSON sources), else base64."""
    if b is None:
        return None
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(b).decode("ascii")}


def decode_bytes(v: Any) -> bytes | None:
    if v is None:
        return None
    if isinstance(v, dict):
        return base64.b64decode(v["b64"])
    return v.encode("utf-8")


def encode_value(v: Any) -> list[Any]:
    """A WriteOp attribute as a tagged JSON pair: ``["j", json]``, ``["b", text]``,
    ``["x", base64 bytes]`` or ``["p", base64 pickle]`` (values JSON cannot hold exactly:
    tuples, NaN, integers past 64 bits...). A value recovery could not read back
    (``loads_plain`` refuses every class: a ``Decimal``, a NumPy scalar) is refused here,
    before anything reaches the log (:class:`~cluster.engine.exact_json.UnstorableValue`)."""
    if isinstance(v, bytes):
        enc = encode_bytes(v)
        return ["b", enc] if isinstance(enc, str) else ["x", enc["b64"]]
    try:
        if orjson.loads(orjson.dumps(v)) == v:
            return ["j", v]
    except (TypeError, ValueError):
        pass
    try:
        data = pickle.dumps(v, protocol=5)
        loads_plain(data)
    except (pickle.PicklingError, AttributeError, *UNREADABLE) as e:
        raise refusal("a write", f"{type(v).__name__}: {e}") from None
    return ["p", base64.b64encode(data).decode("ascii")]


def encode_pickled(data: bytes | memoryview) -> list[Any]:
    """A value already pickled, as ``encode_value`` tags one (``decode_value`` unpickles)."""
    return ["p", base64.b64encode(data).decode("ascii")]


def decode_value(v: list[Any]) -> Any:
    tag, val = v
    if tag == "j":
        return val
    if tag == "b":
        return val.encode("utf-8")
    if tag == "x":
        return base64.b64decode(val)
    if tag == "p":
        return loads_plain(base64.b64decode(val))
    raise ValueError(f"unknown value tag {tag!r}")


class _PlainUnpickler(pickle.Unpickler):
    """Refuses every class and function a pickle names: what we store pickled (a document's
    fields, values JSON cannot hold) is plain data, and a file on disk must not run code."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a stored value may not name [{module}.{name}]")


def loads_plain(data: bytes) -> Any:
    """A pickled value read from disk: plain data only (``_PlainUnpickler``)."""
    return _PlainUnpickler(io.BytesIO(data)).load()


def encode_op(op: Any) -> dict[str, Any]:
    """A :class:`~cluster.shard.WriteOp` (any dataclass) as a JSON object, field by field."""
    return {f.name: encode_value(getattr(op, f.name)) for f in dataclasses.fields(op)}


def decode_op(d: dict[str, Any], cls: type) -> Any:
    """The dataclass back; fields unknown to ``cls`` (an older/newer version) are ignored."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: decode_value(v) for k, v in d.items() if k in names})


def encode_batch(batch: Any) -> dict[str, Any]:
    """A :class:`~cluster.shard.WriteBatch` as one JSON object: its columns, the sources as
    one text (byte offsets stay valid: the text is the UTF-8 of the bytes)."""
    return {"ops": batch.ops, "ids": batch.ids, "seqs": batch.seqs.tolist(),
            "sources": encode_bytes(batch.sources), "offsets": batch.offsets.tolist(),
            "routing": batch.routing,
            "extra": {str(i): {k: encode_value(v) for k, v in e.items()}
                      for i, e in batch.extra.items()}}


def decode_batch(d: dict[str, Any], cls: type) -> Any:
    return cls(d["ops"], d["ids"], np.asarray(d["seqs"], dtype=np.int64),
               decode_bytes(d["sources"]) or b"", np.asarray(d["offsets"], dtype=np.int64),
               d["routing"], {int(i): {k: decode_value(v) for k, v in e.items()}
                              for i, e in d["extra"].items()})


def encode_mapping(mapping: Any) -> dict[str, Any] | None:
    return None if mapping is None else dict(mapping.__getstate__())


def decode_mapping(state: dict[str, Any] | None) -> Any:
    if state is None:
        return None
    from .mapping import Mapping
    m = Mapping.__new__(Mapping)
    m.__setstate__(dict(state))
    return m


def command_args(cmd: dict[str, Any]) -> tuple:
    """A logged command's arguments as the copy runs them (every stored value decoded)."""
    kind = cmd["kind"]
    if kind == "apply":
        ops = decode_batch(cmd["batch"], WriteBatch) if "batch" in cmd else \
            [decode_op(o, WriteOp) for o in cmd["ops"]]
        return (ops, decode_mapping(cmd["mapping"]), cmd["refresh"])
    if kind == "set_mapping":
        return (decode_mapping(cmd["mapping"]),)
    if kind == "configure":
        return (cmd["settings"],)
    return ()


def encode_command(op_no: int, kind: str, body: dict[str, Any]) -> bytes:
    """The payload of one log record; :class:`~cluster.engine.exact_json.UnstorableValue`
    when a part of it would not read back as it is (a mapping or settings value that is no
    JSON, or a float that is not finite: ``orjson`` would write ``null``)."""
    try:
        out = orjson.dumps({"op": op_no, "kind": kind, **body})
    except TypeError as e:
        raise refusal(f"the [{kind}] command", str(e)) from None
    for part in ("mapping", "settings"):
        if body.get(part) is not None and non_finite(body[part]):
            raise refusal(f"the [{kind}] command's {part}", "a float that is NaN or infinite")
    return out


def decode_command(payload: bytes) -> dict[str, Any]:
    return orjson.loads(payload)


# --- the write-ahead log --------------------------------------------------------------------------

def _numbered(directory: Path, prefix: str, suffix: str) -> list[tuple[int, Path]]:
    out = []
    for p in directory.glob(f"{prefix}*{suffix}"):
        middle = p.name[len(prefix):-len(suffix)]
        if middle.isdigit():
            out.append((int(middle), p))
    return sorted(out)


def log_name(first_op: int) -> str:
    return f"log-{first_op:016d}.wal"


class WriteAheadLog:
    """Append-only command log of one shard copy, in files ``log-<first_op>.wal``.

    ``append`` writes a framed record (buffered); ``sync`` makes everything appended durable
    (``fsync``). A writer calls ``sync`` once per request or bulk (group commit) before it
    acknowledges, or leaves it to a periodic ``sync`` (``index.translog.durability: async``).
    Thread-safe: a background syncer may call ``sync`` while the owner appends.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file: Any = None
        self._path: Path | None = None
        self._dirty = False
        self._size = 0
        self.bytes_since_snapshot = 0
        self.first_op: int | None = None     # first command number this log can still replay
        self.cut: list[str] = []             # what recovery cut off, for the operator

    # reading ----------------------------------------------------------------------------------

    def recover(self, after_op: int) -> Iterator[tuple[int, bytes]]:
        """Yield ``(op_no, payload)`` of every good record with ``op_no > after_op``, in order.

        Only a torn last record of the newest file is cut off (the file is truncated there,
        and it is logged and kept in ``cut``); any other bad record — in an older file, or
        with more data after it — raises :class:`StorageCorrupt` saying what would be lost.
        Must run (to the end) before the first ``append``.
        """
        files = _numbered(self.dir, "log-", ".wal")
        # files wholly covered by the snapshot are not needed (and may be leftovers)
        keep = [(first, p) for i, (first, p) in enumerate(files)
                if i + 1 >= len(files) or files[i + 1][0] > after_op + 1]
        self.first_op = keep[0][0] if keep else None
        for i, (first, path) in enumerate(keep):
            data = path.read_bytes()
            payloads, good_end, problem = scan(data)
            if problem is not None:
                if i + 1 < len(keep) or not is_torn_tail(data, good_end, MAX_RECORD):
                    raise StorageCorrupt(path, damage_detail(data, good_end, problem,
                                                             later_files=len(keep) - i - 1))
                self.cut.append(f"{path.name}: {problem}; {len(data) - good_end} bytes of a "
                                "torn last record cut")
                log.warning("write-ahead log %s: %s; torn last record (%d bytes) cut", path,
                            problem, len(data) - good_end)
                with open(path, "r+b") as f:
                    f.truncate(good_end)
                    f.flush()
                    os.fsync(f.fileno())
            self.bytes_since_snapshot += good_end
            for k, payload in enumerate(payloads):
                try:
                    op_no = int(orjson.loads(payload)["op"])
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                    raise StorageCorrupt(path, f"record {k} has a good checksum but cannot be "
                                         f"read: {e!r}") from None
                if op_no > after_op:
                    yield op_no, payload

    def records_after(self, after_op: int) -> list[bytes] | None:
        """Payloads of the commands after ``after_op`` (for a copy catching up), or None when
        the log no longer reaches back that far (a snapshot replaced it)."""
        with self._lock:
            files = _numbered(self.dir, "log-", ".wal")
        if not files or files[0][0] > after_op + 1:
            return None
        out: list[bytes] = []
        for first, path in files:
            payloads, _, _ = scan(path.read_bytes())
            for payload in payloads:
                if orjson.loads(payload)["op"] > after_op:
                    out.append(payload)
        return out

    # writing ----------------------------------------------------------------------------------

    def _open_for(self, op_no: int) -> None:
        files = _numbered(self.dir, "log-", ".wal")
        if files:
            self._path = files[-1][1]
        else:
            self._path = self.dir / log_name(op_no)
            if self.first_op is None:
                self.first_op = op_no
        existed = self._path.exists()
        # unbuffered: a write that fails (a full disk) leaves nothing behind to be flushed later
        self._file = open(self._path, "ab", buffering=0)
        self._size = self._file.seek(0, os.SEEK_END)
        if not existed:
            note_files(self.dir)

    def append(self, op_no: int, payload: bytes) -> None:
        """Append one command (not yet durable: see ``sync``). A failed write (``OSError``,
        e.g. ENOSPC) leaves the file as it was and raises."""
        with self._lock:
            check_fault(self.dir)
            if self._file is None:
                self._open_for(op_no)
            rec = frame(payload)
            before = self._size
            try:
                view = memoryview(rec)
                while view:
                    view = view[self._file.write(view):]
            except OSError:
                os.ftruncate(self._file.fileno(), before)
                raise
            self._size = before + len(rec)
            self._dirty = True
            self.bytes_since_snapshot += len(rec)

    def mark(self) -> int:
        """The log's end now (see ``rollback``)."""
        with self._lock:
            if self._file is not None:
                return self._size
            files = _numbered(self.dir, "log-", ".wal")
            return files[-1][1].stat().st_size if files else 0

    def rollback(self, mark: int) -> None:
        """Cut what was appended after ``mark`` (a command that could not be made durable)."""
        with self._lock:
            if self._file is not None and 0 <= mark < self._size:
                self.bytes_since_snapshot -= self._size - mark
                os.ftruncate(self._file.fileno(), mark)
                self._size = mark
                self._file.seek(0, os.SEEK_END)

    def sync(self) -> None:
        """Everything appended so far is on disk when this returns."""
        with self._lock:
            if self._file is not None and self._dirty:
                os.fsync(self._file.fileno())
                self._dirty = False

    def restart_after(self, last_op: int) -> None:
        """After a snapshot of ``last_op``: new commands go to a fresh file and the older
        files (wholly covered by the snapshot) are deleted."""
        with self._lock:
            check_fault(self.dir, "snapshot")
            if self._file is not None:
                os.fsync(self._file.fileno())
                self._file.close()
                self._file = None
            old = _numbered(self.dir, "log-", ".wal")
            self._path = self.dir / log_name(last_op + 1)
            self._file = open(self._path, "ab", buffering=0)
            self._size = self._file.seek(0, os.SEEK_END)
            fsync_dir(self.dir)
            # listed before deleting: a crash in between never makes a listed file missing
            note_files(self.dir, drop={p.name for _, p in old if p != self._path})
            for _, p in old:
                if p != self._path:
                    p.unlink(missing_ok=True)
            fsync_dir(self.dir)
            self.first_op = last_op + 1
            self.bytes_since_snapshot = 0
            self._dirty = False

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                try:
                    os.fsync(self._file.fileno())
                finally:
                    self._file.close()
                    self._file = None


def parse_byte_size(raw: Any, default: int) -> int:
    """Elasticsearch byte sizes (``512mb``, ``16kb``, ``1gb``, plain bytes)."""
    if raw is None:
        return default
    s = str(raw).strip().lower()
    units = {"pb": 1 << 50, "tb": 1 << 40, "gb": 1 << 30, "mb": 1 << 20, "kb": 1 << 10,
             "b": 1}
    for unit, mult in units.items():
        if s.endswith(unit):
            try:
                return int(float(s[:-len(unit)]) * mult)
            except ValueError:
                return default
    try:
        return int(s)
    except ValueError:
        return default


def copy_dir(data_dir: str | os.PathLike[str], index_uuid: str, shard: int, copy: int) -> Path:
    """Where one shard copy keeps its files."""
    return Path(data_dir) / "indices" / index_uuid / str(shard) / str(copy)
