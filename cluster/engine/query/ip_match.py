"""Queries on ``ip`` fields: every form is an inclusive range of 128-bit keys (``ip.py``), so
a term, a CIDR block and a ``range`` are all one bisection of the field's sorted dictionary.
Scores are constant (``boost``), as Elasticsearch's point queries on ip are."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import nodes as Q
from ..ip import MAX_KEY, encode, parse_ip, query_key
from ..segment import KeywordField, TextField
from .field_values import bad_value


def ip_mask(fd: Any, spans: list[tuple[int, int]], n: int) -> np.ndarray:
    """Documents of ``fd`` (a keyword column of encoded keys) with a value in any span."""
    mask = np.zeros(n, dtype=bool)
    for lo, hi in spans:
        if lo <= hi:
            ids = fd.postings.ids_in_range(None, encode(lo), None, encode(hi))
            mask |= fd.postings.union(ids, n)
    return mask


def ip_query_mask(seg: Any, fname: str, spans: list[tuple[int, int]]) -> np.ndarray:
    """The segment's documents whose ``fname`` holds an address in any span."""
    fd = seg.fields.get(fname)
    if not isinstance(fd, KeywordField):
        return np.zeros(seg.n, dtype=bool)
    return ip_mask(fd, spans, seg.n)


def pattern_dictionary(seg: Any, field: str, ft: Any) -> Any:
    """The term dictionary (text or keyword column) that prefix, wildcard and regexp queries
    walk; none for an ip field, whose terms are keys, not addresses (as for numbers)."""
    fd = seg.fields.get(field)
    if not isinstance(fd, (TextField, KeywordField)) or (ft is not None and ft.type == "ip"):
        return None
    return fd


def term_spans(values: list[Any]) -> list[tuple[int, int]]:
    """``term`` / ``terms`` values (addresses or CIDR blocks) as key spans."""
    out = []
    for v in values:
        try:
            out.append(query_key(v))
        except ValueError:
            raise bad_value(v, f"'{v}' is not an IP string literal.") from None
    return out


def range_span(q: Q.Range) -> tuple[int, int]:
    """A ``range`` query's bounds as one inclusive key span (empty when lo > hi)."""
    lo, hi = 0, MAX_KEY
    for op, value in (("gt", q.gt), ("gte", q.gte), ("lt", q.lt), ("lte", q.lte)):
        if value is None:
            continue
        try:
            key = parse_ip(str(value))
        except ValueError:
            raise bad_value(value, f"'{value}' is not an IP string literal.") from None
        if op == "gt":
            lo = max(lo, key + 1)
        elif op == "gte":
            lo = max(lo, key)
        elif op == "lt":
            hi = min(hi, key - 1)
        else:
            hi = min(hi, key)
    return lo, hi
