"""Range field types (``integer_range``, ``long_range``, ``float_range``, ``double_range``,
``date_range``): a value is an object of bounds, kept as one inclusive ``[lo, hi]`` pair.

A document's pairs are stored in the field's numeric doc-value column, interleaved
(``lo0, hi0, lo1, hi1, ...``), so segments, merges and snapshots need nothing new: the column
keeps each document's values in order and a merge keeps or drops a document whole. Exclusive
bounds become inclusive ones the way Elasticsearch's ``RangeType`` does (the next or previous
long, millisecond or float); a missing bound is the type's minimum or maximum.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MapperParsing
from .dates import parse_date
from .field_types import FieldType
_LIMITS = {"integer_range": (-(2**31), 2**31 - 1), "long_range": (-(2**63), 2**63 - 1),
           "date_range": (-(2**63), 2**63 - 1)}
_KEYS = {"gt", "gte", "lt", "lte", "from", "to", "include_lower", "include_upper"}


def is_integral(ft: FieldType) -> bool:
    return ft.type in _LIMITS


def range_pair(value: Any, ft: FieldType, doc_id: str | None) -> tuple[Any, Any]:
    """The inclusive ``(lo, hi)`` a document's range object stores; ``MapperParsing`` with
    Elasticsearch's texts for anything else."""
    if not isinstance(value, dict):
        raise _fail(ft, doc_id, value, f"error parsing field [{ft.path}], expected an object "
                                        f"but got {_token(value)}")
    lo: Any = None
    hi: Any = None
    inc_lo = inc_hi = True
    for key, v in value.items():
        if key not in _KEYS:
            raise _fail(ft, doc_id, value, f"error parsing field [{ft.path}], with unknown "
                                            f"parameter [{key}]")
        if key in ("gt", "gte", "from"):
            lo, inc_lo = (None if v is None else bound_value(v, ft, doc_id, value)), key != "gt"
        elif key in ("lt", "lte", "to"):
            hi, inc_hi = (None if v is None else bound_value(v, ft, doc_id, value)), key != "lt"
        elif key == "include_lower":
            inc_lo = bool(v)
        else:
            inc_hi = bool(v)
    lo = min_value(ft) if lo is None else (lo if inc_lo else next_up(lo, ft))
    hi = max_value(ft) if hi is None else (hi if inc_hi else next_down(hi, ft))
    if lo > hi:
        raise _fail(ft, doc_id, value, f"min value ({lo}) is greater than max value ({hi})")
    return lo, hi


def bound_value(v: Any, ft: FieldType, doc_id: str | None = None, whole: Any = None) -> Any:
    """One bound in the field's stored space (millis for dates)."""
    try:
        if ft.type == "date_range":
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not ft.format:
                return int(v)
            return parse_date(v, ft)
        if isinstance(v, bool):
            raise ValueError(v)
        if is_integral(ft):
            num = float(v) if not isinstance(v, int) else v
            out = int(num)
            lo, hi = _LIMITS[ft.type]
            if not lo <= out <= hi:
                raise ValueError(v)
            return out
        num = float(v)
        if math.isnan(num) or math.isinf(num):
            raise ValueError(v)
        return float(np.float32(num)) if ft.type == "float_range" else num
    except (TypeError, ValueError, OverflowError):
        raise _fail(ft, doc_id, whole if whole is not None else v,
                    f"For input string: \"{v}\"") from None


def min_value(ft: FieldType) -> Any:
    return _LIMITS[ft.type][0] if is_integral(ft) else -math.inf


def max_value(ft: FieldType) -> Any:
    return _LIMITS[ft.type][1] if is_integral(ft) else math.inf


def next_up(v: Any, ft: FieldType) -> Any:
    if is_integral(ft):
        return v + 1
    return float(np.nextafter(np.float32(v), np.float32(np.inf))) if ft.type == "float_range" \
        else math.nextafter(v, math.inf)


def next_down(v: Any, ft: FieldType) -> Any:
    if is_integral(ft):
        return v - 1
    return float(np.nextafter(np.float32(v), np.float32(-np.inf))) if ft.type == "float_range" \
        else math.nextafter(v, -math.inf)


def _token(value: Any) -> str:
    if isinstance(value, list):
        return "START_ARRAY"
    if isinstance(value, str):
        return "VALUE_STRING"
    return "VALUE_NUMBER" if isinstance(value, (int, float)) else "VALUE_BOOLEAN"


def _fail(ft: FieldType, doc_id: str | None, value: Any, detail: str) -> MapperParsing:
    tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
    preview = (value if isinstance(value, str) else repr(value))[:20]
    return MapperParsing(f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
                         f"Preview of field's value: '{preview}'",
                         caused_by={"type": "illegal_argument_exception", "reason": detail})
