"""DuckDB (in-process, columnar, GROUP BY) as the aggregations benchmark's peer.

It answers the aggregations scenario's searches (``benchmarks/aggs.py``): page 1 of
``match_all`` in insertion order, with ``terms`` (``size``; count desc, key asc, as
Elasticsearch orders them), ``date_histogram`` (``calendar_interval``, UTC, non-empty buckets:
the scenario sends ``min_doc_count: 1``) and ``cardinality`` (exact ``COUNT(DISTINCT)``).
Anything else is refused with a 400. The documents are written to an NDJSON file as they arrive
and read by DuckDB's ``read_json`` at ``_refresh`` (one columnar table, no per-row inserts).
"""
from __future__ import annotations

import datetime as _dt
import os
import tempfile
import threading
from typing import Any

import orjson

_UNITS = {"minute": "minute", "1m": "minute", "hour": "hour", "1h": "hour", "day": "day",
          "1d": "day", "week": "week", "1w": "week", "month": "month", "1M": "month",
          "quarter": "quarter", "1q": "quarter", "year": "year", "1y": "year"}


def epoch_ms(value: Any) -> int | None:
    """An ISO-8601 date (with its UTC offset) as epoch milliseconds, as Elasticsearch stores it."""
    if not isinstance(value, str):
        return None
    d = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.timezone.utc)
    return int(d.timestamp() * 1000)


def _iso(ms: int) -> str:
    d = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class DuckdbPeer:
    """One DuckDB database in memory; a cursor per server thread."""

    def __init__(self) -> None:
        import duckdb
        self.db = duckdb.connect(":memory:")
        self.dir = tempfile.mkdtemp(prefix="shardsearch-bench-duckdb-")
        self.local = threading.local()
        self.lock = threading.Lock()
        self.fields: dict[str, tuple[list[str], list[str]]] = {}
        self.rows: dict[str, int] = {}

    def _cur(self) -> Any:
        c = getattr(self.local, "cur", None)
        if c is None:
            c = self.local.cur = self.db.cursor()
        return c

    @staticmethod
    def _table(name: str) -> str:
        return "t_" + "".join(ch if ch.isalnum() else "_" for ch in name)

    def create(self, name: str, keywords: list[str], dates: list[str]) -> None:
        self.fields[name] = (list(keywords), list(dates))
        self.rows[name] = 0
        open(os.path.join(self.dir, name + ".ndjson"), "wb").close()

    def bulk(self, name: str, docs: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        keywords, dates = self.fields[name]
        with self.lock, open(os.path.join(self.dir, name + ".ndjson"), "ab") as f:
            for doc_id, src, doc in docs:
                row: dict[str, Any] = {"rn": self.rows[name], "id": doc_id,
                                       "src": src.decode()}
                for k in keywords:
                    row["k_" + k] = doc.get(k) if isinstance(doc.get(k), str) else None
                for k in dates:
                    row["d_" + k] = epoch_ms(doc.get(k))
                self.rows[name] += 1
                f.write(orjson.dumps(row) + b"\n")

    def refresh(self, name: str) -> None:
        keywords, dates = self.fields[name]
        cols = {"rn": "BIGINT", "id": "VARCHAR", "src": "VARCHAR"}
        cols.update({"k_" + k: "VARCHAR" for k in keywords})
        cols.update({"d_" + k: "BIGINT" for k in dates})
        spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in cols.items()) + "}"
        path = os.path.join(self.dir, name + ".ndjson").replace("'", "''")
        with self.lock:
            self.db.execute(f"CREATE OR REPLACE TABLE {self._table(name)} AS SELECT * FROM "
                            f"read_json('{path}', format='newline_delimited', columns={spec}) "
                            "ORDER BY rn")

    def search(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """Hits of page 1 and the aggregations, in Elasticsearch's shape."""
        q = body.get("query") or {"match_all": {}}
        if set(q) != {"match_all"} or body.get("from") or body.get("sort"):
            raise ValueError("only page 1 of match_all is supported by this peer")
        t = self._table(name)
        cur = self._cur()
        size = int(body.get("size", 10))
        total = cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        rows = cur.execute(f"SELECT id, src FROM {t} ORDER BY rn LIMIT ?", [size]).fetchall()
        hits = [{"_index": name, "_id": i, "_score": 1.0, "_source": orjson.Fragment(s)}
                for i, s in rows]
        aggs = {k: self._agg(cur, t, spec) for k, spec in (body.get("aggs") or {}).items()}
        return {"hits": {"total": {"value": min(total, 10_000),
                                   "relation": "eq" if total <= 10_000 else "gte"},
                         "max_score": 1.0 if hits else None, "hits": hits},
                "aggregations": aggs}

    def _agg(self, cur: Any, t: str, spec: dict[str, Any]) -> dict[str, Any]:
        (kind, p), = ((k, v) for k, v in spec.items() if k != "aggs")
        if "aggs" in spec or not isinstance(p, dict):
            raise ValueError("sub-aggregations are not supported by this peer")
        col = ("d_" if kind == "date_histogram" else "k_") + str(p.get("field"))
        if kind == "terms" and set(p) <= {"field", "size"}:
            size = int(p.get("size", 10))   # the top-N and the total both in SQL
            top = cur.execute(f"SELECT {col}, count(*) AS c FROM {t} WHERE {col} IS NOT NULL "
                              f"GROUP BY {col} ORDER BY c DESC, {col} ASC LIMIT ?",
                              [size]).fetchall()
            valued = cur.execute(f"SELECT count({col}) FROM {t}").fetchone()[0]
            return {"doc_count_error_upper_bound": 0,
                    "sum_other_doc_count": valued - sum(c for _, c in top),
                    "buckets": [{"key": k, "doc_count": c} for k, c in top]}
        if kind == "cardinality" and set(p) == {"field"}:
            return {"value": cur.execute(f"SELECT count(DISTINCT {col}) FROM {t}").fetchone()[0]}
        if (kind == "date_histogram" and set(p) <= {"field", "calendar_interval", "min_doc_count"}
                and p.get("min_doc_count") == 1 and p.get("calendar_interval") in _UNITS):
            unit = _UNITS[p["calendar_interval"]]
            rows = cur.execute(
                f"SELECT epoch_ms(date_trunc('{unit}', make_timestamp({col} * 1000))) AS k, "
                f"count(*) FROM {t} WHERE {col} IS NOT NULL GROUP BY k ORDER BY k").fetchall()
            return {"buckets": [{"key_as_string": _iso(k), "key": k, "doc_count": c}
                                for k, c in rows]}
        raise ValueError(f"aggregation [{kind}] with {sorted(p)} is not supported by this peer")
