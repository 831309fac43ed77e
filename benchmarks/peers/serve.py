"""Peers for ``shardsearch bench``: Tantivy, SQLite FTS5 and DuckDB behind a minimal FastAPI
endpoint (DuckDB answers the aggregations scenario, ``benchmarks/aggs.py``).

Each peer answers the same HTTP path shapes as shardsearch for what the benchmark sends
(``PUT /{index}``, ``POST /{index}/_bulk``, ``POST /{index}/_refresh``,
``POST /{index}/_search`` with ``match_all``, a one-term ``match``, a one-field ``sort``,
``from``/``size``), so the same load generator drives every engine. ``search_after`` is not
offered by these peers (Tantivy's Python API has no cursor; SQLite's ``bm25()`` cannot be used in
a keyset ``WHERE``): the benchmark records those cells as missing.

Run one as its own process: ``python -m shardsearch.benchmarks.peers.serve --engine tantivy --port P``.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

from .common import Search, error_response, json_response, parse_bulk, search_response
from .sqlite import SqlitePeer
from .tantivy import TantivyPeer

ENGINES = ("tantivy", "sqlite", "duckdb")


def create_peer_app(engine: str) -> FastAPI:
    """A FastAPI app speaking the benchmark's subset of the Elasticsearch API over ``engine``.

    Handlers are plain ``def``: they run in Starlette's thread pool, so a peer whose library
    releases the GIL (Tantivy) can serve concurrent searches in parallel.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown peer engine {engine!r}")
    if engine == "duckdb":
        from .duckdb import DuckdbPeer
        peer: Any = DuckdbPeer()
    else:
        peer = TantivyPeer() if engine == "tantivy" else SqlitePeer()
    app = FastAPI()
    app.state.peer = peer

    @app.get("/")
    def root() -> Response:
        return json_response({"name": engine, "tagline": "benchmark peer"})

    @app.put("/{index}")
    async def create(index: str, request: Request) -> Response:
        body = orjson.loads(await request.body() or b"{}")
        meta = body.get("_bench", {})
        if engine == "duckdb":
            peer.create(index, meta.get("keywords", []), meta.get("dates", []))
            return json_response({"acknowledged": True, "index": index})
        peer.create(index, meta.get("text_field", "text"), meta.get("sort_field", "headword"))
        return json_response({"acknowledged": True, "index": index})

    @app.post("/{index}/_bulk")
    async def bulk(index: str, request: Request) -> Response:
        raw = await request.body()
        docs = parse_bulk(raw)
        peer.bulk(index, docs)
        return json_response({"errors": False, "items": len(docs)})

    @app.post("/{index}/_refresh")
    def refresh(index: str) -> Response:
        peer.refresh(index)
        return json_response({"_shards": {"total": 1, "successful": 1, "failed": 0}})

    @app.post("/{index}/_search")
    def search(index: str, body: dict[str, Any]) -> Response:
        t0 = time.perf_counter()
        if engine == "duckdb":
            try:
                out = peer.search(index, body)
            except (ValueError, KeyError, TypeError) as e:
                return error_response(str(e))
            return json_response({"took": int((time.perf_counter() - t0) * 1000),
                                  "timed_out": False, **out})
        try:
            s = Search(body)
        except (ValueError, KeyError, TypeError) as e:
            return error_response(str(e))
        total, hits, max_score = peer.search(index, s)
        return search_response(t0, total, hits, max_score)

    return app


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="a benchmark peer behind FastAPI")
    p.add_argument("--engine", choices=ENGINES, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    args = p.parse_args(argv)
    import signal

    import uvicorn
    app = create_peer_app(args.engine)
    # uvicorn re-raises the SIGTERM it handled after shutting down: exit through Python so
    # the temporary files are removed below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                    access_log=False, lifespan="off")
    finally:
        close_peer(app)
    return 0


def close_peer(app: FastAPI) -> None:
    """Remove what a peer left on disk (SQLite's temporary database)."""
    folder = getattr(app.state.peer, "dir", None)
    if folder:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
