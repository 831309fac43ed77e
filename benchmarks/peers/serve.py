"""Peers for ``shardsearch bench``: Tantivy and SQLite FTS5 behind a minimal FastAPI endpoint.

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
import os
import sqlite3
import sys
import tempfile
import threading
import time
from typing import Any

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

ENGINES = ("tantivy", "sqlite")


def _json(obj: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(obj), status_code=status, media_type="application/json")


def _error(reason: str, status: int = 400) -> Response:
    return _json({"error": {"type": "illegal_argument_exception", "reason": reason},
                  "status": status}, status)


def _parse_bulk(raw: bytes) -> list[tuple[str, bytes, dict[str, Any]]]:
    """``(id, source bytes, source)`` of each ``index`` action of an NDJSON bulk body."""
    lines = [ln for ln in raw.split(b"\n") if ln.strip()]
    out = []
    for i in range(0, len(lines) - 1, 2):
        meta = orjson.loads(lines[i])
        action = next(iter(meta.values()))
        src = lines[i + 1]
        doc = orjson.loads(src)
        out.append((str(action.get("_id", doc.get("id", i // 2))), src, doc))
    return out


def _text_of(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return "" if value is None else str(value)


def _sort_of(value: Any) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)


class _Search:
    """The part of a search body the peers understand."""

    def __init__(self, body: dict[str, Any]) -> None:
        q = body.get("query") or {"match_all": {}}
        self.term: str | None = None
        self.field: str | None = None
        if "match" in q:
            self.field, spec = next(iter(q["match"].items()))
            self.term = spec["query"] if isinstance(spec, dict) else str(spec)
        elif "match_all" not in q:
            raise ValueError("only match_all and match are supported")
        self.sort_field: str | None = None
        self.sort_desc = False
        for s in body.get("sort") or []:
            name, opts = (s, {}) if isinstance(s, str) else next(iter(s.items()))
            if name in ("_score", "_doc"):
                continue
            self.sort_field = name
            order = opts if isinstance(opts, str) else opts.get("order", "asc")
            self.sort_desc = order == "desc"
            break
        if body.get("search_after") is not None:
            raise ValueError("search_after is not supported by this peer")
        self.from_ = int(body.get("from", 0))
        self.size = int(body.get("size", 10))


def _response(t0: float, total: int, hits: list[dict[str, Any]],
              max_score: float | None) -> Response:
    body = {"took": int((time.perf_counter() - t0) * 1000), "timed_out": False,
            "hits": {"total": {"value": total, "relation": "eq"}, "max_score": max_score,
                     "hits": hits}}
    return Response(orjson.dumps(body), media_type="application/json")


class TantivyPeer:
    """One in-memory Tantivy index per index name; ``_source`` kept as bytes beside it."""

    def __init__(self) -> None:
        self.indices: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def create(self, name: str, text_field: str, sort_field: str) -> None:
        import tantivy
        sb = tantivy.SchemaBuilder()
        sb.add_text_field(text_field, stored=False)
        sb.add_text_field(sort_field, stored=False, tokenizer_name="raw", fast=True)
        sb.add_unsigned_field("_ord", stored=True, fast=True, indexed=False)
        schema = sb.build()
        index = tantivy.Index(schema)
        writer = index.writer(heap_size=256_000_000, num_threads=2)
        self.indices[name] = {"schema": schema, "index": index, "writer": writer, "ids": [],
                              "sources": [], "text": text_field, "sort": sort_field}

    def bulk(self, name: str, docs: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        import tantivy
        ix = self.indices[name]
        with self.lock:
            for doc_id, src, doc in docs:
                ord_ = len(ix["ids"])
                ix["ids"].append(doc_id)
                ix["sources"].append(src)
                d = tantivy.Document()
                d.add_text(ix["text"], _text_of(doc.get(ix["text"])))
                d.add_text(ix["sort"], _sort_of(doc.get(ix["sort"])))
                d.add_unsigned("_ord", ord_)
                ix["writer"].add_document(d)

    def refresh(self, name: str) -> None:
        ix = self.indices[name]
        with self.lock:
            ix["writer"].commit()
            ix["writer"].wait_merging_threads()
            ix["writer"] = ix["index"].writer(heap_size=256_000_000, num_threads=2)
            ix["index"].reload()

    def search(self, name: str, s: _Search) -> tuple[int, list[dict[str, Any]], float | None]:
        import tantivy
        ix = self.indices[name]
        searcher = ix["index"].searcher()
        if s.term is None:
            query = tantivy.Query.all_query()
        else:
            query = ix["index"].parse_query(s.term, [ix["text"]])
        kwargs: dict[str, Any] = {"limit": max(s.size, 1), "count": True, "offset": s.from_}
        if s.sort_field is not None:
            kwargs["order_by_field"] = s.sort_field
            kwargs["order"] = tantivy.Order.Desc if s.sort_desc else tantivy.Order.Asc
        res = searcher.search(query, **kwargs)
        hits = []
        max_score = None
        for key, addr in res.hits[:s.size]:
            ord_ = searcher.doc(addr)["_ord"][0]
            hit: dict[str, Any] = {"_index": name, "_id": ix["ids"][ord_],
                                   "_score": None if s.sort_field else key,
                                   "_source": orjson.Fragment(ix["sources"][ord_])}
            if s.sort_field:
                hit["sort"] = [key]
            elif max_score is None:
                max_score = key
            hits.append(hit)
        return res.count, hits, max_score


class SqlitePeer:
    """SQLite FTS5 in a temporary file; a connection per server thread."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="shardsearch-bench-sqlite-")
        self.path = os.path.join(self.dir, "bench.db")
        self.local = threading.local()
        self.fields: dict[str, tuple[str, str]] = {}
        self.lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        c = getattr(self.local, "conn", None)
        if c is None:
            c = sqlite3.connect(self.path, check_same_thread=False)
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=OFF")
            c.execute("PRAGMA cache_size=-262144")
            self.local.conn = c
        return c

    @staticmethod
    def _table(name: str) -> str:
        return "t_" + "".join(ch if ch.isalnum() else "_" for ch in name)

    def create(self, name: str, text_field: str, sort_field: str) -> None:
        t = self._table(name)
        c = self._conn()
        c.execute(f"CREATE TABLE {t} (id TEXT, sortkey TEXT, src BLOB)")
        c.execute(f"CREATE VIRTUAL TABLE {t}_fts USING fts5(body, content='', "
                  "tokenize='unicode61')")
        c.commit()
        self.fields[name] = (text_field, sort_field)

    def bulk(self, name: str, docs: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        t = self._table(name)
        text_field, sort_field = self.fields[name]
        c = self._conn()
        with self.lock:
            cur = c.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {t}")
            base = cur.fetchone()[0]
            rows = [(base + 1 + i, d_id, _sort_of(doc.get(sort_field)), src)
                    for i, (d_id, src, doc) in enumerate(docs)]
            c.executemany(f"INSERT INTO {t}(rowid, id, sortkey, src) VALUES (?,?,?,?)", rows)
            c.executemany(f"INSERT INTO {t}_fts(rowid, body) VALUES (?,?)",
                          [(base + 1 + i, _text_of(doc.get(text_field)))
                           for i, (_, _, doc) in enumerate(docs)])
            c.commit()

    def refresh(self, name: str) -> None:
        t = self._table(name)
        c = self._conn()
        with self.lock:
            c.execute(f"CREATE INDEX IF NOT EXISTS {t}_sort ON {t}(sortkey)")
            c.commit()

    def search(self, name: str, s: _Search) -> tuple[int, list[dict[str, Any]], float | None]:
        t = self._table(name)
        c = self._conn()
        if s.term is not None:
            q = '"' + s.term.replace('"', '""') + '"'
            total = c.execute(f"SELECT count(*) FROM {t}_fts WHERE {t}_fts MATCH ?",
                              (q,)).fetchone()[0]
            if s.sort_field:
                rows = c.execute(
                    f"SELECT d.id, d.src, d.sortkey, NULL FROM {t}_fts f JOIN {t} d ON "
                    f"d.rowid = f.rowid WHERE {t}_fts MATCH ? ORDER BY d.sortkey "
                    f"{'DESC' if s.sort_desc else 'ASC'}, d.rowid LIMIT ? OFFSET ?",
                    (q, s.size, s.from_)).fetchall()
            else:
                rows = c.execute(
                    f"SELECT d.id, d.src, NULL, -r.score FROM (SELECT rowid, bm25({t}_fts) AS "
                    f"score FROM {t}_fts WHERE {t}_fts MATCH ? ORDER BY score, rowid LIMIT ? "
                    f"OFFSET ?) r JOIN {t} d ON d.rowid = r.rowid ORDER BY r.score, r.rowid",
                    (q, s.size, s.from_)).fetchall()
        else:
            total = c.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            order = (f"sortkey {'DESC' if s.sort_desc else 'ASC'}, rowid" if s.sort_field
                     else "rowid")
            rows = c.execute(f"SELECT id, src, sortkey, 1.0 FROM {t} ORDER BY {order} "
                             "LIMIT ? OFFSET ?", (s.size, s.from_)).fetchall()
        hits = []
        for d_id, src, sortkey, score in rows:
            hit: dict[str, Any] = {"_index": name, "_id": d_id,
                                   "_score": None if s.sort_field else score,
                                   "_source": orjson.Fragment(src)}
            if s.sort_field:
                hit["sort"] = [sortkey]
            hits.append(hit)
        max_score = hits[0]["_score"] if hits and not s.sort_field and s.from_ == 0 else None
        return total, hits, max_score


def create_peer_app(engine: str) -> FastAPI:
    """A FastAPI app speaking the benchmark's subset of the Elasticsearch API over ``engine``.

    Handlers are plain ``def``: they run in Starlette's thread pool, so a peer whose library
    releases the GIL (Tantivy) can serve concurrent searches in parallel.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown peer engine {engine!r}")
    peer: Any = TantivyPeer() if engine == "tantivy" else SqlitePeer()
    app = FastAPI()
    app.state.peer = peer

    @app.get("/")
    def root() -> Response:
        return _json({"name": engine, "tagline": "benchmark peer"})

    @app.put("/{index}")
    async def create(index: str, request: Request) -> Response:
        body = orjson.loads(await request.body() or b"{}")
        meta = body.get("_bench", {})
        peer.create(index, meta.get("text_field", "text"), meta.get("sort_field", "headword"))
        return _json({"acknowledged": True, "index": index})

    @app.post("/{index}/_bulk")
    async def bulk(index: str, request: Request) -> Response:
        raw = await request.body()
        docs = _parse_bulk(raw)
        peer.bulk(index, docs)
        return _json({"errors": False, "items": len(docs)})

    @app.post("/{index}/_refresh")
    def refresh(index: str) -> Response:
        peer.refresh(index)
        return _json({"_shards": {"total": 1, "successful": 1, "failed": 0}})

    @app.post("/{index}/_search")
    def search(index: str, body: dict[str, Any]) -> Response:
        t0 = time.perf_counter()
        try:
            s = _Search(body)
        except (ValueError, KeyError, TypeError) as e:
            return _error(str(e))
        total, hits, max_score = peer.search(index, s)
        return _response(t0, total, hits, max_score)

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
