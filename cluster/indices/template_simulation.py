"""``POST _index_template/_simulate_index/{index}`` and ``POST _index_template/_simulate[/{name}]``:
what an index would start with, without creating it.

Elasticsearch's answer: ``template`` (the resolved ``settings`` in nested form, ``mappings`` when
there are any, ``aliases``) and ``overlapping`` (the other index templates whose patterns
overlap the chosen one's, by name; any priority). No matching template answers ``{}``.
Pure functions over the stored templates.
"""
from __future__ import annotations

import copy
from typing import Any

from ..errors import IllegalArgument
from .templates import compose, matching, overlap, parse_template

SIMULATED = "simulate_index_template"


def nested_settings(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"number_of_shards": 2}`` -> ``{"index": {"number_of_shards": "2"}}``, values as
    Elasticsearch's settings render them (strings)."""
    out: dict[str, Any] = {}
    for key, value in sorted(flat.items()):
        node = out
        parts = ("index." + key if not key.startswith("index.") else key).split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = [str(v) for v in value] if isinstance(value, list) else \
            str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _resolved(name: str, templates: dict[str, Any], components: dict[str, Any]
              ) -> dict[str, Any]:
    template = templates[name]
    body = compose(template, {}, components)
    out: dict[str, Any] = {"settings": nested_settings(body.get("settings") or {})}
    if body.get("mappings"):
        out["mappings"] = copy.deepcopy(body["mappings"])
    out["aliases"] = copy.deepcopy(body.get("aliases") or {})
    overlapping = [{"name": n, "index_patterns": list(t["index_patterns"])}
                   for n, t in sorted(templates.items())
                   if n != name and overlap(template["index_patterns"], t["index_patterns"])]
    return {"template": out, "overlapping": overlapping}


def simulate_index(index: str, templates: dict[str, Any], components: dict[str, Any],
                   body: Any = None) -> dict[str, Any]:
    """What a new index named ``index`` would start with (``{}``: no template matches); a
    ``body`` is an index template taken into account as if it were stored (checked as a
    ``PUT`` would check it)."""
    if body is not None:
        templates = {**templates, SIMULATED: parse_template(SIMULATED, body, templates,
                                                            components)}
    found = matching(templates, index)
    if found is None:
        return {}
    name = next(n for n, t in templates.items() if t is found)
    return _resolved(name, templates, components)


def simulate_template(name: str | None, body: Any, templates: dict[str, Any],
                      components: dict[str, Any], create: bool = False) -> dict[str, Any]:
    """The stored template ``name`` resolved, or the one in ``body`` (checked as a ``PUT``
    would check it, stored nowhere)."""
    if body is None:
        if name is None:
            raise IllegalArgument("Validation Failed: 1: must specify either a template name "
                                  "or an index template body;",
                                  es_type="action_request_validation_exception")
        if name not in templates:
            raise IllegalArgument(f"unable to simulate template [{name}] that does not exist")
        return _resolved(name, templates, components)
    key = name or SIMULATED
    if create and key in templates:
        raise IllegalArgument(f"index template [{key}] already exists")
    trial = {**templates, key: parse_template(key, body, templates, components)}
    return _resolved(key, trial, components)
