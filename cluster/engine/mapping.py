"""An index's mapping: the ``properties`` tree, its flat view, and which documents it takes.

The coordinator owns each index's mapping and grows it by dynamic mapping
(``doc_parsing.py``); documents whose shape the mapping already takes without fail
(``Mapping.accepts``, ``doc_shape.py``) skip the coordinator's parse. Field types are in
``field_types.py``, the ``properties`` tree in ``properties.py``, dates in ``dates.py``.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..errors import IllegalArgument, MapperParsing
from .doc_shape import Shape, shape_fits
from .field_alias import alias_targets, check_alias_targets
from .field_types import IGNORED_FIELD, METADATA_FIELDS, FieldType
from .nested import NestedPath, check_nested_mapping, nested_paths
from .properties import (disabled_objects, flatten_properties, merge_properties,
                         validate_properties)


@dataclass
class Mapping:
    """An index's mapping: the Elasticsearch-shaped ``properties`` tree and its flat view."""

    properties: dict[str, Any] = field(default_factory=dict)
    dynamic: Any = True
    version: int = 0
    source_enabled: bool = True   # ``_source: {enabled: false}``: hits and gets show no source
    ignore_malformed: bool = False      # index.mapping.ignore_malformed: each field's default

    def __post_init__(self) -> None:
        self._flat: dict[str, FieldType] | None = None
        self._objects: set[str] | None = None
        self._multi: dict[str, list[str]] | None = None
        self._accepts: dict[Shape, bool] = {}
        self._plan: dict[str, str] | None = None
        self._nested: dict[str, NestedPath] | None = None
        self._aliases: dict[str, str] | None = None
        self._disabled: frozenset[str] | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any] | None, whole: bool = True) -> Mapping:
        """Build from the ``mappings`` object of an index-creation body (validated; field
        aliases once ``whole``: an update's aliases may point at fields mapped before)."""
        body = body or {}
        if not isinstance(body, dict):
            raise MapperParsing("Failed to parse mapping: mappings must be an object")
        if "_doc" in body and isinstance(body["_doc"], dict) and len(body) == 1:
            body = body["_doc"]
        _check_root_keys(body)
        props = body.get("properties", {}) or {}
        if not isinstance(props, dict):
            raise MapperParsing("Failed to parse mapping: [properties] must be an object")
        validate_properties(props, "")
        check_nested_mapping(props)
        if whole:
            _check_aliases(props)
        return cls(properties=copy.deepcopy(props), dynamic=body.get("dynamic", True),
                   source_enabled=_source_enabled(body))

    def to_body(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if not self.source_enabled:
            out["_source"] = {"enabled": False}
        if self.dynamic is not True:
            out["dynamic"] = self.dynamic
        if self.properties:
            out["properties"] = self.properties
        return out

    def merge(self, body: dict[str, Any]) -> None:
        """Add fields from a ``PUT _mapping`` body; changing an existing field's type fails."""
        other = Mapping.from_body(body, whole=False)
        if "_source" in body and other.source_enabled != self.source_enabled:
            raise IllegalArgument("Mapper for [_source] conflicts with existing mapper:\n\t"
                                  "Cannot update parameter [enabled] from "
                                  f"[{_java(self.source_enabled)}] to "
                                  f"[{_java(other.source_enabled)}]")
        merged = copy.deepcopy(self.properties)   # applied only once it passes every check
        merge_properties(merged, other.properties, "")
        check_nested_mapping(merged)
        _check_aliases(merged)
        self.properties = merged
        if "dynamic" in body:
            self.dynamic = body["dynamic"]
        self._invalidate()

    def _invalidate(self) -> None:
        self._flat = None
        self._objects = None
        self._multi = None
        self._accepts = {}
        self._plan = None
        self._nested = None
        self._aliases = None
        self._disabled = None
        self.version += 1

    @property
    def fields(self) -> dict[str, FieldType]:
        if self._flat is None:
            flat: dict[str, FieldType] = {}
            objects: set[str] = set()
            multi: dict[str, list[str]] = {}
            flatten_properties(self.properties, "", flat, objects, multi)
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

    @property
    def nested(self) -> dict[str, NestedPath]:
        """The ``nested`` object fields (``nested.py``), outermost first."""
        if self._nested is None:
            self._nested = nested_paths(self.properties)
        return self._nested

    @property
    def aliases(self) -> dict[str, str]:
        """Field aliases: ``alias path -> target path`` (``field_alias.py``)."""
        if self._aliases is None:
            self._aliases = alias_targets(self.properties)
        return self._aliases

    @property
    def disabled(self) -> frozenset[str]:
        """Objects mapped ``enabled: false`` (``properties.disabled_objects``)."""
        if self._disabled is None:
            self._disabled = disabled_objects(self.properties)
        return self._disabled

    def resolve(self, path: str) -> str:
        """The concrete field a name reads: an alias's target, any other name itself."""
        return self.aliases.get(path, path) if self.aliases else path

    def get(self, path: str) -> FieldType | None:
        """A mapped field, or ``_ignored`` (queryable and aggregatable as in Elasticsearch).
        An alias gives its target's type, as Elasticsearch's field type lookup does (the
        alias's own entry is in ``fields``)."""
        ft = self.fields.get(path)
        if ft is not None and ft.type == "alias":
            return self.fields.get(self.resolve(path))
        return IGNORED_FIELD if ft is None and path == "_ignored" else ft

    @property
    def flat_plan(self) -> dict[str, str]:
        """Top-level fields a flat document's values go to as they are: ``s`` (text or
        keyword, no multi-fields) or ``l`` (long). ``parse_document``'s fastest case."""
        if self._plan is None:
            plan: dict[str, str] = {}
            multi = self.multi
            for path, ft in self.fields.items():
                if "." in path or path in multi or path in METADATA_FIELDS:
                    continue
                if ft.kind in ("text", "keyword") and ft.type != "ip":
                    plan[path] = "s"
                elif ft.type == "long":
                    plan[path] = "l"
            self._plan = plan
        return self._plan

    def accepts(self, shape: Shape | str | None) -> bool:
        """Documents of ``shape`` (``doc_shape``, or its ``shape_text``) parse into this
        mapping without fail and without adding a field. Cached per shape until the mapping
        changes."""
        if shape is None:
            return False
        ok = self._accepts.get(shape)
        if ok is None:
            if len(self._accepts) > 4096:
                self._accepts.clear()
            ok = self._accepts[shape] = shape_fits(shape, self)
        return ok

    def __getstate__(self) -> dict[str, Any]:
        return {"properties": self.properties, "dynamic": self.dynamic, "version": self.version,
                "source_enabled": self.source_enabled, "ignore_malformed": self.ignore_malformed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.properties = state["properties"]
        self.dynamic = state["dynamic"]
        self.version = state["version"]
        self.source_enabled = state.get("source_enabled", True)
        self.ignore_malformed = state.get("ignore_malformed", False)
        self._flat = None
        self._objects = None
        self._multi = None
        self._accepts = {}
        self._plan = None
        self._nested = None
        self._aliases = None
        self._disabled = None


ROOT_KEYS = ("properties", "dynamic", "_source")


def _check_aliases(props: dict[str, Any]) -> None:
    """Every alias of a (new or merged) tree points at a concrete field of its nested scope."""
    aliases = alias_targets(props)
    if aliases:
        tmp = Mapping(properties=props)
        concrete = {p for p, ft in tmp.fields.items() if ft.type != "alias"}
        check_alias_targets(aliases, concrete, list(tmp.nested))


def _source_enabled(body: dict[str, Any]) -> bool:
    """``_source: {enabled: false}`` (the one ``_source`` option built here): the documents are
    kept — the write-ahead log and snapshots need them, and nothing is lost — but no hit, get
    or aggregation shows them, as Elasticsearch, which does not store them."""
    spec = body.get("_source")
    if spec is None:
        return True
    if not isinstance(spec, dict) or set(spec) - {"enabled"} \
            or not isinstance(spec.get("enabled", True), bool):
        raise MapperParsing("Failed to parse mapping: Root mapping definition has unsupported "
                            f"parameters:  [_source : {_java(spec)}]")
    return spec.get("enabled", True)


def _check_root_keys(body: dict[str, Any]) -> None:
    """Root mapping parameters we do not implement (``_source`` options, ``_routing``,
    ``dynamic_templates``, ``date_detection``, ``runtime``, ``_meta``...) are refused as
    Elasticsearch refuses unknown ones, never accepted and ignored."""
    extra = [k for k in body if k not in ROOT_KEYS]
    if extra:
        listed = ", ".join(f"{k} : {_java(body[k])}" for k in extra)
        raise MapperParsing("Failed to parse mapping: Root mapping definition has unsupported "
                            f"parameters:  [{listed}]")


def _java(value: Any) -> str:
    """A value as Java's ``Map.toString`` shows it (Elasticsearch's message quotes it so)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
