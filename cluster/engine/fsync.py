"""Making a directory entry durable: a rename or a new file survives a crash only once its
directory is fsynced (POSIX). One helper for the storage, damage and check modules."""
from __future__ import annotations

import os


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync the directory ``path``; a file system that cannot (or a directory gone) is not an
    error here — the caller's own writes were synced already."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
