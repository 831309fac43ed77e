"""Field-name patterns (``title*``, ``*``) resolved against a mapping.

Only some queries take patterns: ``query_string`` / ``simple_query_string`` (their ``fields``
and ``field:`` prefixes, Elasticsearch's ``QueryParserHelper.resolveMappingFields``),
``multi_match`` and ``exists``. Every other direct-DSL query takes its field name literally
(``prefix`` on ``title*`` asks for a field named ``title*``: unmapped, no hits), so the
query-string trees are expanded here, before the generic rewrite sees them.
"""
from __future__ import annotations

import dataclasses
import fnmatch
from typing import Any

from . import nodes as Q
from ..mapping import Mapping

_SEARCHABLE = ("text", "keyword", "numeric", "date", "boolean")
_TERM_DICTIONARY = (Q.Prefix, Q.Wildcard, Q.Regexp, Q.MatchPhrase, Q.Fuzzy)


def is_pattern(name: str) -> bool:
    return "*" in name or "?" in name


def resolve_fields(pattern: str, mapping: Mapping) -> list[str]:
    """Field names matching ``pattern`` (``*`` wildcards) that hold searchable values."""
    if not is_pattern(pattern):
        return [mapping.resolve(pattern)]
    return matching_fields(pattern, mapping, lambda ft: ft.kind in _SEARCHABLE)


def is_mapped(name: str, mapping: Mapping) -> bool:
    """Whether ``name`` (a field, an alias, or a pattern matching a searchable field) is
    mapped: a query string's term on no mapped field matches nothing, whatever it is."""
    if is_pattern(name):
        return bool(resolve_fields(name, mapping))
    return name in mapping.fields or name in mapping.aliases


def matching_fields(pattern: str, mapping: Mapping, keep: Any) -> list[str]:
    """Concrete fields matching ``pattern`` by their name or an alias's (resolved to the
    target, each once: Elasticsearch's ``QueryParserHelper`` deduplicates an alias and its
    target), in mapping order."""
    out: dict[str, None] = {}
    for p in mapping.fields:
        ft = mapping.get(p)
        if ft is not None and keep(ft) and fnmatch.fnmatchcase(p, pattern):
            out[ft.path] = None
    return list(out)


def expand_string_patterns(q: Q.Query, mapping: Mapping, lenient: bool = True) -> Q.Query:
    """A query-string tree with each leaf on a field pattern replaced by a ``DisMax`` of the
    leaf on every matching field (none: ``MatchNone``). Leniently, a prefix, wildcard, regexp,
    fuzzy term or phrase skips the fields without terms; otherwise they fail it later."""
    if isinstance(q, Q.Bool):
        return dataclasses.replace(q, **{k: tuple(expand_string_patterns(s, mapping, lenient)
                                                  for s in getattr(q, k))
                                         for k in ("must", "should", "filter", "must_not")})
    if isinstance(q, Q.DisMax):
        return dataclasses.replace(q, queries=tuple(expand_string_patterns(s, mapping, lenient)
                                                    for s in q.queries))
    field = getattr(q, "field", None)
    if not isinstance(field, str) or not is_pattern(field) or isinstance(q, Q.Exists):
        return q       # ``exists`` expands its pattern in any form (``rewrite._expand``)
    if not isinstance(q, (Q.Match, Q.Range, *_TERM_DICTIONARY)):
        return q
    fields = resolve_fields(field, mapping)
    if lenient and isinstance(q, _TERM_DICTIONARY):
        fields = [f for f in fields if mapping.fields[f].kind in ("text", "keyword")]
    subs = [dataclasses.replace(q, field=f) for f in fields]
    return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
