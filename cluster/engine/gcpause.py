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
"""
from __future__ import annotations

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
