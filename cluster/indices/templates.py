"""Composable index templates (``_index_template``): settings, mappings and aliases that a new
index whose name matches ``index_patterns`` starts with.

Elasticsearch's rules: at index creation (explicit or automatic) the matching template of the
highest ``priority`` applies; two templates with overlapping patterns may not share a priority;
the creation request's own settings win over the template's, its mappings are merged over the
template's (properties field by field), aliases are the union. Component templates
(``composed_of``) and data streams are not built: a template naming them is refused by name.
Pure functions over ``{name: template body}``.
"""
from __future__ import annotations

import copy
import fnmatch
from typing import Any

from ..errors import IllegalArgument, SearchError
from .aliases import alias_spec
from ..engine.mapping import Mapping
from .catalog import flat_settings, int_setting
from .component_templates import blocks, check_composed_of, invalid_name

_KEYS = {"index_patterns", "template", "priority", "version", "_meta", "composed_of",
         "data_stream", "allow_auto_create", "ignore_missing_component_templates",
         "deprecated"}
_TEMPLATE_KEYS = {"settings", "mappings", "aliases", "lifecycle"}
MAX_TEMPLATES = 1000


class TemplateMissing(SearchError):
    es_type = "resource_not_found_exception"
    status = 404


def _unsupported(key: str) -> IllegalArgument:
    return IllegalArgument(f"[{key}] is not supported by this server's index templates")


def parse_template(name: str, body: Any, existing: dict[str, dict[str, Any]],
                   components: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stored template from a ``PUT _index_template/{name}`` body, checked (the
    component templates it names must exist, and their merge must make a valid index)."""
    if not isinstance(body, dict):
        raise IllegalArgument("request body is required",
                              es_type="action_request_validation_exception")
    for key in body:
        if key not in _KEYS:
            raise IllegalArgument(f"[index_template] unknown field [{key}]",
                                  es_type="x_content_parse_exception")
    for key in ("data_stream", "ignore_missing_component_templates"):
        if body.get(key):
            raise _unsupported(key)
    if invalid_name(name):
        raise IllegalArgument(f"index_template [{name}] invalid, cause [name must be "
                              "lowercase and not contain spaces or special characters]",
                              es_type="invalid_index_template_exception")
    patterns = body.get("index_patterns")
    patterns = [patterns] if isinstance(patterns, str) else patterns
    if not patterns or not all(isinstance(p, str) and p for p in patterns):
        raise IllegalArgument("Validation Failed: 1: index patterns are missing;",
                              es_type="action_request_validation_exception")
    priority = body.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or priority < 0:
        raise IllegalArgument("Validation Failed: 1: index template priority must be >= 0;",
                              es_type="action_request_validation_exception")
    template = body.get("template") or {}
    if not isinstance(template, dict):
        raise IllegalArgument("[template] must be an object", es_type="parse_exception")
    for key in template:
        if key not in _TEMPLATE_KEYS - {"lifecycle"}:
            raise _unsupported(f"template.{key}") if key == "lifecycle" else \
                IllegalArgument(f"[template] unknown field [{key}]",
                                es_type="x_content_parse_exception")
    check_template(template)
    check_composed_of(name, body.get("composed_of"), components or {})
    _check_contents(compose(body, {}, components or {}))
    _check_overlap(name, patterns, priority, existing)
    out = copy.deepcopy(body)
    out["index_patterns"] = patterns
    return out


def check_template(template: dict[str, Any]) -> None:
    """A ``template`` block (of an index or a component template) that would fail every
    index creation is refused now."""
    for alias, spec in (template.get("aliases") or {}).items():
        alias_spec(spec or {}, alias)
    _check_contents(template)


def _check_contents(template: dict[str, Any]) -> None:
    settings = flat_settings(template.get("settings") or {})
    for key, minimum in (("number_of_shards", 1), ("number_of_replicas", 0)):
        if key in settings:
            int_setting(settings, key, minimum, minimum=minimum)
    if template.get("mappings") is not None:
        Mapping.from_body(template["mappings"])


def _check_overlap(name: str, patterns: list[str], priority: int,
                   existing: dict[str, dict[str, Any]]) -> None:
    if name not in existing and len(existing) >= MAX_TEMPLATES:
        raise IllegalArgument(f"too many index templates (at most {MAX_TEMPLATES})")
    for other, t in sorted(existing.items()):
        if other == name or t.get("priority", 0) != priority:
            continue
        if overlap(patterns, t["index_patterns"]):
            raise IllegalArgument(
                f"index template [{name}] has index patterns {_list(patterns)} matching "
                f"patterns from existing templates [{other}] with patterns ({other} => "
                f"{_list(t['index_patterns'])}) that have the same priority [{priority}], "
                "multiple index templates may not match during index creation, please use a "
                "different priority")


def _list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def overlap(a: list[str], b: list[str]) -> bool:
    """Elasticsearch's test: some pattern of one matches some pattern of the other."""
    return any(fnmatch.fnmatchcase(x, y) or fnmatch.fnmatchcase(y, x) for x in a for y in b)


def matching(templates: dict[str, dict[str, Any]], index: str) -> dict[str, Any] | None:
    """The template a new index named ``index`` starts from (highest priority), or None."""
    hits = [(t.get("priority", 0), n) for n, t in templates.items()
            if any(fnmatch.fnmatchcase(index, p) for p in t["index_patterns"])
            and not (index.startswith(".") and "*" in t["index_patterns"])]
    if not hits:
        return None
    return templates[max(hits)[1]]


def _merge_mappings(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in (over or {}).items():
        if key == "properties" and isinstance(value, dict):
            props = out.setdefault("properties", {})
            for field, spec in value.items():
                props[field] = _merge_mappings(props.get(field, {}), spec) \
                    if isinstance(spec, dict) and "properties" in spec else copy.deepcopy(spec)
        else:
            out[key] = copy.deepcopy(value)
    return out


def compose(template: dict[str, Any] | None, body: dict[str, Any],
            components: dict[str, Any] | None = None) -> dict[str, Any]:
    """The creation body with ``template`` under it: its component templates in order, then
    its own ``template``, then the request (each later one wins)."""
    if template is None:
        return body
    out = dict(body)
    settings: dict[str, Any] = {}
    mappings: dict[str, Any] = {}
    aliases: dict[str, Any] = {}
    for t in blocks(template, components or {}) + [body]:
        settings.update(flat_settings(t.get("settings") or {}))
        if t.get("mappings"):
            mappings = _merge_mappings(mappings, t["mappings"])
        aliases.update(t.get("aliases") or {})
    for key, value in (("settings", settings), ("mappings", mappings), ("aliases", aliases)):
        if value:
            out[key] = value
    return out


def get_templates(templates: dict[str, dict[str, Any]], name: str | None) -> dict[str, Any]:
    """``GET _index_template[/{name}]``; a name (not a pattern) that is missing is a 404."""
    pats = [p for p in (name or "*").split(",") if p]
    names = [n for n in sorted(templates) if any(fnmatch.fnmatchcase(n, p) for p in pats)]
    if not names and name and not any("*" in p for p in pats):
        raise TemplateMissing(f"index template matching [{name}] not found")
    return {"index_templates": [{"name": n, "index_template": copy.deepcopy(templates[n])}
                                for n in names]}
