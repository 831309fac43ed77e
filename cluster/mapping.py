"""Field types, dynamic mapping, and turning a JSON document into typed field values.

The coordinator owns each index's mapping. Before a document reaches its shard, the coordinator
parses it here: new fields are added the way Elasticsearch's dynamic mapping adds them (string ->
``text`` with a ``.keyword`` sub-field, or ``date`` when it looks like an ISO date; integer ->
``long``; other number -> ``float``; boolean -> ``boolean``; objects flatten to dotted paths;
arrays hold several values), and values that do not fit their field fail *that document* with
``mapper_parsing_exception``. The shard receives typed values and never guesses.
"""
from __future__ import annotations

import copy
import datetime as _dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import MapperParsing

NUMERIC_TYPES = {"long", "integer", "short", "byte", "double", "float", "half_float",
                 "scaled_float", "unsigned_long"}
INTEGER_TYPES = {"long", "integer", "short", "byte", "unsigned_long"}
_INT_RANGES = {"long": (-(2**63), 2**63 - 1), "integer": (-(2**31), 2**31 - 1),
               "short": (-(2**15), 2**15 - 1), "byte": (-128, 127),
               "unsigned_long": (0, 2**64 - 1)}
DATE_TYPES = {"date", "date_nanos"}
KEYWORD_TYPES = {"keyword", "constant_keyword", "wildcard", "ip", "version"}
TEXT_TYPES = {"text", "match_only_text"}
OBJECT_TYPES = {"object", "nested", "flattened"}
SUPPORTED_TYPES = (NUMERIC_TYPES | DATE_TYPES | KEYWORD_TYPES | TEXT_TYPES | OBJECT_TYPES
                   | {"boolean", "dense_vector", "sparse_vector", "rank_features", "binary",
                      "geo_point", "alias"})


@dataclass(frozen=True)
class FieldType:
    """One indexed field (a leaf, or a multi-field like ``title.keyword``)."""

    path: str
    type: str
    analyzer: str = "standard"
    search_analyzer: str | None = None
    ignore_above: int | None = None
    index: bool = True
    doc_values: bool = True
    format: str | None = None
    null_value: Any = None

    @property
    def kind(self) -> str:
        """How the engine stores it: ``text``, ``keyword``, ``numeric``, ``date``, ``boolean``."""
        if self.type in TEXT_TYPES:
            return "text"
        if self.type in KEYWORD_TYPES:
            return "keyword"
        if self.type in NUMERIC_TYPES:
            return "numeric"
        if self.type in DATE_TYPES:
            return "date"
        if self.type == "boolean":
            return "boolean"
        return "other"

    @property
    def is_integer(self) -> bool:
        return self.type in INTEGER_TYPES or self.type in DATE_TYPES


@dataclass
class Mapping:
    """An index's mapping: the Elasticsearch-shaped ``properties`` tree and its flat view."""

    properties: dict[str, Any] = field(default_factory=dict)
    dynamic: Any = True
    version: int = 0

    def __post_init__(self) -> None:
        self._flat: dict[str, FieldType] | None = None
        self._objects: set[str] | None = None
        self._multi: dict[str, list[str]] | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any] | None) -> Mapping:
        """Build from the ``mappings`` object of an index-creation body (validated)."""
        body = body or {}
        if not isinstance(body, dict):
            raise MapperParsing("Failed to parse mapping: mappings must be an object")
        if "_doc" in body and isinstance(body["_doc"], dict) and len(body) == 1:
            body = body["_doc"]
        props = body.get("properties", {}) or {}
        if not isinstance(props, dict):
            raise MapperParsing("Failed to parse mapping: [properties] must be an object")
        _validate_properties(props, "")
        return cls(properties=copy.deepcopy(props), dynamic=body.get("dynamic", True))

    def to_body(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.dynamic is not True:
            out["dynamic"] = self.dynamic
        if self.properties:
            out["properties"] = self.properties
        return out

    def merge(self, body: dict[str, Any]) -> None:
        """Add fields from a ``PUT _mapping`` body; changing an existing field's type fails."""
        other = Mapping.from_body(body)
        _merge_properties(self.properties, other.properties, "")
        if "dynamic" in body:
            self.dynamic = body["dynamic"]
        self._invalidate()

    def _invalidate(self) -> None:
        self._flat = None
        self._objects = None
        self._multi = None
        self.version += 1

    @property
    def fields(self) -> dict[str, FieldType]:
        if self._flat is None:
            flat: dict[str, FieldType] = {}
            objects: set[str] = set()
            multi: dict[str, list[str]] = {}
            _flatten(self.properties, "", flat, objects, multi)
            self._flat, self._objects, self._multi = flat, objects, multi
        return self._flat

    @property
    def multi(self) -> dict[str, list[str]]:
        """Multi-fields of each field (``title`` -> ``["title.keyword"]``)."""
        self.fields  # noqa: B018 - builds the cache
        assert self._multi is not None
        return self._multi

    @property
    def objects(self) -> set[str]:
        self.fields  # noqa: B018 - builds the cache
        assert self._objects is not None
        return self._objects

    def get(self, path: str) -> FieldType | None:
        return self.fields.get(path)

    def __getstate__(self) -> dict[str, Any]:
        return {"properties": self.properties, "dynamic": self.dynamic, "version": self.version}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.properties = state["properties"]
        self.dynamic = state["dynamic"]
        self.version = state["version"]
        self._flat = None
        self._objects = None
        self._multi = None


def _validate_properties(props: dict[str, Any], prefix: str) -> None:
    for name, spec in props.items():
        path = prefix + name
        if not isinstance(spec, dict):
            raise MapperParsing(f"Expected map for property [fields] on field [{path}] but got a "
                                f"class {type(spec).__name__}")
        ftype = spec.get("type", "object" if "properties" in spec else None)
        if ftype is None:
            ftype = "object"
        if ftype not in SUPPORTED_TYPES:
            raise MapperParsing(f"No handler for type [{ftype}] declared on field [{name}]")
        if "properties" in spec:
            if not isinstance(spec["properties"], dict):
                raise MapperParsing(f"Failed to parse mapping: [properties] of [{path}] must be "
                                    "an object")
            _validate_properties(spec["properties"], path + ".")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            _validate_properties({sub: sub_spec}, path + ".")


def _merge_properties(into: dict[str, Any], new: dict[str, Any], prefix: str) -> None:
    for name, spec in new.items():
        path = prefix + name
        if name not in into:
            into[name] = copy.deepcopy(spec)
            continue
        old = into[name]
        old_type = old.get("type", "object")
        new_type = spec.get("type", "object" if "properties" in spec else old_type)
        if old_type != new_type:
            raise MapperParsing(f"mapper [{path}] cannot be changed from type [{old_type}] to "
                                f"[{new_type}]", es_type="illegal_argument_exception")
        if "properties" in spec:
            old.setdefault("properties", {})
            _merge_properties(old["properties"], spec["properties"], path + ".")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            old.setdefault("fields", {})
            if sub not in old["fields"]:
                old["fields"][sub] = copy.deepcopy(sub_spec)


def _flatten(props: dict[str, Any], prefix: str, flat: dict[str, FieldType],
             objects: set[str], multi: dict[str, list[str]]) -> None:
    for name, spec in props.items():
        path = prefix + name
        ftype = spec.get("type", "object" if "properties" in spec or "type" not in spec else None)
        if ftype in OBJECT_TYPES:
            objects.add(path)
            _flatten(spec.get("properties", {}) or {}, path + ".", flat, objects, multi)
            continue
        flat[path] = _field_type(path, ftype, spec)
        for sub, sub_spec in (spec.get("fields") or {}).items():
            sub_type = sub_spec.get("type", "keyword")
            flat[f"{path}.{sub}"] = _field_type(f"{path}.{sub}", sub_type, sub_spec)
            multi.setdefault(path, []).append(f"{path}.{sub}")


def _field_type(path: str, ftype: str, spec: dict[str, Any]) -> FieldType:
    return FieldType(path=path, type=ftype, analyzer=spec.get("analyzer", "standard"),
                     search_analyzer=spec.get("search_analyzer"),
                     ignore_above=spec.get("ignore_above"), index=spec.get("index", True),
                     doc_values=spec.get("doc_values", True), format=spec.get("format"),
                     null_value=spec.get("null_value"))


# --- dates -----------------------------------------------------------------------------------

_ISO_RE = re.compile(
    r"^(?P<y>[+-]?\d{4,9})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[T ](?P<H>\d{2})(?::(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d{1,9}))?)?)?"
    r"(?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$"
)
_SLASH_RE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?(?: ?([+-]\d{4}|Z))?$")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def looks_like_date(value: str) -> bool:
    """Dynamic date detection (``strict_date_optional_time`` and ``yyyy/MM/dd``)."""
    if len(value) < 8 or not value[:4].isdigit():
        return False
    m = _ISO_RE.match(value)
    if m and m.group("m") and m.group("d"):
        try:
            parse_date_nanos(value)
            return True
        except ValueError:
            return False
    return bool(_SLASH_RE.match(value))


def parse_date_nanos(value: Any, fmt: str | None = None) -> int:
    """Nanoseconds since the epoch (UTC) for an ISO date string or epoch-millis number."""
    if isinstance(value, bool):
        raise ValueError("boolean is not a date")
    if isinstance(value, (int, float)):
        if fmt and "epoch_second" in fmt and "epoch_millis" not in fmt:
            return int(round(value * 1_000_000_000))
        return int(round(value * 1_000_000))
    if not isinstance(value, str):
        raise ValueError("not a date")
    s = value.strip()
    if fmt and ("epoch_millis" in fmt or "epoch_second" in fmt) and re.fullmatch(r"-?\d+(\.\d+)?", s):
        num = float(s)
        if "epoch_millis" in fmt:
            return int(round(num * 1_000_000))
        return int(round(num * 1_000_000_000))
    m = _ISO_RE.match(s)
    if m:
        y = int(m.group("y"))
        mo = int(m.group("m") or 1)
        d = int(m.group("d") or 1)
        hh = int(m.group("H") or 0)
        mi = int(m.group("M") or 0)
        ss = int(m.group("S") or 0)
        frac = (m.group("f") or "").ljust(9, "0")
        nanos = int(frac) if frac else 0
        tz = m.group("tz")
        offset = 0
        if tz and tz != "Z":
            sign = -1 if tz[0] == "-" else 1
            digits = tz[1:].replace(":", "")
            offset = sign * (int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60)
        dt = _dt.datetime(y, mo, d, hh, mi, ss, tzinfo=_dt.timezone.utc)
        secs = (dt - _EPOCH) // _dt.timedelta(seconds=1) - offset
        return secs * 1_000_000_000 + nanos
    m2 = _SLASH_RE.match(s)
    if m2:
        y, mo, d = int(m2.group(1)), int(m2.group(2)), int(m2.group(3))
        hh, mi, ss = (int(m2.group(i) or 0) for i in (4, 5, 6))
        dt = _dt.datetime(y, mo, d, hh, mi, ss, tzinfo=_dt.timezone.utc)
        secs = (dt - _EPOCH) // _dt.timedelta(seconds=1)
        tz = m2.group(7)
        if tz and tz != "Z":
            sign = -1 if tz[0] == "-" else 1
            secs -= sign * (int(tz[1:3]) * 3600 + int(tz[3:5]) * 60)
        return secs * 1_000_000_000
    if re.fullmatch(r"-?\d+", s):
        return int(s) * 1_000_000
    raise ValueError(f"failed to parse date field [{value}]")


def parse_date(value: Any, ftype: FieldType | None = None) -> int:
    """The stored integer for a date: millis for ``date``, nanos for ``date_nanos``."""
    nanos = parse_date_nanos(value, ftype.format if ftype else None)
    if ftype is not None and ftype.type == "date_nanos":
        return nanos
    return nanos // 1_000_000


def format_date(stored: int, ftype: FieldType | None, fmt: str | None = None) -> str | int:
    """Render a stored date as Elasticsearch does in ``sort`` values with a ``format``."""
    is_nanos = ftype is not None and ftype.type == "date_nanos"
    nanos = stored if is_nanos else stored * 1_000_000
    if fmt in ("epoch_millis",):
        return str(nanos // 1_000_000)
    secs, rem = divmod(nanos, 1_000_000_000)
    dt = _EPOCH + _dt.timedelta(seconds=secs)
    if fmt and "nanos" in fmt:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rem:09d}Z"
    if fmt in ("strict_date_optional_time", "date_optional_time", "strict_date_time",
               "date_time", None) or fmt:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rem // 1_000_000:03d}Z"
    return stored


# --- parsing documents -----------------------------------------------------------------------

ParsedDoc = dict[str, list[Any]]


def _preview(value: Any) -> str:
    s = value if isinstance(value, str) else repr(value)
    return s[:20]


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
    if isinstance(value, (dict, list)):
        raise fail("field value is an object or array")
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
            lo, hi = _INT_RANGES[ft.type]
            if not lo <= num <= hi:
                raise fail(f"Value [{num}] is out of range for a {ft.type}")
            return int(num)
        if ft.type in ("float", "half_float"):
            import numpy as np
            return float(np.float32(num))
        return float(num)
    if kind == "date":
        try:
            return parse_date(value, ft)
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
    new_props: dict[str, Any] = {}
    parsed: ParsedDoc = {}
    allow_dynamic = dynamic and mapping.dynamic not in (False, "false", "strict")
    strict = mapping.dynamic in ("strict",)
    fields = mapping.fields
    objects = mapping.objects
    pending: dict[str, FieldType] = {}
    pending_multi: dict[str, list[str]] = {}

    def leaf(path: str, value: Any) -> None:
        if value is None:
            ft0 = fields.get(path) or pending.get(path)
            if ft0 is not None and ft0.null_value is not None:
                value = ft0.null_value
            else:
                return
        ft = fields.get(path) or pending.get(path)
        if ft is None:
            if path in objects:
                raise MapperParsing(f"object mapping for [{path}] tried to parse field [{path}] "
                                    "as object, but found a concrete value")
            if strict:
                raise MapperParsing(f"[{path}] dynamic mapping is set to strict, but dynamic "
                                    f"introduction of [{path}] within [_doc] is not allowed",
                                    es_type="strict_dynamic_mapping_exception")
            if not allow_dynamic:
                return
            spec = _dynamic_spec(value)
            if spec is None:
                return
            _set_path(new_props, path, spec)
            ft = _field_type(path, spec["type"], spec)
            pending[path] = ft
            for sub, sub_spec in (spec.get("fields") or {}).items():
                pending[f"{path}.{sub}"] = _field_type(f"{path}.{sub}", sub_spec["type"], sub_spec)
                pending_multi.setdefault(path, []).append(f"{path}.{sub}")
        if ft.kind == "other":
            return
        stored = _coerce(value, ft, doc_id)
        parsed.setdefault(path, []).append(stored)
        for sub_path in mapping.multi.get(path) or pending_multi.get(path, ()):
            sub_ft = fields.get(sub_path) or pending[sub_path]
            if sub_ft.kind == "other":
                continue
            sv = _coerce(value, sub_ft, doc_id)
            if sub_ft.kind == "keyword" and sub_ft.ignore_above is not None \
                    and len(sv) > sub_ft.ignore_above:
                continue
            parsed.setdefault(sub_path, []).append(sv)

    def walk(obj: Any, prefix: str) -> None:
        if isinstance(obj, dict):
            ft = fields.get(prefix[:-1]) if prefix else None
            if ft is not None and ft.kind != "other":
                raise _coerce_error_object(ft, obj, doc_id)
            for key, val in obj.items():
                if not isinstance(key, str) or key == "" or key.strip() == "":
                    raise MapperParsing("field name cannot be an empty string")
                if prefix == "" and key.startswith("_") and key in _METADATA_FIELDS:
                    raise MapperParsing(f"Field [{key}] is a metadata field and cannot be added "
                                        "inside a document. Use the index API request "
                                        "parameters.", es_type="document_parsing_exception")
                path = prefix + key
                if isinstance(val, dict):
                    if path in fields and fields[path].kind != "other":
                        raise _coerce_error_object(fields[path], val, doc_id)
                    if fields.get(path) is not None:
                        continue
                    if path not in objects and allow_dynamic and path not in pending:
                        _set_path(new_props, path, {"type": "object"}, obj_only=True)
                    walk(val, path + ".")
                elif isinstance(val, list):
                    for item in _flatten_list(val):
                        if isinstance(item, dict):
                            walk(item, path + ".")
                        else:
                            leaf(path, item)
                else:
                    leaf(path, val)

    walk(source, "")
    changed = False
    if new_props:
        _merge_properties(mapping.properties, _strip_object_markers(new_props), "")
        mapping._invalidate()
        changed = True
    return parsed, changed


_METADATA_FIELDS = {"_id", "_index", "_source", "_routing", "_version", "_seq_no",
                    "_primary_term", "_field_names", "_ignored", "_tier", "_doc_count"}


def _coerce_error_object(ft: FieldType, value: Any, doc_id: str | None) -> MapperParsing:
    tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
    return MapperParsing(f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
                         f"Preview of field's value: '{_preview(value)}'")


def _flatten_list(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, list):
            out.extend(_flatten_list(v))
        else:
            out.append(v)
    return out


def _set_path(props: dict[str, Any], path: str, spec: dict[str, Any],
              obj_only: bool = False) -> None:
    parts = path.split(".")
    cur = props
    for part in parts[:-1]:
        node = cur.setdefault(part, {"type": "object", "properties": {}})
        node.setdefault("properties", {})
        cur = node["properties"]
    if obj_only:
        node = cur.setdefault(parts[-1], {"type": "object", "properties": {}})
        node.setdefault("properties", {})
    else:
        cur[parts[-1]] = spec


def _strip_object_markers(props: dict[str, Any]) -> dict[str, Any]:
    """Dynamic objects are shown as ``{"properties": ...}`` (no ``type``), as ES does."""
    out: dict[str, Any] = {}
    for name, spec in props.items():
        if spec.get("type") == "object":
            inner = _strip_object_markers(spec.get("properties", {}))
            out[name] = {"properties": inner}
        else:
            out[name] = spec
    return out
