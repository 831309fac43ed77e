"""``shardsearch check DATA_DIR``: verify a data directory offline, like Lucene's CheckIndex.

Pure file reading (no Ray, no service): every index's ``meta.json``, and in each shard copy
directory the newest snapshot (every CRC, header, footer), every log file (frames, CRCs,
command numbers continuing one another, every record decodable as the copy would read
it: a pickled value naming code is damage), whether the logs reach back to the snapshot, and
whether every file the copy's ``files.json`` lists is there. Each finding says which file,
what is wrong and what would be lost. ``repair`` keeps what is verifiably intact: a log is cut
at its first bad record (later log files are set aside too) — always after the originals were
copied into ``corrupted-<UTC time>/`` — and the finding says exactly how many commands and
documents were dropped. What cannot be repaired from the files alone (a damaged snapshot, a
missing or unreadable ``meta.json``) is said so, and nothing is touched.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .damage import (CORRUPTED_PREFIX, MANIFEST, is_torn_tail, missing_files, move_aside,
                     note_files)
from .fsync import fsync_dir
from .snapshot_store import PARTS_FORMAT, check_readable, decode_snapshot, resolve
from .storage import (MAX_RECORD, UNREADABLE, StorageCorrupt, _numbered, command_args,
                      damage_detail, decode_command, scan, unreadable_as_corrupt)


@dataclass
class Finding:
    """One problem: ``damage`` (the service reports the copy red) or ``torn`` (a torn last
    record the service cuts by itself on open: nothing acknowledged is in it)."""

    path: str
    severity: str
    problem: str
    lost_ops: int = 0
    lost_docs: int = 0
    repaired: str | None = None

    def line(self) -> str:
        label = "REPAIRED" if self.repaired else self.severity.upper()
        out = f"{label}: {self.path}: {self.problem}"
        if self.lost_ops:
            out += (f" — cutting here loses {self.lost_ops} commands ({self.lost_docs} "
                    "documents in the readable ones)")
        if self.repaired:
            out += f"\n  repaired: {self.repaired}"
        return out


@dataclass
class Report:
    """What ``check`` found in a data directory."""

    copies: int = 0
    indices: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def damaged(self) -> bool:
        return any(f.severity == "damage" and not f.repaired for f in self.findings)


def _docs_in(payload: bytes) -> int:
    """Documents a log record writes (index/delete operations)."""
    try:
        cmd = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return 0
    if cmd.get("kind") != "apply":
        return 0
    return len(cmd["batch"]["ids"]) if "batch" in cmd else len(cmd.get("ops") or [])


def _op(payload: bytes) -> int | None:
    try:
        return int(orjson.loads(payload)["op"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _unreadable(payload: bytes) -> str | None:
    """Why a record whose checksum holds cannot be run (None: it can); the copy would stop
    at it when it opens (``storage.unreadable_as_corrupt``)."""
    try:
        command_args(decode_command(payload))
    except UNREADABLE as e:
        return repr(e)
    return None


def check_copy(d: Path, repair: bool = False) -> list[Finding]:
    """Every check on one shard copy directory (see the module docstring)."""
    out: list[Finding] = []
    gone = missing_files(d)
    if gone:
        f = Finding(str(d / gone[0]), "damage", f"listed in {MANIFEST} but missing: "
                    f"{', '.join(gone)} (its commands are lost; how many is unknown)")
        if repair:
            aside = move_aside(d, [MANIFEST], f.problem, keep=True)
            note_files(d)
            f.repaired = f"accepted the loss: {MANIFEST} now lists what is there (the old " \
                         f"one is in {aside})"
        out.append(f)
    snap_last = -1
    snaps = _numbered(d, "snap-", ".snap")
    if snaps:
        path = snaps[-1][1]
        try:
            header, sections = decode_snapshot(path.read_bytes(), str(path))
            if header["format"] == PARTS_FORMAT:     # and every part it names, whole
                sections = resolve(d, header, sections, path.name)
            with unreadable_as_corrupt(path, "a stored value"):   # as the copy opens it
                check_readable(header, sections)
            snap_last = int(header["last_op"])
        except StorageCorrupt as e:
            out.append(Finding(e.path, "damage", f"{e.detail} (a snapshot has no tail to "
                               "cut: rebuild this copy from another copy of the shard, or "
                               "restore it; not repairable from this copy's files)"))
            return out
    logs = _numbered(d, "log-", ".wal")
    logs = [(first, p) for i, (first, p) in enumerate(logs)
            if i + 1 >= len(logs) or logs[i + 1][0] > snap_last + 1]
    expect = snap_last + 1
    if logs and logs[0][0] > expect:
        out.append(Finding(str(logs[0][1]), "damage", f"the log starts at command {logs[0][0]}"
                           f" but the snapshot covers only up to {snap_last}: commands "
                           f"{expect}..{logs[0][0] - 1} are missing (not repairable)"))
        return out
    for i, (first, path) in enumerate(logs):
        data = path.read_bytes()
        payloads, good_end, problem = scan(data)
        cut_at, why, bad = None, None, 0
        for k, p in enumerate(payloads):     # command numbers continue one another
            op = _op(p)
            unreadable = None if op is None or op <= snap_last else _unreadable(p)
            if op is None or (op > snap_last and op != expect) or unreadable is not None:
                cut_at = sum(8 + len(x) for x in payloads[:k])
                why = (f"command numbers jump from {expect - 1} to {op} at record {k}"
                       if unreadable is None else f"record {k} (command {op}) has a good "
                       f"checksum but cannot be read: {unreadable}")
                payloads = payloads[:k]
                break
            if op > snap_last:
                expect = op + 1
        if cut_at is None and problem is not None:
            cut_at = good_end
            last = i + 1 == len(logs)
            if last and is_torn_tail(data, good_end, MAX_RECORD):
                f = Finding(str(path), "torn", f"{problem}: a torn last record ({len(data) - good_end}"
                            " bytes, never acknowledged); cut automatically when the copy opens")
                if repair:
                    aside = move_aside(d, [path.name], f.problem, keep=True)
                    _truncate(path, good_end)
                    f.repaired = f"cut the torn record (original in {aside})"
                out.append(f)
                continue
            why = damage_detail(data, good_end, problem, later_files=len(logs) - i - 1)
            bad = 1                          # the unreadable record itself
        if cut_at is None:
            continue
        rest = _after(data, cut_at) if bad else scan(data[cut_at:])[0]
        later = logs[i + 1:]
        lost = list(rest) + [p for _, lp in later for p in scan(lp.read_bytes())[0]]
        f = Finding(str(path), "damage", why or "", lost_ops=len(lost) + bad,
                    lost_docs=sum(_docs_in(p) for p in lost))
        if repair:
            names = [path.name] + [lp.name for _, lp in later] + [MANIFEST]
            aside = move_aside(d, names, f"{why}\nrepair kept the log up to byte {cut_at}",
                               keep=True)
            _truncate(path, cut_at)
            note_files(d, drop={lp.name for _, lp in later})
            for _, lp in later:
                lp.unlink()             # its copy is in ``aside``
            f.repaired = (f"kept {path.name} up to byte {cut_at} ({len(payloads)} records); "
                          f"dropped {f.lost_ops} commands ({f.lost_docs} documents in the "
                          f"readable ones); the originals are in {aside}")
        out.append(f)
        break
    return out


def _after(data: bytes, start: int) -> list[bytes]:
    """The intact records after a bad spot (what cutting there loses, beyond the bad one)."""
    from .damage import next_good_record
    nxt = next_good_record(data, start, MAX_RECORD)
    return [] if nxt is None else scan(data[nxt:])[0]


def _truncate(path: Path, size: int) -> None:
    import os
    with open(path, "r+b") as f:
        f.truncate(size)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(path.parent)


def _copy_dirs(index_dir: Path) -> list[Path]:
    return sorted(c for s in index_dir.iterdir() if s.is_dir() and s.name.isdigit()
                  for c in s.iterdir() if c.is_dir() and c.name.isdigit())


def check_data_dir(data_dir: str | Path, repair: bool = False) -> Report:
    """Check (and with ``repair``, repair what can be) every index of a data directory."""
    report = Report()
    root = Path(data_dir) / "indices"
    if not root.is_dir():
        report.findings.append(Finding(str(root), "damage", "no indices directory: not a "
                                       "shardsearch data directory"))
        return report
    for idx in sorted(p for p in root.iterdir() if p.is_dir()):
        if idx.name.startswith(".deleting-") or idx.name.startswith(CORRUPTED_PREFIX):
            continue
        report.indices += 1
        meta = idx / "meta.json"
        shards = None
        if not meta.exists():
            report.findings.append(Finding(str(meta), "damage", "missing: the index cannot be "
                                           "opened (settings and mapping are lost; not "
                                           "repairable from the shard files alone)"))
        else:
            try:
                m: Any = orjson.loads(meta.read_bytes())
                shards = int(m["number_of_shards"])
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                report.findings.append(Finding(str(meta), "damage", f"unreadable ({e}): the "
                                               "index cannot be opened (not repairable)"))
        for c in _copy_dirs(idx):
            if shards is not None and int(c.parent.name) >= shards:
                continue
            report.copies += 1
            report.findings.extend(check_copy(c, repair))
    return report


def render(report: Report, data_dir: str) -> str:
    """The text ``shardsearch check`` prints."""
    lines = [f.line() for f in report.findings]
    state = "DAMAGED" if report.damaged else "clean"
    lines.append(f"{data_dir}: {report.indices} indices, {report.copies} shard copies checked: "
                 f"{state}")
    return "\n".join(lines)
