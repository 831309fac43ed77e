"""A refresh hands back what a bulk load left: ``release_free_memory`` collects unreachable
reference cycles before trimming the heap, and only when asked to (a shard's first release after
a segment build skips the collection, which the second one then runs); called on a thread (a
Ray actor's calls run on threads), it also gives back the free top of that thread's heap, which
``malloc_trim`` leaves."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import pytest

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


_THREAD_HEAP_TOP = r"""
import threading
from shardsearch.cluster.engine.gcpause import release_free_memory


def anonymous_kib():
    # resident anonymous memory of this process (thread heaps are anonymous mappings)
    total, anon = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(None, 6)
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                anon = len(head) == 5
            elif anon and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


def work():
    # one large block first: freed, it raises glibc's dynamic thresholds as a segment
    # build's arrays do, so the blocks below come from this thread's heap
    big = bytearray(24 << 20)
    del big
    blocks = [b"x" * (1 << 20) for _ in range(24)]   # touched: resident
    del blocks                                        # now the heap's free top
    before = anonymous_kib()
    release_free_memory(collect=False)
    print(before - anonymous_kib())


t = threading.Thread(target=work)
t.start()
t.join()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas")
def test_release_free_memory_on_a_thread_gives_back_its_heap_top() -> None:
    # a fresh process: a thread there gets a heap of its own (in a process that ran other
    # tests, glibc may give it an arena that other threads' live blocks hold up)
    env = {k: v for k, v in os.environ.items()
           if k not in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", _THREAD_HEAP_TOP], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) >= 16 << 10


def test_an_operators_glibc_tuning_is_left_as_set(monkeypatch) -> None:
    from shardsearch.cluster.engine import gcpause

    class Recorder:
        """Stands for libc: records which functions the arena trim would call."""
        def __init__(self) -> None:
            self.calls: list[str] = []

        def __getattr__(self, name: str):
            def call(*args):
                self.calls.append(name)
                return 1
            return call

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1048576")
    tuned = Recorder()
    gcpause._trim_arena_top(tuned)
    assert tuned.calls == []
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    default = Recorder()
    gcpause._trim_arena_top(default)
    assert "mallopt" in default.calls
