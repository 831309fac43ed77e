"""The ``_geo_distance`` sort: each document's distance to the given points, in ``unit``.

As Elasticsearch's ``GeoDistanceSortBuilder``: ``mode`` picks one of the distances of every
point of the document to every origin (``min`` ascending, ``max`` descending by default;
``avg``, ``median``); a document without a
point sorts as ``+Infinity`` (last ascending, first descending, as Elasticsearch). O(p * o) for
p points of the matches and o origins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import IllegalArgument, ParsingError
from .geo import GeoValueError, is_point_array, parse_point
from .geo_measure import UNITS, distance, normalize, parse_distance_type, parse_unit, points
from .mapping import Mapping

MAX_ORIGINS = 1000           # our bound: the sort's work is O(points × origins)
_OPTIONS = {"order", "unit", "distance_type", "mode", "ignore_unmapped", "validation_method"}


@dataclass(frozen=True)
class GeoSort:
    field: str
    origins: tuple[tuple[float, float], ...]     # (lat, lon)
    unit: str = "m"
    distance_type: str = "arc"
    ignore_unmapped: bool = False


def parse_geo_sort(opts: Any) -> dict[str, Any]:
    """The keyword arguments of a ``SortField`` for ``{"_geo_distance": {...}}``."""
    if not isinstance(opts, dict):
        raise ParsingError("[_geo_distance] malformed sort, expected an object")
    field: str | None = None
    for key in opts:
        if key in _OPTIONS:
            continue
        if key in ("nested", "nested_path", "nested_filter"):
            raise IllegalArgument(f"[_geo_distance] sort option [{key}] is not supported by "
                                  "this server")
        if field is not None:
            raise ParsingError(f"[_geo_distance] sort doesn't support multiple fields, found "
                               f"[{field}] and [{key}]")
        field = key
    if field is None:
        raise IllegalArgument("[_geo_distance] requires a field with the points to sort by")
    order = str(opts.get("order", "asc")).lower()
    if order not in ("asc", "desc"):
        raise ParsingError(f"[_geo_distance] sort order [{opts.get('order')}] must be asc or "
                           "desc")
    mode = opts.get("mode")
    if mode is not None and mode not in ("min", "max", "avg", "median"):
        raise IllegalArgument(f"sort_mode [{mode}] isn't supported for sorting by geo distance"
                              if mode == "sum" else f"Unknown MultiValueMode [{mode}]")
    method = str(opts.get("validation_method", "STRICT")).upper()
    if method not in ("STRICT", "IGNORE_MALFORMED", "COERCE"):
        raise IllegalArgument(f"No enum constant org.elasticsearch.index.query."
                              f"GeoValidationMethod.{opts['validation_method']}")
    origins = _origins(opts[field], method)
    spec = GeoSort(field=field, origins=origins, unit=parse_unit(opts.get("unit", "m")),
                   distance_type=parse_distance_type(opts.get("distance_type", "arc")),
                   ignore_unmapped=opts.get("ignore_unmapped") in (True, "true"))
    return {"field": "_geo_distance", "order": order, "mode": mode, "geo": spec}


def _origins(value: Any, method: str) -> tuple[tuple[float, float], ...]:
    """The points to measure from: range-checked (``STRICT``), wrapped (``COERCE``) or taken
    as given (``IGNORE_MALFORMED``), as ``GeoDistanceSortBuilder.build``."""
    strict = method == "STRICT"
    items = [value] if not isinstance(value, list) or is_point_array(value) else value
    if not items:
        raise IllegalArgument("[_geo_distance] requires at least one point")
    if len(items) > MAX_ORIGINS:
        raise IllegalArgument(f"[_geo_distance] sorts by at most {MAX_ORIGINS} points, "
                              f"found [{len(items)}]")
    out = []
    for item in items:
        try:
            lat, lon = parse_point(item)
        except GeoValueError as e:
            raise ParsingError(str(e), es_type="parse_exception") from None
        if strict and not -90 <= lat <= 90:
            raise IllegalArgument(f"illegal latitude value [{lat!r}] for [GeoDistanceSort]")
        if strict and not -180 <= lon <= 180:
            raise IllegalArgument(f"illegal longitude value [{lon!r}] for [GeoDistanceSort]")
        out.append(normalize(lat, lon) if method == "COERCE" else (lat, lon))
    return tuple(out)


def check_geo_sort(spec: GeoSort, mapping: Mapping) -> bool:
    """False when the field is unmapped and ``ignore_unmapped`` (every document missing)."""
    ft = mapping.get(spec.field)
    if ft is None:
        if spec.ignore_unmapped:
            return False
        raise IllegalArgument(f"failed to find mapper for [{spec.field}] for geo distance "
                              "based sort")
    if ft.type != "geo_point":
        raise IllegalArgument(f"field [{spec.field}] of type [{ft.type}] is not supported for "
                              "geo distance based sort")
    return True


def geo_sort_column(sf: Any, parts: list[Any], mapping: Mapping) -> tuple[np.ndarray, None]:
    """float64 sort values of the matches ``parts`` ([(segment, docs, scores)])."""
    spec: GeoSort = sf.geo
    mapped = check_geo_sort(spec, mapping)
    mode = sf.mode or ("max" if sf.desc else "min")
    out = []
    for seg, docs, _ in parts:
        col = np.full(len(docs), np.inf)
        if mapped and len(docs):
            col = doc_distances(seg, spec, mode)[docs]
        out.append(col)
    return (np.concatenate(out) if out else np.zeros(0)), None


def geo_sort_values(sf: Any, seg: Any, docs: np.ndarray, mapping: Mapping) -> np.ndarray:
    """The sort values of ``docs`` of one segment (``top_hits`` and inner hits)."""
    if not check_geo_sort(sf.geo, mapping):
        return np.full(len(docs), np.inf)
    return doc_distances(seg, sf.geo, sf.mode or ("max" if sf.desc else "min"))[docs]


def doc_distances(seg: Any, spec: GeoSort, mode: str) -> np.ndarray:
    """Per document of ``seg``: ``mode`` over the distances of all its points to all the
    origins (``GeoUtils.distanceValues``; ``+inf`` without points)."""
    pdocs, lats, lons = points(seg, spec.field)
    dists = [distance(spec.distance_type, lat, lon, lats, lons) / UNITS[spec.unit]
             for lat, lon in spec.origins]
    out = select(np.tile(pdocs, len(dists)), np.concatenate(dists), seg.n, mode)
    present = np.zeros(seg.n, dtype=bool)
    present[pdocs] = True
    out[~present] = np.inf
    return out


def select(pdocs: np.ndarray, values: np.ndarray, n: int, mode: str) -> np.ndarray:
    """One value per document from its points' values (``MultiValueMode``)."""
    if mode == "min":
        out = np.full(n, np.inf)
        np.minimum.at(out, pdocs, values)
    elif mode == "max":
        out = np.full(n, -np.inf)
        np.maximum.at(out, pdocs, values)
    elif mode == "avg":
        sums = np.bincount(pdocs, weights=values, minlength=n)
        out = sums / np.maximum(np.bincount(pdocs, minlength=n), 1)
    else:
        out = np.zeros(n)
        order = np.lexsort((values, pdocs))
        d, v = pdocs[order], values[order]
        starts = np.searchsorted(d, np.arange(n))
        counts = np.bincount(d, minlength=n)
        has = counts > 0
        lo = starts[has] + (counts[has] - 1) // 2
        hi = starts[has] + counts[has] // 2
        out[has] = (v[lo] + v[hi]) / 2
    return out
