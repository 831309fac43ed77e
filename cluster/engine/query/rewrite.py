"""A query rewritten for one mapping: field patterns resolved, multi-field and string
queries turned into single-field ones, and the terms it scores with (for global statistics).

Text is analysed here as each field indexes it (:func:`analyze_for`), so the evaluators see
the terms they will look up.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from . import nodes as Q
from . import score_nodes as S
from ..analysis import get_analyzer
from ..field_alias import resolve_query
from ..scoring import PrefixTerms
from ..mapping import FieldType, Mapping
from .nested_query import check_path
from .bool_prefix import MatchBoolPrefix
from .spans import Span, span_terms
from .combined_fields import CombinedFields
from .cross_fields import CrossFieldsGroup, cross_fields_query
from .more_like_this import MoreLikeThis
from .mlt_terms import candidates
from .fuzzy_query import scored_spec
from .field_patterns import (expand_string_patterns, is_mapped, matching_fields,
                             resolve_fields)
from .index_field import pattern_on_term_field_error
from ...errors import IllegalArgument


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
    expanded = expand(q, mapping)
    _collect(expanded, mapping, out)
    for node in walk(expanded):      # what decides matches, even where nothing scores
        if isinstance(node, MoreLikeThis):
            out.update(candidates(node, mapping))
        elif isinstance(node, Q.MatchPhrase) and node.prefix:
            out.update(phrase_prefix_terms(node, mapping.get(node.field)))
    return out


def walk(q: Any) -> list[Any]:
    """Every query node in the tree (any dataclass child that is a query)."""
    out = [q]
    if dataclasses.is_dataclass(q):
        for f in dataclasses.fields(q):
            v = getattr(q, f.name)
            for child in v if isinstance(v, tuple) else (v,):
                if isinstance(child, (Q.Query, S.FilterFunction)):
                    out += walk(child)
    return out


def _collect(q: Q.Query, mapping: Mapping, out: set[tuple[str, str]]) -> None:
    if isinstance(q, Q.Term):
        ft = mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and not q.case_insensitive \
                and ft.type != "ip":
            out.add((q.field, query_text(q.value)))
    elif isinstance(q, Q.MatchPhrase) and q.prefix:
        out.update(phrase_prefix_terms(q, mapping.get(q.field)))
    elif isinstance(q, (Q.Match, Q.MatchPhrase)):
        ft = mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and ft.type != "ip":
            for t in analyze_for(ft, q.text, q.analyzer):
                out.add((q.field, t))
    elif isinstance(q, Q.Fuzzy):
        ft = mapping.get(q.field)
        spec = scored_spec(q)
        if spec is not None and ft is not None and ft.kind in ("text", "keyword"):
            out.add(spec)
    elif isinstance(q, Span):
        out.update((q.field, t) for t in span_terms(q))
    elif isinstance(q, CombinedFields):
        fields = [f for f, _ in q.fields if mapping.get(f) is not None]
        if fields:
            terms = analyze_for(mapping.get(fields[0]), q.text)
            out.update((f, t) for f in fields for t in terms)
    elif isinstance(q, MoreLikeThis):
        out.update(candidates(q, mapping))
    elif isinstance(q, CrossFieldsGroup):
        out.update((f, t) for f, _ in q.fields for t in q.terms)
    elif isinstance(q, Q.Bool):
        for sub in q.must + q.should:
            _collect(sub, mapping, out)
    elif isinstance(q, Q.DisMax):
        for sub in q.queries:
            _collect(sub, mapping, out)
    elif isinstance(q, Q.Nested) and q.score_mode != "none":
        _collect(q.query, mapping, out)
    elif isinstance(q, (S.FunctionScore, S.ScriptScore)):
        _collect(q.query, mapping, out)


def phrase_prefix_terms(q: Q.MatchPhrase, ft: FieldType | None) -> list[Any]:
    """A phrase prefix's statistics: its leading terms, and its last term's expansions."""
    if ft is None or ft.kind not in ("text", "keyword") or ft.type == "ip":
        return []
    terms = analyze_for(ft, q.text, q.analyzer)
    if not terms:
        return []
    return [(q.field, t) for t in terms[:-1]] + [PrefixTerms(q.field, terms[-1],
                                                             q.max_expansions)]


_LOWERCASING = {"standard", "default", "simple"}


def normalize_multi_terms(q: Q.Query, mapping: Mapping, analyzer: str | None = None,
                          lenient: bool = True) -> Q.Query:
    """``query_string``'s wildcard and prefix terms through the field's normalizer, as
    Elasticsearch's multi-term analysis does: lowercased on a text field whose analyzer
    lowercases (``Fo*`` finds ``fox``), left as written on keyword fields. On a field without
    a term dictionary they find nothing when lenient, else fail as Elasticsearch fails them."""
    if not lenient and isinstance(q, (Q.Prefix, Q.Fuzzy)):
        err = pattern_on_term_field_error(q, mapping.get(q.field))
        if err is not None:
            err = err.replace(", text and wildcard", " and text")
            raise IllegalArgument(err if isinstance(q, Q.Prefix) else
                                  f"failed to create query: {err}",
                                  es_type="query_shard_exception")
    if isinstance(q, Q.Fuzzy) and not _has_terms(mapping.get(q.field)):
        return Q.MatchNone()     # a number or date: a query string's fuzzy term finds nothing
    if isinstance(q, (Q.Prefix, Q.Wildcard, Q.Fuzzy)):
        ft = mapping.get(q.field)
        name = analyzer or (ft.search_analyzer or ft.analyzer if ft is not None else None)
        if ft is None or ft.kind != "text" or name not in _LOWERCASING:
            return q
        if isinstance(q, (Q.Prefix, Q.Fuzzy)):
            return dataclasses.replace(q, value=q.value.lower())
        return dataclasses.replace(q, pattern=q.pattern.lower())
    if isinstance(q, Q.Bool):
        return dataclasses.replace(
            q, **{k: tuple(normalize_multi_terms(s, mapping, analyzer, lenient)
                           for s in getattr(q, k))
                  for k in ("must", "should", "filter", "must_not")})
    if isinstance(q, Q.DisMax):
        return dataclasses.replace(q, queries=tuple(
            normalize_multi_terms(s, mapping, analyzer, lenient) for s in q.queries))
    return q


def _has_terms(ft: FieldType | None) -> bool:
    return ft is not None and ft.kind in ("text", "keyword") and ft.type != "ip"


def _lenient(q: Q.Query) -> Q.Query:
    """``q`` with every ``match`` made lenient (``query_string``'s ``lenient: true``)."""
    if isinstance(q, (Q.Match, Q.MultiMatch)):
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
    """Rewrite multi-field and string queries into single-field ones for this mapping, on the
    concrete fields (field aliases resolved to their targets: ``field_alias.py``).

    A ``*`` field list means every searchable field, leniently (a word that is not a number
    does not fail on numeric fields), as Elasticsearch's ``index.query.default_field``.
    """
    if mapping.aliases:
        q = resolve_query(q, mapping.aliases)
    return _expand(q, mapping)


def _expand(q: Q.Query, mapping: Mapping) -> Q.Query:
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
        if q.type == "cross_fields":
            return cross_fields_query(q, fields, mapping, lenient, analyze_for)
        if q.type in ("phrase", "phrase_prefix", "bool_prefix") and lenient:
            # a field that is not text: one exact term, or nothing (Elasticsearch's lenient
            # ``MatchQueryParser`` on a keyword-analyzed field)
            fields = [(f, fb) for f, fb in fields
                      if mapping.fields[f].kind == "text" or q.type != "phrase_prefix"
                      or _has_terms(mapping.fields[f])]
            if not fields:
                return Q.MatchNone()
        if q.type in ("phrase", "phrase_prefix", "bool_prefix") and lenient and any(
                mapping.fields[f].kind != "text" and q.type != "phrase_prefix"
                for f, _ in fields):
            subs: list[Q.Query] = [_lenient_phrase(q, f, fb, mapping) for f, fb in fields]
        elif q.type in ("phrase", "phrase_prefix"):
            subs = [Q.MatchPhrase(field=f, text=q.text, boost=fb, analyzer=q.analyzer,
                                  slop=q.slop, prefix=q.type == "phrase_prefix",
                                  max_expansions=q.max_expansions)
                    for f, fb in fields]
        elif q.type == "bool_prefix":
            subs = [bool_prefix_query(MatchBoolPrefix(field=f, text=q.text, analyzer=q.analyzer,
                                            operator=q.operator, boost=fb,
                                            minimum_should_match=q.minimum_should_match,
                                            fuzzy=q.fuzzy),
                            mapping) for f, fb in fields]
        else:
            subs = [expand(Q.Match(field=f, text=q.text, operator=q.operator,
                                   minimum_should_match=q.minimum_should_match,
                                   analyzer=q.analyzer, boost=fb, lenient=lenient,
                                   zero_terms_query=q.zero_terms_query, fuzzy=q.fuzzy), mapping)
                    for f, fb in fields]
        if not subs:
            return Q.MatchNone()
        if q.type in ("most_fields", "bool_prefix"):
            # scored as a sum (Elasticsearch's tie_breaker default of 1.0 for these types)
            if q.tie_breaker is None or q.tie_breaker == 1.0:
                return Q.Bool(should=tuple(subs), boost=q.boost)
            return Q.DisMax(queries=tuple(subs), tie_breaker=q.tie_breaker, boost=q.boost)
        tb = q.tie_breaker if q.tie_breaker is not None else 0.0
        return Q.DisMax(queries=tuple(subs), tie_breaker=tb, boost=q.boost)
    if isinstance(q, Q.QueryString):
        from .query_string import expand_query_string
        defaults = q.fields or (("*", 1.0),)
        out = expand_query_string(q, defaults,
                                  lambda f: is_mapped(f, mapping),
                                  lambda f: _kind(mapping, f) == "date",
                                  lambda f: _kind(mapping, f) not in (None, "text"))
        if mapping.aliases:     # field names written in the query text
            out = resolve_query(out, mapping.aliases)
        # lenient by default over all fields, unless ``lenient`` is given
        # (``QueryStringQueryBuilder.doToQuery``: one setting for the whole parser)
        lenient = q.lenient if q.lenient is not None else any(p == "*" for p, _ in defaults)
        out = expand_string_patterns(out, mapping, lenient)
        if lenient:
            out = _lenient(out)
        return normalize_multi_terms(_expand(out, mapping), mapping, q.analyzer, lenient)
    if isinstance(q, Q.Match) and q.fuzzy is not None:
        return fuzzy_match(q, mapping)
    if isinstance(q, Q.Exists) and ("*" in q.field or "?" in q.field):
        subs = [dataclasses.replace(q, field=f)
                for f in matching_fields(q.field, mapping, lambda ft: True)]
        return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
    if isinstance(q, MatchBoolPrefix):
        return bool_prefix_query(q, mapping)
    if isinstance(q, Q.Bool):
        return Q.Bool(must=tuple(_expand(s, mapping) for s in q.must),
                      should=tuple(_expand(s, mapping) for s in q.should),
                      filter=tuple(_expand(s, mapping) for s in q.filter),
                      must_not=tuple(_expand(s, mapping) for s in q.must_not),
                      minimum_should_match=q.minimum_should_match, boost=q.boost)
    if isinstance(q, Q.DisMax):
        subs = tuple(_expand(s, mapping) for s in q.queries)
        if len(subs) == 1 and isinstance(subs[0], Q.DisMax) and subs[0].tie_breaker == 0.0:
            # one field pattern: its fields joined with this tie breaker (query strings)
            return Q.DisMax(queries=subs[0].queries, tie_breaker=q.tie_breaker,
                            boost=q.boost * subs[0].boost)
        return Q.DisMax(queries=subs, tie_breaker=q.tie_breaker, boost=q.boost)
    if isinstance(q, Q.ConstantScore):
        return Q.ConstantScore(filter=_expand(q.filter, mapping), boost=q.boost)
    if isinstance(q, Q.Nested):
        if not check_path(q, mapping):
            return Q.MatchNone()
        return dataclasses.replace(q, query=_expand(q.query, mapping))
    if isinstance(q, S.FunctionScore):
        functions = tuple(dataclasses.replace(f, filter=_expand(f.filter, mapping))
                          for f in q.functions)
        return dataclasses.replace(q, query=_expand(q.query, mapping), functions=functions)
    if isinstance(q, S.ScriptScore):
        return dataclasses.replace(q, query=_expand(q.query, mapping))
    return q


def _lenient_phrase(q: Q.MultiMatch, f: str, fb: float, mapping: Mapping) -> Q.Query:
    """One field of a lenient phrase-type ``multi_match``: a field that is not text matches
    the whole text as one term, leniently."""
    if mapping.fields[f].kind != "text" and (
            q.type != "bool_prefix" or not _has_terms(mapping.fields[f])):
        return expand(Q.Match(field=f, text=q.text, boost=fb, analyzer=q.analyzer,
                              lenient=True), mapping)
    if q.type == "bool_prefix":
        return bool_prefix_query(MatchBoolPrefix(field=f, text=q.text, analyzer=q.analyzer,
                                                 operator=q.operator, boost=fb,
                                                 minimum_should_match=q.minimum_should_match,
                                                 fuzzy=q.fuzzy), mapping)
    return Q.MatchPhrase(field=f, text=q.text, boost=fb, analyzer=q.analyzer, slop=q.slop,
                         prefix=q.type == "phrase_prefix", max_expansions=q.max_expansions)


def bool_prefix_query(q: MatchBoolPrefix, mapping: Mapping) -> Q.Query:
    """The query as term clauses and a final prefix clause for this mapping. A field that is
    not text is matched as ``match`` would (one exact term)."""
    ft = mapping.get(q.field)
    if ft is None:
        return Q.MatchNone()
    if ft.kind == "keyword" and ft.type != "ip":   # the whole text, a prefix (MatchQuery)
        return Q.Prefix(field=q.field, value=query_text(q.text), boost=q.boost)
    if ft.kind != "text":
        return Q.Match(field=q.field, text=q.text, analyzer=q.analyzer, boost=q.boost)
    terms = analyze_for(ft, q.text, q.analyzer)
    if not terms:
        return Q.MatchNone()
    clauses: list[Q.Query] = [Q.Term(field=q.field, value=t) if q.fuzzy is None
                              else Q.Fuzzy(field=q.field, value=t, options=q.fuzzy)
                              for t in terms[:-1]]
    clauses.append(Q.Prefix(field=q.field, value=terms[-1]))
    if len(clauses) == 1:
        return Q.Bool(must=tuple(clauses), boost=q.boost)
    if q.operator == "and":
        return Q.Bool(must=tuple(clauses), boost=q.boost)
    return Q.Bool(should=tuple(clauses), minimum_should_match=q.minimum_should_match,
                  boost=q.boost)


def fuzzy_match(q: Q.Match, mapping: Mapping) -> Q.Query:
    """``match`` with ``fuzziness``: each analysed term a fuzzy term (Elasticsearch's
    ``MatchQueryParser.newTermQuery``), combined as the match combines its terms. A field
    without a term dictionary keeps the fuzzy node, which validation refuses (or nothing,
    when lenient)."""
    ft = mapping.get(q.field)
    assert q.fuzzy is not None
    if ft is None:
        return Q.MatchNone()
    if ft.kind not in ("text", "keyword") or ft.type == "ip":
        return Q.MatchNone() if q.lenient else \
            Q.Fuzzy(field=q.field, value=query_text(q.text), options=q.fuzzy, boost=q.boost)
    terms = analyze_for(ft, q.text, q.analyzer)
    if not terms:
        return dataclasses.replace(q, fuzzy=None)     # its zero_terms_query decides
    clauses = tuple(Q.Fuzzy(field=q.field, value=t, options=q.fuzzy, boost=q.boost)
                    for t in terms)
    if len(clauses) == 1:
        return clauses[0]
    if q.operator == "and":
        return Q.Bool(must=clauses)
    return Q.Bool(should=clauses, minimum_should_match=q.minimum_should_match)


def _kind(mapping: Any, name: str) -> str | None:
    """The kind of the field ``name`` (through an alias), None when unmapped."""
    ft = mapping.fields.get(mapping.aliases.get(name, name))
    return None if ft is None else ft.kind
