"""What both query-string syntaxes build with: clauses combined into ``Bool`` nodes, and a
:class:`QueryBuilder` that turns one value into a query over each of its fields.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from ...errors import TooManyClauses
from .nodes import (Bool, DisMax, Exists, Fuzzy, FuzzyOptions, Match, MatchAll, MatchPhrase,
                    MultiMatch, Prefix, Query, Range, Regexp, Wildcard)
from .parse_helpers import MAX_CLAUSE_COUNT

Fields = Sequence[tuple[str, float]]
Clause = tuple[str | None, Query]   # (occur: 'must' | 'should' | 'must_not' | None, query)

WHITESPACE = " \t\n\r\u3000"

#: ``MultiMatchQueryBuilder.Type.tieBreaker()``: the tie breaker each type defaults to
TYPE_TIE_BREAKER = {"best_fields": 0.0, "most_fields": 1.0, "cross_fields": 0.0,
                    "phrase": 0.0, "phrase_prefix": 0.0, "bool_prefix": 1.0}


def is_pattern(name: str) -> bool:
    return "*" in name or "?" in name


def too_deep() -> TooManyClauses:
    return TooManyClauses("Query contains too many nested clauses; maxClauseCount is set to "
                          f"{MAX_CLAUSE_COUNT}", es_type="too_many_nested_clauses")


def boosted(query: Query, boost: float) -> Query:
    """Multiply ``query``'s boost by ``boost`` (field boost x term boost, like Lucene)."""
    if boost == 1.0:
        return query
    return replace(query, boost=query.boost * boost)


def negated(query: Query) -> Query:
    """Everything except ``query``."""
    return Bool(must=(MatchAll(),), must_not=(query,))


def as_query(clause: Clause) -> Query:
    """A clause standing on its own: a prohibited clause matches everything except it."""
    occur, query = clause
    return negated(query) if occur == "must_not" else query


def combine(items: list[Clause], default_occur: str) -> Clause:
    """Join clauses into one ``Bool``; unmarked clauses get ``default_occur``."""
    if len(items) == 1:
        return items[0]
    must: list[Query] = []
    should: list[Query] = []
    must_not: list[Query] = []
    for occur, query in items:
        {"must": must, "should": should, "must_not": must_not}[occur or default_occur].append(query)
    if not must and not should:
        must.append(MatchAll())
    return None, Bool(must=tuple(must), should=tuple(should), must_not=tuple(must_not))


class QueryBuilder:
    """Makes the leaf nodes for one field, or a ``DisMax`` over several fields.

    ``mtype`` is ``query_string``'s ``type``: its text over several fields (or a pattern) is
    one ``multi_match`` of that type (``QueryStringQueryParser.getFieldQuery``), and its other
    per-field queries are joined with the type's tie breaker unless ``tie_breaker`` is given.
    ``simple_query_string`` (no ``mtype``) sums the fields (``tie_breaker`` 1)."""

    def __init__(self, default_operator: str, analyzer: str | None,
                 tie_breaker: float | None = None, fuzzy: FuzzyOptions | None = None,
                 mtype: str | None = None, phrase_slop: int = 0,
                 quote_field: Callable[[str], str] | None = None,
                 time_zone: str | None = None, quote_analyzer: str | None = None) -> None:
        self.operator = "and" if default_operator == "and" else "or"
        self.analyzer = analyzer
        self.mtype = mtype
        self.group_tie = tie_breaker
        self.tie_breaker = tie_breaker if tie_breaker is not None \
            else TYPE_TIE_BREAKER.get(mtype or "most_fields", 0.0)
        self.fuzzy_options = fuzzy or FuzzyOptions()
        self.phrase_slop = phrase_slop
        self.quote_field = quote_field
        self.time_zone = time_zone
        self.quote_analyzer = quote_analyzer or analyzer

    def per_field(self, fields: Fields, make: Callable[[str, float], Query]) -> Query:
        """One node per field; several fields (or a pattern, expanded later into the ``DisMax``
        that wraps it) are combined with ``DisMax``."""
        if len(fields) == 1:
            name, boost = fields[0]
            if not is_pattern(name) or self.tie_breaker == 0.0:
                return make(name, boost)
        return DisMax(queries=tuple(make(name, boost) for name, boost in fields),
                      tie_breaker=self.tie_breaker)

    def grouped(self, fields: Fields) -> bool:
        """Whether text for ``fields`` is one ``multi_match`` rather than a query per word."""
        return self.mtype is not None and (
            len(fields) > 1 or is_pattern(fields[0][0])
            or self.mtype in ("phrase", "phrase_prefix", "bool_prefix"))

    def _same_per_word(self, text: str) -> bool:
        """A single word as ``best_fields`` with no tie breaker: the same as a ``DisMax`` of
        one ``match`` per field, kept in that plainer shape."""
        return self.mtype == "best_fields" and self.group_tie is None \
            and not any(c in WHITESPACE for c in text)

    def match(self, fields: Fields, text: str) -> Query:
        if self.grouped(fields) and not self._same_per_word(text):
            assert self.mtype is not None
            return MultiMatch(fields=tuple(fields), text=text, type=self.mtype,
                              operator=self.operator, tie_breaker=self.group_tie,
                              analyzer=self.analyzer, slop=self.phrase_slop)
        return self.per_field(fields, lambda f, b: Match(
            field=f, text=text, operator=self.operator, analyzer=self.analyzer, boost=b))

    def phrase(self, fields: Fields, text: str, slop: int) -> Query:
        if self.quote_field is not None:
            fields = [(self.quote_field(f), b) for f, b in fields]
        return self.per_field(fields, lambda f, b: MatchPhrase(
            field=f, text=text, slop=slop, analyzer=self.quote_analyzer, boost=b))

    def prefix(self, fields: Fields, value: str) -> Query:
        return self.per_field(fields, lambda f, b: Prefix(field=f, value=value, boost=b))

    def wildcard(self, fields: Fields, pattern: str) -> Query:
        return self.per_field(fields, lambda f, b: Wildcard(field=f, pattern=pattern, boost=b))

    def fuzzy(self, fields: Fields, text: str, fuzziness: str | int | None) -> Query:
        """``term~`` (the query's ``fuzziness``) or ``term~N``: a fuzzy term per field, the
        text normalized later as the field normalizes (``rewrite.normalize_multi_terms``)."""
        opts = self.fuzzy_options if fuzziness is None \
            else replace(self.fuzzy_options, fuzziness=fuzziness)
        return self.per_field(fields, lambda f, b: Fuzzy(field=f, value=text, options=opts,
                                                         boost=b))

    def regexp(self, fields: Fields, pattern: str) -> Query:
        return self.per_field(fields, lambda f, b: Regexp(field=f, value=pattern, boost=b))

    def star(self, fields: Fields) -> Query:
        """``*``: every document for the ``*`` field, else documents that have the field."""
        if len(fields) == 1 and fields[0][0] == "*":
            return MatchAll(boost=fields[0][1])
        return self.per_field(fields, lambda f, b: MatchAll(boost=b) if f == "*"
                              else Exists(field=f, boost=b))

    def range(self, fields: Fields, lower: str | None, upper: str | None,
              include_lower: bool, include_upper: bool) -> Query:
        def make(f: str, b: float) -> Query:
            return Range(field=f, boost=b,
                         gte=lower if include_lower else None,
                         gt=None if include_lower else lower,
                         lte=upper if include_upper else None,
                         lt=None if include_upper else upper, time_zone=self.time_zone)
        return self.per_field(fields, make)
