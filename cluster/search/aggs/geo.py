"""The responses of the geo aggregations in Elasticsearch's shapes (their partials reduce in
``geo_reduce.py`` and ``reduce.py``).

Grids are cut here, after the reduce: the top ``size`` cells by count, ties broken by the
cell's code (geohash bits, or tile ``x`` then ``y``) descending, as Elasticsearch's bucket
queue orders them; so 1 and N shards give the same buckets.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.aggs.partials import GeoStats
from ...engine.geo_cells import geohash_string, tile_string
from ...engine.numformat import java_double
from .buckets import _bucket
from .reduce import Result

_LAT_DECODE = 180.0 / 2.0 ** 32
_LON_DECODE = 360.0 / 2.0 ** 32


def render_geo(node: Any, res: Result | None, owner: int | None, ctx: Any) -> dict[str, Any]:
    if node.type == "geo_centroid":
        return _centroid(res, owner)
    if node.type == "geo_bounds":
        return _bounds(node, res, owner)
    if node.type == "geo_distance":
        return _distance(node, res, owner, ctx)
    return _grid(node, res, owner, ctx)


def _stats(res: Result | None, owner: int | None) -> GeoStats | None:
    st = res.extra if res is not None else None
    if st is None or owner is None or int(st.count[owner]) == 0:
        return None
    return st


def _centroid(res: Result | None, owner: int | None) -> dict[str, Any]:
    st = _stats(res, owner)
    if st is None:
        return {"count": 0}
    assert owner is not None
    c = int(st.count[owner])
    lat = int(st.sums[owner, 0]) * _LAT_DECODE / c
    lon = int(st.sums[owner, 1]) * _LON_DECODE / c
    return {"location": {"lat": lat, "lon": lon}, "count": c}


def _bounds(node: Any, res: Result | None, owner: int | None) -> dict[str, Any]:
    """``InternalGeoBounds.boundingBox``: with ``wrap_longitude``, the narrower of the box
    through Greenwich and the box across the dateline."""
    st = _stats(res, owner)
    if st is None:
        return {}
    top, pos_right, neg_right = (float(x) for x in st.maxs[owner])
    bottom, pos_left, neg_left = (float(x) for x in st.mins[owner])
    if np.isinf(pos_left):
        left, right = neg_left, neg_right
    elif np.isinf(neg_left):
        left, right = pos_left, pos_right
    elif node.params.get("_wrap", True) and \
            (180 - pos_left) - (-180 - neg_right) < pos_right - neg_left:
        left, right = pos_left, neg_right
    else:
        left, right = neg_left, pos_right
    return {"bounds": {"top_left": {"lat": top, "lon": left},
                       "bottom_right": {"lat": bottom, "lon": right}}}


def _distance(node: Any, res: Result | None, owner: int | None, ctx: Any) -> dict[str, Any]:
    """``InternalGeoDistance``: ``from`` is 0 when not given (its key still says ``*``)."""
    spans = node.params["_spans"]
    ctx.spend(len(spans))
    width = len(spans)
    buckets = []
    for b, (key, lo, hi, open_from) in enumerate(spans):
        head: dict[str, Any] = {"key": key if key is not None else
                                ("*" if open_from else java_double(lo)) + "-"
                                + ("*" if np.isinf(hi) else java_double(hi))}
        head["from"] = lo
        if not np.isinf(hi):
            head["to"] = hi
        row = None if owner is None else owner * width + b
        count = 0 if row is None or res is None or res.counts is None else int(res.counts[row])
        buckets.append(_bucket(head, count, node, res, row, ctx))
    if node.params.get("keyed"):
        return {"buckets": {bk["key"]: {k: v for k, v in bk.items() if k != "key"}
                            for bk in buckets}}
    return {"buckets": buckets}


def _grid(node: Any, res: Result | None, owner: int | None, ctx: Any) -> dict[str, Any]:
    if res is None or owner is None or res.owner is None or res.keys is None:
        return {"buckets": []}
    a, b = res.rows_of(owner)
    keys = res.keys[a:b].astype(np.int64)
    counts = res.counts[a:b] if res.counts is not None else np.zeros(0, np.int64)
    order = np.lexsort((-keys, -counts))[: node.params["_size"]]
    ctx.spend(len(order))
    precision = node.params["_precision"]
    name = geohash_string if node.type == "geohash_grid" else tile_string
    return {"buckets": [_bucket({"key": name(int(keys[i]), precision)}, int(counts[i]), node,
                                res, a + int(i), ctx) for i in order]}
