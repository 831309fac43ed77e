"""The benchmark's memory breakdown: a process's PSS split by kind of mapping adds up to its
PSS, and pages of a shared-memory file (Ray's object store lives in ``/dev/shm``) are counted
as the object store's, not as the process's heap."""
from __future__ import annotations

import mmap
import os
import tempfile
import time

import psutil
import pytest

from shardsearch.benchmarks.server import _pss_by_kind

MIB = 1 << 20


def test_pss_by_kind_adds_up_to_the_process_pss() -> None:
    p = psutil.Process()
    for _ in range(20):   # PSS moves while processes sharing our pages exit (Ray's, earlier)
        before = p.memory_full_info().pss
        kinds = _pss_by_kind(p)
        after = p.memory_full_info().pss
        if abs(after - before) < MIB // 2:
            break
        time.sleep(0.25)
    assert {"heap", "code and files"} <= set(kinds)
    assert abs(sum(kinds.values()) - after) < 2 * MIB   # read a moment apart


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_touched_shared_memory_counts_as_object_store() -> None:
    before = _pss_by_kind(psutil.Process()).get("object store", 0)
    with tempfile.NamedTemporaryFile(dir="/dev/shm") as f:
        f.truncate(8 * MIB)
        with mmap.mmap(f.fileno(), 8 * MIB) as m:
            for off in range(0, 8 * MIB, mmap.PAGESIZE):
                m[off] = 1
            after = _pss_by_kind(psutil.Process()).get("object store", 0)
    assert after - before >= 8 * MIB - MIB   # unshared pages: their whole size
