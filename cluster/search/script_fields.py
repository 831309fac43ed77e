"""``script_fields``: a value computed by a script for each hit of the page.

The scripts run on the coordinator over the page's documents only (at most ``size`` hits, each
script within its loop budget), after the fetch. ``doc['f']`` reads the field's doc values as
a shard would: the values of ``f`` (or of the parent of a multi-field) in ``_source``, sorted,
as the mapping types them (``long`` as a Java long, ``integer`` as an int, ``double`` ...).
Text fields have no doc values (Elasticsearch's fielddata error); an unmapped field is
Elasticsearch's "No field found"; date fields are refused (their values are ``ZonedDateTime``
objects in Painless, which this subset does not model).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.query.script_docs import doc_values_field
from ..engine.script import (SEARCH_CONTEXT, Compiled, DocField, ScriptError, compile_script,
                             json_value)
from ..engine.script.lexer import Long
from ..errors import ParsingError
from ..indices.catalog import IndexMeta
from .failures import shard_level

_KEYS = {"script", "ignore_failure"}


@dataclass(frozen=True)
class ScriptField:
    name: str
    script: Compiled
    ignore_failure: bool = False


def parse_script_fields(value: Any) -> tuple[ScriptField, ...]:
    """The body's ``script_fields`` object, each script compiled (compile errors now)."""
    if not isinstance(value, dict):
        raise ParsingError("[script_fields] must be an object")
    out = []
    for name, spec in value.items():
        if not isinstance(spec, dict) or "script" not in spec:
            raise ParsingError(f"[script_fields] field [{name}] must have a [script]")
        unknown = sorted(set(spec) - _KEYS)
        if unknown:
            raise ParsingError(f"Unknown key for a START_OBJECT in [{unknown[0]}].")
        out.append(ScriptField(name, compile_script(spec["script"], SEARCH_CONTEXT),
                               bool(spec.get("ignore_failure", False))))
    return tuple(out)


class DocLookup(dict):
    """``doc``: ``doc['f']`` built on first use from the hit's ``_source`` and mapping."""

    def __init__(self, source: dict[str, Any], meta: IndexMeta) -> None:
        super().__init__()
        self.source, self.meta = source, meta

    def get(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self[key] = doc_field(self.source, self.meta, key)
        return dict.get(self, key)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str)
                                                and self.meta.mapping.get(key) is not None)


def doc_field(source: dict[str, Any], meta: IndexMeta, name: Any) -> DocField:
    """The doc values of field ``name`` in this document (see the module docstring)."""
    ft = doc_values_field(meta.mapping, name)
    path = next((p for p, subs in meta.mapping.multi.items() if ft.path in subs), ft.path)
    values = [_typed(v, ft.type) for v in _values_at(source, path.split("."))]
    return DocField(name, sorted(v for v in values if v is not None))


def _values_at(node: Any, parts: list[str]) -> list[Any]:
    if isinstance(node, list):
        return [v for item in node for v in _values_at(item, parts)]
    if not parts:
        return [] if node is None or isinstance(node, dict) else [node]
    if not isinstance(node, dict):
        return []
    out = _values_at(node.get(parts[0]), parts[1:])
    dotted = ".".join(parts)       # a key written with dots: {"a.b": 1}
    if len(parts) > 1 and dotted in node:
        out += _values_at(node[dotted], [])
    return out


def _typed(value: Any, type_: str) -> Any:
    try:
        if type_ in ("long", "unsigned_long"):
            return Long(int(float(value)))
        if type_ in ("integer", "short", "byte"):
            return int(float(value))
        if type_ in ("double", "float", "half_float", "scaled_float"):
            return float(value)
        if type_ == "boolean":
            return value if isinstance(value, bool) else str(value) == "true"
    except (TypeError, ValueError):
        return None
    return str(value)


def script_values(fields: tuple[ScriptField, ...], source: dict[str, Any], meta: IndexMeta
                  ) -> dict[str, list[Any]]:
    """Each script field's value for one hit, as ES prints it (a list)."""
    out: dict[str, list[Any]] = {}
    doc = DocLookup(source, meta)
    for f in fields:
        try:
            value = json_value(f.script.source, f.script.run(
                {"doc": doc, "params": {**f.script.params, "_source": source}}))
        except ScriptError as e:
            if f.ignore_failure:
                continue
            raise shard_level(meta.name, e) from None
        out[f.name] = value if isinstance(value, list) else [value]
    return out

