"""SQLite FTS5 (in a temporary file) as a benchmark peer, ranked by its ``bm25()``."""
from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
from typing import Any

import orjson

from .common import Search, sort_of, text_of


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
            rows = [(base + 1 + i, d_id, sort_of(doc.get(sort_field)), src)
                    for i, (d_id, src, doc) in enumerate(docs)]
            c.executemany(f"INSERT INTO {t}(rowid, id, sortkey, src) VALUES (?,?,?,?)", rows)
            c.executemany(f"INSERT INTO {t}_fts(rowid, body) VALUES (?,?)",
                          [(base + 1 + i, text_of(doc.get(text_field)))
                           for i, (_, _, doc) in enumerate(docs)])
            c.commit()

    def refresh(self, name: str) -> None:
        t = self._table(name)
        c = self._conn()
        with self.lock:
            c.execute(f"CREATE INDEX IF NOT EXISTS {t}_sort ON {t}(sortkey)")
            c.commit()

    def search(self, name: str, s: Search) -> tuple[int, list[dict[str, Any]], float | None]:
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
