"""Geo aggregations on a shard: ``geo_bounds``, ``geo_centroid`` (per owner), ``geo_distance``
(fixed range buckets), ``geohash_grid`` and ``geotile_grid`` (keyed by the cell's integer code).

Every point of a multi-valued field counts; a document counts once per bucket. All of it is
NumPy over the rows' points: O(p) for p points (a grid: O(p * bits) to build the codes).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import IllegalArgument
from ..geo_cells import geohash_codes, tile_codes
from ..geo_measure import UNITS, distance, encode_lat, encode_lon, points
from .bucket import _fixed, _keyed
from .collect import COLLECTORS, Rows, ShardView, concat
from .parse import AggNode
from .partials import GeoStats, Keyed


def _mapped(node: AggNode, view: ShardView) -> bool:
    """False for an unmapped field (no values); a non-geo field refuses, as in ES."""
    ft = view.mapping.get(node.field or "")
    if ft is None:
        return False
    if ft.type != "geo_point":
        raise IllegalArgument(f"Field [{node.field}] of type [{ft.type}] is not supported for "
                              f"aggregation [{node.type}]")
    return True


def row_points(view: ShardView, rows: Rows, field: str, si: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, lat, lon)`` of every point of segment ``si``'s rows (a row per point)."""
    pdocs, lats, lons = points(view.segments[si], field)
    docs = rows.docs[si]
    starts = np.searchsorted(pdocs, docs, "left")
    counts = np.searchsorted(pdocs, docs, "right") - starts
    row = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    idx = np.arange(len(row), dtype=np.int64) - first + np.repeat(starts, counts)
    return row, lats[idx], lons[idx]


def _each(node: AggNode, view: ShardView, rows: Rows) -> list[tuple[np.ndarray, np.ndarray,
                                                                     np.ndarray]]:
    if not _mapped(node, view):
        empty = np.zeros(0)
        return [(np.zeros(0, dtype=np.int64), empty, empty) for _ in view.segments]
    return [row_points(view, rows, node.field or "", si) for si in range(len(view.segments))]


def geo_stats(node: AggNode, view: ShardView, rows: Rows) -> GeoStats:
    """``geo_bounds`` and ``geo_centroid``: the per-owner sums and extremes."""
    n = rows.n_owners
    out = GeoStats(np.zeros(n, dtype=np.int64), np.zeros((n, 2), dtype=np.int64),
                   np.full((n, 3), -np.inf), np.full((n, 3), np.inf))
    for si, (row, lat, lon) in enumerate(_each(node, view, rows)):
        owner = rows.owner[si][row]
        np.add.at(out.count, owner, 1)
        np.add.at(out.sums[:, 0], owner, encode_lat(lat))
        np.add.at(out.sums[:, 1], owner, encode_lon(lon))
        np.maximum.at(out.maxs[:, 0], owner, lat)
        np.minimum.at(out.mins[:, 0], owner, lat)
        pos = lon >= 0
        np.maximum.at(out.maxs[:, 1], owner[pos], lon[pos])
        np.minimum.at(out.mins[:, 1], owner[pos], lon[pos])
        np.maximum.at(out.maxs[:, 2], owner[~pos], lon[~pos])
        np.minimum.at(out.mins[:, 2], owner[~pos], lon[~pos])
    return out


def geo_distance(node: AggNode, view: ShardView, rows: Rows) -> Any:
    """Range buckets over each point's distance to ``origin`` (in ``unit``): ``from``
    inclusive, ``to`` exclusive."""
    p = node.params
    lat0, lon0 = p["_origin"]
    spans = p["_spans"]
    offsets = np.cumsum([0] + [len(d) for d in rows.docs])
    g_rows, g_bucket = [], []
    for si, (row, lat, lon) in enumerate(_each(node, view, rows)):
        d = distance(p["_distance_type"], lat0, lon0, lat, lon) / UNITS[p["_unit"]]
        for b, (_, lo, hi, _) in enumerate(spans):
            sel = (d >= lo) & (d < hi)
            g_rows.append(row[sel] + offsets[si])
            g_bucket.append(np.full(int(sel.sum()), b, dtype=np.int64))
    return _fixed(node, view, rows, len(spans), concat(g_rows, np.int64),
                  concat(g_bucket, np.int64), offsets)


def in_bounds(bounds: tuple[float, float, float, float] | None, lat: np.ndarray,
              lon: np.ndarray) -> np.ndarray | None:
    """``GeoBoundingBox.pointInBounds`` (None: no bounds); left east of right crosses the
    dateline."""
    if bounds is None:
        return None
    top, left, bottom, right = bounds
    keep = (lat >= bottom) & (lat <= top)
    return keep & (((lon >= left) | (lon <= right)) if right < left
                   else ((lon >= left) & (lon <= right)))


def grid(node: AggNode, view: ShardView, rows: Rows) -> Keyed:
    """Cells keyed by their int64 code (strings are made at render, for the cut buckets)."""
    p = node.params
    precision = p["_precision"]
    encode = geohash_codes if node.type == "geohash_grid" else tile_codes
    given, keeps = [], []
    for row, lat, lon in _each(node, view, rows):
        given.append((row, encode(lat, lon, precision)))
        keeps.append(in_bounds(p.get("_bounds"), lat, lon))
    it = iter(keeps)
    return _keyed(node, view, rows, node.type, lambda v: (v, next(it)), given=given)


COLLECTORS.update({"geo_bounds": geo_stats, "geo_centroid": geo_stats,
                   "geo_distance": geo_distance, "geohash_grid": grid, "geotile_grid": grid})
