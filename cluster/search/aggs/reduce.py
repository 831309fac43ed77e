"""Reduce the shards' aggregation partials into one exact, owner-indexed result.

Elasticsearch's ``InternalAggregation.reduce``, vectorised: each shard's partial is indexed by
its local owners, and a map ``local owner -> global owner`` places it. A keyed bucket
aggregation groups every shard's ``(owner, key)`` rows (one sort), sums their counts, and the
group of each shard row becomes the owner map of that shard's children — so nested
aggregations reduce level by level, never bucket by bucket. Nothing is dropped before the
final cut, hence the same result for 1 and N shards (``doc_count_error_upper_bound: 0``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...engine.aggs.collect import group
from ...engine.aggs.parse import PIPELINE_TYPES, AggNode
from ...engine.aggs.partials import Distinct, Fixed, GeoStats, Keyed, Stats, Values
from ...engine.aggs.sketches import merged_digest, merged_estimate
from .geo_reduce import reduce_geo_stats


@dataclass
class Result:
    """One aggregation reduced over every shard, for ``n`` global owners."""

    node: AggNode
    n: int
    stats: Stats | None = None
    distinct: np.ndarray | None = None     # cardinality per owner
    values: np.ndarray | None = None       # percentiles: values sorted by (owner, value)
    extra: Any = None                      # top_hits: (owner, sort key, tie, document) rows;
                                           # percentiles: owner -> merged t-digest
    owner: np.ndarray | None = None        # keyed: rows in (owner, key) order
    keys: np.ndarray | None = None
    counts: np.ndarray | None = None       # keyed: per row; fixed: per owner × width
    width: int = 0
    value_kind: str = "unmapped"
    other: int = 0                         # terms: documents of buckets cut before the reduce
    subs: dict[str, Result] = field(default_factory=dict)

    def rows_of(self, owner: int) -> tuple[int, int]:
        """``[a, b)``: the keyed rows of one owner."""
        assert self.owner is not None
        a, b = np.searchsorted(self.owner, [owner, owner + 1]).tolist()
        return a, b


def reduce_aggs(nodes: tuple[AggNode, ...], partials: list[dict[str, Any]]) -> dict[str, Result]:
    """The top level: every shard has one owner, the search's."""
    maps = [np.zeros(1, dtype=np.int64) for _ in partials]
    return reduce_level(nodes, partials, maps, 1)


def reduce_level(nodes: tuple[AggNode, ...], partials: list[dict[str, Any]],
                 maps: list[np.ndarray], n: int) -> dict[str, Result]:
    out = {}
    for node in nodes:
        if node.type in PIPELINE_TYPES:
            continue
        got = [(p[node.name], m) for p, m in zip(partials, maps) if node.name in p]
        out[node.name] = _reduce(node, got, n)
    return out


def _reduce(node: AggNode, got: list[tuple[Any, np.ndarray]], n: int) -> Result:
    mapped = [p.value_kind for p, _ in got
              if getattr(p, "value_kind", "unmapped") != "unmapped"]
    # the kinds of shards with buckets decide (an empty double shard leaves longs exact)
    kinds = [p.value_kind for p, _ in got if getattr(p, "value_kind", None) in mapped
             and len(getattr(p, "keys", ())) > 0] or mapped
    # longs and doubles across indices reduce as doubles (Elasticsearch's mixed terms)
    kind = "double" if "double" in kinds and "long" in kinds else kinds[0] if kinds \
        else "unmapped"
    res = Result(node, n, value_kind=kind)
    first = got[0][0] if got else None
    if node.type in ("percentiles", "percentile_ranks", "median_absolute_deviation"):
        _reduce_values(res, got)
    elif node.type == "top_hits":
        from .tophits import reduce_top_hits
        reduce_top_hits(res, got)
    elif isinstance(first, GeoStats) or node.type in ("geo_bounds", "geo_centroid"):
        res.extra = reduce_geo_stats(got, n)
    elif isinstance(first, Stats) or (first is None and node.type not in _BUCKET_LIKE
                                      and node.type != "cardinality"):
        res.stats = _reduce_stats([(p, m) for p, m in got], n)
    elif isinstance(first, Distinct) or node.type == "cardinality":
        res.distinct = _reduce_distinct(got, n)
    elif isinstance(first, Keyed) or node.type in ("terms", "histogram", "date_histogram",
                                                   "composite", "geohash_grid",
                                                   "geotile_grid"):
        _reduce_keyed(res, got)
    else:
        _reduce_fixed(res, got)
    return res


_BUCKET_LIKE = {"composite", "terms", "histogram", "date_histogram", "range", "date_range",
                "ip_range", "filter", "filters", "missing", "global", "nested", "reverse_nested",
                "geo_distance", "geohash_grid", "geotile_grid"}


def _reduce_stats(got: list[tuple[Stats, np.ndarray]], n: int) -> Stats:
    integral = all(p.sum.dtype.kind == "i" for p, _ in got) and bool(got)
    weighted = any(p.count.dtype.kind == "f" for p, _ in got)
    out = Stats(np.zeros(n, dtype=np.float64 if weighted else np.int64),
                np.zeros(n, dtype=np.int64 if integral else np.float64),
                np.full(n, np.inf), np.full(n, -np.inf), np.zeros(n))
    for p, m in got:   # local owners map to distinct global owners: no collisions
        out.count[m] += p.count
        out.sum[m] += p.sum.astype(out.sum.dtype)
        out.min[m] = np.minimum(out.min[m], p.min)
        out.max[m] = np.maximum(out.max[m], p.max)
        out.sumsq[m] += p.sumsq
    return out


def _reduce_values(res: Result, got: list[tuple[Values, np.ndarray]]) -> None:
    owner = np.concatenate([m[p.owner] for p, m in got]) if got else np.zeros(0, np.int64)
    values = np.concatenate([p.values for p, _ in got]) if got else np.zeros(0)
    order = np.lexsort((values, owner))
    res.owner, res.values = owner[order], values[order]
    sketched: dict[int, list[bytes]] = {}
    for p, m in got:
        for o, b in p.digests.items():
            sketched.setdefault(int(m[o]), []).append(b)
    if sketched:   # a digest per owner some shard sketched (``engine/aggs/sketches.py``)
        k = max(p.k for p, _ in got)
        res.extra = {o: merged_digest(blobs, [res.values[slice(*res.rows_of(o))]], k)
                     for o, blobs in sketched.items()}


def _codes(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of every shard's keys, and each key's code."""
    values = [v for v in values if len(v)]   # an empty float array would widen longs
    allv = np.concatenate(values) if values else np.zeros(0)
    if allv.dtype == object and len(allv) and not all(isinstance(v, str) for v in allv[:1]):
        allv = allv.astype(np.float64)
    uniq, inv = np.unique(allv, return_inverse=True)
    return uniq, inv.reshape(-1).astype(np.int64)


def _reduce_distinct(got: list[tuple[Distinct, np.ndarray]], n: int) -> np.ndarray:
    """Exact union sizes per owner; an owner some shard sketched gets the merged sketches'
    estimate (``engine/aggs/sketches.py``)."""
    if not got:
        return np.zeros(n, dtype=np.int64)
    _, codes = _codes([p.values for p, _ in got])
    owners = np.concatenate([m[p.owner] for p, m in got])
    u_owner, _, _ = group(owners, codes)
    out = np.bincount(u_owner, minlength=n).astype(np.int64)
    sketched: dict[int, list[bytes]] = {}
    for p, m in got:
        for o, b in p.sketches.items():
            sketched.setdefault(int(m[o]), []).append(b)
    if sketched:
        lg = max(p.lg_k for p, _ in got)
        for o, blobs in sketched.items():
            exact = [p.values[m[p.owner] == o] for p, m in got]
            out[o] = merged_estimate(blobs, exact, lg)
    return out


def _reduce_keyed(res: Result, got: list[tuple[Keyed, np.ndarray]]) -> None:
    uniq, codes = _codes([p.keys for p, _ in got])
    owners = np.concatenate([m[p.owner] for p, m in got]) if got else np.zeros(0, np.int64)
    u_owner, u_code, inv = group(owners, codes)
    counts = np.concatenate([p.counts for p, _ in got]) if got else np.zeros(0, np.int64)
    res.owner, res.keys = u_owner, uniq[u_code]
    res.counts = np.bincount(inv, weights=counts, minlength=len(u_owner)).astype(np.int64)
    res.other = sum(p.other for p, _ in got)   # top-level terms after rounds (``tput.py``)
    if res.node.subs:
        cuts = np.cumsum([0] + [len(p.counts) for p, _ in got])
        maps = [inv[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        res.subs = reduce_level(res.node.subs, [p.subs for p, _ in got], maps, len(u_owner))


def _reduce_fixed(res: Result, got: list[tuple[Fixed, np.ndarray]]) -> None:
    width = got[0][0].width if got else _width(res.node)
    res.width = width
    res.counts = np.zeros(res.n * width, dtype=np.int64)
    maps = []
    for p, m in got:
        g = (m[:, None] * width + np.arange(width)).reshape(-1)
        res.counts[g] += p.counts
        maps.append(g)
    if res.node.subs:
        res.subs = reduce_level(res.node.subs, [p.subs for p, _ in got], maps, res.n * width)


def _width(node: AggNode) -> int:
    if node.type in ("range", "date_range", "ip_range", "geo_distance"):
        return len(node.params["ranges"])
    if node.type == "filters":
        return len(node.queries) + bool(node.params.get("other_bucket"))
    return 1
