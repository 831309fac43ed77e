"""The ``format`` of a ``fields`` / ``docvalue_fields`` entry: which field types take one, and
the values it prints (numbers: ``DecimalFormat``; dates: a date format; geo points: ``geojson``,
the default, or ``wkt``)."""
from __future__ import annotations

import fnmatch
from typing import Any

from ..engine.dates import format_date, parse_date
from ..engine.geo import geojson_points
from ..engine.ip import parse_ip, render as ip_render
from ..engine.numformat import decimal_format, java_double
from ..errors import IllegalArgument

FIELDS = "fields"
DOCVALUE_FIELDS = "docvalue_fields"
GEO_FORMATS = ("geojson", "wkt")


def spec_format(spec: Any) -> str | None:
    """The entry's format; ``use_field_mapping`` (Elasticsearch 7's spelling of "none") is
    no format."""
    fmt = spec.get("format") if isinstance(spec, dict) else None
    return None if fmt == "use_field_mapping" else fmt


def check_formats(specs: list[tuple[Any, str]], mapping: Any) -> None:
    """Refuse an entry whose format a mapped field it names cannot take."""
    for spec, _api in specs:
        fmt = spec_format(spec)
        if fmt is None:
            continue
        pattern = spec.get("field")
        for path in mapping.fields:
            if path != pattern and not fnmatch.fnmatchcase(path, pattern):
                continue
            ft = mapping.get(path)
            if ft is not None and ft.kind == "geo" and fmt not in GEO_FORMATS:
                raise IllegalArgument(f"Unrecognized geometry format [{fmt}].")
            if ft is not None and ft.kind not in ("numeric", "date", "geo"):
                raise IllegalArgument(f"Field [{path}] of type [{ft.type}] does not support "
                                      "custom formats")


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
    if ft.kind == "geo":
        points = geojson_points(vals, ft) if vals and isinstance(vals[0], str) else vals
        return [wkt_point(p) for p in points] if fmt == "wkt" else points
    if not fmt or ft.kind != "numeric":
        return vals
    return [decimal_format(v, fmt) if isinstance(v, (int, float)) and not isinstance(v, bool)
            else v for v in vals]


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
