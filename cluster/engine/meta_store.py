"""Index metadata on disk (``<data_dir>/indices/<uuid>/meta.json``) and the data directory's
lock: what a restarted service reads to know its indices, and what keeps two services apart.
Pure file IO, no Ray."""
from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

import orjson

from .fsync import fsync_dir
from .storage import write_atomic

log = logging.getLogger("shardsearch.storage")


class MetaStore:
    """Index metadata under ``<data_dir>/indices/<uuid>/meta.json`` (one atomic file each).

    The coordinator writes it on every change of an index's settings or mapping, before it
    acknowledges; it is what a restarted service reads to know its indices. An index is
    deleted by renaming its directory to ``.deleting-<uuid>`` first (atomic), so a directory
    that still has its name but no readable ``meta.json`` is *damage*, not a half-deleted
    index: it is never removed, but reported in ``problems`` (and the log).
    """

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.root = Path(data_dir)
        self.indices = self.root / "indices"
        self.indices.mkdir(parents=True, exist_ok=True)
        self.problems: list[dict[str, Any]] = []

    def path(self, uuid: str) -> Path:
        return self.indices / uuid / "meta.json"

    def save(self, meta: dict[str, Any]) -> None:
        write_atomic(self.path(meta["uuid"]), orjson.dumps(meta, option=orjson.OPT_INDENT_2))

    def delete(self, uuid: str) -> None:
        """Forget an index: its directory is renamed away atomically, then removed."""
        d = self.indices / uuid
        if not d.exists():
            return
        gone = self.indices / f".deleting-{uuid}"
        os.replace(d, gone)
        fsync_dir(self.indices)
        shutil.rmtree(gone, ignore_errors=True)

    def load_all(self) -> list[dict[str, Any]]:
        """Every readable index's metadata (sorted by creation time). A directory whose
        ``meta.json`` is missing or unreadable is reported in ``problems``, never removed;
        only the remains of a deletion (``.deleting-*``) are."""
        out = []
        self.problems = []
        for d in sorted(self.indices.iterdir()) if self.indices.exists() else []:
            if not d.is_dir():
                continue
            if d.name.startswith(".deleting-"):
                shutil.rmtree(d, ignore_errors=True)      # a deletion that was interrupted
                continue
            meta = d / "meta.json"
            problem = None
            if not meta.exists():
                problem = "meta.json is missing"
            else:
                try:
                    got = orjson.loads(meta.read_bytes())
                    if not isinstance(got, dict) or not {"name", "uuid", "number_of_shards"} \
                            <= set(got):
                        problem = "meta.json lacks name, uuid or number_of_shards"
                    else:
                        out.append(got)
                except orjson.JSONDecodeError as e:
                    problem = f"meta.json is not JSON: {e}"
            if problem is not None:
                self.problems.append(meta_problem(d, problem))
                log.error("index directory %s cannot be opened: %s; left as it is (not "
                          "deleted) and reported in _cluster/health", d, problem)
        out.sort(key=lambda m: (m.get("created_ms", 0), m.get("name", "")))
        return out


def meta_problem(d: Path, problem: str) -> dict[str, Any]:
    """A report of an index directory that cannot be opened, naming it as best it can (the
    name from what is left of ``meta.json``, or from a snapshot or log record)."""
    name = None
    meta = d / "meta.json"
    if meta.exists():
        m = re.search(rb'"name"\s*:\s*"([^"\\]{1,255})"', meta.read_bytes())
        name = m.group(1).decode("utf-8", "replace") if m else None
    return {"index": name, "uuid": d.name, "path": str(d), "reason": problem}


class DataDirLock:
    """An exclusive lock on a data directory: two services must never share one.

    ``flock`` is released by the kernel when the process dies, so a crash never leaves the
    directory locked.
    """

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        import fcntl
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        self.path = Path(data_dir) / ".lock"
        self._f = open(self.path, "a+")
        try:
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._f.close()
            raise RuntimeError(f"data directory [{data_dir}] is in use by another shardsearch "
                               "service") from None
        self._f.seek(0)
        self._f.truncate()
        self._f.write(str(os.getpid()))
        self._f.flush()

    def release(self) -> None:
        try:
            self._f.close()
        except OSError:
            pass
