"""Which documents the shard can parse alone (``Mapping.accepts``).

A bulk load sends thousands of documents of a few shapes. When every value of a document is
of a kind its (already mapped) field takes without fail, parsing it adds no field and cannot
fail: the coordinator then leaves the parsing to the shard (``parse_document(..., dynamic=False)``
gives the same fields there) and only documents that may grow the mapping or fail are parsed
by the coordinator, in order. A shape is the set of ``(path, kind)`` of a document's values.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from .field_types import METADATA_FIELDS, FieldType
from .limits import MAX_TERM_BYTES

if TYPE_CHECKING:
    from .mapping import Mapping

Shape = tuple[tuple[str, str], ...]
_SHAPE_DEPTH = 8
_MAY_BE_IMMENSE = MAX_TERM_BYTES // 4   # longer strings may be immense terms: coordinator parses
_SMALL_INT = 2 ** 31
# value kind -> field types it always parses into (text and keyword kinds take them all)
_SAFE_TYPES = {
    "i": {"long", "integer", "double", "float", "half_float", "scaled_float"},
    "f": {"double", "float", "half_float"},
    "b": {"boolean"},
}


def doc_shape(source: Any) -> Shape | None:
    """The ``(path, kind)`` pairs of a document's values (kind: ``s`` string, ``i`` integer
    under 2**31, ``I`` other integer, ``f`` float, ``b`` boolean, ``o`` object), or None for
    documents this summary does not describe (arrays in arrays, metadata or blank keys, deep
    nesting): those are always parsed by the coordinator. O(size of the document)."""
    out: dict[tuple[str, str], None] = {}
    if not isinstance(source, dict) or not _shape_into(source, "", out, 1):
        return None
    return tuple(out)


def _value_kind(v: Any) -> str | None:
    t = type(v)
    if t is str:
        return "s"
    if t is int:
        return "i" if -_SMALL_INT <= v < _SMALL_INT else "I"
    if t is float:
        return "f"
    if t is bool:
        return "b"
    return None


_PLAIN_KEYS: set[str] = set()   # keys seen valid at any level (bounded, see _plain_key)


def _plain_key(key: str, prefix: str) -> bool:
    """A key a shape may hold: not blank, and no metadata field at the root. Keys valid at
    every level are remembered, so a bulk load's repeated keys cost one set lookup."""
    if not key or key.isspace() or (not prefix and key in METADATA_FIELDS):
        return False
    if key not in METADATA_FIELDS and len(_PLAIN_KEYS) < 4096:
        _PLAIN_KEYS.add(key)
    return True


def _shape_into(obj: dict[str, Any], prefix: str, out: dict[tuple[str, str], None],
                level: int) -> bool:
    if level > _SHAPE_DEPTH:
        return False
    for key, val in obj.items():
        if key not in _PLAIN_KEYS and not _plain_key(key, prefix):
            return False
        path = prefix + key
        t = type(val)
        if t is str:
            if len(val) > _MAY_BE_IMMENSE:
                return False
            out[(path, "s")] = None
        elif t is list:
            for x in val:   # the common list: strings only, checked in one pass
                if type(x) is not str:
                    break
                if len(x) > _MAY_BE_IMMENSE:
                    return False
            else:
                if val:
                    out[(path, "s")] = None
                continue
            for x in val:
                tx = type(x)
                if tx is str:
                    if len(x) > _MAY_BE_IMMENSE:
                        return False
                    out[(path, "s")] = None
                elif tx is dict:
                    out[(path, "o")] = None
                    if not _shape_into(x, path + ".", out, level + 1):
                        return False
                elif x is not None:
                    k = _value_kind(x)
                    if k is None:
                        return False
                    out[(path, k)] = None
        elif t is dict:
            out[(path, "o")] = None
            if not _shape_into(val, path + ".", out, level + 1):
                return False
        elif val is not None:
            k = _value_kind(val)
            if k is None:
                return False
            out[(path, k)] = None
    return True


def _kind_fits(kind: str, ft: FieldType) -> bool:
    """A value of this kind always parses into ``ft`` (same rules as ``_coerce``)."""
    fk = ft.kind
    if ft.type == "alias" or ft.type == "completion":   # checked by doc_parsing.py
        return False
    if fk == "text" or fk == "keyword" or fk == "other":
        return True
    return ft.type in _SAFE_TYPES.get(kind, ())


def shape_text(shape: Shape) -> str:
    """A shape as one string (its JSON), which ``shape_fits`` reads too. The front end sends
    this form: a bulk item whose values are all strings, numbers and bytes is a dict the
    cyclic collector never tracks, so thousands of them cost no collection on either side."""
    return orjson.dumps(shape).decode()


def shape_fits(shape: Shape | str, mapping: Mapping) -> bool:
    if type(shape) is str:
        shape = tuple(map(tuple, orjson.loads(shape)))
    fields, objects, multi = mapping.fields, mapping.objects, mapping.multi
    nested = mapping.nested
    for path, kind in shape:
        if kind == "o":
            if path not in objects or path in fields or path in nested:
                return False
            continue
        ft = fields.get(path)
        if ft is None or not _kind_fits(kind, ft):
            return False
        if ft.kind == "other":
            continue
        for sub in multi.get(path, ()):
            if not _kind_fits(kind, fields[sub]):
                return False
    return True
