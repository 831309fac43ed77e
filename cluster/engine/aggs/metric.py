"""Metric aggregations on a shard: sums, counts, extremes and distinct values per owner.

Every value of a multi-valued field counts (as in Elasticsearch); ``missing`` stands in for
documents without one. Long fields sum as int64 (exact); doubles as float64.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import IllegalArgument
from .bucket import _pairs
from .collect import COLLECTORS, Rows, ShardView, concat, field_kind, group
from .parse import AggNode
from .partials import Distinct, Stats, Values
from .sketches import (EXACT_PERCENTILE_VALUES, digest_k, digest_of, lg_k, mad_k,
                       precision_threshold, sketch_of)


def _owner_values(node: AggNode, view: ShardView, rows: Rows, kind: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(owner, value)`` of every value of the rows (keyword values as ranks)."""
    if kind == "unmapped" and "missing" not in node.params:
        return np.zeros(0, np.int64), np.zeros(0, np.float64), None
    pairs, distinct = _pairs(node, view, rows, kind)
    owners = concat([rows.owner[si][r] for si, (r, _) in enumerate(pairs)], np.int64)
    values = concat([v for _, v in pairs], np.float64)
    return owners, values, distinct


def _numeric_kind(node: AggNode, view: ShardView) -> str:
    """The field's kind; a keyword field is refused by aggregations that need numbers."""
    kind = field_kind(node, view)
    if kind == "keyword" and node.type != "value_count":
        raise IllegalArgument(f"Field [{node.field}] of type [keyword] is not supported for "
                              f"aggregation [{node.type}]")
    return kind   # date_nanos values are read in millis (bucket._pairs)


def stats(node: AggNode, view: ShardView, rows: Rows) -> Stats:
    kind = _numeric_kind(node, view)
    owner, values, distinct = _owner_values(node, view, rows, kind)
    if distinct is not None:   # a keyword field: only value_count reads it
        values = np.zeros(len(owner), dtype=np.float64)
    # unsigned_long values (uint64) sum as doubles, as Elasticsearch sums them
    return _stats(owner, values, rows.n_owners,
                  kind in ("long", "date", "date_nanos", "boolean") and values.dtype.kind != "u")


def _stats(owner: np.ndarray, values: np.ndarray, n: int, integral: bool,
           weights: np.ndarray | None = None) -> Stats:
    count = np.bincount(owner, weights=weights, minlength=n)
    if weights is None:
        count = count.astype(np.int64)
    if integral and weights is None:
        total = np.zeros(n, dtype=np.int64)
        np.add.at(total, owner, values.astype(np.int64))
    else:
        w = values.astype(np.float64) * (weights if weights is not None else 1.0)
        total = np.bincount(owner, weights=w, minlength=n)
    vf = values.astype(np.float64)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, owner, vf)
    np.maximum.at(hi, owner, vf)
    sumsq = np.bincount(owner, weights=vf * vf, minlength=n)
    return Stats(count, total, lo, hi, sumsq)


def weighted_avg(node: AggNode, view: ShardView, rows: Rows) -> Stats:
    """Σ value·weight and Σ weight per owner; a document needs both (or their ``missing``)."""
    vnode = AggNode(node.name, "avg", dict(node.params["value"]))
    wnode = AggNode(node.name, "avg", dict(node.params["weight"]))
    vk, wk = field_kind(vnode, view), field_kind(wnode, view)
    vpairs, _ = _pairs(vnode, view, rows, vk)
    wpairs, _ = _pairs(wnode, view, rows, wk)
    owners, vals, weights = [], [], []
    for si, ((vr, v), (wr, w)) in enumerate(zip(vpairs, wpairs)):
        n = len(rows.docs[si])
        wv = np.full(n, np.nan)
        wv[wr] = w   # one weight per document (Elasticsearch refuses multi-valued weights)
        ok = ~np.isnan(wv[vr])
        owners.append(rows.owner[si][vr[ok]])
        vals.append(v[ok].astype(np.float64))
        weights.append(wv[vr[ok]])
    return _stats(concat(owners, np.int64), concat(vals, np.float64), rows.n_owners, False,
                  concat(weights, np.float64))


def cardinality(node: AggNode, view: ShardView, rows: Rows) -> Distinct:
    """The distinct ``(owner, value)`` pairs, O(p log p) for p values; an owner with more
    than ``precision_threshold`` ships an HLL sketch of them instead (bounded transfer)."""
    kind = field_kind(node, view)
    owner, values, distinct = _owner_values(node, view, rows, kind)
    u_owner, u_value, _ = group(owner, values.astype(np.int64) if distinct is not None
                                else values)
    vals = distinct[u_value] if distinct is not None else u_value
    limit = precision_threshold(node.params)
    per_owner = np.bincount(u_owner, minlength=rows.n_owners)
    big = np.flatnonzero(per_owner > limit)
    if not len(big):
        return Distinct(u_owner, vals)
    lg = lg_k(limit)
    starts = np.searchsorted(u_owner, big)   # pairs are in owner order
    sketches = {int(o): sketch_of(vals[a:a + per_owner[o]], lg) for o, a in zip(big, starts)}
    keep = ~np.isin(u_owner, big)
    return Distinct(u_owner[keep], vals[keep], sketches, lg)


def percentiles(node: AggNode, view: ShardView, rows: Rows) -> Values:
    """Every value and its owner (the coordinator ranks them exactly); an owner with more than
    ``EXACT_PERCENTILE_VALUES`` ships a t-digest of them instead (percentiles and median
    absolute deviation alike, ``sketches.py``)."""
    kind = _numeric_kind(node, view)
    owner, values, _ = _owner_values(node, view, rows, kind)
    values = values.astype(np.float64)
    per_owner = np.bincount(owner, minlength=rows.n_owners)
    big = np.flatnonzero(per_owner > EXACT_PERCENTILE_VALUES)
    if not len(big):
        return Values(owner, values)
    k = mad_k(node.params) if node.type == "median_absolute_deviation" else \
        digest_k(node.params)
    digests = {int(o): digest_of(values[owner == o], k) for o in big}
    keep = ~np.isin(owner, big)
    return Values(owner[keep], values[keep], digests, k)


METRICS = {name: stats for name in ("avg", "sum", "min", "max", "stats", "extended_stats",
                                    "value_count")}


def _top_hits(node: AggNode, view: ShardView, rows: Rows) -> Any:
    from .tophits import top_hits
    return top_hits(node, view, rows)


METRICS.update(top_hits=_top_hits, weighted_avg=weighted_avg, cardinality=cardinality, percentiles=percentiles,
               percentile_ranks=percentiles, median_absolute_deviation=percentiles)
COLLECTORS.update(METRICS)
