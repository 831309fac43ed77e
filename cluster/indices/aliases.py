"""Aliases: names that stand for one or more indices, with an optional filter and routing.

An index's aliases live on its :class:`~.catalog.IndexMeta` (``meta.aliases``: alias name ->
the alias as Elasticsearch shows it in ``GET /_alias``: ``filter``, ``index_routing``,
``search_routing``, ``is_write_index``, ``is_hidden``), so they are saved with the index's
metadata and vanish with the index. Pure functions over the catalog's ``{name: IndexMeta}``:
parsing an alias body, applying ``POST /_aliases`` actions all or nothing, choosing the write
index of an alias, and rendering ``GET /_alias`` and ``_cat/aliases``. Name resolution itself
(an alias wherever an index name is accepted) is in ``resolver.py``.
"""
from __future__ import annotations

import copy
import fnmatch
from typing import Any

from ..engine.query.dsl import parse_query
from ..errors import IllegalArgument, IndexNotFound, InvalidIndexName, SearchError
from .catalog import validate_index_name

ALIAS_KEYS = {"filter", "routing", "index_routing", "search_routing", "is_write_index",
              "is_hidden", "index", "indices", "alias", "aliases", "must_exist"}
_SPEC_KEYS = {"filter", "routing", "index_routing", "search_routing", "is_write_index",
              "is_hidden"}


class AliasesNotFound(SearchError):
    """``aliases [x] missing`` (404), as Elasticsearch's ``AliasesNotFoundException``."""

    es_type = "aliases_not_found_exception"
    status = 404

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"aliases [{','.join(names)}] missing",
                         **{"resource.type": "aliases", "resource.id": ",".join(names)})


def _is_pattern(name: str) -> bool:
    return "*" in name or "?" in name


def _bool(raw: Any, key: str) -> bool:
    if isinstance(raw, bool):
        return raw
    if raw in ("true", "false"):
        return raw == "true"
    raise IllegalArgument(f"Failed to parse value [{raw}] as only [true] or [false] are allowed "
                          f"for [{key}]")


def _routing(raw: Any, key: str) -> str:
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise IllegalArgument(f"[{key}] must be a string or a number")
    return str(raw)


def alias_spec(body: dict[str, Any], context: str = "alias") -> dict[str, Any]:
    """The stored form of one alias from its request body (``PUT /{index}/_alias/{name}``, an
    ``add`` action, an index's ``aliases``); an unknown key is refused by name."""
    if not isinstance(body, dict):
        raise IllegalArgument(f"[{context}] must be an object", es_type="parse_exception")
    out: dict[str, Any] = {}
    for key, raw in body.items():
        if key not in _SPEC_KEYS:
            raise IllegalArgument(f"[{context}] unknown field [{key}]",
                                  es_type="x_content_parse_exception")
        if raw is None:
            continue
        if key == "filter":
            if not isinstance(raw, dict):
                raise IllegalArgument("[filter] must be an object", es_type="parsing_exception")
            if raw:
                parse_query(raw)   # a filter that cannot run is refused now, not at search
                out["filter"] = copy.deepcopy(raw)
        elif key in ("is_write_index", "is_hidden"):
            out[key] = _bool(raw, key)
    routing = body.get("routing")
    for key in ("index_routing", "search_routing"):
        raw = body.get(key, routing)
        if raw is not None:
            out[key] = _routing(raw, key)
    if "index_routing" in out and "," in out["index_routing"]:
        raise IllegalArgument(f"alias [{context}] has several index routing values associated "
                              "with it")
    return out


def validate_alias_name(name: str, indices: dict[str, Any]) -> None:
    """Alias names follow index-name rules, and no index may carry the name."""
    if not name:
        raise IllegalArgument("alias name is missing",
                              es_type="action_request_validation_exception")
    try:
        validate_index_name(name)
    except InvalidIndexName as e:
        raise InvalidIndexName(e.reason.replace("Invalid index name", "Invalid alias name"),
                               es_type="invalid_alias_name_exception", index=name) from None
    if name in indices:
        raise InvalidIndexName(f"Invalid alias name [{name}]: an index or data stream exists "
                               "with the same name as the alias",
                               es_type="invalid_alias_name_exception", index=name)


def _names(action: dict[str, Any], one: str, many: str) -> list[str]:
    out: list[str] = []
    if action.get(one) is not None:
        out.append(str(action[one]))
    raw = action.get(many)
    if raw is not None:
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            raise IllegalArgument(f"[{many}] can't be empty",
                                  es_type="action_request_validation_exception")
        out.extend(str(r) for r in raw)
    return [p.strip() for n in out for p in n.split(",") if p.strip()]


def _indices_of(action: dict[str, Any], indices: dict[str, Any]) -> list[str]:
    names = _names(action, "index", "indices")
    if not names:
        raise IllegalArgument("One of [index] or [indices] is required",
                              es_type="action_request_validation_exception")
    out: list[str] = []
    for n in names:
        hit = [i for i in sorted(indices) if fnmatch.fnmatchcase(i, n)] if _is_pattern(n) or \
            n == "_all" else [n] if n in indices else aliased(indices, n)
        if not hit and not _is_pattern(n):
            raise IndexNotFound(n)
        out.extend(h for h in hit if h not in out)
    return out


def aliased(indices: dict[str, Any], alias: str) -> list[str]:
    """The indices carrying ``alias`` (sorted)."""
    return sorted(n for n, m in indices.items() if alias in m.aliases)


def apply_actions(indices: dict[str, Any], actions: Any) -> tuple[set[str], list[str]]:
    """``POST /_aliases``: every action applies, or none (checked on copies, then swapped in);
    returns the names of the indices whose aliases changed, and those ``remove_index`` names
    (still in ``indices``: the caller deletes them)."""
    if not isinstance(actions, list):
        raise IllegalArgument("[actions] must be an array", es_type="parsing_exception")
    if not actions:
        raise IllegalArgument("Validation Failed: 1: no aliases to add/remove;",
                              es_type="action_request_validation_exception")
    new = {n: copy.deepcopy(m.aliases) for n, m in indices.items()}
    removed: list[str] = []
    for item in actions:
        if not isinstance(item, dict) or len(item) != 1:
            raise IllegalArgument("[aliases] each action must name one of [add, remove, "
                                  "remove_index]", es_type="parsing_exception")
        (kind, action), = item.items()
        _one_action(kind, action, indices, new, removed)
    changed = {n for n in indices if new[n] != indices[n].aliases and n not in removed}
    _check_write_indices(new, removed)
    for n in changed:
        indices[n].aliases = new[n]
    return changed, removed


def _one_action(kind: str, action: Any, indices: dict[str, Any],
                new: dict[str, dict[str, Any]], removed: list[str]) -> None:
    if kind not in ("add", "remove", "remove_index"):
        raise IllegalArgument(f"[aliases] unknown field [{kind}]",
                              es_type="x_content_parse_exception")
    if not isinstance(action, dict):
        raise IllegalArgument(f"[{kind}] must be an object", es_type="parsing_exception")
    for key in action:
        if key not in ALIAS_KEYS or kind != "add" and key in _SPEC_KEYS or \
                kind == "add" and key == "must_exist":
            raise IllegalArgument(f"[{kind}] unknown field [{key}]",
                                  es_type="x_content_parse_exception")
    targets = _indices_of(action, indices)
    if kind == "remove_index":
        removed.extend(t for t in targets if t not in removed)
        return
    names = _names(action, "alias", "aliases")
    if not names:
        raise IllegalArgument("One of [alias] or [aliases] is required",
                              es_type="action_request_validation_exception")
    if kind == "add":
        spec = alias_spec({k: v for k, v in action.items() if k in _SPEC_KEYS})
        for name in names:
            validate_alias_name(name, indices)
            for t in targets:
                new[t][name] = copy.deepcopy(spec)
        return
    _remove(action, names, targets, new)


def _remove(action: dict[str, Any], names: list[str], targets: list[str],
            new: dict[str, dict[str, Any]]) -> None:
    """A ``remove`` action: patterns match existing aliases; with ``must_exist`` (and by
    default, when none of the names exists) a name that matches nothing is an error."""
    must_exist = action.get("must_exist")
    matched: set[str] = set()
    for t in targets:
        for name in names:
            hit = [a for a in new[t] if fnmatch.fnmatchcase(a, name)] if _is_pattern(name) \
                else [name] if name in new[t] else []
            for a in hit:
                new[t].pop(a, None)
                matched.add(name)
    missing = [n for n in names if n not in matched]
    if must_exist is True and missing or must_exist is None and not matched:
        raise AliasesNotFound(missing if must_exist else names)


def _check_write_indices(new: dict[str, dict[str, Any]], removed: list[str]) -> None:
    """At most one write index per alias."""
    writers: dict[str, list[str]] = {}
    for index, aliases in new.items():
        if index in removed:
            continue
        for name, spec in aliases.items():
            if spec.get("is_write_index"):
                writers.setdefault(name, []).append(index)
    for name, idx in writers.items():
        if len(idx) > 1:
            raise IllegalArgument(f"alias [{name}] has more than one write index "
                                  f"[{','.join(sorted(idx))}]")


def write_target(indices: dict[str, Any], alias: str) -> tuple[str, str | None]:
    """The index a write through ``alias`` goes to, and the alias's index routing: its write
    index, or its only index unless that one says ``is_write_index: false``."""
    members = aliased(indices, alias)
    writers = [n for n in members if indices[n].aliases[alias].get("is_write_index")]
    if len(writers) == 1:
        target = writers[0]
    elif len(members) == 1 and indices[members[0]].aliases[alias].get("is_write_index") \
            is not False:
        target = members[0]
    else:
        raise IllegalArgument(f"no write index is defined for alias [{alias}]. The write index "
                              "may be explicitly disabled using is_write_index=false or the "
                              "alias points to multiple indices without one being designated "
                              "as a write index")
    return target, indices[target].aliases[alias].get("index_routing")


def write_routing(alias: str, alias_routing: str | None, routing: str | None) -> str | None:
    """The routing of a write through an alias (Elasticsearch refuses two that differ)."""
    if alias_routing is None or routing is None or routing == alias_routing:
        return alias_routing if routing is None else routing
    raise IllegalArgument(f"Alias [{alias}] has index routing associated with it "
                          f"[{alias_routing}], and was provided with routing value [{routing}], "
                          "rejecting operation")


def get_aliases(indices: dict[str, Any], names: list[str], alias_expr: str | None
                ) -> dict[str, Any]:
    """``GET /{index}/_alias/{name}``: per index, the aliases whose names match."""
    pats = [p for p in (alias_expr or "").split(",") if p] or ["*"]
    out: dict[str, Any] = {}
    for n in names:
        mine = {a: copy.deepcopy(s) for a, s in sorted(indices[n].aliases.items())
                if any(p in ("_all", "*") or fnmatch.fnmatchcase(a, p) for p in pats)}
        out[n] = {"aliases": mine}
    return out


def cat_rows(indices: dict[str, Any], alias_expr: str | None) -> list[dict[str, Any]]:
    """``_cat/aliases``: one row per (alias, index), in alias then index order."""
    pats = [p for p in (alias_expr or "").split(",") if p] or ["*"]
    rows = []
    for n in sorted(indices):
        for a, s in indices[n].aliases.items():
            if any(p in ("_all", "*") or fnmatch.fnmatchcase(a, p) for p in pats):
                rows.append({"alias": a, "index": n, "filter": "*" if "filter" in s else "-",
                             "routing.index": s.get("index_routing", "-"),
                             "routing.search": s.get("search_routing", "-"),
                             "is_write_index": str(s["is_write_index"]).lower()
                             if "is_write_index" in s else "-"})
    return rows
