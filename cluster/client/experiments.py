"""Experiments from Python: parameter sweeps whose results are data (pandas), not prints.

    >>> from shardsearch import Cluster
    >>> c = Cluster.start()
    >>> df = c.sweep("books", {"from_": [0, 1000, 5000], "size": [10]},
    ...              method=["from_size", "deep_page", "search_after"], repeat=5)
    >>> df.groupby(["method", "from_"]).took_ms.median()

Every measured search runs with ``"profile": true`` (``search/profile.py``), so each row carries the
coordinator's own time (``took_ms``), the client's round trip (``wall_ms``), the candidates and
bytes the shards sent, the merge time and the time of each phase.

Methods (``method=``): ``auto`` (the coordinator's choice), ``from_size`` (classic: every shard
sends its top ``from + size``), ``deep_page`` (sample-and-range, ``search/sample_and_range.py``),
``search_after`` (the page after the hit at ``from - 1``, whose sort values are looked up first,
unmeasured) and ``scroll`` (one scroll walked in batches of ``size``; the row for ``from`` is the
batch that starts there, with ``batches`` and ``cumulative_ms`` for the whole walk up to it).
Sorts get ``_doc`` appended as a last key (the unique tie-break) so that ``search_after`` and
scroll continue exactly where a page ends; the order is the same for every method.
"""
from __future__ import annotations

import itertools
import time
from typing import Any

METHODS = ("auto", "from_size", "deep_page", "search_after", "scroll")
_SEARCH_KEYS = ("from_", "size")


def _listify(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def with_tiebreak(sort: Any) -> list[Any]:
    """``sort`` (Elasticsearch syntax, None = by score) with ``_doc`` as the last key."""
    keys = _listify(sort) if sort is not None else ["_score"]

    def name(k: Any) -> str:
        return k if isinstance(k, str) else next(iter(k))
    if keys and name(keys[-1]) in ("_doc", "_shard_doc"):
        return keys
    return keys + [{"_doc": "asc"}]


def measure(resp: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """One row of figures from a profiled search response."""
    prof = resp.get("profile") or {}
    ours = prof.get("shardsearch", {})
    per_shard = [s.get("shardsearch", {}) for s in prof.get("shards", [])]
    shards = resp.get("_shards", {})
    return {
        "query_phase": ours.get("query_phase"),
        "shards": ours.get("shards", shards.get("total")),
        "took_ms": ours.get("took_ns", 0) / 1e6,
        "wall_ms": wall_s * 1000.0,
        "candidates": ours.get("candidates", 0),
        "max_shard_candidates": max((s.get("candidates", 0) for s in per_shard), default=0),
        "sample_candidates": ours.get("sample_candidates", 0),
        "bytes": ours.get("bytes", 0),
        "pickled_bytes": ours.get("pickled_bytes", 0),
        "fetch_bytes": ours.get("fetch_bytes", 0),
        "stats_ms": ours.get("stats_phase_ns", 0) / 1e6,
        "query_ms": ours.get("query_phase_ns", 0) / 1e6,
        "merge_ms": ours.get("merge_ns", 0) / 1e6,
        "fetch_ms": ours.get("fetch_phase_ns", 0) / 1e6,
        "hits": len(resp.get("hits", {}).get("hits", [])),
        "timed_out": bool(resp.get("timed_out")),
        "successful_shards": shards.get("successful"),
        "failed_shards": shards.get("failed", 0),
        "retries": ours.get("retries", 0),
    }


def _search(cluster: Any, index: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    resp = cluster.search(index, **body)
    return resp, time.perf_counter() - t0


def _one(cluster: Any, index: str, method: str, point: dict[str, Any],
         base: dict[str, Any]) -> dict[str, Any] | None:
    """One measured search of ``method`` at ``point`` (from_/size/other search keywords)."""
    body = {**base, **point, "profile": True}
    from_ = int(body.pop("from_", 0))
    if method in ("auto", "from_size", "deep_page"):
        if method != "auto":
            body["paging"] = method
        resp, wall = _search(cluster, index, {**body, "from_": from_})
    elif method == "search_after":
        if from_ > 0:
            anchor = cluster.search(index, **{**body, "profile": False, "from_": from_ - 1,
                                              "size": 1})["hits"]["hits"]
            if not anchor:
                return None
            body["search_after"] = anchor[0]["sort"]
        resp, wall = _search(cluster, index, body)
    else:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    return measure(resp, wall)


def _scroll_rows(cluster: Any, index: str, point: dict[str, Any], base: dict[str, Any],
                 froms: list[int], max_batches: int) -> list[dict[str, Any]]:
    """Walk one scroll in batches of ``size``; a row for the batch starting at each ``from``."""
    body = {**base, **point, "profile": True}
    body.pop("from_", None)
    size = int(body.get("size", 10))
    params = dict(body.pop("params", {}) or {})
    params["scroll"] = "1m"
    wanted = sorted({f for f in froms if f % size == 0})
    rows: list[dict[str, Any]] = []
    if not wanted:
        return rows
    t0 = time.perf_counter()
    resp = cluster.search(index, params=params, **body)
    wall = time.perf_counter() - t0
    sid = resp.get("_scroll_id")
    depth, batches, cumulative = 0, 1, wall
    try:
        while True:
            if depth in wanted:
                row = measure(resp, wall)
                row.update(from_=depth, batches=batches, cumulative_ms=cumulative * 1000.0)
                rows.append(row)
            if depth >= wanted[-1] or not resp["hits"]["hits"] or batches >= max_batches:
                break
            depth += size
            t0 = time.perf_counter()
            resp = cluster._call("scroll", sid, "1m")
            wall = time.perf_counter() - t0
            batches += 1
            cumulative += wall
    finally:
        if sid:
            try:
                cluster._call("clear_scroll", [sid])
            except Exception:  # noqa: BLE001 - it expires anyway
                pass
    return rows


def sweep(cluster: Any, index: str | list[str], params: dict[str, list[Any]] | None = None, *,
          method: str | list[str] = "auto", repeat: int = 5, warmup: int = 1,
          query: dict[str, Any] | None = None, sort: Any = None, max_batches: int = 2000,
          **search: Any) -> Any:
    """Measure searches over the grid ``params`` × ``method`` × ``index``, ``repeat`` times each.

    ``params`` maps ``Cluster.search`` keywords (``from_``, ``size``, ``timeout``, ...) to the
    values to try. ``warmup`` unmeasured searches run first for each index and method (caches,
    first calls). Returns a ``pandas.DataFrame`` with one row per measured search: the grid's
    columns, ``index``, ``method``, ``rep`` and the figures of :func:`measure`.
    """
    import pandas as pd

    params = dict(params or {})
    keys = list(params)
    grid = [dict(zip(keys, combo)) for combo in itertools.product(*(_listify(params[k])
                                                                   for k in keys))] or [{}]
    base: dict[str, Any] = dict(search)
    if query is not None:
        base["query"] = query
    base["sort"] = with_tiebreak(sort)
    rows: list[dict[str, Any]] = []
    for idx in _listify(index):
        for m in _listify(method):
            if m not in METHODS:
                raise ValueError(f"unknown method {m!r}; expected one of {METHODS}")
            for _ in range(warmup):
                if m != "scroll":
                    _one(cluster, idx, m, grid[0], base)
            if m == "scroll":
                others = [k for k in keys if k != "from_"]
                groups: dict[tuple, list[int]] = {}
                for point in grid:
                    groups.setdefault(tuple(point.get(k) for k in others), []).append(
                        int(point.get("from_", 0)))
                for gkey, froms in groups.items():
                    point = dict(zip(others, gkey))
                    for rep in range(repeat):
                        for row in _scroll_rows(cluster, idx, point, base, froms, max_batches):
                            rows.append({"index": idx, "method": m, **point, "rep": rep, **row})
                continue
            for point in grid:
                for rep in range(repeat):
                    row = _one(cluster, idx, m, point, base)
                    if row is not None:
                        rows.append({"index": idx, "method": m, **point, "rep": rep, **row})
    return pd.DataFrame(rows)


def profile_frame(resp: dict[str, Any]) -> Any:
    """A profiled response's per-shard figures as a DataFrame (one row per shard answering)."""
    import pandas as pd

    rows = []
    for s in (resp.get("profile") or {}).get("shards", []):
        rows.append({"index": s["index"], "shard": s["shard_id"], "node": s["node_id"],
                     "query_ns": s["searches"][0]["query"][0]["time_in_nanos"],
                     "fetch_ns": (s.get("fetch") or {}).get("time_in_nanos"),
                     **{k: v for k, v in s.get("shardsearch", {}).items()}})
    return pd.DataFrame(rows)


def percentiles(df: Any, by: str | list[str], column: str = "took_ms",
                qs: tuple[float, ...] = (50, 90, 99)) -> Any:
    """``column``'s percentiles per group, one column per percentile (``p50``, ``p99``...)."""
    g = df.groupby(by)[column]
    out = {f"p{q:g}": g.quantile(q / 100.0) for q in qs}
    import pandas as pd
    return pd.DataFrame(out)
