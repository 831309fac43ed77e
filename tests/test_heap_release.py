"""A refresh hands back what a bulk load left: ``release_free_memory`` collects unreachable
reference cycles before trimming the heap, and only when asked to (a shard's first release after
a segment build skips the collection, which the second one then runs)."""
from __future__ import annotations

import gc
import weakref

from shardsearch.cluster.engine.gcpause import release_free_memory


class _Node:
    def __init__(self) -> None:
        self.me = self


def _orphan_cycle() -> weakref.ref[_Node]:
    return weakref.ref(_Node())


def test_release_free_memory_collects_unreachable_cycles() -> None:
    gc.disable()
    try:
        ref = _orphan_cycle()
        assert ref() is not None          # a cycle outlives its last reference...
        release_free_memory()
        assert ref() is None              # ...until the release collects it
    finally:
        gc.enable()


def test_release_free_memory_without_collect_leaves_the_collector_alone() -> None:
    gc.disable()
    try:
        ref = _orphan_cycle()
        release_free_memory(collect=False)
        assert ref() is not None
        gc.collect()
        assert ref() is None
    finally:
        gc.enable()
