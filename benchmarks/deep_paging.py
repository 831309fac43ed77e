"""Deep pages: what each shard sends, and how long a page takes, at depth 100,000 vs page 1.

Synthetic data (``--docs`` documents over ``--shards`` shards), run in one process on the real
coordinator and shard code (``LocalBackend``: no actor hops, so the figures are the engine's own
cost; over Ray add ~1 ms per fan-out hop, see RAY_NOTES.md). A counting backend records, for every
call to a shard, how many candidates the shard returned.

    .venv/bin/python benchmarks/deep_paging.py [--docs 200000] [--shards 4] [--depth 100000]

Compared, for ``size`` hits sorted on a numeric field:

* page 1 (``from=0``);
* ``from=depth`` (the window raised so it is allowed), first the textbook way — every shard
  sends its top ``from + size`` — then with the coordinator's deep-page method (samples, then
  one range per shard);
* ``search_after`` with the sort values of hit ``depth`` (plain, then within a point in time);
* one scroll batch whose cursor stands at hit ``depth``.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from shardsearch.cluster.distribution.local_backend import LocalBackend
from shardsearch.cluster.coordinator import Coordinator
from shardsearch.cluster.search.request import parse_search


class CountingBackend(LocalBackend):
    """LocalBackend that records the candidates every shard call returns."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    async def call(self, ref: Any, method: str, *args: Any) -> Any:
        out = await super().call(ref, method, *args)
        if method == "query":
            self.calls.append((method, len(out)))
        elif method == "range":
            self.calls.append((method, len(out[1])))
        elif method == "sample":
            self.calls.append((method, len(out[1])))
        return out


async def load(coord: Coordinator, docs: int, shards: int, batch: int = 20_000) -> None:
    coord.create_index("bench", {"settings": {"number_of_shards": shards,
                                              "max_result_window": docs + 1000},
                                 "mappings": {"properties": {"n": {"type": "long"},
                                                             "g": {"type": "integer"},
                                                             "tag": {"type": "keyword"}}}})
    for start in range(0, docs, batch):
        items = [{"action": "index", "index": "bench", "id": str(i),
                  "source": {"n": (i * 7919) % docs, "g": i % 1000, "tag": f"t{i % 97}"}}
                 for i in range(start, min(docs, start + batch))]
        await coord.bulk(items)
    await coord.refresh("bench")


async def measure(coord: Coordinator, backend: CountingBackend, run, repeat: int
                  ) -> tuple[float, dict[str, list[int]], list[Any]]:
    """Median latency (ms) of ``run()``, the per-shard candidates of one run, its hits."""
    backend.calls.clear()
    resp = await run()
    calls: dict[str, list[int]] = {}
    for method, n in backend.calls:
        calls.setdefault(method, []).append(n)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), calls, resp["hits"]["hits"]


async def main(docs: int, shards: int, depth: int, size: int, repeat: int) -> None:
    backend = CountingBackend()
    coord = Coordinator(backend)
    t0 = time.perf_counter()
    await load(coord, docs, shards)
    print(f"loaded {docs:,} documents into {shards} shards in {time.perf_counter() - t0:.1f} s\n")
    sort = [{"n": "asc"}]

    def search(body: dict[str, Any], **params: str):
        req = parse_search(("bench",), params, body)
        return lambda: coord.search(req)

    page1 = search({"size": size, "sort": sort})
    deep_from = search({"size": size, "from": depth, "sort": sort})
    # hit number `depth` sorts as n = depth - 1 (n is a permutation of 0..docs-1); its tie-break
    # (index rank 0, its sequence number) is what a PIT or scroll cursor carries as well
    probe = await coord.search(parse_search(("bench",), {}, {
        "size": 1, "query": {"term": {"n": depth - 1}}, "sort": [{"n": "asc"}, {"_doc": "asc"}]}))
    last = probe["hits"]["hits"][0]["sort"]
    deep_after = search({"size": size, "sort": sort, "search_after": [depth - 1]})
    pit = await coord.open_pit("bench", "5m")
    pit_req = parse_search((), {}, {"size": size, "sort": sort, "pit": {"id": pit["id"]},
                                    "search_after": last})

    def deep_pit():
        return coord.search(pit_req)

    first = await coord.search(parse_search(("bench",), {"scroll": "5m"},
                                            {"size": size, "sort": sort}))
    cursor = coord.cursors.get(first["_scroll_id"], "scroll")

    async def scroll_batch():
        cursor.after = list(last)          # stand the cursor at hit `depth`
        return await coord.scroll(first["_scroll_id"], "5m")

    async def classic_from():
        saved = getattr(coord, "deep_page_threshold", None)
        coord.deep_page_threshold = 1 << 62          # every shard sends its top from + size
        try:
            return await deep_from()
        finally:
            coord.deep_page_threshold = saved

    rows = [("page 1 (from=0)", page1),
            (f"from={depth:,}, top from+size/shard", classic_from),
            (f"from={depth:,}, sample+range", deep_from),
            (f"search_after at {depth:,}", deep_after),
            (f"PIT + search_after at {depth:,}", deep_pit),
            (f"scroll batch at {depth:,}", scroll_batch)]
    print(f"size={size}, sort=n asc, {repeat} runs each (median)\n")
    print(f"{'request':38} {'latency ms':>11}  per-shard candidates (by shard call)")
    for name, run in rows:
        ms, calls, hits = await measure(coord, backend, run, repeat)
        first_n = hits[0]["sort"][0] if hits else None
        desc = "; ".join(f"{m}: {v}" for m, v in calls.items())
        print(f"{name:38} {ms:11.1f}  {desc}   first hit n={first_n}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--depth", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    asyncio.run(main(a.docs, a.shards, a.depth, a.size, a.repeat))
