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

``malloc_trim`` leaves one thing resident: the free top of a thread's arena (glibc trims only
the main arena's top there). A Ray actor's calls run on threads of their own, so a shard's
segment build allocates in such an arena, and glibc shrinks its top only inside ``free`` when
it exceeds ``M_TRIM_THRESHOLD`` — which its dynamic rule raises to up to 64 MiB once large
arrays are freed. Measured in the service (2 shards of GCIDE): some loads left a copy with
35-45 MiB of such free memory resident after the refresh. ``_trim_arena_top`` lowers the
threshold, frees one block in the calling thread's arena (glibc then trims that arena's top),
and sets the thresholds where glibc's dynamic rule ends in a long-running process (any
``mallopt`` ends that rule): mmap from 32 MiB, trim above 64 MiB, for the whole process. An
operator who tuned glibc (``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``,
``GLIBC_TUNABLES``) keeps those settings: the arena's top is then left as glibc's rule leaves it.
"""
from __future__ import annotations

import ctypes
import os
import gc
import threading
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
        libc = ctypes.CDLL("libc.so.6")
        if threading.current_thread() is not threading.main_thread():
            _trim_arena_top(libc)
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


_M_TRIM_THRESHOLD = -1           # mallopt's parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_TRIM_BLOCK = 96 << 10           # above glibc's 64 KiB consolidation threshold (freeing this
                                 # much runs the arena's trim), below its lowest mmap threshold
_OPERATOR_TUNING = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")
_MMAP_CEILING = 32 << 20         # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
_TRIM_CEILING = 64 << 20         # twice that: where the dynamic trim threshold stops


def _trim_arena_top(libc: ctypes.CDLL) -> None:
    """Shrink the free top of the calling thread's glibc arena (see the module docstring).
    Not when the operator tuned glibc's thresholds: this would override them."""
    if any(k in os.environ for k in _OPERATOR_TUNING):
        return
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    if not libc.mallopt(_M_TRIM_THRESHOLD, 0):
        return
    try:
        block = libc.malloc(_TRIM_BLOCK)
        if block:
            libc.free(block)
    finally:
        libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_CEILING)
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_CEILING)
