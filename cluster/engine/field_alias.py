"""Field aliases (``{"type": "alias", "path": "target"}``): checked, and resolved to their target.

An alias is a second name of one concrete field. Elasticsearch resolves it wherever a search
reads a field (``MappingLookup``'s field types map an alias name to its target's type); we do the
same by rewriting names before a shard reads a column: query trees (``rewrite.expand``), sort
keys, ``collapse``, aggregations and suggesters (``resolve_shard_query``). Names a response shows
(``fields``, ``highlight``) keep the alias's name, as Elasticsearch's do. A document may not
write to an alias (``doc_parsing.py``).
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any

from ..errors import IllegalArgument, MapperParsing


def alias_targets(props: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``alias path -> target path`` for every alias in a ``properties`` tree."""
    out: dict[str, str] = {}
    for name, spec in props.items():
        if not isinstance(spec, dict):
            continue
        path = prefix + name
        if spec.get("type") == "alias":
            out[path] = str(spec.get("path"))
        elif isinstance(spec.get("properties"), dict):
            out.update(alias_targets(spec["properties"], path + "."))
    return out


def check_alias_spec(name: str, spec: dict[str, Any]) -> None:
    """An alias names its ``path`` and nothing else (``FieldAliasMapper.TypeParser``)."""
    if not isinstance(spec.get("path"), str):
        raise _parse_failure(f"The [path] property must be specified for field [{name}].")
    extra = [k for k in spec if k not in ("type", "path")]
    if extra:
        listed = " ".join(f"{k} : {spec[k]}" for k in extra)
        raise _parse_failure(f"Mapping definition for [{name}] has unsupported parameters:  "
                             f"[{listed}]")


def _parse_failure(reason: str) -> MapperParsing:
    return MapperParsing(f"Failed to parse mapping [_doc]: {reason}",
                         caused_by={"type": "mapper_parsing_exception", "reason": reason})


def check_alias_targets(aliases: dict[str, str], concrete: set[str],
                        nested: list[str]) -> None:
    """Each alias refers to an existing concrete field (not itself, not another alias, not an
    object) in its own nested scope: ``FieldAliasMapper.validate``'s checks and texts."""
    for alias, target in aliases.items():
        head = f"Invalid [path] value [{target}] for field alias [{alias}]: "
        if target == alias:
            raise MapperParsing(head + "an alias cannot refer to itself.")
        if target not in concrete and target not in aliases:
            raise MapperParsing(head + "an alias must refer to an existing field in the "
                                "mappings.")
        if target in aliases:
            raise MapperParsing(head + "an alias cannot refer to another alias.")
        a_scope, t_scope = nested_scope(alias, nested), nested_scope(target, nested)
        if a_scope != t_scope:
            raise IllegalArgument(
                head + "an alias must have the same nested scope as its target. "
                + ("The alias is not nested" if a_scope is None
                   else f"The alias's nested scope is [{a_scope}]") + ", but "
                + ("the target is not nested." if t_scope is None
                   else f"the target's nested scope is [{t_scope}]."))


def nested_scope(path: str, nested: list[str]) -> str | None:
    """The innermost ``nested`` object holding ``path`` (None: the root document)."""
    inside = [n for n in nested if path.startswith(n + ".")]
    return max(inside, key=len) if inside else None


def resolve_query(node: Any, aliases: dict[str, str]) -> Any:
    """A query tree (frozen dataclasses, tuples) with every ``field`` naming an alias, and
    every ``fields`` entry ``(name, boost)`` naming one, replaced by the target. O(nodes);
    unchanged nodes are returned as they are."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if f.name == "field" and isinstance(value, str):
                new = aliases.get(value, value)
            elif f.name == "fields" and isinstance(value, tuple):
                new = tuple(_named_entry(v, aliases) for v in value)
            else:
                new = resolve_query(value, aliases)
            if new is not value and new != value:
                changes[f.name] = new
        if not changes:
            return node
        out = copy.copy(node)   # frozen dataclasses: set the changed fields in place
        for k, v in changes.items():
            object.__setattr__(out, k, v)
        return out
    if isinstance(node, tuple):
        items = tuple(resolve_query(v, aliases) for v in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if isinstance(node, list):
        return [resolve_query(v, aliases) for v in node]
    return node


def _named_entry(entry: Any, aliases: dict[str, str]) -> Any:
    if isinstance(entry, str):
        return aliases.get(entry, entry)
    if isinstance(entry, tuple) and entry and isinstance(entry[0], str):
        return (aliases.get(entry[0], entry[0]),) + entry[1:]
    return entry


def resolve_aggs(aggs: Any, aliases: dict[str, str]) -> Any:
    """An ``AggRequest`` whose nodes' ``field`` parameters (and filter queries) name targets."""
    if aggs is None:
        return None
    return dataclasses.replace(aggs, nodes=tuple(_agg_node(n, aliases) for n in aggs.nodes))


def _agg_node(node: Any, aliases: dict[str, str]) -> Any:
    params = node.params
    field = params.get("field")
    if isinstance(field, str) and field in aliases:
        params = {**params, "field": aliases[field]}
    return dataclasses.replace(
        node, params=params, subs=tuple(_agg_node(s, aliases) for s in node.subs),
        query=resolve_query(node.query, aliases),
        queries=tuple((k, resolve_query(q, aliases)) for k, q in node.queries))


def resolve_shard_query(q: Any, aliases: dict[str, str]) -> Any:
    """A ``ShardQuery`` with the names its shard reads columns by resolved: query trees, sort
    keys, ``collapse``, aggregations and suggesters. ``q`` itself when there are no aliases."""
    if not aliases:
        return q
    sort = tuple(dataclasses.replace(sf, field=aliases[sf.field]) if sf.field in aliases
                 else sf for sf in q.sort)
    return dataclasses.replace(
        q, query=resolve_query(q.query, aliases), sort=sort,
        agg_query=resolve_query(q.agg_query, aliases),
        collapse=aliases.get(q.collapse, q.collapse) if q.collapse else q.collapse,
        named=resolve_query(q.named, aliases), rescore=resolve_query(q.rescore, aliases),
        aggs=resolve_aggs(q.aggs, aliases),
        suggest=tuple((s[0], aliases.get(s[1], s[1])) + tuple(s[2:]) for s in q.suggest),
        phrase_suggest=tuple((s[0], aliases.get(s[1], s[1])) + tuple(s[2:])
                             for s in q.phrase_suggest))


__all__ = ["alias_targets", "check_alias_spec", "check_alias_targets", "nested_scope",
           "resolve_aggs", "resolve_query", "resolve_shard_query"]
