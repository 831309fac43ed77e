"""Component templates (``_component_template``): named blocks of settings, mappings and aliases
that index templates list in ``composed_of``.

Elasticsearch's rules: an index template may name only component templates that exist; one in
use by an index template cannot be deleted; at index creation the blocks apply in the order
``composed_of`` names them, then the index template's own ``template``, then the creation
request (settings overridden key by key, mappings merged field by field, aliases unioned).
Pure functions over ``{name: component template body}``.
"""
from __future__ import annotations

import copy
import fnmatch
from typing import Any

from ..errors import IllegalArgument, SearchError

_KEYS = {"template", "version", "_meta", "deprecated"}
_TEMPLATE_KEYS = {"settings", "mappings", "aliases"}
MAX_COMPONENTS = 1000
MAX_COMPOSED_OF = 100


class ComponentMissing(SearchError):
    es_type = "resource_not_found_exception"
    status = 404


def invalid_name(name: str) -> bool:
    """Elasticsearch's template name rule: lowercase, no spaces or special characters."""
    return name != name.lower() or not name or any(c in name for c in ' "*\\<|,>/?')


def parse_component(name: str, body: Any, existing: dict[str, Any], create: bool,
                    check_template: Any) -> dict[str, Any]:
    """The stored component template from a ``PUT _component_template/{name}`` body, checked
    (``check_template`` checks the inner ``template`` as an index template's is checked)."""
    if create and name in existing:
        raise IllegalArgument(f"component template [{name}] already exists")
    if name not in existing and len(existing) >= MAX_COMPONENTS:
        raise IllegalArgument(f"too many component templates (at most {MAX_COMPONENTS})")
    if not isinstance(body, dict):
        raise IllegalArgument("request body is required",
                              es_type="action_request_validation_exception")
    for key in body:
        if key not in _KEYS:
            raise IllegalArgument(f"[component_template] unknown field [{key}]",
                                  es_type="x_content_parse_exception")
    if "template" not in body:
        raise IllegalArgument("Required [template]", es_type="x_content_parse_exception")
    if invalid_name(name):
        raise IllegalArgument(f"component_template [{name}] invalid, cause [name must be "
                              "lowercase and not contain spaces or special characters]",
                              es_type="invalid_index_template_exception")
    template = body["template"]
    if not isinstance(template, dict):
        raise IllegalArgument("[template] must be an object", es_type="parse_exception")
    for key in template:
        if key not in _TEMPLATE_KEYS:
            raise IllegalArgument(f"[template] unknown field [{key}]",
                                  es_type="x_content_parse_exception")
    check_template(template)
    return copy.deepcopy(body)


def check_composed_of(name: str, composed_of: Any, components: dict[str, Any]) -> list[str]:
    """``composed_of`` of index template ``name``: a list of existing component templates."""
    if composed_of is None:
        return []
    if not isinstance(composed_of, list) or not all(isinstance(c, str) for c in composed_of):
        raise IllegalArgument("[composed_of] must be an array of strings",
                              es_type="x_content_parse_exception")
    if len(composed_of) > MAX_COMPOSED_OF:
        raise IllegalArgument(f"[composed_of] names more than {MAX_COMPOSED_OF} templates")
    missing = [c for c in composed_of if c not in components]
    if missing:
        raise IllegalArgument(
            f"index_template [{name}] invalid, cause [index template [{name}] specifies "
            f"component templates [{', '.join(missing)}] that do not exist]",
            es_type="invalid_index_template_exception")
    return composed_of


def blocks(template: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``template`` blocks an index template applies, in Elasticsearch's order."""
    out = [components[c].get("template") or {} for c in template.get("composed_of") or []
           if c in components]
    return out + [template.get("template") or {}]


def get_components(components: dict[str, Any], name: str | None) -> dict[str, Any]:
    """``GET _component_template[/{name}]`` (patterns, comma lists); a missing name is a 404."""
    pats = [p for p in (name or "*").split(",") if p]
    names = [n for n in sorted(components) if any(fnmatch.fnmatchcase(n, p) for p in pats)]
    if not names and name and not any("*" in p for p in pats):
        raise ComponentMissing(f"component template matching [{name}] not found")
    return {"component_templates": [{"name": n, "component_template":
                                     copy.deepcopy(components[n])} for n in names]}


def to_delete(components: dict[str, Any], templates: dict[str, Any], name: str) -> list[str]:
    """The component templates ``DELETE _component_template/{name}`` removes: those in use by
    an index template are Elasticsearch's 400, a name matching none its 404."""
    pats = [p for p in name.split(",") if p]
    gone = [n for n in sorted(components) if any(fnmatch.fnmatchcase(n, p) for p in pats)]
    users = sorted(t for t, body in templates.items()
                   if set(body.get("composed_of") or []) & set(gone))
    if users:
        used = sorted({c for t in users for c in templates[t]["composed_of"] if c in gone})
        raise IllegalArgument(f"component templates [{', '.join(used)}] cannot be removed as "
                              f"they are still in use by index templates [{', '.join(users)}]")
    if not gone and not any(p in ("*", "_all") for p in pats):
        raise ComponentMissing(f"index_template [{name}] missing",
                               es_type="index_template_missing_exception")
    return gone
