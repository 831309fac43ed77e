"""Grid cells of points: geohashes and map tiles, computed over NumPy columns.

A geohash is the top ``5 * precision`` bits of the point's interleaved 32-bit encodings
(longitude first), as Lucene's ``Geohash.longEncode``; a tile is ``z/x/y`` of the Web-Mercator
grid at zoom ``z`` (Elasticsearch's ``GeoTileUtils``). Both are computed as integer codes per
point; strings are built only for the distinct cells that leave a shard.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import IllegalArgument
from .geo import decode_geohash
from .geo_measure import encode_lat, encode_lon, parse_distance

BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"
MAX_GEOHASH = 12
MAX_ZOOM = 29
_SEMI_MAJOR = 6378137.0
_SEMI_MINOR = 6356752.314245
_EQUATOR = 2 * math.pi * _SEMI_MAJOR
_POLAR = math.pi * _SEMI_MINOR


def geohash_codes(lats: np.ndarray, lons: np.ndarray, precision: int) -> np.ndarray:
    """int64 code per point: the geohash's ``5 * precision`` bits (O(bits) NumPy passes)."""
    ulat = encode_lat(lats) + (1 << 31)
    ulon = encode_lon(lons) + (1 << 31)
    code = np.zeros(len(lats), dtype=np.int64)
    for i in range(5 * precision):
        src = ulon if i % 2 == 0 else ulat
        code = (code << 1) | ((src >> (31 - i // 2)) & 1)
    return code


def geohash_string(code: int, precision: int) -> str:
    """The base-32 spelling of a code from :func:`geohash_codes`."""
    return "".join(BASE32[(code >> (5 * (precision - 1 - i))) & 31] for i in range(precision))


def geohash_bounds(text: str) -> tuple[float, float, float, float]:
    """``(top, left, bottom, right)`` of a geohash's cell."""
    lat, lon = decode_geohash(text)           # the south-west corner
    bits = 5 * len(text)
    lon_bits, lat_bits = (bits + 1) // 2, bits // 2
    height, width = 180.0 / 2 ** lat_bits, 360.0 / 2 ** lon_bits
    return lat + height, lon, lat, lon + width


def tile_codes(lats: np.ndarray, lons: np.ndarray, zoom: int) -> np.ndarray:
    """int64 code ``x << 32 | y`` per point at ``zoom`` (``GeoTileUtils.getXTile/getYTile``)."""
    tiles = 1 << zoom
    x = np.floor((lons + 180.0) / 360.0 * tiles)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.sin(np.radians(lats))
        y = np.floor((0.5 - np.log((1 + s) / (1 - s)) / (4 * math.pi)) * tiles)
    y = np.nan_to_num(y, nan=0.0, posinf=tiles - 1, neginf=0.0)
    x = np.clip(x, 0, tiles - 1).astype(np.int64)
    y = np.clip(y, 0, tiles - 1).astype(np.int64)
    return (x << 32) | y


def tile_string(code: int, zoom: int) -> str:
    return f"{zoom}/{code >> 32}/{code & 0xFFFFFFFF}"


def geohash_precision(value: Any) -> int:
    """``precision`` of ``geohash_grid``: 1..12, or a distance (``"5km"``) made a level as
    ``GeoUtils.parsePrecision`` / ``geoHashLevelsForPrecision`` do."""
    if isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
        level = _levels_for(parse_distance(value))
        if level > MAX_GEOHASH:
            raise IllegalArgument(f"precision too high [{value}]")
        return level
    p = _int(value, "precision")
    if not 1 <= p <= MAX_GEOHASH:
        raise IllegalArgument(f"Invalid geohash aggregation precision of {p}. Must be between "
                              "1 and 12.")
    return p


def _levels_for(meters: float) -> int:
    """The fewest geohash levels whose cells are no wider than ``meters`` (diagonal)."""
    if meters <= 0:
        return 24                     # GeohashPrefixTree.getMaxLevelsPossible()
    width = math.sqrt(meters * meters / (1 + _POLAR / _EQUATOR) ** 2)
    part = math.ceil(_EQUATOR / width)
    if part == 1:
        return 1
    bits = math.ceil(math.log(part) / math.log(2))
    full, left = bits // 5, bits % 5
    return (full + (left > 0)) + (full + (left > 3))


def tile_precision(value: Any) -> int:
    p = _int(value, "precision")
    if not 0 <= p <= MAX_ZOOM:
        raise IllegalArgument(f"Invalid geotile_grid precision of {p}. Must be between 0 and "
                              "29.")
    return p


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise IllegalArgument(f"[{name}] must be a number")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise IllegalArgument(f"For input string: \"{value}\"",
                              es_type="number_format_exception") from None


__all__ = ["geohash_bounds", "geohash_codes", "geohash_precision",
           "geohash_string", "tile_codes", "tile_precision", "tile_string"]
