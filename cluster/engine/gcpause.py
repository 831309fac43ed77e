"""Keeping Python's cyclic garbage collector off work that allocates many objects that stay.

A bulk request builds thousands of small objects that all live on (the items of a request, a
shard's write buffer). Each automatic collection walks the objects of its generation, the
oldest one every tracked object of the process, and while a heap grows such collections keep
coming: measured, they doubled the CPU time of a shard's ``apply`` and took a third of the
front end's ``parse_bulk``. The code run under ``gc_paused`` makes no reference cycles.

``gc_paused(keep=True)`` also moves what exists at the end of the block out of the collector's
sight (``gc.freeze``): a shard's write buffer then costs no collection at all while it fills.
``release_kept`` (``gc.unfreeze``) hands everything back — a refresh calls it right before the
full collection that follows the segment build, so frozen garbage waits at most until then.

``release_free_memory`` hands freed heap pages back to the operating system: a shard after a
refresh frees a whole write buffer at once, and the coordinator and front end after a refresh
have handled a bulk load's requests, whose freed memory glibc otherwise keeps.
"""
from __future__ import annotations

import ctypes
import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(keep: bool = False) -> Iterator[None]:
    """No automatic cyclic collection inside the block (nested uses are fine); with ``keep``,
    the objects alive at its end are frozen (see the module docstring)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        gc.enable()


def release_kept() -> None:
    """Frozen objects are collectable again (into the oldest generation)."""
    gc.unfreeze()


def release_free_memory(collect: bool = True) -> None:
    """Give freed heap memory back to the operating system (glibc ``malloc_trim``; no-op
    elsewhere). With ``collect``, a full cyclic collection first (~40 ms in a shard worker,
    whose heap holds Ray's and our modules' objects: a refresh runs one, not one per release)."""
    if collect:
        gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
