"""Run the geo queries over a segment's point columns (quantized as Lucene stores them).

A document matches when any of its points does (multi-valued fields). Costs: O(p) NumPy work
for p points of the field in the segment (a polygon: O(p * edges)). Scores are constant
(``boost``), as Lucene's point queries are.
"""
from __future__ import annotations

import numpy as np

from ...errors import IllegalArgument
from ..geo_measure import arc_distance, encode_lat, encode_lat_ceil, encode_lon, \
    encode_lon_ceil, normalize, points
from ..segment import Segment
from .context import Context
from .geo_queries import GeoBoundingBox, GeoDistance, GeoPolygon

_NAMES = {GeoDistance: "geo_distance", GeoBoundingBox: "geo_bounding_box",
          GeoPolygon: "geo_polygon"}


def geo_field(q: GeoDistance | GeoBoundingBox | GeoPolygon, ctx: Context) -> bool:
    """Whether to run the query: False for an unmapped field with ``ignore_unmapped``; the
    errors of ``doToQuery`` for an unmapped or non-geo field, or a point out of range."""
    ft = ctx.mapping.get(q.field)
    name = _NAMES[type(q)]
    if ft is None:
        if q.ignore_unmapped:
            return False
        raise IllegalArgument(f"failed to find geo field [{q.field}]",
                              es_type="query_shard_exception")
    if ft.type != "geo_point":
        raise IllegalArgument(f"Field [{q.field}] is of unsupported type [{ft.type}] for "
                              f"[{name}] query", es_type="query_shard_exception")
    if q.validation == "STRICT":
        _check_strict(q, name)
    elif q.validation == "IGNORE_MALFORMED":     # not coerced: Lucene's own checks refuse
        _check_lucene(q)
    return True


def _check_lucene(q: GeoDistance | GeoBoundingBox | GeoPolygon) -> None:
    """``GeoUtils.checkLatitude`` / ``checkLongitude`` as Lucene's query factories run them."""
    if isinstance(q, GeoBoundingBox):
        pts = [(q.bottom, q.left), (q.top, q.right)]
    else:
        pts = [(q.lat, q.lon)] if isinstance(q, GeoDistance) else list(q.points)
    for lat, lon in pts:
        for what, v, lim in (("latitude", lat, 90.0), ("longitude", lon, 180.0)):
            if not -lim <= v <= lim:
                reason = f"invalid {what} {_j(v)}; must be between {-lim} and {lim}"
                raise IllegalArgument(f"failed to create query: {reason}",
                                      es_type="query_shard_exception",
                                      caused_by={"type": "illegal_argument_exception",
                                                 "reason": reason})


def _check_strict(q: GeoDistance | GeoBoundingBox | GeoPolygon, name: str) -> None:
    """``checkLatLon``: every bad coordinate in one validation error."""
    if isinstance(q, GeoBoundingBox):
        bad = [f"{label} is invalid: {_j(v)}" for label, v, lim in (
            ("top latitude", q.top, 90), ("left longitude", q.left, 180),
            ("bottom latitude", q.bottom, 90), ("right longitude", q.right, 180))
            if not -lim <= v <= lim]
    elif isinstance(q, GeoDistance):
        bad = _point_errors(q.lat, q.lon, name)
    else:
        bad = []
        for lat, lon in q.points:
            bad += _point_errors(lat, lon, name)
        if bad:     # ``geo_polygon`` reports its first bad point itself
            raise IllegalArgument(bad[0], es_type="query_shard_exception")
    if bad:
        raise IllegalArgument(
            "couldn't validate latitude/ longitude values", es_type="query_shard_exception",
            caused_by={"type": "query_validation_exception", "reason": "Validation Failed: "
                       + "".join(f"{i}: {b};" for i, b in enumerate(bad, 1))})


def _point_errors(lat: float, lon: float, name: str) -> list[str]:
    out = []
    if not -90 <= lat <= 90:
        out.append(f"illegal latitude value [{_j(lat)}] for [{name}]")
    if not -180 <= lon <= 180:
        out.append(f"illegal longitude value [{_j(lon)}] for [{name}]")
    return out


def _j(x: float) -> str:
    return repr(float(x))


def _mask(seg: Segment, docs: np.ndarray, hit: np.ndarray) -> np.ndarray:
    out = np.zeros(seg.n, dtype=bool)
    out[docs[hit]] = True
    return out


def distance_mask(q: GeoDistance, seg: Segment) -> np.ndarray:
    """``LatLonPoint.newDistanceQuery``: haversine distance <= the radius."""
    lat, lon = normalize(q.lat, q.lon) if q.validation == "COERCE" else (q.lat, q.lon)
    docs, lats, lons = points(seg, q.field)
    return _mask(seg, docs, arc_distance(lat, lon, lats, lons) <= q.meters)


def box_mask(q: GeoBoundingBox, seg: Segment) -> np.ndarray:
    """``LatLonPoint.newBoxQuery`` on the encoded integers: the lower corner rounded up, the
    upper one down; a box whose left is east of its right crosses the dateline."""
    top, left, bottom, right = q.top, q.left, q.bottom, q.right
    if q.validation == "COERCE":
        full = (right - left) % 360 == 0 and right > left
        top, left = normalize(top, left) if not full else (normalize(top, 0)[0], -180.0)
        bottom, right = normalize(bottom, right) if not full else (normalize(bottom, 0)[0],
                                                                   180.0)
    docs, lats, lons = points(seg, q.field)
    if bottom == 90.0 or (left == 180.0 and right == 180.0):
        return np.zeros(seg.n, dtype=bool)
    if left == 180.0 and right < left:
        left = -180.0
    elat, elon = encode_lat(lats), encode_lon(lons)
    hit = (elat >= encode_lat_ceil(bottom)) & (elat <= int(encode_lat(np.array([top]))[0]))
    lo, hi = encode_lon_ceil(left), int(encode_lon(np.array([right]))[0])
    hit &= ((elon >= lo) | (elon <= hi)) if right < left else ((elon >= lo) & (elon <= hi))
    return _mask(seg, docs, hit)


def polygon_mask(q: GeoPolygon, seg: Segment) -> np.ndarray:
    """Even-odd crossing test of every point against the (closed) ring; a point on an edge
    counts as inside, as Lucene's ``Polygon2D``."""
    ring = [normalize(a, b) if q.validation == "COERCE" else (a, b) for a, b in q.points]
    if ring[0] != ring[-1]:
        ring.append(ring[0])
    docs, lats, lons = points(seg, q.field)
    inside = np.zeros(len(lats), dtype=bool)
    edge = np.zeros(len(lats), dtype=bool)
    for (y1, x1), (y2, x2) in zip(ring[:-1], ring[1:]):
        crosses = (y1 > lats) != (y2 > lats)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_at = x1 + (lats - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (lons < x_at)
        cross = (x2 - x1) * (lats - y1) - (y2 - y1) * (lons - x1)
        edge |= (np.abs(cross) <= 1e-12) & (lons >= min(x1, x2)) & (lons <= max(x1, x2)) \
            & (lats >= min(y1, y2)) & (lats <= max(y1, y2))
    return _mask(seg, docs, inside | edge)


def evaluate_geo(q: GeoDistance | GeoBoundingBox | GeoPolygon, seg: Segment,
                 ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, constant scores)`` of a geo query over the segment."""
    if not geo_field(q, ctx):
        return np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=np.float32)
    if isinstance(q, GeoDistance):
        mask = distance_mask(q, seg)
    elif isinstance(q, GeoBoundingBox):
        mask = box_mask(q, seg)
    else:
        mask = polygon_mask(q, seg)
    return mask, np.where(mask, np.float32(q.boost), np.float32(0)).astype(np.float32)


EVALUATORS = {GeoDistance: evaluate_geo, GeoBoundingBox: evaluate_geo,
              GeoPolygon: evaluate_geo}
