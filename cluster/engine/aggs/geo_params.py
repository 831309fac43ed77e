"""Parse-time rules of the geo aggregations (their builders' validation in Elasticsearch).

Each check leaves the parsed values in the node's params under ``_``-prefixed keys (the
origin, the precision, the bounds, the ranges in the unit), so the shards and the
coordinator read them without parsing again.
"""
from __future__ import annotations

import math
from typing import Any

from ...errors import IllegalArgument, ParsingError, XContentParseError
from ..geo_cells import geohash_precision, tile_precision
from ..geo_measure import parse_distance_type, parse_unit
from ..query.geo_queries import box_corners, point

GEO_PARAMS: dict[str, set[str]] = {
    "geo_distance": {"field", "origin", "point", "center", "ranges", "unit", "distance_type",
                     "keyed"},
    "geohash_grid": {"field", "precision", "size", "shard_size", "bounds"},
    "geotile_grid": {"field", "precision", "size", "shard_size", "bounds"},
    "geo_bounds": {"field", "wrap_longitude"},
    "geo_centroid": {"field"},
}
GEO_METRICS = {"geo_bounds", "geo_centroid"}


def check_geo_agg(p: dict[str, Any], kind: str, name: str) -> None:
    """Validate a geo aggregation's params in place (see the module docstring)."""
    if "field" not in p:
        raise IllegalArgument("Required one of fields [field, script], but none were "
                              "specified. ")
    if kind == "geo_distance":
        _distance(p, name)
    elif kind in ("geohash_grid", "geotile_grid"):
        _grid(p, kind, name)
    elif kind == "geo_bounds":
        wrap = p.get("wrap_longitude", True)
        if not isinstance(wrap, bool) and wrap not in ("true", "false"):
            raise XContentParseError("[1:1] [geo_bounds] failed to parse field "
                                     "[wrap_longitude]")
        p["_wrap"] = wrap in (True, "true")


def _distance(p: dict[str, Any], name: str) -> None:
    origins = [k for k in ("origin", "point", "center") if k in p]
    if not origins:
        raise IllegalArgument(f"Missing [origin] in geo_distance aggregator [{name}]")
    p["_origin"] = point(p[origins[0]])
    p["_unit"] = parse_unit(p.get("unit", "m"))
    p["_distance_type"] = parse_distance_type(p.get("distance_type", "arc"))
    ranges = p.get("ranges")
    if not isinstance(ranges, list) or not ranges:
        raise IllegalArgument(f"No [ranges] specified for the [{name}] aggregation")
    spans = []
    for r in ranges:
        if not isinstance(r, dict) or set(r) - {"from", "to", "key"}:
            bad = sorted(set(r) - {"from", "to", "key"}) if isinstance(r, dict) else [r]
            raise XContentParseError(f"[1:1] [range] unknown field [{bad[0]}]")
        lo = _bound(r.get("from"), 0.0)
        hi = _bound(r.get("to"), math.inf)
        spans.append((r.get("key"), lo, hi, r.get("from") is None))
    p["_spans"] = spans


def _bound(value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool):
        raise ParsingError(f"[from] and [to] must be numbers, found [{value}]")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise IllegalArgument(f"For input string: \"{value}\"",
                              es_type="number_format_exception") from None


def _grid(p: dict[str, Any], kind: str, name: str) -> None:
    if kind == "geohash_grid":
        p["_precision"] = geohash_precision(p.get("precision", 5))
    else:
        p["_precision"] = tile_precision(p.get("precision", 7))
    for key in ("size", "shard_size"):
        v = p.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            raise XContentParseError(f"[1:1] [{kind}] failed to parse field [{key}]")
        if v < (-1 if key == "shard_size" else 1):
            raise IllegalArgument(f"[{key}] must be greater than 0. Found [{v}] in [{name}]")
    p["_size"] = int(p.get("size", 10_000))     # bounded by search.max_buckets at render
    bounds = p.get("bounds")
    if bounds is not None:
        if not isinstance(bounds, dict):
            raise ParsingError(f"[{kind}] bounds must be an object")
        p["_bounds"] = box_corners(bounds)
