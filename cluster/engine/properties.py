"""A mapping's ``properties`` tree: validated, merged, flattened and grown, as plain dicts.

The tree keeps Elasticsearch's shape (``properties`` of objects, ``fields`` of multi-fields);
``flatten_properties`` gives the dotted paths the engine indexes. Dynamic mapping grows a tree of
new fields (``set_path``) and merges it in.
"""
from __future__ import annotations

import copy
from typing import Any

from .analysis import ANALYZERS
from ..errors import MapperParsing
from .completion import check_completion_mapping
from .field_alias import check_alias_spec
from .date_formats import InvalidFormat, validate_format
from .field_types import DATE_TYPES, IGNORE_MALFORMED_TYPES, OBJECT_TYPES, SUPPORTED_TYPES, FieldType, field_type

MAX_DEPTH = 20                 # index.mapping.depth.limit


def validate_properties(props: dict[str, Any], prefix: str) -> None:
    for name, spec in props.items():
        path = prefix + name
        if path.count(".") + 2 > MAX_DEPTH and isinstance(spec, dict) and "properties" in spec:
            raise MapperParsing(f"Limit of mapping depth [{MAX_DEPTH}] has been exceeded due to "
                                f"object field [{path}]", es_type="illegal_argument_exception")
        if not isinstance(spec, dict):
            raise MapperParsing(f"Expected map for property [fields] on field [{path}] but got a "
                                f"class {type(spec).__name__}")
        ftype = spec.get("type", "object" if "properties" in spec else None)
        if ftype is None:
            ftype = "object"
        if ftype not in SUPPORTED_TYPES:
            raise MapperParsing(f"No handler for type [{ftype}] declared on field [{name}]")
        if ftype == "alias":
            check_alias_spec(path, spec)
        if ftype == "completion":
            check_completion_mapping(name, spec)
        if ftype == "scaled_float":
            check_scaling_factor(name, spec.get("scaling_factor"))
        if ftype in DATE_TYPES:
            _check_date_params(name, spec)
        if "ignore_malformed" in spec:
            _check_ignore_malformed(name, ftype, spec["ignore_malformed"])
        for key in ("analyzer", "search_analyzer", "search_quote_analyzer"):
            if key in spec and spec[key] not in ANALYZERS:   # never analyzed some other way
                raise MapperParsing(f"Failed to parse mapping: analyzer [{spec[key]}] has not "
                                    "been configured in mappings")
        if "properties" in spec:
            if not isinstance(spec["properties"], dict):
                raise MapperParsing(f"Failed to parse mapping: [properties] of [{path}] must be "
                                    "an object")
            validate_properties(spec["properties"], path + ".")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            validate_properties({sub: sub_spec}, path + ".")


def _check_date_params(name: str, spec: dict[str, Any]) -> None:
    """A date field's ``format`` compiles, and ``ignore_malformed`` is a boolean."""
    fmt = spec.get("format")
    if fmt is not None:
        try:
            if not isinstance(fmt, str):
                raise InvalidFormat(f"Invalid format: [{fmt}]: a format must be a string")
            validate_format(fmt)
        except InvalidFormat as e:
            raise MapperParsing(f"Failed to parse mapping: Error parsing [format] on field "
                                f"[{name}]: {e}", caused_by={
                                    "type": "illegal_argument_exception",
                                    "reason": f"Error parsing [format] on field [{name}]: {e}"
                                }) from None


def _check_ignore_malformed(name: str, ftype: str, value: Any) -> None:
    """``ignore_malformed`` exists on the types it is implemented for, and is a boolean."""
    if ftype not in IGNORE_MALFORMED_TYPES:
        raise MapperParsing(f"Failed to parse mapping: unknown parameter [ignore_malformed] on "
                            f"mapper [{name}] of type [{ftype}]")
    if not isinstance(value, bool) and value not in ("true", "false"):
        raise MapperParsing(f"Failed to parse mapping: Failed to parse value [{value}] as only "
                            "[true] or [false] are allowed.")


def merge_properties(into: dict[str, Any], new: dict[str, Any], prefix: str) -> None:
    for name, spec in new.items():
        path = prefix + name
        if name not in into:
            into[name] = copy.deepcopy(spec)
            continue
        old = into[name]
        old_type = old.get("type", "object")
        new_type = spec.get("type", "object" if "properties" in spec and old_type != "nested"
                            else old_type)
        if old_type != new_type:
            raise MapperParsing(f"mapper [{path}] cannot be changed from type [{old_type}] to "
                                f"[{new_type}]", es_type="illegal_argument_exception")
        if new_type in ("object", "nested") and "enabled" in spec and \
                _enabled(spec) != _enabled(old):
            raise MapperParsing(f"the [enabled] parameter can't be updated for the object "
                                f"mapping [{path}]", es_type="illegal_argument_exception")
        if new_type == "alias":     # an alias may point elsewhere (checked once merged)
            old["path"] = spec.get("path")
        if "properties" in spec:
            old.setdefault("properties", {})
            merge_properties(old["properties"], spec["properties"], path + ".")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            old.setdefault("fields", {})
            if sub not in old["fields"]:
                old["fields"][sub] = copy.deepcopy(sub_spec)


def _enabled(spec: dict[str, Any]) -> bool:
    """An object's ``enabled`` (true unless it says false; ``"false"`` as JSON text too)."""
    return spec.get("enabled", True) not in (False, "false")


def flatten_properties(props: dict[str, Any], prefix: str, flat: dict[str, FieldType],
                       objects: set[str], multi: dict[str, list[str]]) -> None:
    for name, spec in props.items():
        path = prefix + name
        ftype = spec.get("type", "object" if "properties" in spec or "type" not in spec else None)
        if ftype in OBJECT_TYPES:
            objects.add(path)
            flatten_properties(spec.get("properties", {}) or {}, path + ".", flat, objects, multi)
            continue
        flat[path] = field_type(path, ftype, spec)
        for sub, sub_spec in (spec.get("fields") or {}).items():
            sub_type = sub_spec.get("type", "keyword")
            flat[f"{path}.{sub}"] = field_type(f"{path}.{sub}", sub_type, sub_spec)
            multi.setdefault(path, []).append(f"{path}.{sub}")


def disabled_objects(props: dict[str, Any], prefix: str = "") -> frozenset[str]:
    """Objects mapped ``enabled: false``: Elasticsearch keeps their content in ``_source``
    only (neither parsed, indexed nor mapped)."""
    out: set[str] = set()
    for name, spec in props.items():
        if not isinstance(spec, dict):
            continue
        if spec.get("enabled") in (False, "false"):
            out.add(prefix + name)
        elif isinstance(spec.get("properties"), dict):
            out |= disabled_objects(spec["properties"], prefix + name + ".")
    return frozenset(out)


def count_objects(props: dict[str, Any]) -> int:
    n = 0
    for spec in props.values():
        if spec.get("type") == "object":
            n += 1 + count_objects(spec.get("properties", {}))
    return n


def set_path(props: dict[str, Any], path: str, spec: dict[str, Any],
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


def strip_object_markers(props: dict[str, Any]) -> dict[str, Any]:
    """Dynamic objects are shown as ``{"properties": ...}`` (no ``type``), as ES does."""
    out: dict[str, Any] = {}
    for name, spec in props.items():
        if spec.get("type") == "object":
            inner = strip_object_markers(spec.get("properties", {}))
            out[name] = {"properties": inner}
        else:
            out[name] = spec
    return out


def check_scaling_factor(name: str, factor: Any) -> None:
    """A ``scaled_float`` needs a positive finite ``scaling_factor`` (Elasticsearch's texts)."""
    if factor is None:
        raise MapperParsing("Failed to parse mapping: Field [scaling_factor] is required")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) \
            or not 0 < factor < float("inf"):
        raise MapperParsing(f"Failed to parse mapping: [scaling_factor] must be a positive "
                            f"number, got [{factor}]")
