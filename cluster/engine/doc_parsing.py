"""Turning a JSON document into typed field values, and dynamic mapping.

A document that may change the mapping is parsed by the coordinator first, in write order: new
fields are added the way Elasticsearch's dynamic mapping adds them (string -> ``text`` with a
``.keyword`` sub-field, or ``date`` when it looks like an ISO date; integer -> ``long``; other
number -> ``float``; boolean -> ``boolean``; objects flatten to dotted paths; arrays hold several
values), and values that do not fit their field fail *that document* with
``mapper_parsing_exception``. The shard parses every document again under the mapping the
coordinator sent with it (``dynamic=False``), so it never guesses.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import MapperParsing
from .dates import NanosOutOfRange, looks_like_date, parse_date
from .field_types import (IGNORE_MALFORMED_TYPES, INT_RANGES, INTEGER_TYPES, LONG_MAX, LONG_MIN, METADATA_FIELDS,
                          FieldType, field_type)
from .ip import stored_ip
from .limits import MAX_TERM_BYTES, check_immense_terms
from .completion import document_inputs
from .binary import BinaryValueError, GeoValueError, special_values
from .range_values import range_pair
from .nested import NESTED_KEY, check_object_count
from .properties import (MAX_DEPTH, count_objects, merge_properties, set_path,
                         strip_object_markers)

if TYPE_CHECKING:
    from .mapping import Mapping

ParsedDoc = dict[str, list[Any]]


def _preview(value: Any) -> str:
    s = value if isinstance(value, str) else repr(value)
    return s[:20]


def json_text(value: Any) -> str:
    """A JSON scalar as Elasticsearch reads it as text (``true``, ``1``, ``1.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _coerce(value: Any, ft: FieldType, doc_id: str | None) -> Any:
    """A JSON value as the field's stored type, or ``MapperParsing``."""
    def fail(detail: str = "") -> MapperParsing:
        tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
        return MapperParsing(
            f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
            f"Preview of field's value: '{_preview(value)}'",
            caused_by={"type": "illegal_argument_exception",
                       "reason": detail or f"For input string: \"{value}\""})

    kind = ft.kind
    if type(value) is str and (kind == "text" or kind == "keyword") and ft.type != "ip":
        return value   # the common case, as below (str(value) is value)
    if isinstance(value, (dict, list)):
        raise fail("field value is an object or array")
    if ft.type == "ip":
        try:
            return stored_ip(value if isinstance(value, str) else json_text(value))
        except ValueError:
            raise fail(f"'{value}' is not an IP string literal.") from None
    if kind in ("text", "keyword"):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return repr(value)
        return str(value)
    if kind == "numeric":
        if isinstance(value, bool):
            raise fail("boolean is not a number")
        if isinstance(value, str):
            try:
                num: Any = float(value.strip())
            except ValueError:
                raise fail() from None
        else:
            num = value
        if isinstance(num, float) and (math.isnan(num) or math.isinf(num)):
            raise fail("[" + ft.type + "] supports only finite values")
        if ft.type in INTEGER_TYPES:
            if isinstance(num, float):
                if not num.is_integer():
                    num = int(num)  # ES truncates decimals for integer types (coerce)
                num = int(num)
            lo, hi = INT_RANGES[ft.type]
            if not lo <= num <= hi:
                raise fail(f"Value [{num}] is out of range for a {ft.type}")
            return int(num)
        if ft.type in ("float", "half_float"):
            import numpy as np
            return float(np.float32(num))
        if ft.scaling_factor:      # scaled_float: Java's Math.round(v * factor), read back / factor
            return math.floor(float(num) * ft.scaling_factor + 0.5) / ft.scaling_factor
        return float(num)
    if kind == "date":
        try:
            return parse_date(value, ft)
        except NanosOutOfRange as e:
            raise fail(str(e)) from None
        except (ValueError, OverflowError):
            raise fail(f"failed to parse date field [{value}]") from None
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        if value == "":
            return False
        raise fail(f"Failed to parse value [{value}] as only [true] or [false] are allowed.")
    return value


def _dynamic_spec(value: Any) -> dict[str, Any] | None:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "long"}
    if isinstance(value, float):
        return {"type": "float"}
    if isinstance(value, str):
        if looks_like_date(value):
            return {"type": "date"}
        return {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}
    return None


def parse_document(source: dict[str, Any], mapping: Mapping, doc_id: str | None = None,
                   dynamic: bool = True) -> tuple[ParsedDoc, bool]:
    """Typed values of every mapped field of ``source``; adds dynamic fields to ``mapping``.

    Returns ``(parsed, mapping_changed)``. The mapping is changed only when the whole document
    parses, so a failing document adds nothing. O(size of the document).
    """
    if not isinstance(source, dict):
        raise MapperParsing("failed to parse, document is empty" if source is None else
                            "failed to parse: root of a document must be an object")
    if _FAST_PATHS:
        flat = _parse_flat(source, mapping.flat_plan)
        if flat is not None:
            if flat.pop(_LONG_STRINGS, False):   # only then can a keyword be immense
                check_immense_terms(flat, lambda p: mapping.fields[p].kind)
            return flat, False
    doc = _DocumentParser(mapping, doc_id, dynamic)
    doc.walk(source, "")
    fields, pending = doc.fields, doc.pending
    kind_of = lambda p: (fields.get(p) or pending[p]).kind  # noqa: E731
    check_immense_terms(doc.parsed, kind_of)
    if doc.children:
        check_object_count(doc.children)
        for child in doc.children:
            check_immense_terms(child[3], kind_of)
        doc.parsed[NESTED_KEY] = doc.children
    if doc.ignored:
        doc.parsed["_ignored"] = sorted(set(doc.ignored))
    return doc.parsed, _grow_mapping(mapping, doc)


def _grow_mapping(mapping: Mapping, doc: _DocumentParser) -> bool:
    """Add the fields the document introduced (within ``MAX_TOTAL_FIELDS``); whether any."""
    if not doc.new_props:
        return False
    added = len(doc.pending) + count_objects(doc.new_props)
    total = len(doc.fields) + len(doc.objects) + added
    if total > MAX_TOTAL_FIELDS:
        raise MapperParsing(f"Limit of total fields [{MAX_TOTAL_FIELDS}] has been exceeded "
                            f"while adding new fields [{added}]",
                            es_type="illegal_argument_exception")
    merge_properties(mapping.properties, strip_object_markers(doc.new_props), "")
    mapping._invalidate()
    return True


class _DocumentParser:
    """One document's walk: typed values per path, and the fields dynamic mapping would add
    (``pending``, ``new_props``), applied only once the whole document has parsed."""

    __slots__ = ("doc_id", "fields", "objects", "multi", "allow_dynamic", "strict", "parsed",
                 "new_props", "pending", "pending_multi", "nested", "children", "up", "root",
                 "ignore_default", "ignored", "last", "disabled")

    def __init__(self, mapping: Mapping, doc_id: str | None, dynamic: bool) -> None:
        self.doc_id = doc_id
        self.fields = mapping.fields
        self.objects = mapping.objects
        self.disabled = mapping.disabled
        self.multi = mapping.multi
        self.allow_dynamic = dynamic and mapping.dynamic not in (False, "false", "strict")
        self.strict = mapping.dynamic in ("strict",)
        self.parsed: ParsedDoc = {}
        self.new_props: dict[str, Any] = {}
        self.pending: dict[str, FieldType] = {}
        self.pending_multi: dict[str, list[str]] = {}
        self.nested = mapping.nested
        self.children: list[list[Any]] = []     # nested.py's rows: [path, up, offset, fields]
        self.up = -1                            # the child row being walked (-1: the root)
        self.root = self.parsed
        self.ignore_default = bool(getattr(mapping, "ignore_malformed", False))
        self.ignored: list[str] = []    # fields whose malformed values ignore_malformed skipped

    def walk(self, obj: Any, prefix: str, level: int = 1) -> None:
        """The values of object ``obj`` found at ``prefix`` (``""``: the document)."""
        if level > MAX_DEPTH:
            raise MapperParsing(f"failed to parse: Limit of mapping depth [{MAX_DEPTH}] has been "
                                f"exceeded due to object field [{prefix[:-1]}]")
        fields, multi, parsed, doc_id = self.fields, self.multi, self.parsed, self.doc_id
        ft = fields.get(prefix[:-1]) if prefix else None
        if ft is not None and ft.kind != "other":
            raise _coerce_error_object(ft, obj, doc_id)
        for key, val in obj.items():
            if not isinstance(key, str) or key == "" or key.isspace():
                raise MapperParsing("field name cannot be an empty string")
            if prefix == "" and key.startswith("_") and key in METADATA_FIELDS:
                raise MapperParsing(f"Field [{key}] is a metadata field and cannot be added "
                                    "inside a document. Use the index API request "
                                    "parameters.", es_type="document_parsing_exception")
            path = prefix + key
            # the common cases first, with the result ``leaf`` would give: strings into a
            # text or keyword field, integers into a long (no multi-fields)
            ft = fields.get(path) if _FAST_PATHS else None
            if ft is not None and path not in multi:
                t = type(val)
                if t is str or t is list and all(type(x) is str for x in val):
                    if (ft.kind == "text" or ft.kind == "keyword") and ft.type != "ip":
                        if val:
                            got = parsed.get(path)
                            if got is None:
                                parsed[path] = [val] if t is str else list(val)
                            elif t is str:
                                got.append(val)
                            else:
                                got.extend(val)
                        elif t is str:
                            parsed.setdefault(path, []).append(val)
                        continue
                elif t is int and ft.type == "long" and LONG_MIN <= val <= LONG_MAX:
                    parsed.setdefault(path, []).append(val)
                    continue
            self._value(path, val, level)

    def _value(self, path: str, val: Any, level: int) -> None:
        """One value that took no shortcut: an object, an array, or a leaf."""
        fields = self.fields
        ft = fields.get(path)
        if ft is not None and ft.type == "alias":
            raise MapperParsing("failed to parse", caused_by={
                "type": "illegal_argument_exception",
                "reason": f"Cannot write to a field alias [{path}]."})
        if ft is not None and ft.type == "completion":   # kept in _source (completion.py)
            document_inputs(val, ft.contexts, path)
            return
        if ft is not None and (ft.kind == "geo" or ft.kind == "binary"):
            self.parsed.setdefault(path, []).extend(typed_values(ft, val, self.doc_id))
            return
        if ft is not None and ft.kind == "range":
            for item in _flatten_list(val, path) if isinstance(val, list) else [val]:
                if item is not None:
                    self.parsed.setdefault(path, []).extend(range_pair(item, ft, self.doc_id))
            return
        if self.disabled and _under_disabled(path, self.disabled):
            return                  # enabled: false: kept in _source only, whatever it holds
        if self.nested and path in self.nested:
            self._nested(path, val, level)
        elif isinstance(val, dict):
            if path in fields and fields[path].kind != "other":
                raise _coerce_error_object(fields[path], val, self.doc_id)
            if fields.get(path) is not None:
                return
            if path not in self.objects and self.allow_dynamic and path not in self.pending:
                set_path(self.new_props, path, {"type": "object"}, obj_only=True)
            self.walk(val, path + ".", level + 1)
        elif isinstance(val, list):
            for item in _flatten_list(val, path):
                if isinstance(item, dict):
                    self.walk(item, path + ".", level + 1)
                else:
                    self.leaf(path, item)
        else:
            self.leaf(path, val)

    def _nested(self, path: str, val: Any, level: int) -> None:
        """Each object of a nested field becomes a child document (``nested.py``); with
        ``include_in_parent`` / ``include_in_root`` its values are also copied up."""
        spec = self.nested[path]
        items = [val] if isinstance(val, dict) else (
            _flatten_list(val, path) if isinstance(val, list) else [val])
        for offset, obj in enumerate(x for x in items if x is not None):
            if not isinstance(obj, dict):
                raise MapperParsing(f"object mapping [{path}] trying to serialize a value with "
                                    f"no field associated with it, current value [{obj}]",
                                    es_type="document_parsing_exception")
            row: list[Any] = [path, self.up, offset, {}]
            saved, saved_up = self.parsed, self.up
            self.up = len(self.children)
            self.children.append(row)
            self.parsed = row[3]
            try:
                self.walk(obj, path + ".", level + 1)
            finally:
                self.parsed, self.up = saved, saved_up
            targets = [saved] if spec.include_in_parent else []
            if spec.include_in_root and self.root is not saved:
                targets.append(self.root)
            for target in targets:
                for fname, values in row[3].items():
                    target.setdefault(fname, []).extend(values)

    def leaf(self, path: str, value: Any) -> None:
        """A scalar at ``path``: coerced into its field (and multi-fields), or mapped anew."""
        fields, pending = self.fields, self.pending
        if value is None:
            ft0 = fields.get(path) or pending.get(path)
            if ft0 is not None and ft0.null_value is not None:
                value = ft0.null_value
            else:
                return
        ft = fields.get(path) or pending.get(path)
        if ft is None:
            ft = self._new_field(path, value)
            if ft is None:
                return
        if ft.kind == "other":
            return
        parsed = self.parsed
        if self._coerced(value, ft, path):
            parsed.setdefault(path, []).append(self.last)
        for sub_path in self.multi.get(path) or self.pending_multi.get(path, ()):
            sub_ft = fields.get(sub_path) or pending[sub_path]
            if sub_ft.kind == "other" or not self._coerced(value, sub_ft, sub_path):
                continue
            sv = self.last
            if sub_ft.kind == "keyword" and sub_ft.ignore_above is not None \
                    and len(sv) > sub_ft.ignore_above:
                continue
            parsed.setdefault(sub_path, []).append(sv)

    def _coerced(self, value: Any, ft: FieldType, path: str) -> bool:
        """``value`` coerced into ``ft`` (in ``self.last``); False when it is malformed and the
        field ignores malformed values: the document is indexed without it, and ``_ignored``
        names the field (Elasticsearch's ``ignore_malformed``)."""
        try:
            self.last = _coerce(value, ft, self.doc_id)
            return True
        except MapperParsing:
            ignore = ft.ignore_malformed
            if ft.type not in IGNORE_MALFORMED_TYPES or not (
                    self.ignore_default if ignore is None else ignore):
                raise
            self.ignored.append(path)
            return False

    def _new_field(self, path: str, value: Any) -> FieldType | None:
        """Dynamic mapping of an unmapped ``path`` (None: the value is dropped)."""
        if path in self.objects:
            raise MapperParsing(f"object mapping for [{path}] tried to parse field [{path}] "
                                "as object, but found a concrete value")
        if self.strict:
            raise MapperParsing(f"[{path}] dynamic mapping is set to strict, but dynamic "
                                f"introduction of [{path}] within [_doc] is not allowed",
                                es_type="strict_dynamic_mapping_exception")
        if not self.allow_dynamic:
            return None
        spec = _dynamic_spec(value)
        if spec is None:
            return None
        set_path(self.new_props, path, spec)
        ft = field_type(path, spec["type"], spec)
        self.pending[path] = ft
        for sub, sub_spec in (spec.get("fields") or {}).items():
            self.pending[f"{path}.{sub}"] = field_type(f"{path}.{sub}", sub_spec["type"], sub_spec)
            self.pending_multi.setdefault(path, []).append(f"{path}.{sub}")
        return ft


# the key under which ``_parse_flat`` notes a string long enough to be an immense term
_LONG_STRINGS = "\x00long strings"
_MAY_BE_IMMENSE = MAX_TERM_BYTES // 4   # characters (a character is at most 4 UTF-8 bytes)


def _parse_flat(source: dict[str, Any], plan: dict[str, str]) -> ParsedDoc | None:
    """``parse_document`` of a flat document whose every key is in ``plan`` with a value of
    the planned kind (strings, lists of strings, longs); None for any other document.
    Notes ``_LONG_STRINGS`` when a string may be an immense term, so that ordinary documents
    are not walked a second time for ``check_immense_terms``."""
    parsed: ParsedDoc = {}
    for key, val in source.items():
        k = plan.get(key)
        if k is None:
            return None
        t = type(val)
        if k == "s":
            if t is str:
                parsed[key] = [val]
                if len(val) > _MAY_BE_IMMENSE:
                    parsed[_LONG_STRINGS] = True
                continue
            if t is list:
                for x in val:
                    if type(x) is not str:
                        return None
                    if len(x) > _MAY_BE_IMMENSE:
                        parsed[_LONG_STRINGS] = True
                if val:
                    parsed[key] = list(val)
                continue
            return None
        if t is int and LONG_MIN <= val <= LONG_MAX:
            parsed[key] = [val]
            continue
        return None
    return parsed


def typed_values(ft: FieldType, value: Any, doc_id: str | None) -> list[Any]:
    """A ``geo_point`` or ``binary`` value (``binary.py``); ``null_value`` stands for null."""
    if value is None:
        value = ft.null_value
    try:
        return special_values(ft, value) if value is not None else []
    except (GeoValueError, BinaryValueError) as e:
        tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
        raise MapperParsing(f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
                            f"Preview of field's value: '{_preview(value)}'",
                            caused_by={"type": "illegal_argument_exception",
                                       "reason": str(e)}) from None


def _coerce_error_object(ft: FieldType, value: Any, doc_id: str | None) -> MapperParsing:
    tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
    return MapperParsing(f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
                         f"Preview of field's value: '{_preview(value)}'")


_FAST_PATHS = True             # parse_document's shortcuts (tests compare them with the plain path)
MAX_TOTAL_FIELDS = 1000        # index.mapping.total_fields.limit
MAX_ARRAY_NESTING = 100        # arrays in arrays (kept well below what we can serialise)


def _flatten_list(values: list[Any], path: str = "") -> list[Any]:
    """Arrays of arrays are one array of values (iteratively: nesting depth is untrusted)."""
    out: list[Any] = []
    stack: list[tuple[list[Any], int]] = [(values, 0)]
    while stack:
        cur, start = stack.pop()
        for i in range(start, len(cur)):
            v = cur[i]
            if isinstance(v, list):
                if len(stack) + 1 >= MAX_ARRAY_NESTING:
                    raise MapperParsing(f"failed to parse field [{path}]: arrays nested more "
                                        f"than [{MAX_ARRAY_NESTING}] levels deep")
                stack.append((cur, i + 1))
                stack.append((v, 0))
                break
            out.append(v)
    return out


def stored_fields(source: bytes, mapping: Mapping, doc_id: str) -> dict[str, list[Any]]:
    """The indexed fields of a stored ``_source`` (a snapshot's document): it parsed once when
    it was written, so a failure now (a mapping since changed) keeps the source, unindexed."""
    try:
        return dict(parse_document(orjson.loads(source), mapping, doc_id, dynamic=False)[0])
    except Exception:  # noqa: BLE001 - a stored document always parsed once; keep its source
        return {}


def _under_disabled(path: str, disabled: frozenset[str]) -> bool:
    """Whether ``path`` is an object mapped ``enabled: false`` or lies under one, whether the
    document nests it or spells it with dots (``{"d.q": 1}`` is ``d``'s, as Elasticsearch
    expands dotted names first)."""
    return path in disabled or any(path.startswith(d + ".") for d in disabled)
