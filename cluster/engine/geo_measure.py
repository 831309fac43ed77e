"""Distances between points as Elasticsearch measures them, over NumPy columns.

Lucene indexes a point's latitude and longitude as 32-bit integers
(``GeoEncodingUtils.encodeLatitude``: ``floor(lat / (180 / 2^32))``), and its doc values hold the
same integers: every query, sort and aggregation sees the *quantized* point
(:func:`quantize_lat`, :func:`quantize_lon`), so a point exactly on a boundary falls where
Lucene puts it. Distances are ``GeoUtils.arcDistance`` (haversine on a sphere of radius
6371008.7714 m, Lucene's ``SloppyMath.haversinMeters``) or ``planeDistance``.
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ..errors import IllegalArgument
from .geo import LON_SUFFIX
from .segment import NumericField, Segment

EARTH_MEAN_RADIUS = 6371008.7714
_LAT_DECODE = 180.0 / 2.0 ** 32
_LON_DECODE = 360.0 / 2.0 ** 32
_I32_MAX = 2 ** 31 - 1

#: ``DistanceUnit``: every spelling Elasticsearch accepts -> meters per unit
UNITS: dict[str, float] = {}
for _names, _meters in ((("in", "inch"), 0.0254), (("yd", "yards"), 0.9144),
                        (("ft", "feet"), 0.3048), (("km", "kilometers"), 1000.0),
                        (("NM", "nmi", "nauticalmiles"), 1852.0),
                        (("mm", "millimeters"), 0.001), (("cm", "centimeters"), 0.01),
                        (("mi", "miles"), 1609.344), (("m", "meters"), 1.0)):
    for _n in _names:
        UNITS[_n] = _meters
# longest suffix first, so "nmi" is not read as "mi" and "mm" not as "m"
_SUFFIXES = sorted(UNITS, key=len, reverse=True)
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def encode_lat(lat: np.ndarray) -> np.ndarray:
    """``GeoEncodingUtils.encodeLatitude``: int64 in [-2^31, 2^31 - 1]."""
    return np.minimum(np.floor(np.asarray(lat, dtype=np.float64) / _LAT_DECODE),
                      _I32_MAX).astype(np.int64)


def encode_lon(lon: np.ndarray) -> np.ndarray:
    """``GeoEncodingUtils.encodeLongitude``."""
    return np.minimum(np.floor(np.asarray(lon, dtype=np.float64) / _LON_DECODE),
                      _I32_MAX).astype(np.int64)


def encode_lat_ceil(lat: float) -> int:
    """``encodeLatitudeCeil``: the smallest encoded value whose decoded latitude is >= lat."""
    return int(min(np.ceil(lat / _LAT_DECODE), _I32_MAX))


def encode_lon_ceil(lon: float) -> int:
    return int(min(np.ceil(lon / _LON_DECODE), _I32_MAX))


def quantize_lat(lat: np.ndarray) -> np.ndarray:
    """A latitude as Lucene stores it (decoded from its 32-bit integer)."""
    return encode_lat(lat).astype(np.float64) * _LAT_DECODE


def quantize_lon(lon: np.ndarray) -> np.ndarray:
    return encode_lon(lon).astype(np.float64) * _LON_DECODE


def points(seg: Segment, field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(doc, lat, lon)`` of every point of ``field`` in ``seg`` (quantized; a document with
    several points has several rows, in document order)."""
    lat_fd = seg.fields.get(field)
    lon_fd = seg.fields.get(field + LON_SUFFIX)
    if not isinstance(lat_fd, NumericField) or not isinstance(lon_fd, NumericField):
        empty = np.zeros(0, dtype=np.float64)
        return np.zeros(0, dtype=np.intp), empty, empty
    docs = lat_fd.value_docs.astype(np.intp)
    lats, lons = quantize_lat(lat_fd.values), quantize_lon(lon_fd.values)
    if len(docs) > 1 and bool((docs[1:] < docs[:-1]).any()):    # keep document order
        order = np.argsort(docs, kind="stable")
        docs, lats, lons = docs[order], lats[order], lons[order]
    return docs, lats, lons


def arc_distance(lat: float, lon: float, lats: np.ndarray, lons: np.ndarray) -> np.ndarray:
    """Meters from ``(lat, lon)`` to each point: ``GeoUtils.arcDistance`` (haversine)."""
    x1 = np.radians(lat)
    x2 = np.radians(lats)
    h1 = 1.0 - np.cos(x1 - x2)
    h2 = 1.0 - np.cos(np.radians(lon - lons))
    h = (h1 + np.cos(x1) * np.cos(x2) * h2) / 2.0
    return EARTH_MEAN_RADIUS * 2.0 * np.arcsin(np.minimum(1.0, np.sqrt(h)))


def plane_distance(lat: float, lon: float, lats: np.ndarray, lons: np.ndarray) -> np.ndarray:
    """``GeoUtils.planeDistance``: equirectangular, fast and inaccurate far away."""
    x = np.radians(lons - lon) * np.cos(np.radians((lats + lat) / 2.0))
    y = np.radians(lats - lat)
    return np.sqrt(x * x + y * y) * EARTH_MEAN_RADIUS


def distance(kind: str, lat: float, lon: float, lats: np.ndarray,
             lons: np.ndarray) -> np.ndarray:
    """Meters by ``distance_type`` (``arc`` or ``plane``)."""
    fn = plane_distance if kind == "plane" else arc_distance
    return fn(lat, lon, lats, lons)


def parse_unit(value: Any) -> str:
    """A ``unit`` option; Elasticsearch's error for an unknown one."""
    if isinstance(value, str) and value in UNITS:
        return value
    raise IllegalArgument(f"No distance unit match [{value}]")


def parse_distance(value: Any, default_unit: str = "m") -> float:
    """A distance (``"12km"``, ``"1.5mi"``, ``200``) in meters, as ``DistanceUnit.parse``."""
    if isinstance(value, bool):
        raise IllegalArgument(f"failed to parse [{value}]")
    if isinstance(value, (int, float)):
        return float(value) * UNITS[default_unit]
    text = str(value).strip()
    unit = next((u for u in _SUFFIXES if text.endswith(u)), None)
    number = text[: -len(unit)].strip() if unit else text
    if not _NUMBER.match(number):
        raise IllegalArgument(f"failed to parse [{text}]" if unit else
                              f"For input string: \"{text}\"",
                              es_type="number_format_exception" if not unit else None)
    return float(number) * UNITS[unit or default_unit]


def parse_distance_type(value: Any) -> str:
    """``distance_type``: ``arc`` or ``plane`` (``GeoDistance.fromString``)."""
    text = str(value).lower()
    if text not in ("arc", "plane"):
        raise IllegalArgument(f"No geo distance for [{value}]")
    return text


def normalize(lat: float, lon: float) -> tuple[float, float]:
    """``GeoUtils.normalizePoint``: a latitude past a pole folds back (and the longitude turns
    half way round); longitudes wrap into (-180, 180]."""
    shift = 0
    lat = _centered(lat, 360.0)
    if lat < -90:
        lat, shift = -180 - lat, 1
    elif lat > 90:
        lat, shift = 180 - lat, 1
    return lat, _centered(lon + shift * 180, 360.0)


def _centered(x: float, divisor: float) -> float:
    r = math.fmod(x, divisor)
    if r <= 0:
        r += divisor
    if r > divisor / 2:
        r -= divisor
    return r
