"""Sorting documents by a field of their nested children (``sort: {f: {nested: {path, filter}}}``).

Per segment, the children at ``path`` that pass ``filter`` give their parent their values of
the field; the parent then sorts on them with the sort's ``mode`` like on a multi-valued field
(``min`` ascending, ``max`` descending by default). The values become a column of the
parent's rows — a ``NumericField`` or a ``KeywordField`` with per-parent ordinals — that
``sort_columns.py`` reads as it reads any field. O(children) NumPy per segment.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import IllegalArgument, ParsingError
from .nested import nested_path_of
from .segment import KeywordField, NumericField

_OPTS = {"path", "filter"}
_REFUSED = ("max_children", "nested")


def parse_nested_sort(spec: Any) -> tuple[str, Any]:
    """``(path, filter query or None)`` of a sort's ``nested`` object."""
    from .query.dsl import parse_query
    if not isinstance(spec, dict):
        raise ParsingError("[nested] failed to parse: expected an object")
    for key in spec:
        if key in _REFUSED:
            raise IllegalArgument(f"[nested] sort option [{key}] is not supported by this "
                                  "server")
        if key not in _OPTS:
            raise ParsingError(f"[nested] unknown field [{key}]")
    path = spec.get("path")
    if not isinstance(path, str) or not path:
        raise ParsingError("[nested] requires 'path' field")
    return path, parse_query(spec["filter"]) if spec.get("filter") is not None else None


class ParentColumns:
    """A segment seen by a nested sort: its own identity, with the sort field's column made
    from the children (everything else reads through)."""

    def __init__(self, seg: Any, field: str, column: Any) -> None:
        self.seg = seg
        self.uid = seg.uid
        self.fields = {field: column} if column is not None else {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.seg, name)


def nested_parts(sf: Any, parts: list[Any], segments: list[Any], mapping: Any,
                 match: Any) -> tuple[list[Any], list[Any]]:
    """``(parts, segments)`` with each segment's sort column built from its children;
    ``match(query, block)`` is the filter's bool mask over a block."""
    path, flt = sf.nested
    if path not in mapping.nested:
        raise IllegalArgument(f"[nested] nested object under path [{path}] is not of nested "
                              "type" if path in mapping.objects else
                              f"[nested] failed to find nested object under path [{path}]",
                              es_type="query_shard_exception")
    if not sf.field.startswith(path + "."):
        raise IllegalArgument(f"[nested] nested path [{path}] does not hold field "
                              f"[{sf.field}]", es_type="query_shard_exception")
    inner = nested_path_of(sf.field, mapping.nested)
    if inner != path:   # Elasticsearch would need a nested ``nested``, refused at parse
        raise IllegalArgument(f"[nested] sort field [{sf.field}] is under the nested path "
                              f"[{inner}], not [{path}]", es_type="query_shard_exception")
    views = {}
    for seg in segments:
        block = seg.nested.get(path)
        column = None
        if block is not None and sf.field in block.fields:
            keep = np.ones(block.n, dtype=bool) if flt is None else match(flt, block)
            column = _parent_column(block.fields[sf.field], block.rows_in(""), keep, seg.n)
        views[id(seg)] = ParentColumns(seg, sf.field, column)
    new_parts = [(views[id(s)] if id(s) in views else s, d, sc) for s, d, sc in parts]
    return new_parts, [views[id(s)] for s in segments]


def _parent_column(fd: Any, parent: np.ndarray, keep: np.ndarray, n: int) -> Any:
    if isinstance(fd, NumericField):
        ok = keep[fd.value_docs]
        values, docs = fd.values[ok], parent[fd.value_docs[ok]].astype(np.int32)
        present = np.zeros(n, dtype=bool)
        present[docs] = True
        big = np.iinfo(np.int64) if values.dtype == np.int64 else None
        mn = np.full(n, big.max if big else np.inf, dtype=values.dtype)
        mx = np.full(n, big.min if big else -np.inf, dtype=values.dtype)
        np.minimum.at(mn, docs, values)
        np.maximum.at(mx, docs, values)
        mn[~present] = 0
        mx[~present] = 0
        return NumericField(values, docs, mn, mx, present)
    if isinstance(fd, KeywordField):
        ok = keep & (fd.min_ord >= 0)
        rows = parent[ok]
        big = np.iinfo(np.int32).max
        mn = np.full(n, big, dtype=np.int32)
        np.minimum.at(mn, rows, fd.min_ord[ok])
        mx = np.full(n, -1, dtype=np.int32)
        np.maximum.at(mx, rows, fd.max_ord[ok])
        present = mx >= 0
        mn = np.where(present, mn, -1).astype(np.int32)
        counts = np.bincount(rows, weights=fd.value_count[ok], minlength=n).astype(np.int64)
        column = KeywordField(fd.postings, mn, mx, present, counts)
        column._values = fd._values
        return column
    return None
