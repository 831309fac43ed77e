"""``binary`` values (base64 text) and the field types no query may search.

Elasticsearch keeps a ``binary`` field's bytes only in stored fields or doc values; a query
on it fails. Here its canonical base64 text is kept in a keyword column: the column answers
``exists`` and ``docvalue_fields``, and the query builders refuse the field first
(``refuse_search``), so the column never answers a search by accident.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

from ..errors import IllegalArgument
from .field_types import FieldType
from .geo import GeoValueError, point_values


class BinaryValueError(ValueError):
    """A value that is no base64 text (the message is Java's ``Base64`` decoder's)."""


def binary_value(value: Any) -> str:
    """The canonical base64 text of one value (Java decodes with the MIME-less decoder)."""
    if not isinstance(value, str):
        raise BinaryValueError("Current token (VALUE_NUMBER_INT) not VALUE_STRING or "
                               "VALUE_EMBEDDED_OBJECT, can not access as binary")
    bad = next((c for c in value if not (c.isascii() and (c.isalnum() or c in "+/="))), None)
    if bad is not None:
        raise BinaryValueError(f"Illegal base64 character {ord(bad):x}")
    try:
        return base64.b64encode(base64.b64decode(value, validate=True)).decode("ascii")
    except binascii.Error:
        raise BinaryValueError("Input byte array has incorrect ending byte") from None


def special_values(ft: FieldType, value: Any) -> list[Any]:
    """The stored values of one document value of a ``geo`` or ``binary`` field (a list:
    arrays hold several); ``GeoValueError`` / ``BinaryValueError`` for a bad one."""
    if ft.kind == "geo":
        return point_values(value, ft.ignore_z_value, ft.ignore_malformed)
    items = value if isinstance(value, list) else [value]
    return [binary_value(v) for v in items if v is not None]


def refuse_search(ft: FieldType, query: str) -> None:
    """A term-level or full-text query on a ``binary`` or ``geo_point`` field: Elasticsearch's
    400 (``query`` names the query: ``term``, ``range``...)."""
    if ft.type == "binary":
        raise _failed("Binary fields do not support searching")
    if ft.type == "geo_point":
        if query == "range":
            raise _failed(f"Field [{ft.path}] of type [geo_point] does not support range "
                          "queries")
        raise _failed("Geometry fields do not support exact searching, use dedicated "
                      f"geometry queries instead: [{ft.path}]")


_QUERY_NAMES = {"Exists": "exists", "Term": "term", "Terms": "terms", "Match": "match", "MatchPhrase": "match_phrase",
                "Range": "range", "Prefix": "prefix", "Wildcard": "wildcard", "Regexp": "regexp"}


def check_searchable(query: Any, mapping: Any) -> None:
    """Refuse (``refuse_search``) a query tree naming a ``binary`` or ``geo_point`` field in
    a term-level or full-text query. O(nodes); ``exists`` is allowed, as in Elasticsearch."""
    stack = [query]
    while stack:
        node = stack.pop()
        name = _QUERY_NAMES.get(type(node).__name__)
        field = getattr(node, "field", None)
        if name is not None and isinstance(field, str):
            ft = mapping.get(field)
            if ft is not None and ft.kind in ("geo", "binary") and name != "exists":
                refuse_search(ft, name)
        for attr in ("must", "should", "filter", "must_not", "queries", "query", "positive",
                     "negative"):
            sub = getattr(node, attr, None)
            if isinstance(sub, (tuple, list)):
                stack.extend(sub)
            elif sub is not None and hasattr(sub, "boost"):
                stack.append(sub)


def _failed(reason: str) -> IllegalArgument:
    return IllegalArgument(f"failed to create query: {reason}", es_type="query_shard_exception",
                           caused_by={"type": "illegal_argument_exception", "reason": reason})


__all__ = ["BinaryValueError", "GeoValueError", "binary_value", "check_searchable",
           "refuse_search",
           "special_values"]
