"""What a shard copy's load and refresh leave in Python's small-object allocator, in-process.

The service's memory target (README, "Where the memory of the data goes") is missed by the
unused 16 KiB pools of pymalloc's 1 MiB arenas that a copy keeps after a load: CPython frees
only whole arenas, and a few objects that outlive the refresh's ~200 MiB of short-lived small
objects keep theirs. This harness reproduces one copy's load without Ray: a ``ShardCore``
with the service's bounded buffer (``flush_docs = INDEX_BUFFER_DOCS``), fed one shard's share
of each 5,000-document ``_bulk`` of GCIDE as the coordinator routes it (a ``WriteBatch``
without parsed fields, unpickled at arrival as Ray does), then one refresh.

Reported before the load and after the refresh: RSS and PSS (``/proc/self/smaps_rollup``),
pymalloc's arenas and unused pools (``sys._debugmallocstats``), and the refresh's CPU time.
With ``--trace``, ``tracemalloc`` runs from the load's start (slow: no CPU figure then) and
the small objects allocated during the load and still alive after the refresh are listed by
traceback, with the 1 MiB address windows (``address >> 20``, about one arena each: arenas
are not aligned) they sit in.

    .venv/bin/python -m shardsearch.benchmarks.refresh_memory [--shard 0] [--trace]
"""
from __future__ import annotations

import argparse
import gc
import os
import pickle
import re
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from shardsearch.benchmarks.bench import DEFAULT_CORPUS
from shardsearch.benchmarks.corpus import iter_ndjson
from shardsearch.benchmarks.shard_memory import corpus_mapping
from shardsearch.cluster.engine.flushing import INDEX_BUFFER_DOCS
from shardsearch.cluster.engine.shard import ShardCore
from shardsearch.cluster.engine.writes import BatchBuilder
from shardsearch.cluster.indices.routing import shards_for

BULK = 5000          # documents per _bulk request, as the benchmark sends them
SMALL = 512          # pymalloc serves requests up to this many bytes
MIB = 1 << 20


def shard_batches(path: Path, shards: int, shard: int, limit: int | None) -> tuple[
        list[bytes], int, int]:
    """The pickled ``WriteBatch`` of ``shard`` in each ``BULK`` documents of the corpus, with
    its document count and raw NDJSON bytes (lines and newlines)."""
    out: list[bytes] = []
    docs = raw = seq = 0
    lines: list[bytes] = []

    def flush() -> None:
        nonlocal docs, raw, seq
        ids = [str(orjson.loads(ln).get("id", seq + i)) for i, ln in enumerate(lines)]
        sids = shards_for(ids, shards).tolist()
        rows = [(i, "bench", "index", ids[i], seq + i, lines[i], None, None)
                for i in range(len(lines)) if sids[i] == shard]
        seq += len(lines)
        out.append(pickle.dumps(BatchBuilder.of(rows).build(), protocol=5))
        docs += len(rows)
        raw += sum(len(r[5]) + 1 for r in rows)
        lines.clear()

    for line in iter_ndjson(path, limit):
        lines.append(line)
        if len(lines) == BULK:
            flush()
    if lines:
        flush()
    return out, docs, raw


def smaps() -> dict[str, int]:
    """Rss and Pss of this process, bytes."""
    out: dict[str, int] = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("Rss:", "Pss:"):
                out[parts[0][:-1].lower()] = int(parts[1]) * 1024
    return out


def mallocstats() -> dict[str, int]:
    """Arenas and unused pools of pymalloc, from ``sys._debugmallocstats`` (it writes to the
    C stderr: fd 2 is redirected to a file meanwhile)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode()
    out = {}
    for key, pattern in (("arenas", r"# arenas allocated current\s*=\s*([\d,]+)"),
                         ("unused_pools", r"([\d,]+) unused pools \*"),
                         ("allocated_blocks", r"# bytes in allocated blocks\s*=\s*([\d,]+)")):
        m = re.search(pattern, text)
        out[key] = int(m.group(1).replace(",", "")) if m else -1
    return out


def state() -> dict[str, int]:
    gc.collect()
    return smaps() | mallocstats()


def load_and_refresh(batches: list[bytes], mapping: Any) -> tuple[ShardCore, float, float]:
    """The copy's load (each batch unpickled at arrival, applied) and its refresh; returns
    ``(core, load CPU s, refresh CPU s)``."""
    core = ShardCore("bench", 0, mapping)
    core.flush_docs = INDEX_BUFFER_DOCS
    t0 = time.process_time()
    for blob in batches:
        core.apply(pickle.loads(blob))
    t1 = time.process_time()
    core.refresh()
    return core, t1 - t0, time.process_time() - t1


def survivors(snapshot: tracemalloc.Snapshot, top: int) -> None:
    """The small blocks allocated during the load still alive, by traceback; then the 1 MiB
    address windows of the small objects reachable from the collector's (one referent deep),
    the windows holding load-time objects only (an arena the load left) first, with where
    those objects were made."""
    small = [t for t in snapshot.traces if t.size <= SMALL]
    by_tb: Counter[Any] = Counter()
    sizes: Counter[Any] = Counter()
    for t in small:
        by_tb[t.traceback] += 1
        sizes[t.traceback] += t.size
    print(f"small blocks allocated during the load, alive after the refresh: {len(small)} "
          f"({sum(t.size for t in small) / MIB:.2f} MiB)")
    for tb, n in by_tb.most_common(top):
        print(f"  {n:7d} blocks {sizes[tb]:9d} B  {_frames(tb)}")
    del small, by_tb, sizes
    made_here = set(range(survivors.__code__.co_firstlineno, _END_OF_SURVIVORS))
    old: Counter[int] = Counter()
    new: dict[int, Counter[str]] = {}
    seen: set[int] = set()
    for obj in gc.get_objects():
        for o in [obj, *gc.get_referents(obj)]:
            if id(o) in seen or sys.getsizeof(o) > SMALL:
                continue
            seen.add(id(o))
            tb = tracemalloc.get_object_traceback(o)
            if tb is None:
                old[id(o) >> 20] += 1
            elif not any(f.filename == __file__ and f.lineno in made_here for f in tb):
                new.setdefault(id(o) >> 20, Counter())[_frames(tb, 3)] += 1
    alone = sorted((w for w in new if w not in old), key=lambda w: -sum(new[w].values()))
    print(f"1 MiB windows with load-time objects: {len(new)}, with nothing older: {len(alone)}")
    for w in alone:
        print(f"  window {w:#x}: {sum(new[w].values())} objects: "
              + "; ".join(f"{n}x {where}" for where, n in new[w].most_common(4)))


def _frames(tb: tracemalloc.Traceback, limit: int = 99) -> str:
    return " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(reversed(tb))[:limit])


_END_OF_SURVIVORS = _frames.__code__.co_firstlineno


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--shard", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="the corpus's first N documents")
    ap.add_argument("--trace", action="store_true",
                    help="tracemalloc from the load on: list what survives it (slow)")
    ap.add_argument("--top", type=int, default=25, help="tracebacks listed with --trace")
    ap.add_argument("--frames", type=int, default=6, help="frames kept per traceback")
    args = ap.parse_args()
    if not args.corpus.exists():
        print(f"refresh_memory: corpus {args.corpus} not found; nothing to measure")
        return
    mapping = corpus_mapping(args.corpus)
    batches, docs, raw = shard_batches(args.corpus, args.shards, args.shard, args.limit)
    ShardCore("warm", 0, mapping).apply([])   # the build's modules, as a copy's first write
    before = state()
    if args.trace:
        tracemalloc.start(args.frames)
    core, load_cpu, refresh_cpu = load_and_refresh(batches, mapping)
    if args.trace:
        gc.collect()
        survivors(tracemalloc.take_snapshot(), args.top)
        tracemalloc.stop()   # pymalloc's statistics are not reported under its hooks
    after = state()
    print(f"shard {args.shard} of {args.shards}: {docs} docs, {raw / MIB:.1f} MiB raw, "
          f"{len(core.segments)} segment(s)")
    for key in ("rss", "pss"):
        print(f"{key.upper()}: {before[key] / MIB:.1f} -> {after[key] / MIB:.1f} MiB "
              f"(+{(after[key] - before[key]) / MIB:.1f})")
    print(f"pymalloc arenas: {before['arenas']} -> {after['arenas']}; unused pools "
          f"{before['unused_pools']} -> {after['unused_pools']} "
          f"({after['unused_pools'] * 16 / 1024:.1f} MiB); live small blocks "
          f"{before['allocated_blocks'] / MIB:.1f} -> {after['allocated_blocks'] / MIB:.1f} MiB")
    if not args.trace:
        print(f"CPU: load {load_cpu:.2f} s, refresh {refresh_cpu:.2f} s")


if __name__ == "__main__":
    main()
