"""``geo_point`` values: every input format Elasticsearch accepts, parsed to ``(lat, lon)``.

A point is kept as two float64 doc-value columns (``segment.py``: the field's own column holds
the latitudes, ``path + LON_SUFFIX`` the longitudes), so nothing per point stays in Python.
Formats (ES's ``GeoUtils.parseGeoPoint``): ``{"lat", "lon"}``, ``"lat,lon"``, a geohash,
``[lon, lat]`` (or ``[lon, lat, z]``), WKT ``POINT (lon lat)``, GeoJSON ``{"type": "Point",
"coordinates": [lon, lat]}``.
"""
from __future__ import annotations

import re
from typing import Any

LON_SUFFIX = "\x00lon"          # the longitude column's name after the field's path
_BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"
_WKT = re.compile(r"^\s*POINT\s*\(\s*(\S+)\s+(\S+)(?:\s+(\S+))?\s*\)\s*$", re.IGNORECASE)


class GeoValueError(ValueError):
    """A value that is no point (the message is Elasticsearch's)."""


def parse_point(value: Any, ignore_z: bool = True) -> tuple[float, float]:
    """``(lat, lon)`` of one point value, any format; ``GeoValueError`` with ES's text."""
    if isinstance(value, dict):
        return _from_object(value, ignore_z)
    if isinstance(value, (list, tuple)):
        return _from_array(list(value), ignore_z)
    if isinstance(value, str):
        return _from_string(value, ignore_z)
    raise GeoValueError("geo_point expected")


def is_point_array(value: Any) -> bool:
    """``[lon, lat]`` (numbers): one point, not an array of points."""
    return isinstance(value, list) and 2 <= len(value) <= 3 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)


def check_range(lat: float, lon: float) -> None:
    """Latitude in [-90, 90], longitude in [-180, 180], as ``ignore_malformed: false`` wants."""
    if not -90.0 <= lat <= 90.0:
        raise GeoValueError(f"illegal latitude value [{_java(lat)}]")
    if not -180.0 <= lon <= 180.0:
        raise GeoValueError(f"illegal longitude value [{_java(lon)}]")


def _from_object(obj: dict[str, Any], ignore_z: bool) -> tuple[float, float]:
    if "type" in obj or "coordinates" in obj:
        if str(obj.get("type", "")).lower() != "point":
            raise GeoValueError("[type] for geo_point can only be 'Point'")
        coords = obj.get("coordinates")
        if not isinstance(coords, list):
            raise GeoValueError("[coordinates] must be an array of numbers")
        return _from_array(coords, ignore_z)
    extra = set(obj) - {"lat", "lon", "z"}
    if extra:
        raise GeoValueError("field must be either [lat], [lon] or [z]")
    if "lat" not in obj:
        raise GeoValueError("field [lat] missing")
    if "lon" not in obj:
        raise GeoValueError("field [lon] missing")
    if "z" in obj:
        _z(obj["z"], ignore_z)
    return _number(obj["lat"], "lat"), _number(obj["lon"], "lon")


def _from_array(arr: list[Any], ignore_z: bool) -> tuple[float, float]:
    if not 2 <= len(arr) <= 3 or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                         for v in arr):
        raise GeoValueError("[geo_point] field type does not accept more than 3 values"
                            if len(arr) > 3 else "geo_point expected")
    if len(arr) == 3:
        _z(arr[2], ignore_z)
    return float(arr[1]), float(arr[0])


def _from_string(text: str, ignore_z: bool) -> tuple[float, float]:
    m = _WKT.match(text)
    if m:
        if m.group(3) is not None:
            _z(m.group(3), ignore_z)
        return _float(m.group(2), text), _float(m.group(1), text)
    if "," in text:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) > 3:
            raise GeoValueError(f"failed to parse [{text}], expected 2 or 3 coordinates but "
                                f"found: [{len(parts)}]")
        if len(parts) == 3:
            _z(parts[2], ignore_z)
        return _float(parts[0], text), _float(parts[1], text)
    return decode_geohash(text)


def decode_geohash(text: str) -> tuple[float, float]:
    """The south-west corner of a geohash's cell, as Elasticsearch's
    ``GeoPoint.resetFromGeoHash`` (``Geohash.decodeLatitude``: the cell's lowest encoded
    value)."""
    if not text or len(text) > 12 or any(c not in _BASE32 for c in text):
        raise GeoValueError(f"unsupported symbol [{_bad_symbol(text)}] in geohash [{text}]")
    lat_lo, lat_hi, lon_lo, lon_hi = -90.0, 90.0, -180.0, 180.0
    even = True
    for c in text:
        bits = _BASE32.index(c)
        for shift in range(4, -1, -1):
            bit = (bits >> shift) & 1
            if even:
                mid = (lon_lo + lon_hi) / 2
                lon_lo, lon_hi = (mid, lon_hi) if bit else (lon_lo, mid)
            else:
                mid = (lat_lo + lat_hi) / 2
                lat_lo, lat_hi = (mid, lat_hi) if bit else (lat_lo, mid)
            even = not even
    return lat_lo, lon_lo


def _bad_symbol(text: str) -> str:
    return next((c for c in text if c not in _BASE32), text[12:13] or text)


def _z(value: Any, ignore_z: bool) -> None:
    if not ignore_z:
        raise GeoValueError(f"Exception parsing coordinates: found Z value [{value}] but "
                            "[ignore_z_value] parameter is [false]")


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise GeoValueError(f"[{name}] must be a number")
    try:
        return float(value)
    except ValueError:
        raise GeoValueError(f"[{name}] must be a valid double value") from None


def _float(text: str, whole: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise GeoValueError(f"failed to parse [{whole}]") from None


def _java(x: float) -> str:
    return repr(float(x)) if abs(x) < 1e7 else f"{x:E}"


def point_values(value: Any, ignore_z: bool, ignore_malformed: bool) -> list[tuple[float, float]]:
    """The points of one field value in a document (a point, or an array of points); a bad
    one raises ``GeoValueError`` or, ``ignore_malformed``, is dropped."""
    items = [value] if not isinstance(value, list) or is_point_array(value) else value
    out: list[tuple[float, float]] = []
    for item in items:
        if item is None:
            continue
        try:
            lat, lon = parse_point(item, ignore_z)
            check_range(lat, lon)
        except GeoValueError:
            if ignore_malformed:
                continue
            raise
        out.append((lat, lon))
    return out


def geojson_points(value: Any, ft: Any) -> list[dict[str, Any]]:
    """A ``_source`` value of a ``geo_point`` field as Elasticsearch's ``fields`` shows it:
    ``{"type": "Point", "coordinates": [lon, lat]}`` per valid point (bad ones were ignored
    at indexing, so they are not shown)."""
    try:
        points = point_values(value, True, True)
    except GeoValueError:
        return []
    return [{"type": "Point", "coordinates": [lon, lat]} for lat, lon in points]
