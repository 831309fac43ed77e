"""Query values in a field's value space: numbers, booleans and dates (date math, rounding)
as the evaluators compare them, and the client error a value that does not fit gets."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import nodes as Q
from ...errors import IllegalArgument, SearchError
from ..date_formats import InvalidFormat
from ..dates import parse_date_math, parse_failure
from ..field_types import INT_RANGES, FieldType
from .context import Context


def bad_value(value: Any, detail: str | None = None) -> IllegalArgument:
    if detail is None:
        detail = 'For input string: "' + str(value) + '"'
    return IllegalArgument(f"failed to create query: {detail}", es_type="query_shard_exception")


def numeric_value(ft: FieldType, value: Any) -> Any:
    """A term's value in the field's stored type; None when it cannot equal any value."""
    try:
        if ft.kind == "boolean":
            if isinstance(value, bool):
                return int(value)
            if str(value) in ("true", "false"):
                return int(str(value) == "true")
            raise bad_value(value, f"Can't parse boolean value [{value}], expected [true] or "
                                    "[false]")
        if isinstance(value, bool):
            raise ValueError(value)
        num = float(value)
        if ft.is_integer:
            if not num.is_integer():
                return None
            out = int(num) if abs(num) < 2**53 else int(str(value).split(".")[0])
            lo, hi = INT_RANGES.get(ft.type, INT_RANGES["long"])
            if not lo <= out <= hi:
                raise bad_value(value, f"Value [{value}] is out of range for a {ft.type}")
            return out
        if ft.type in ("float", "half_float"):
            return float(np.float32(num))
        if ft.scaling_factor:      # a term on a scaled_float is rounded as values are
            return math.floor(num * ft.scaling_factor + 0.5) / ft.scaling_factor
        return num
    except (TypeError, ValueError, OverflowError):
        raise bad_value(value) from None


def date_bound(ft: FieldType, value: Any, round_up: bool, fmt: str | None,
                time_zone: str | None, ctx: Context, in_range: bool = False) -> int:
    """A date (math) value in the field's space. A bad one fails building the query
    (``query_shard_exception``), except a ``range`` bound (``in_range``): Elasticsearch parses
    those while the shard rewrites the query, before anything wraps the error, so its date
    parser's ``parse_exception`` reaches the client as thrown (``range_bound_failure``)."""
    try:
        return parse_date_math(value, ft, round_up=round_up, fmt=fmt, time_zone=time_zone,
                               now_ms=ctx.now_ms)
    except InvalidFormat as e:
        raise IllegalArgument(str(e)) from None
    except (ValueError, OverflowError, TypeError):
        shown = fmt or ft.format or "strict_date_optional_time||epoch_millis"
        detail = f"failed to parse date field [{value}] with format [{shown}]"
        if in_range:
            raise range_bound_failure(detail, parse_failure(value, shown)) from None
        raise bad_value(value, detail) from None


def range_bound_failure(detail: str, java_text: str | None) -> SearchError:
    """Elasticsearch's ``JavaDateMathParser`` error: its ``parse_exception`` repeats the
    formatter's ``illegal_argument_exception`` (its cause) in brackets, and that one is
    caused by java.time's ``date_time_parse_exception`` (``dates.parse_failure``)."""
    cause: dict[str, Any] = {"type": "illegal_argument_exception", "reason": detail}
    if java_text is not None:
        cause["caused_by"] = {"type": "date_time_parse_exception", "reason": java_text}
    return SearchError(f"{detail}: [{detail}]", es_type="parse_exception", status=400,
                       caused_by=cause)


def numeric_bounds(q: Q.Range, ft: FieldType, ctx: Context) -> list[tuple[str, Any]]:
    """The range's bounds in the field's value space. Dates: date math, and rounding up for
    ``gt``/``lte`` (a bound covers all the instants its text names); floats: as float32."""
    out = []
    for op, bound in (("gt", q.gt), ("gte", q.gte), ("lt", q.lt), ("lte", q.lte)):
        if bound is None:
            continue
        if ft.kind == "date":
            b: Any = date_bound(ft, bound, op in ("gt", "lte"), q.format, q.time_zone, ctx,
                                in_range=q.rewritten)
        elif ft.kind == "boolean":
            b = numeric_value(ft, bound)
        else:
            if isinstance(bound, bool):
                raise bad_value(bound)
            try:
                # whole numbers on integer fields stay exact (longs past 2^53, unsigned longs)
                b = _exact_int(bound) if ft.is_integer else None
                b = float(bound) if b is None else b
            except (TypeError, ValueError):
                raise bad_value(bound) from None
            if ft.type in ("float", "half_float"):
                b = float(np.float32(b))
        out.append((op, b))
    return out


def _exact_int(bound: Any) -> int | None:
    """A JSON integer, or a string of digits, as an exact int (None for anything else)."""
    if isinstance(bound, int):
        return bound
    if isinstance(bound, str) and bound.strip().lstrip("+-").isdigit():
        return int(bound.strip())
    return None
