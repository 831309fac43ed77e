"""Routing is a stable function of the routing value: same shard in every process, every run."""
from __future__ import annotations

import subprocess
import sys

from shardsearch.cluster.indices.routing import murmur3_32, shard_for


def test_murmur3_matches_the_reference_vectors() -> None:
    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") & 0xFFFFFFFF == 0x248BFA47
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") & 0xFFFFFFFF == 0x2E4FF723
    assert murmur3_32(b"", seed=1) & 0xFFFFFFFF == 0x514E28B7


def test_shard_is_in_range_and_spreads_ids() -> None:
    shards = [shard_for(str(i), 5) for i in range(1000)]
    assert set(shards) == {0, 1, 2, 3, 4}
    assert min(shards.count(s) for s in range(5)) > 150


def test_routing_does_not_depend_on_the_process() -> None:
    """Python's hash() is salted per process; ours must not be."""
    code = ("from shardsearch.cluster.indices.routing import shard_for;"
            "print([shard_for(f'doc-{i}', 7) for i in range(50)])")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": seed}, check=True).stdout
            for seed in ("1", "2", "3")}
    assert len(outs) == 1
    assert outs.pop().strip() == str([shard_for(f"doc-{i}", 7) for i in range(50)])
