"""CPU time of a page's fetch on one shard of GCIDE, in-process (no Ray).

Loads one shard of ``--shards`` as ``shard_memory`` does (bare ``ShardCore``), then measures
per page: the query phase with the page's documents riding along (query-and-fetch) and the
fetch alone, for a ranked ``match`` and a ``match_all``, at page 1 and at a deep page. "hot"
repeats one page (what a dashboard or a benchmark loop does); "varied" walks distinct pages
so that blocks are rarely reused. CPU time (``time.process_time``): the machine is shared.

    .venv/bin/python benchmarks/fetch_cpu.py [--corpus PATH] [--repeat 300]
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from shardsearch.benchmarks.bench import DEFAULT_CORPUS
from shardsearch.benchmarks.shard_memory import corpus_mapping, load, shard_query
from shardsearch.cluster.engine.shard import ShardCore

PAGES = [("match text:webster", {"match": {"text": "webster"}}),
         ("match_all", {"match_all": {}})]


def per_call_us(fn, repeat: int) -> float:
    """Mean CPU microseconds of ``fn(i)`` over ``repeat`` calls."""
    t0 = time.process_time()
    for i in range(repeat):
        fn(i)
    return (time.process_time() - t0) / repeat * 1e6


def measure(core: ShardCore, repeat: int) -> None:
    for name, dsl in PAGES:
        q = replace(shard_query(core, dsl, None), prefetch=10)
        hits = core.query(q)
        addrs = hits.addr[:10].tolist()
        qf = per_call_us(lambda i: core.query(q), repeat)
        q0 = per_call_us(lambda i: core.query(replace(q, prefetch=0)), repeat)
        hot = per_call_us(lambda i: core.fetch(addrs), repeat)
        _, deep = core.window(q, 0, 100_000)
        rows = deep.addr.tolist()
        varied = per_call_us(lambda i: core.fetch(rows[(i * 10) % len(rows):][:10]), repeat)
        win = per_call_us(lambda i: core.window(q, 5000 + 10 * i, 10), repeat)
        print(f"{name:20s} query+fetch p1 {qf:7.0f} µs  query only {q0:7.0f} µs  "
              f"fetch p1 hot {hot:6.0f} µs  fetch varied {varied:6.0f} µs  "
              f"deep window+fetch {win:7.0f} µs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=300)
    args = ap.parse_args()
    if not args.corpus.exists():
        print(f"fetch_cpu: corpus {args.corpus} not found; nothing to measure")
        return
    core, _, docs, _ = load(args.corpus, corpus_mapping(args.corpus), args.shards, 0, True, "")
    core.refresh()
    print(f"shard 0 of {args.shards}: {docs} docs, {len(core.segments)} segment(s)")
    measure(core, args.repeat)


if __name__ == "__main__":
    main()
