"""``geo_distance``, ``geo_bounding_box`` and ``geo_polygon``: their nodes and parsers.

Each parser mirrors Elasticsearch's ``fromXContent``: the one key that is not an option names
the field and holds the point (or the corners, or the points); a second such key is an error.
Points are read in every form Elasticsearch accepts (``geo.parse_point``); a geohash corner of
a box stands for its cell's corner, as in Elasticsearch. Range checks and ``COERCE`` happen
when the query runs (``geo_match.py``), as Elasticsearch does them in ``doToQuery``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import IllegalArgument, ParsingError
from ..geo import GeoValueError, parse_point
from ..geo_cells import geohash_bounds
from ..geo_measure import parse_distance, parse_distance_type, parse_unit
from .nodes import Query
from .parse_helpers import ParseState, bool_option, float_option, token_name

_VALIDATION = ("STRICT", "IGNORE_MALFORMED", "COERCE")
_BBOX = re.compile(r"^\s*BBOX\s*\(\s*([^,]+),([^,]+),([^,]+),([^,)]+)\)\s*$", re.IGNORECASE)
_COMMON = ("_name", "boost", "validation_method", "ignore_unmapped")


@dataclass(frozen=True)
class GeoDistance(Query):
    field: str = ""
    lat: float = 0.0
    lon: float = 0.0
    meters: float = 0.0
    validation: str = "STRICT"
    ignore_unmapped: bool = False


@dataclass(frozen=True)
class GeoBoundingBox(Query):
    field: str = ""
    top: float = 0.0
    left: float = 0.0
    bottom: float = 0.0
    right: float = 0.0
    validation: str = "STRICT"
    ignore_unmapped: bool = False


@dataclass(frozen=True)
class GeoPolygon(Query):
    field: str = ""
    points: tuple[tuple[float, float], ...] = ()     # (lat, lon)
    validation: str = "STRICT"
    ignore_unmapped: bool = False


GEO_QUERIES = (GeoDistance, GeoBoundingBox, GeoPolygon)


def point(value: Any) -> tuple[float, float]:
    """``(lat, lon)`` of a point in a query; Elasticsearch's ``parse_exception`` otherwise."""
    try:
        return parse_point(value)
    except GeoValueError as e:
        raise ParsingError(str(e), es_type="parse_exception") from None


def _common(name: str, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "boost" in body:
        out["boost"] = float_option(name, "boost", body["boost"])
    if "ignore_unmapped" in body:
        out["ignore_unmapped"] = bool_option(name, "ignore_unmapped", body["ignore_unmapped"])
    if "validation_method" in body:
        method = str(body["validation_method"]).upper()
        if method not in _VALIDATION:
            raise IllegalArgument(f"No enum constant org.elasticsearch.index.query."
                                  f"GeoValidationMethod.{body['validation_method']}")
        out["validation"] = method
    return out


def _field(name: str, body: dict[str, Any], options: tuple[str, ...]) -> tuple[str, Any]:
    field: str | None = None
    for key in body:
        if key in options:
            continue
        if field is not None:
            raise ParsingError(f"[{name}] query doesn't support multiple fields, found "
                               f"[{field}] and [{key}]")
        field = key
    if field is None:
        raise IllegalArgument(f"[{name}] requires a field")   # as ES: no field, no query
    return field, body[field]


def parse_geo_distance(body: dict[str, Any], st: ParseState) -> Query:
    """``{"distance": "12km", "<field>": <point>, "distance_type", "unit", ...}``."""
    options = _COMMON + ("distance", "distance_type", "unit")
    field, value = _field("geo_distance", body, options)
    if "distance" not in body:
        raise ParsingError("geo_distance requires 'distance' to be specified")
    unit = parse_unit(body["unit"]) if "unit" in body else "m"
    if "distance_type" in body:        # checked; the query itself is always arc (as ES 8)
        parse_distance_type(body["distance_type"])
    meters = parse_distance(body["distance"], unit)
    if not meters > 0:
        raise IllegalArgument("distance must be greater than zero")
    lat, lon = point(value)
    return GeoDistance(field=field, lat=lat, lon=lon, meters=meters,
                       **_common("geo_distance", body))


def parse_geo_bounding_box(body: dict[str, Any], st: ParseState) -> Query:
    """``{"<field>": {corners}, ...}``: ``top_left``/``bottom_right``,
    ``top_right``/``bottom_left``, ``top``/``left``/``bottom``/``right``, or ``wkt``."""
    field, value = _field("geo_bounding_box", body, _COMMON + ("type",))
    if "type" in body and str(body["type"]) not in ("memory", "indexed"):
        raise IllegalArgument(f"failed to parse [type]: [{body['type']}] is not one of "
                              "[memory, indexed]")
    if not isinstance(value, dict):
        raise ParsingError(f"[geo_bbox] query does not support [{field}]" if
                           not isinstance(value, list) else
                           f"[geo_bbox] unexpected token [{token_name(value)}]")
    top, left, bottom, right = box_corners(value)
    _check_corners(top, left, bottom, right)
    return GeoBoundingBox(field=field, top=top, left=left, bottom=bottom, right=right,
                          **_common("geo_bounding_box", body))


def _check_corners(top: float, left: float, bottom: float, right: float) -> None:
    """``setCorners``: always checked (before ``validation_method`` is read), as in ES."""
    if top < bottom:
        raise IllegalArgument(f"top is below bottom corner: {top!r} vs. {bottom!r}")
    if top == bottom:
        raise IllegalArgument(f"top cannot be the same as bottom: {top!r} == {bottom!r}")
    if left == right:
        raise IllegalArgument(f"left cannot be the same as right: {left!r} == {right!r}")


def box_corners(spec: dict[str, Any]) -> tuple[float, float, float, float]:
    """``(top, left, bottom, right)`` of a bounding box object (``GeoBoundingBox.parse``);
    also ``geohash_grid``'s and ``geotile_grid``'s ``bounds``."""
    nan = float("nan")
    t = l_ = b = r = nan
    for key, v in spec.items():
        if key == "wkt":
            m = _BBOX.match(str(v))
            if not m:
                raise ParsingError(f"failed to parse WKT bounding box [{v}]",
                                   es_type="parse_exception")
            l_, r, t, b = (float(g) for g in m.groups())
        elif key in ("top", "bottom", "left", "right"):
            x = float_option("geo_bounding_box", key, v)
            t, b, l_, r = (x if key == "top" else t, x if key == "bottom" else b,
                           x if key == "left" else l_, x if key == "right" else r)
        elif key in ("top_left", "bottom_right", "top_right", "bottom_left"):
            lat, lon = _corner(v, key)
            if key.startswith("top"):
                t = lat
            else:
                b = lat
            if key.endswith("left"):
                l_ = lon
            else:
                r = lon
        else:
            raise ParsingError(f"failed to parse bounding box. unexpected field [{key}]",
                               es_type="parse_exception")
    for label, x in (("top latitude", t), ("left longitude", l_), ("bottom latitude", b),
                     ("right longitude", r)):
        if x != x:      # a corner not given: ``setCorners`` names the first one missing
            raise IllegalArgument(f"{label} is invalid: NaN")
    return t, l_, b, r


def _corner(value: Any, key: str) -> tuple[float, float]:
    """A corner; a geohash is its cell, of which the corner named by ``key`` counts."""
    if isinstance(value, str) and "," not in value and "(" not in value:
        try:
            top, left, bottom, right = geohash_bounds(value)
        except GeoValueError as e:
            raise ParsingError(str(e), es_type="parse_exception") from None
        return (top if key.startswith("top") else bottom,
                left if key.endswith("left") else right)
    return point(value)


def parse_geo_polygon(body: dict[str, Any], st: ParseState) -> Query:
    """``{"<field>": {"points": [p, p, p, ...]}, ...}`` (OpenSearch keeps this query)."""
    field, value = _field("geo_polygon", body, _COMMON)
    if not isinstance(value, dict) or set(value) != {"points"} \
            or not isinstance(value["points"], list):
        raise ParsingError("[geo_polygon] query does not support [" +
                           next((k for k in (value if isinstance(value, dict) else {})
                                 if k != "points"), field) + "]")
    pts = tuple(point(p) for p in value["points"])
    if len(pts) < 3:
        raise IllegalArgument("too few points defined for geo_polygon query")
    if len(pts) > 10_000:
        raise IllegalArgument("[geo_polygon] allows at most 10000 points")
    return GeoPolygon(field=field, points=pts, **_common("geo_polygon", body))


PARSERS = {"geo_distance": parse_geo_distance, "geo_bounding_box": parse_geo_bounding_box,
           "geo_polygon": parse_geo_polygon}
