"""``_stats``: what the shard copies counted, summed per index and over the cluster.

Each copy reports its counters (``engine/shard_counters.py``: writes, queries, fetches, gets,
refreshes, flushes and their times), its segments (documents, deleted rows, bytes), its merges
and its store size (the bytes of its files on disk, or of its segments in memory). Here they are
summed the way Elasticsearch sums them: ``primaries`` over the acting primary of each shard,
``total`` over every started copy; ``_all`` over the indices; ``level=shards`` lists the copies.
Pure (no Ray): the rows come from ``ClusterStatus.shard_infos``.
"""
from __future__ import annotations

import difflib
from typing import Any

from ..errors import IllegalArgument
from .health import status_of

SERVED = ("docs", "store", "indexing", "get", "search", "merge", "refresh", "flush",
          "segments")
# Elasticsearch's other metrics: known, not kept here, refused by name
NOT_SERVED = ("completion", "fielddata", "query_cache", "request_cache", "translog", "warmer",
              "bulk", "shard_stats", "mappings", "dense_vector", "sparse_vector", "recovery")
LEVELS = ("cluster", "indices", "shards")
_KEY = {"merge": "merges"}          # the metric's name in the URL -> its key in the answer
_METRIC = {v: k for k, v in _KEY.items()}


def parse_metrics(raw: str | None, path: str) -> list[str]:
    """The metric groups ``/_stats/{metric}`` asks for (all served ones by default); an
    unknown name is Elasticsearch's ``unrecognized metric`` error, a known one not kept here
    is refused by name."""
    if raw is None or raw in ("", "_all"):
        return list(SERVED)
    names = [m.strip() for m in raw.split(",") if m.strip()]
    known = set(SERVED) | set(NOT_SERVED) | {"_all"}
    unknown = [m for m in names if m not in known]
    if unknown:
        parts = []
        for m in unknown:
            close = difflib.get_close_matches(m, sorted(known - {"_all"}), n=1, cutoff=0.7)
            parts.append(f"[{m}] -> did you mean [{close[0]}]?" if close else f"[{m}]")
        word = "metric" if len(unknown) == 1 else "metrics"
        raise IllegalArgument(f"request [{path}] contains unrecognized {word}: "
                              f"{', '.join(parts)}")
    if "_all" in names:
        return list(SERVED)
    refused = [m for m in names if m in NOT_SERVED]
    if refused:
        raise IllegalArgument(f"[{','.join(refused)}] stats are not kept by this server")
    return names


def _ms(ns: int) -> int:
    return int(ns // 1_000_000)


def copy_stats(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every served group of one copy, from its ``info`` row."""
    c = row.get("counters") or {}
    held = row.get("segment_list") or []
    segs = [s for s in held if s.get("search", True)]   # Lucene's stats: the opened reader's
    merges = row.get("merges") or {}
    seg_bytes = sum(int(s.get("bytes") or 0) for s in segs)
    store = row.get("store_bytes")
    store = sum(int(s.get("bytes") or 0) for s in held) if store is None else int(store)
    out = {
        "docs": {"count": int(row.get("docs") or 0),
                 "deleted": sum(int(s.get("deleted") or 0) for s in segs)},
        "store": {"size_in_bytes": store, "total_data_set_size_in_bytes": store,
                  "reserved_in_bytes": 0},
        "indexing": {"index_total": c.get("index_total", 0),
                     "index_time_in_millis": _ms(c.get("index_time_ns", 0)),
                     "index_current": 0, "index_failed": 0,
                     "delete_total": c.get("delete_total", 0),
                     "delete_time_in_millis": _ms(c.get("delete_time_ns", 0)),
                     "delete_current": 0, "noop_update_total": 0, "is_throttled": False,
                     "throttle_time_in_millis": 0},
        "get": {"total": c.get("get_total", 0), "time_in_millis": _ms(c.get("get_time_ns", 0)),
                "current": 0},
        "search": {"open_contexts": int(row.get("pins") or 0),
                   "query_total": c.get("query_total", 0),
                   "query_time_in_millis": _ms(c.get("query_time_ns", 0)), "query_current": 0,
                   "fetch_total": c.get("fetch_total", 0),
                   "fetch_time_in_millis": _ms(c.get("fetch_time_ns", 0)), "fetch_current": 0},
        "merges": {"current": 0, "total": int(merges.get("total", 0)),
                  "total_docs": int(merges.get("docs", 0))},
        "refresh": {"total": c.get("refresh_total", 0),
                    "total_time_in_millis": _ms(c.get("refresh_time_ns", 0))},
        "flush": {"total": c.get("flush_total", 0),
                  "total_time_in_millis": _ms(c.get("flush_time_ns", 0))},
        "segments": {"count": len(segs), "memory_in_bytes": seg_bytes},
    }
    if row.get("storage_failures"):   # ours: failed background flushes, syncs and writes
        out["store"]["failed_background_io"] = dict(row["storage_failures"])
    return out


def _add(into: dict[str, Any], more: dict[str, Any]) -> None:
    for group, values in more.items():
        dest = into.setdefault(group, {})
        for k, v in values.items():
            if isinstance(v, bool):
                dest[k] = dest.get(k, False) or v
            elif isinstance(v, dict):
                sub = dest.setdefault(k, {})
                for kk, vv in v.items():
                    sub[kk] = sub.get(kk, 0) + vv
            else:
                dest[k] = dest.get(k, 0) + v


def _sums(rows: list[dict[str, Any]], metrics: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in rows:
        _add(out, {g: v for g, v in copy_stats(r).items() if _METRIC.get(g, g) in metrics})
    return {_KEY.get(g, g): out.get(_KEY.get(g, g), {}) for g in metrics}


def _started(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("state") == "STARTED"]


def index_stats(catalog: Any, infos: list[dict[str, Any]], expr: str | None,
                metrics: list[str] | None = None, level: str = "indices") -> dict[str, Any]:
    """The body of ``GET /{index}/_stats/{metric}``."""
    if level not in LEVELS:
        raise IllegalArgument(f"level parameter must be one of [cluster] or [indices] or "
                              f"[shards] but was [{level}]")
    metrics = metrics or list(SERVED)
    names = catalog.resolve(expr or "_all", refuse_closed=True)   # as Elasticsearch forbids
    rows = [r for r in infos if r["index"] in names]
    started = _started(rows)
    primaries = [r for r in started if r.get("prirep", "p") == "p"]
    total = sum(catalog.indices[n].number_of_shards * (1 + catalog.indices[n].number_of_replicas)
                for n in names)
    out: dict[str, Any] = {"_shards": {"total": total, "successful": len(started), "failed": 0},
                           "_all": {"primaries": _sums(primaries, metrics),
                                    "total": _sums(started, metrics)}}
    if level == "cluster":
        return out
    out["indices"] = {}
    for n in names:
        meta = catalog.indices[n]
        mine = [r for r in rows if r["index"] == n]
        entry = {"uuid": meta.uuid, "health": status_of(mine) if mine else "red",
                 "status": meta.state,
                 "primaries": _sums([r for r in _started(mine) if r.get("prirep", "p") == "p"],
                                    metrics),
                 "total": _sums(_started(mine), metrics)}
        if level == "shards":
            entry["shards"] = _shard_entries(mine, metrics)
        out["indices"][n] = entry
    return out


def _shard_entries(rows: list[dict[str, Any]], metrics: list[str]) -> dict[str, Any]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in _started(rows):
        stats = {g: v for g, v in copy_stats(r).items() if _METRIC.get(g, g) in metrics}
        out.setdefault(str(r["shard"]), []).append(
            {"routing": {"state": r["state"], "primary": r.get("prirep", "p") == "p",
                         "node": r.get("node_id")}, **stats})
    return out
