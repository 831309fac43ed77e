"""Damage on disk: telling a torn tail from corruption, moving unusable files aside, the list
of files a shard copy must have, and the fault-injection hook at the file layer.

Design invariant 5 ("durable before acknowledged") has a twin: *damage is reported, never
silently truncated or deleted*. Only a torn **last** record (a crash in the middle of an
append) may be dropped; anything else stops the copy with a reason, and files that cannot be
used are moved into ``corrupted-<UTC time>/`` beside them, never deleted.
"""
from __future__ import annotations

import errno
import os
import shutil
import struct
import time
import zlib
from pathlib import Path

import orjson

from .fsync import fsync_dir

_FRAME = struct.Struct("<II")
MANIFEST = "files.json"                 # the snapshot and log files a copy must have
FAULT_ENOSPC = ".inject-enospc"         # test hook: present -> writes fail with ENOSPC
CORRUPTED_PREFIX = "corrupted-"


def next_good_record(data: bytes, start: int, max_record: int) -> int | None:
    """Offset of the first whole, checksummed record starting after ``start``, else None.

    Every payload is a JSON object, so only offsets 8 bytes before a ``{`` are candidates;
    a candidate counts only if its length fits and its CRC-32 matches (a false positive has
    odds of 2^-32). Finding one means good data follows the bad spot: not a torn tail.
    """
    n = len(data)
    pos = data.find(b"{", start + _FRAME.size + 1)
    while pos != -1:
        head = pos - _FRAME.size
        length, crc = _FRAME.unpack_from(data, head)
        if length <= max_record and pos + length <= n and \
                zlib.crc32(data[pos:pos + length]) == crc:
            return head
        pos = data.find(b"{", pos + 1)
    return None


def is_torn_tail(data: bytes, good_end: int, max_record: int) -> bool:
    """Whether what follows ``good_end`` is one torn last record: an incomplete frame at the
    very end, or a final record ending exactly at EOF with a bad CRC — and nothing verifiable
    after it. Anything else is corruption in the middle of the file."""
    n = len(data)
    if good_end >= n:
        return False
    if not data[good_end:].strip(b"\0"):
        return True               # zeros the file system left past the last write
    if n - good_end >= _FRAME.size:
        length, _ = _FRAME.unpack_from(data, good_end)
        if length > max_record or good_end + _FRAME.size + length < n:
            return False          # a bad record with more bytes after it
    return next_good_record(data, good_end, max_record) is None


def utc_stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def _new_aside(directory: Path) -> Path:
    dest = directory / f"{CORRUPTED_PREFIX}{utc_stamp()}"
    k = 1
    while dest.exists():
        k += 1
        dest = directory / f"{CORRUPTED_PREFIX}{utc_stamp()}-{k}"
    dest.mkdir(parents=True)
    return dest


def move_aside(directory: Path, names: list[str], reason: str, keep: bool = False
               ) -> Path | None:
    """Move the files ``names`` of ``directory`` into a new ``corrupted-<UTC time>/`` with a
    ``REASON.txt`` (``keep``: copy them, the originals are about to be repaired); return that
    folder (None when none of the files exists)."""
    present = [n for n in names if (directory / n).exists()]
    if not present:
        return None
    dest = _new_aside(directory)
    for n in present:
        if keep:
            shutil.copy2(directory / n, dest / n)
        else:
            os.replace(directory / n, dest / n)
    (dest / "REASON.txt").write_text(reason.rstrip() + "\n")
    fsync_dir(dest)
    fsync_dir(directory)
    return dest


# --- the manifest: which files a copy must have ---------------------------------------------------

def data_files(directory: Path) -> list[str]:
    """The copy's snapshot, snapshot part and log files, as they are now."""
    return sorted(p.name for p in directory.iterdir()
                  if p.is_file() and (p.name.startswith("snap-") and p.name.endswith(".snap")
                                      or p.name.startswith("part-") and p.name.endswith(".part")
                                      or p.name.startswith("log-") and p.name.endswith(".wal")))


def note_files(directory: Path, drop: set[str] | frozenset[str] = frozenset()) -> None:
    """Record the copy's files (minus ``drop``, about to be deleted) atomically.

    A file is listed only once it exists and stops being listed before it is deleted, so a
    crash at any point never makes a listed file legitimately missing."""
    names = [n for n in data_files(directory) if n not in drop]
    tmp = directory / f".{MANIFEST}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps({"files": names}))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, directory / MANIFEST)
    fsync_dir(directory)


def missing_files(directory: Path) -> list[str]:
    """Files the manifest lists that are not there (a deleted log or snapshot)."""
    path = directory / MANIFEST
    if not path.exists():
        return []
    try:
        listed = orjson.loads(path.read_bytes())["files"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return [MANIFEST]
    return [n for n in listed if not (directory / n).exists()]


# --- fault injection (tests) ------------------------------------------------------------------------

def check_fault(directory: Path, what: str = "log") -> None:
    """Test hook at the file layer: while ``<copy dir>/.inject-enospc`` exists, writes to the
    copy's files fail as a full disk would (``OSError(ENOSPC)``): every write when the file is
    empty, only ``snapshot`` (or ``log``) writes when it holds that word."""
    path = directory / FAULT_ENOSPC
    if not path.exists():
        return
    try:
        only = path.read_text().strip()
    except OSError:
        only = ""
    if not only or only == what:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))
