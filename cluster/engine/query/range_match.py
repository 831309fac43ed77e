"""Queries on range fields (``range_values.py``): a document matches when one of its
``[lo, hi]`` pairs relates to the query's span as asked — ``intersects`` (the default),
``within`` (the pair inside the span) or ``contains`` (the span inside the pair). A ``term``
is the span of one value: the pairs that contain it. O(values) NumPy per segment."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import nodes as Q
from ...errors import MapperParsing
from ..field_types import FieldType
from ..segment import NumericField
from ..range_values import bound_value, max_value, min_value, next_down, next_up
from .context import Context
from .field_values import bad_value, date_bound


def range_field_mask(fd: Any, span: tuple[Any, Any], relation: str, n: int) -> np.ndarray:
    """Documents of ``fd`` (interleaved pairs) with a pair in ``relation`` to ``span``."""
    lo, hi = fd.values[0::2], fd.values[1::2]
    q_lo, q_hi = span
    if relation == "within":
        ok = (lo >= q_lo) & (hi <= q_hi)
    elif relation == "contains":
        ok = (lo <= q_lo) & (hi >= q_hi)
    else:
        ok = (lo <= q_hi) & (hi >= q_lo)
    mask = np.zeros(n, dtype=bool)
    mask[fd.value_docs[0::2][ok]] = True
    return mask


def range_query_mask(seg: Any, fname: str, span: tuple[Any, Any], relation: str
                     ) -> np.ndarray:
    """The segment's documents whose range field ``fname`` relates to ``span``."""
    fd = seg.fields.get(fname)
    if not isinstance(fd, NumericField) or span[0] > span[1]:
        return np.zeros(seg.n, dtype=bool)
    return range_field_mask(fd, span, relation, seg.n)


def query_span(q: Q.Range, ft: FieldType, ctx: Context) -> tuple[Any, Any]:
    """A ``range`` query's bounds as one inclusive span in the field's stored space."""
    lo, hi = min_value(ft), max_value(ft)
    for op, value in (("gt", q.gt), ("gte", q.gte), ("lt", q.lt), ("lte", q.lte)):
        if value is None:
            continue
        if ft.type == "date_range":
            b = date_bound(ft, value, op in ("gt", "lte"), q.format, q.time_zone, ctx)
        else:
            b = term_value(ft, value)
        if op == "gt":
            lo = max(lo, next_up(b, ft))
        elif op == "gte":
            lo = max(lo, b)
        elif op == "lt":
            hi = min(hi, next_down(b, ft))
        else:
            hi = min(hi, b)
    return lo, hi


def term_value(ft: FieldType, value: Any) -> Any:
    """One query value in the field's stored space; a 400 when it is none."""
    try:
        return bound_value(value, ft)
    except MapperParsing:
        raise bad_value(value) from None
