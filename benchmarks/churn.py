"""Search latency after thousands of small refreshes, with and without merges (issue 16).

The same documents three ways, in one process on the real coordinator and shard code
(``LocalBackend``: no actor hops, so the figures are the engine's own cost; each shard merges
on its background thread as a shard copy does, and is measured once no merge is left to do):

* **fresh** — every document in bulk, one refresh;
* **churned** — all but ``--cycles`` documents in bulk, then ``--cycles`` refresh cycles of one
  document each (the merge policy running after each refresh, as in the service);
* **churned, no merges** — the same with the policy switched off (what the issue measured).

For each: search p50 over ``--reps`` rounds of a few queries (a ranked match, a match sorted on
a keyword, ``match_all`` sorted on a keyword, a match with a terms aggregation), and the
segment count per shard.

    .venv/bin/python -m shardsearch.benchmarks.churn [--docs 20000] [--shards 2] [--cycles 3000]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import orjson

from shardsearch.benchmarks.corpus import load_corpus
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.engine.merge_policy import MergePolicy
from shardsearch.cluster.search.request import parse_search

NO_MERGES = MergePolicy(segments_per_tier=1e12)


async def build(corpus: Any, shards: int, cycles: int, merges: bool) -> Coordinator:
    coord = Coordinator(LocalBackend(background_merges=True))
    coord.create_index("churn", {"settings": {"number_of_shards": shards},
                                 "mappings": corpus.mapping})
    if not merges:
        for ref in coord.admin.indices["churn"].shards:
            ref.core.merge_policy = NO_MERGES
    items = [{"action": "index", "index": "churn", "id": i, "source": orjson.loads(ln)}
             for i, ln in zip(corpus.ids, corpus.lines)]
    bulk_part = items[:len(items) - cycles]
    for at in range(0, len(bulk_part), 5000):
        await coord.bulk(bulk_part[at:at + 5000])
    await coord.refresh("churn")
    for item in items[len(bulk_part):]:
        await coord.bulk([item], refresh=True)
    for ref in coord.admin.indices["churn"].shards:
        ref.merger.wait_idle()
    return coord


def bodies(corpus: Any) -> list[dict[str, Any]]:
    m = {"match": {corpus.text_field: corpus.term}}
    return [{"query": m}, {"query": m, "sort": [{corpus.sort_field: "asc"}]},
            {"sort": [{corpus.sort_field: "desc"}]},
            {"query": m, "size": 0, "aggs": {"k": {"terms": {"field": corpus.sort_field}}}}]


async def p50_ms(coord: Coordinator, corpus: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        for body in bodies(corpus):
            t = time.perf_counter()
            await coord.search(parse_search(("churn",), {}, body))
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


async def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = load_corpus(None, args.docs, synthetic_docs=args.docs, synthetic=args.synthetic)
    out: dict[str, Any] = {"corpus": corpus.name, "docs": len(corpus), "shards": args.shards,
                           "cycles": args.cycles}
    for name, cycles, merges in (("fresh", 0, True), ("churned", args.cycles, True),
                                 ("churned_no_merges", args.cycles, False)):
        t = time.perf_counter()
        coord = await build(corpus, args.shards, cycles, merges)
        load_s = time.perf_counter() - t
        cores = [ref.core for ref in coord.admin.indices["churn"].shards]
        await p50_ms(coord, corpus, 2)   # warm caches as a running service has them
        out[name] = {"search_p50_ms": round(await p50_ms(coord, corpus, args.reps), 2),
                     "segments_per_shard": [len(c.segments) for c in cores],
                     "merges": sum(c.merges["total"] for c in cores),
                     "build_s": round(load_s, 1)}
        print(name, out[name], flush=True)
    out["churned_over_fresh"] = round(out["churned"]["search_p50_ms"]
                                      / out["fresh"]["search_p50_ms"], 2)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=20_000)
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--cycles", type=int, default=3000)
    p.add_argument("--reps", type=int, default=25)
    p.add_argument("--synthetic", action="store_true", help="synthetic corpus, not GCIDE")
    args = p.parse_args()
    import os
    load = os.getloadavg()
    res = asyncio.run(run(args))
    res["load_avg_start"] = [round(x, 2) for x in load]
    res["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
