"""Reading a whole index into Ray: ``shardsearch.data.read_index`` against sliced PIT over HTTP.

Both read the same documents from one snapshot with the same parallelism (one reader per shard):

* **native** — ``read_index``: one Ray Data read task per shard, each calling its shard copy's
  actor directly (``_shard_doc`` order, ``search_after``, ``--batch`` documents per call);
* **http** — what the ``ray-elasticsearch`` connector does: one Ray task per slice, each a
  sliced point-in-time ``search_after`` loop with the official ``elasticsearch`` client against
  the REST API (uvicorn in this process).

Each is run ``--reps`` times; the best wall time is reported (documents per second), with a check
that both returned the same ids. On a private local Ray:

    .venv/bin/python -m shardsearch.benchmarks.ray_data [--docs 20000] [--shards 2] [--batch 1000]
"""
from __future__ import annotations

import argparse
import threading
import time
from typing import Any

import orjson

from shardsearch.benchmarks.corpus import load_corpus


def _serve(coord: Any) -> tuple[Any, str]:
    """uvicorn with the real app on a free 127.0.0.1 port, in a thread."""
    import socket

    import uvicorn

    from shardsearch.api.app import create_app
    from shardsearch.api.deps import RayCoordinator
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(RayCoordinator(coord)), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def _http_reader() -> Any:
    import ray

    @ray.remote(num_cpus=0)
    def read_slice(url: str, pit: str, i: int, slices: int, size: int) -> list[str]:
        from elasticsearch import Elasticsearch
        client = Elasticsearch(url, request_timeout=120)
        ids: list[str] = []
        after = None
        try:
            while True:
                kw: dict[str, Any] = {"search_after": after} if after is not None else {}
                body = {"id": i, "max": slices} if slices > 1 else None
                r = client.search(pit={"id": pit, "keep_alive": "2m"}, size=size,
                                  sort=["_shard_doc"], **({"slice": body} if body else {}), **kw)
                hits = r["hits"]["hits"]
                if not hits:
                    return ids
                ids += [h["_id"] for h in hits]
                after = hits[-1]["sort"]
        finally:
            client.close()
    return read_slice


def _time_native(coord: Any, batch: int) -> tuple[float, list[str]]:
    from shardsearch.data import read_index
    t0 = time.perf_counter()
    rows = read_index("rd", batch_size=batch, coordinator=coord).take_all()
    return time.perf_counter() - t0, [r["_id"] for r in rows]


def _time_http(url: str, shards: int, batch: int) -> tuple[float, list[str]]:
    import httpx
    import ray
    reader = _http_reader()
    t0 = time.perf_counter()
    pit = httpx.post(f"{url}/rd/_pit?keep_alive=2m").json()["id"]
    parts = ray.get([reader.remote(url, pit, i, shards, batch) for i in range(shards)])
    httpx.request("DELETE", f"{url}/_pit", json={"id": pit})
    return time.perf_counter() - t0, [i for p in parts for i in p]


def run(docs: int, shards: int, batch: int, reps: int) -> dict[str, Any]:
    """Load ``docs`` documents into ``shards`` shards, time both readers."""
    from shardsearch import Cluster
    import logging
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    cluster = Cluster.start(num_cpus=2, object_store_mb=400)
    try:
        corpus = load_corpus(None, docs)
        cluster.create_index("rd", shards=shards, mappings=corpus.mapping)
        items = [orjson.loads(ln) for ln in corpus.lines]
        for at in range(0, len(items), 2000):
            cluster.bulk("rd", items[at:at + 2000], ids=corpus.ids[at:at + 2000])
        cluster._call("refresh", "rd")
        server, url = _serve(cluster._coord)
        best: dict[str, float] = {}
        for _ in range(reps):
            for name, fn in (("native", lambda: _time_native(cluster._coord, batch)),
                             ("http", lambda: _time_http(url, shards, batch))):
                secs, ids = fn()
                assert sorted(ids) == sorted(corpus.ids), f"{name} read a different set"
                best[name] = min(best.get(name, secs), secs)
        server.should_exit = True
        return {"docs": len(corpus), "corpus": corpus.name, "shards": shards, "batch": batch,
                **{f"{k}_s": round(v, 3) for k, v in best.items()},
                **{f"{k}_docs_per_s": round(len(corpus) / v) for k, v in best.items()}}
    finally:
        cluster.shutdown()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=20_000)
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    print(orjson.dumps(run(a.docs, a.shards, a.batch, a.reps), option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
