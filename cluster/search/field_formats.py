"""The ``format`` of a ``fields`` / ``docvalue_fields`` entry: which field types take one, and
the values it prints.

Elasticsearch checks the two lists differently, and says so in different words. The fields
API builds a value fetcher per field: dates take a date format, geo points ``geojson`` or
``wkt``, every other type refuses ("error fetching [n]: Field [n] of type [long] doesn't
support formats."). ``docvalue_fields`` builds a ``DocValueFormat``: numbers take a
``DecimalFormat`` pattern, dates a date format, others refuse ("Field [s] of type [keyword]
does not support custom formats"). Both refuse before any value is read, so a document
without the field fails the same way.
"""
from __future__ import annotations

import fnmatch
from typing import Any

from ..engine.dates import format_date, parse_date
from ..engine.field_types import METADATA_FIELDS, RANGE_TYPES
from ..engine.geo import geojson_points
from ..engine.ip import parse_ip, render as ip_render
from ..engine.numformat import decimal_format, java_double
from ..errors import IllegalArgument

FIELDS = "fields"
DOCVALUE_FIELDS = "docvalue_fields"
GEO_FORMATS = ("geojson", "wkt")
#: types whose one value is an object (or a string): the ``fields`` section returns it whole,
#: not its keys as fields of their own
OBJECT_VALUED = RANGE_TYPES | {"completion", "rank_features", "sparse_vector", "flattened"}


def spec_format(spec: Any) -> str | None:
    """The entry's format; ``use_field_mapping`` (Elasticsearch 7's spelling of "none") is
    no format."""
    fmt = spec.get("format") if isinstance(spec, dict) else None
    return None if fmt == "use_field_mapping" else fmt


def check_formats(specs: list[tuple[Any, str]], mapping: Any) -> None:
    """Refuse every entry whose format a mapped field it names cannot take, as Elasticsearch
    does when it builds the fetch phase (before reading a value). Called for each hit, so a
    check that passed is remembered per mapping version (Kibana sends a format for each date
    field of a data view, hundreds of hits at a time)."""
    wanted = tuple((spec.get("field"), fmt, api) for spec, api in specs
                   if (fmt := spec_format(spec)) is not None)
    if not wanted:
        return
    cacheable = all(isinstance(pattern, str) for pattern, _, _ in wanted)
    checked = getattr(mapping, "__dict__", {}).setdefault("_formats_checked", set())
    key = (getattr(mapping, "version", None), wanted)
    if cacheable and key in checked:
        return
    for pattern, fmt, api in wanted:
        _check_one(pattern, fmt, api, mapping)
    if cacheable:
        if len(checked) >= _CHECKED_MAX:
            checked.clear()
        checked.add(key)


_CHECKED_MAX = 256   # passed checks remembered per mapping


def _check_one(pattern: Any, fmt: str, api: str, mapping: Any) -> None:
    """One entry's check: a plain name looks its field up, a pattern walks the mapping."""
    wildcard = isinstance(pattern, str) and "*" in pattern
    if not wildcard:
        paths = [pattern] if isinstance(pattern, str) and pattern in mapping.fields else []
    else:
        paths = [p for p in mapping.fields if fnmatch.fnmatchcase(p, pattern)]
    for path in paths:
        ft = mapping.get(path)
        if ft is None or (wildcard and path in METADATA_FIELDS):
            continue
        reason = _refusal(api, fmt, ft)
        if reason is not None and api == FIELDS:
            which = f" which matched [{pattern}]" if wildcard else ""
            reason = f"error fetching [{path}]{which}: {reason}"
        if reason is not None:
            raise IllegalArgument(reason)


def _refusal(api: str, fmt: str, ft: Any) -> str | None:
    """Why field ``ft`` cannot print values in ``fmt`` through ``api`` (None: it can). An
    alias is named by its target, as Elasticsearch's field type is the target's."""
    path = ft.path
    if ft.kind == "date":
        return None
    if ft.kind == "geo":
        return None if fmt in GEO_FORMATS else f"Unrecognized geometry format [{fmt}]."
    if api == DOCVALUE_FIELDS:
        if ft.kind == "numeric":
            return None
        return f"Field [{path}] of type [{ft.type}] does not support custom formats"
    if ft.kind in ("text", "binary"):        # SourceValueFetcher.toString / identity
        return f"Field [{path}] doesn't support formats."
    return f"Field [{path}] of type [{ft.type}] doesn't support formats."


def formatted(vals: list[Any], fmt: str | None, ft: Any) -> list[Any]:
    """Values of field ``ft`` as the ``fields`` section prints them, in ``fmt`` (checked by
    ``check_formats``): ip addresses canonical, dates in the format or the mapping's, geo
    points as GeoJSON or WKT, numbers through ``DecimalFormat``."""
    if ft is None:
        return vals
    if ft.type == "ip":
        return [_ip_text(v) for v in vals]
    if ft.kind == "date":
        return _dates_formatted(vals, ft, fmt)
    if ft.kind == "range":
        return [_range_formatted(v, ft) for v in vals]
    if ft.kind == "geo":
        points = geojson_points(vals, ft) if vals and isinstance(vals[0], str) else vals
        return [wkt_point(p) for p in points] if fmt == "wkt" else points
    if not fmt or ft.kind != "numeric":
        return vals
    return [decimal_format(v, fmt) if isinstance(v, (int, float)) and not isinstance(v, bool)
            else v for v in vals]


def _range_formatted(value: Any, ft: Any) -> Any:
    """A range as Elasticsearch's range value fetcher returns it: its keys as given, each
    bound parsed and printed (a ``date_range``'s in the field's format, numbers as numbers)."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, bound in value.items():
        try:
            if ft.type == "date_range":
                bound = format_date(parse_date(bound, ft), ft, ft.format)
            elif isinstance(bound, str):
                bound = float(bound) if ft.type in ("float_range", "double_range") \
                    else int(bound)
        except (ValueError, OverflowError):
            pass
        out[key] = bound
    return out


def wkt_point(point: dict[str, Any]) -> str:
    """A GeoJSON point as Elasticsearch's ``WellKnownText`` writes it: ``POINT (lon lat)``,
    each number as Java's ``Double.toString`` (``POINT (2.0 1.5)``)."""
    lon, lat = point["coordinates"][:2]
    return f"POINT ({java_double(float(lon))} {java_double(float(lat))})"


def _ip_text(value: Any) -> Any:
    """An address from ``_source`` as ES renders an ip field's value (``::1``, ``10.0.0.1``)."""
    try:
        return ip_render(parse_ip(value))
    except ValueError:
        return value


def _dates_formatted(vals: list[Any], ft: Any, fmt: str | None) -> list[Any]:
    """Dates as Elasticsearch prints them: parsed under the mapping, printed with ``format``
    or the mapping's (``date_nanos``: ``strict_date_optional_time_nanos``). Values the mapping
    cannot read (skipped by ``ignore_malformed``) are not doc values and are left out."""
    default = "strict_date_optional_time_nanos" if ft.type == "date_nanos" else None
    out = []
    for v in vals:
        try:
            stored = parse_date(v, ft)
        except (ValueError, OverflowError):
            continue
        out.append(format_date(stored, ft, fmt or ft.format or default))
    return out
