"""A query rewritten for one mapping: field patterns resolved, multi-field and string
queries turned into single-field ones, and the terms it scores with (for global statistics).

Text is analysed here as each field indexes it (:func:`analyze_for`), so the evaluators see
the terms they will look up.
"""
from __future__ import annotations

import dataclasses
import fnmatch
from typing import Any

from . import nodes as Q
from . import score_nodes as S
from ..analysis import get_analyzer
from ..mapping import FieldType, Mapping

_SEARCHABLE = ("text", "keyword", "numeric", "date", "boolean")


def resolve_fields(pattern: str, mapping: Mapping, *, default_all: bool = True) -> list[str]:
    """Field names matching ``pattern`` (``*`` wildcards) that hold searchable values."""
    if "*" not in pattern and "?" not in pattern:
        return [pattern]
    return [p for p, ft in mapping.fields.items()
            if ft.kind in _SEARCHABLE and fnmatch.fnmatchcase(p, pattern)]


def analyze_for(ft: FieldType | None, text: Any, analyzer: str | None = None) -> list[str]:
    """Query text as the terms a field indexes (search analyzer for text, exact for keyword)."""
    if ft is None:
        return get_analyzer(analyzer)(str(text))
    if ft.kind == "text":
        return get_analyzer(analyzer or ft.search_analyzer or ft.analyzer)(query_text(text))
    return [query_text(text)]


def query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def scoring_terms(q: Q.Query, mapping: Mapping) -> set[tuple[str, str]]:
    """Every (field, term) whose document frequency the scores of ``q`` depend on."""
    out: set[tuple[str, str]] = set()
    _collect(expand(q, mapping), mapping, out)
    return out


def _collect(q: Q.Query, mapping: Mapping, out: set[tuple[str, str]]) -> None:
    if isinstance(q, Q.Term):
        ft = mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and not q.case_insensitive:
            out.add((q.field, query_text(q.value)))
    elif isinstance(q, (Q.Match, Q.MatchPhrase)):
        ft = mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword"):
            for t in analyze_for(ft, q.text, q.analyzer):
                out.add((q.field, t))
    elif isinstance(q, Q.Bool):
        for sub in q.must + q.should:
            _collect(sub, mapping, out)
    elif isinstance(q, Q.DisMax):
        for sub in q.queries:
            _collect(sub, mapping, out)
    elif isinstance(q, (S.FunctionScore, S.ScriptScore)):
        _collect(q.query, mapping, out)


def _lenient(q: Q.Query) -> Q.Query:
    """``q`` with every ``match`` made lenient (``query_string``'s ``lenient: true``)."""
    if isinstance(q, Q.Match):
        return dataclasses.replace(q, lenient=True)
    if isinstance(q, Q.Bool):
        return dataclasses.replace(q, must=tuple(map(_lenient, q.must)),
                                   should=tuple(map(_lenient, q.should)),
                                   filter=tuple(map(_lenient, q.filter)),
                                   must_not=tuple(map(_lenient, q.must_not)))
    if isinstance(q, Q.DisMax):
        return dataclasses.replace(q, queries=tuple(map(_lenient, q.queries)))
    return q


def expand(q: Q.Query, mapping: Mapping) -> Q.Query:
    """Rewrite multi-field and string queries into single-field ones for this mapping.

    A ``*`` field list means every searchable field, leniently (a word that is not a number
    does not fail on numeric fields), as Elasticsearch's ``index.query.default_field``.
    """
    if isinstance(q, Q.MultiMatch):
        fields = []
        all_fields = any(p == "*" for p, _ in q.fields)
        lenient = q.lenient if q.lenient is not None else all_fields
        for pat, fb in q.fields:
            fields.extend((f, fb) for f in resolve_fields(pat, mapping))
        if not fields:
            return Q.MatchNone()
        if q.type in ("phrase", "phrase_prefix"):
            subs: list[Q.Query] = [Q.MatchPhrase(field=f, text=q.text, boost=fb,
                                                 analyzer=q.analyzer,
                                                 prefix=q.type == "phrase_prefix")
                                   for f, fb in fields]
        else:
            subs = [Q.Match(field=f, text=q.text, operator=q.operator,
                            minimum_should_match=q.minimum_should_match, analyzer=q.analyzer,
                            boost=fb, lenient=lenient) for f, fb in fields]
        if not subs:
            return Q.MatchNone()
        if q.type == "most_fields":
            return Q.Bool(should=tuple(subs), boost=q.boost)
        tb = q.tie_breaker if q.tie_breaker is not None else 0.0
        return Q.DisMax(queries=tuple(subs), tie_breaker=tb, boost=q.boost)
    if isinstance(q, Q.QueryString):
        from .query_string import expand_query_string
        defaults = q.fields or (("*", 1.0),)
        out = expand_query_string(q, defaults)
        if q.lenient:
            out = _lenient(out)
        return expand(out, mapping)
    if isinstance(q, Q.Match) and ("*" in q.field or "?" in q.field):
        fields = resolve_fields(q.field, mapping)
        subs = [Q.Match(field=f, text=q.text, operator=q.operator,
                        minimum_should_match=q.minimum_should_match, analyzer=q.analyzer,
                        boost=q.boost, lenient=q.lenient or q.field == "*") for f in fields]
        return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
    if isinstance(q, (Q.Prefix, Q.Wildcard, Q.Regexp, Q.MatchPhrase, Q.Range, Q.Exists)) \
            and ("*" in q.field or "?" in q.field):
        fields = resolve_fields(q.field, mapping)
        if isinstance(q, (Q.Prefix, Q.Wildcard, Q.Regexp, Q.MatchPhrase)):
            fields = [f for f in fields if mapping.fields[f].kind in ("text", "keyword")]
        if isinstance(q, Q.Exists):
            fields = [f for f in mapping.fields if fnmatch.fnmatchcase(f, q.field)]
        subs = [dataclasses.replace(q, field=f) for f in fields]
        return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
    if isinstance(q, Q.Bool):
        return Q.Bool(must=tuple(expand(s, mapping) for s in q.must),
                      should=tuple(expand(s, mapping) for s in q.should),
                      filter=tuple(expand(s, mapping) for s in q.filter),
                      must_not=tuple(expand(s, mapping) for s in q.must_not),
                      minimum_should_match=q.minimum_should_match, boost=q.boost)
    if isinstance(q, Q.DisMax):
        return Q.DisMax(queries=tuple(expand(s, mapping) for s in q.queries),
                        tie_breaker=q.tie_breaker, boost=q.boost)
    if isinstance(q, Q.ConstantScore):
        return Q.ConstantScore(filter=expand(q.filter, mapping), boost=q.boost)
    if isinstance(q, S.FunctionScore):
        functions = tuple(dataclasses.replace(f, filter=expand(f.filter, mapping))
                          for f in q.functions)
        return dataclasses.replace(q, query=expand(q.query, mapping), functions=functions)
    if isinstance(q, S.ScriptScore):
        return dataclasses.replace(q, query=expand(q.query, mapping))
    return q
