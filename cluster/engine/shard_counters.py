"""What a shard copy has done, for ``_stats``: operations and the time they took.

Counted where the work happens (``ShardCore``: writes, queries, fetches, gets, refreshes), as
plain integers (a counter costs one dict update per call, not per document). They start at
zero when the copy starts, as Elasticsearch's do when a shard opens.
"""
from __future__ import annotations

import os
import time

KINDS = ("index", "delete", "query", "fetch", "get", "refresh", "flush")


def new_counters() -> dict[str, int]:
    """``{kind}_total`` and ``{kind}_time_ns`` for every kind, zero."""
    out = {}
    for k in KINDS:
        out[f"{k}_total"] = 0
        out[f"{k}_time_ns"] = 0
    return out


def count(counters: dict[str, int], kind: str, n: int, since_ns: int) -> None:
    """``n`` operations of ``kind`` that took the time since ``since_ns`` (perf_counter_ns)."""
    counters[f"{kind}_total"] += n
    counters[f"{kind}_time_ns"] += time.perf_counter_ns() - since_ns


def count_writes(counters: dict[str, int], ops: list[str], since_ns: int) -> None:
    """A batch of writes: deletes and the rest (index, create, update) counted apart, the
    batch's time shared between them by count."""
    if not ops:
        return
    elapsed = time.perf_counter_ns() - since_ns
    deletes = sum(1 for op in ops if op == "delete")
    counters["delete_total"] += deletes
    counters["delete_time_ns"] += elapsed * deletes // len(ops)
    counters["index_total"] += len(ops) - deletes
    counters["index_time_ns"] += elapsed - elapsed * deletes // len(ops)


def dir_bytes(path: str, limit: int = 10_000) -> int:
    """The bytes of the files under ``path`` (a copy's directory; at most ``limit`` entries
    are visited, a bound a copy's few files never reach)."""
    total, stack, seen = 0, [str(path)], 0
    while stack and seen < limit:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            seen += 1
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False):
                    total += e.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total
