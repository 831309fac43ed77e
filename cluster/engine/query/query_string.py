"""``query_string`` / ``simple_query_string`` syntax -> the query-node tree of ``dsl.py``.

Pure parsing: text is never analyzed here. Bare words become ``Match`` nodes (analyzed later,
where the mapping is known) and field names may stay patterns (``title*``, ``*``) that the
caller expands against the mapping.

``query_string`` follows Lucene's classic parser: clauses are joined flat as its ``addClause``
joins them (no precedence: ``AND`` requires both neighbours, ``OR`` under the ``AND`` default
makes the previous clause optional), clauses side by side take the default operator, and
``+``/``-``/``NOT`` mark the next clause as required/prohibited. Bad syntax raises
``ParsingError`` (``query_shard_exception``) with Elasticsearch's wording.

``simple_query_string`` follows Lucene's ``SimpleQueryParser``: operators apply left to right,
and whatever cannot be parsed is dropped instead of raising.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ...errors import IllegalArgument, ParsingError
from ..analysis import ANALYZERS
from .nodes import Bool, Exists, MatchNone, Query, QueryString
from .parse_helpers import MAX_NESTED_DEPTH
from .query_string_build import (Clause, Fields, QueryBuilder, as_query, boosted, combine,
                                 is_pattern, too_deep)
from .query_string_lexer import EXISTS_FIELD, Lexer, RangeSpec, SyntaxFault, Tok, Word
from .simple_query_string import SimpleParser

__all__ = ["expand_query_string"]


def expand_query_string(qs: QueryString, default_fields: Fields,
                        is_mapped: Callable[[str], bool] = lambda f: False,
                        is_date: Callable[[str], bool] = lambda f: False,
                        is_whole_value: Callable[[str], bool] = lambda f: False) -> Query:
    """Parse ``qs.query`` into a query tree; bare words go to ``qs.fields`` or ``default_fields``;
    ``is_mapped`` tells whether a field (or pattern) exists (for ``quote_field_suffix``, and
    leading wildcards, refused on mapped fields only), ``is_date``
    whether it is a date field (for ``time_zone``), ``is_whole_value`` whether it is mapped
    and not text (its analysis keeps words side by side as one value).

    Raises ``ParsingError`` on bad ``query_string`` syntax (never for ``simple_query_string``)
    and ``TooManyClauses`` when parentheses nest more than 30 deep.
    """
    fields = tuple(qs.fields) or tuple(default_fields)
    if qs.fields_and_default_field:     # ``QueryStringQueryBuilder.doToQuery``
        raise IllegalArgument("failed to create query: Validation Failed: 1: cannot use "
                              "[fields] parameter in conjunction with [default_field];",
                              es_type="query_shard_exception")
    if qs.quote_analyzer is not None and qs.quote_analyzer not in ANALYZERS:
        # ``QueryStringQueryBuilder.doToQuery`` looks it up first, phrases or not
        raise IllegalArgument(f"[query_string] quote_analyzer [{qs.quote_analyzer}] not found",
                              es_type="query_shard_exception")
    # simple_query_string adds the fields' scores (Elasticsearch builds it as most_fields);
    # query_string combines them as its ``type`` does
    builder = QueryBuilder(qs.default_operator.lower(), qs.analyzer,
                           tie_breaker=1.0 if qs.simple else qs.tie_breaker, fuzzy=qs.fuzzy,
                           mtype=None if qs.simple else qs.type, phrase_slop=qs.phrase_slop,
                           quote_field=_quote_field(qs, is_mapped), time_zone=qs.time_zone,
                           quote_analyzer=qs.quote_analyzer)
    if qs.simple:
        query = SimpleParser(qs.query, fields, builder, qs.fuzzy_operator).parse()
    else:
        text = lucene_escape(qs.query) if qs.escape else qs.query
        dated = _dated_term(qs, is_date)
        query = _ClassicParser(text, fields, builder, qs.allow_leading_wildcard, dated,
                               is_whole_value, is_mapped).parse()
    return boosted(_with_minimum_should_match(query, qs.minimum_should_match), qs.boost)


def _quote_field(qs: QueryString, is_mapped: Callable[[str], bool]
                 ) -> Callable[[str], str] | None:
    """``quote_field_suffix``: quoted text searches ``field + suffix`` when that field is
    mapped, else ``field`` (``QueryParserHelper.resolveMappingField``). Field patterns with a
    suffix are refused by name (not implemented)."""
    suffix = qs.quote_field_suffix
    if suffix is None:
        return None

    def quoted(name: str) -> str:
        if is_pattern(name):
            kind = "simple_query_string" if qs.simple else "query_string"
            raise IllegalArgument(f"[{kind}] [quote_field_suffix] with field patterns "
                                  f"([{name}]) is not supported by this server")
        return name + suffix if is_mapped(name + suffix) else name
    return quoted


def _dated_term(qs: QueryString, is_date: Callable[[str], bool]
                ) -> Callable[[str | None], bool]:
    """``QueryStringQueryParser.getFieldQuery``: with a ``time_zone``, a word for one date
    field (written ``field:`` or the ``default_field``) is a range over what it names, in that
    zone. The argument is the explicit field, or None for the default."""
    def dated(name: str | None) -> bool:
        name = name if name is not None else qs.default_field
        return qs.time_zone is not None and name is not None and is_date(name)
    return dated


def _with_minimum_should_match(query: Query, spec: Any) -> Query:
    """Elasticsearch applies ``minimum_should_match`` to the top-level boolean of the parsed
    clauses only (``Queries.maybeApplyMinimumShouldMatch``); any other query is left as is."""
    if spec is None or not isinstance(query, Bool) or not query.should:
        return query
    return dataclasses.replace(query, minimum_should_match=spec)


_CLAUSE_START = {"TERM", "PHRASE", "RANGE", "REGEX", "LPAREN", "PLUS", "MINUS", "NOT"}
_MODIFIERS = {"PLUS": "must", "MINUS": "must_not", "NOT": "must_not"}
_NOT_AFTER_RUN = {"COLON", "BOOST", "SLOP", "AND", "OR"}   # allowedPostMultiTerm


class _ClassicParser:
    """Recursive descent over ``query_string`` tokens::

        query   := or EOF
        or      := clause ( ["AND" | "OR" | juxtaposition] clause )*   (flat: addClause)
        clause  := [ "+" | "-" | "NOT" ] primary
        primary := [field ":"] ( term | phrase | range | "(" or ")" ) [ "~" N ] [ "^" N ]
    """

    def __init__(self, text: str, fields: Fields, builder: QueryBuilder,
                 allow_leading_wildcard: bool = True,
                 dated: Callable[[str | None], bool] = lambda f: False,
                 is_whole_value: Callable[[str], bool] = lambda f: False,
                 is_mapped: Callable[[str], bool] = lambda f: True) -> None:
        self.text = text
        self.is_mapped = is_mapped
        self.dated = dated
        self.is_whole_value = is_whole_value
        self.allow_leading_wildcard = allow_leading_wildcard
        self.fields = fields
        self.b = builder
        self.toks: list[Tok] = []
        self.k = 0

    def parse(self) -> Query:
        if not self.text.strip():
            return MatchNone()
        try:
            self.toks = Lexer(self.text).tokens()
            result = self._or(self.fields, 0)
            if self._peek().kind != "EOF":
                raise SyntaxFault(f"unexpected {self._peek().kind}")
        except SyntaxFault:
            raise ParsingError(f"Failed to parse query [{self.text}]",
                               es_type="query_shard_exception") from None
        except LeadingWildcard as e:
            raise ParsingError(f"Failed to parse query [{self.text}]",
                               es_type="query_shard_exception",
                               caused_by={"type": "parse_exception",
                                          "reason": f"Cannot parse '{self.text}': {e}"}) from None
        return as_query(result)

    # -- token helpers
    def _peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.k + k, len(self.toks) - 1)]

    def _take(self) -> Tok:
        tok = self.toks[self.k]
        self.k = min(self.k + 1, len(self.toks) - 1)
        return tok

    # -- grammar
    def _or(self, fields: Fields, depth: int) -> Clause:
        """Lucene's ``Query`` production: clauses and their conjunctions, joined flat by
        ``QueryParserBase.addClause``. There is no precedence: ``AND`` makes the clauses on
        both of its sides required, ``OR`` (under the ``AND`` default operator) makes the one
        before it optional, so ``a OR b AND c`` is ``a +b +c``."""
        clauses: list[list[Any]] = []
        conj = None
        first = clause = self._clause(fields, depth)
        while True:
            self._add_clause(clauses, conj, *clause)
            if self._peek().kind in ("AND", "OR"):
                conj = self._take().kind
            elif self._peek().kind in _CLAUSE_START:
                conj = None
            else:
                break
            clause = self._clause(fields, depth)
        return first if len(clauses) == 1 else combine([(o, q) for o, q in clauses], "should")

    def _add_clause(self, clauses: list[list[Any]], conj: str | None, mods: str | None,
                    query: Query) -> None:
        """``QueryParserBase.addClause``: the conjunction may change the previous clause's
        occur, then this clause's occur follows from the modifiers, the conjunction and the
        default operator."""
        if clauses and clauses[-1][0] != "must_not":
            if conj == "AND":
                clauses[-1][0] = "must"
            elif conj == "OR" and self.b.operator == "and":
                clauses[-1][0] = "should"
        prohibited = mods == "must_not"
        if self.b.operator == "or":
            required = mods == "must" or (conj == "AND" and not prohibited)
        else:
            required = not prohibited and conj != "OR"
        clauses.append(["must_not" if prohibited else "must" if required else "should", query])

    def _clause(self, fields: Fields, depth: int) -> Clause:
        occur = None
        if self._peek().kind in _MODIFIERS:
            occur = _MODIFIERS[self._take().kind]
        elif self._runs(fields) and self._after_conjunction() is False \
                and self._joins(0) and self._joins(1):
            return None, self._multi_term(fields)
        return occur, self._primary(fields, depth)

    def _runs(self, fields: Fields) -> bool:
        """Whether words side by side are read as one text: over several fields (one
        ``multi_match``), and over one field that is not text, which keeps ``lazy dog`` (or
        ``42 7``: a number that fails) as one value (Lucene's ``getFieldQuery`` analyses the
        run; over one text field the run's terms
        are the words, kept apart so ``minimum_should_match`` counts them, as Lucene's
        ``addMultiTermClauses`` flattens them)."""
        return self.b.grouped(fields) or (len(fields) == 1 and not is_pattern(fields[0][0])
                                          and self.is_whole_value(fields[0][0]))

    def _after_conjunction(self) -> bool:
        """Lucene reads one clause, never a run of words, right after ``AND``/``OR``."""
        return self.k > 0 and self.toks[self.k - 1].kind in ("AND", "OR")

    def _joins(self, k: int) -> bool:
        """Lucene's ``MultiTerm`` rule: a plain word joins the run when the token after it is
        neither ``:``, ``^`` nor ``~``."""
        tok = self._peek(k)
        return (tok.kind == "TERM" and isinstance(tok.value, Word) and not tok.value.wildcards
                and self._peek(k + 1).kind not in _NOT_AFTER_RUN)

    def _multi_term(self, fields: Fields) -> Query:
        """Plain words side by side, analysed together as one text over the fields (Lucene's
        ``splitOnWhitespace=false``), so each field scores the whole run."""
        words = []
        while self._joins(0):
            tok = self._take()
            assert isinstance(tok.value, Word)
            words.append(tok.value.text)
        return self.b.match(fields, " ".join(words))

    def _primary(self, fields: Fields, depth: int) -> Query:
        tok = self._peek()
        # a field name is a plain term: ``title*:x`` is a syntax error (Lucene's grammar),
        # a pattern is written escaped, ``title\\*:x``
        if tok.kind == "TERM" and self._peek(1).kind == "COLON" \
                and isinstance(tok.value, Word) \
                and (not tok.value.wildcards or tok.value.text == "*"):
            self._take()
            self._take()
            assert isinstance(tok.value, Word)
            name = tok.value.text
            if name == EXISTS_FIELD:
                return self._exists()
            return self._value([(name, 1.0)], depth, explicit=True)
        return self._value(fields, depth, explicit=False)

    def _exists(self) -> Query:
        tok = self._take()
        if tok.kind == "TERM":
            assert isinstance(tok.value, Word)
            name = tok.value.text
        elif tok.kind == "PHRASE":
            name = str(tok.value)
        else:
            raise SyntaxFault("_exists_ needs a field name")
        return boosted(Exists(field=name), self._modifiers()[1])

    def _modifiers(self) -> tuple[str | None, float]:
        """Trailing ``~N`` and ``^N`` in either order -> (slop text or None, boost)."""
        slop: str | None = None
        boost = 1.0
        seen: set[str] = set()
        while self._peek().kind in ("SLOP", "BOOST") and self._peek().kind not in seen:
            tok = self._take()
            seen.add(tok.kind)
            if tok.kind == "SLOP":
                slop = "" if tok.value is None else str(tok.value)
            else:
                boost = float(tok.value)  # type: ignore[arg-type]
        return slop, boost

    def _value(self, fields: Fields, depth: int, explicit: bool) -> Query:
        tok = self._take()
        if tok.kind == "LPAREN":
            if depth + 1 > MAX_NESTED_DEPTH:
                raise too_deep()
            if self._peek().kind == "RPAREN":
                raise SyntaxFault("empty group")
            inner = self._or(fields, depth + 1)
            if self._take().kind != "RPAREN":
                raise SyntaxFault("unbalanced parenthesis")
            _, boost = self._modifiers()
            return boosted(as_query(inner), boost)
        if tok.kind == "PHRASE":
            slop, boost = self._modifiers()
            slop_n = _slop(slop, self.b.phrase_slop)
            return boosted(self.b.phrase(fields, str(tok.value), slop_n), boost)
        if tok.kind == "REGEX":
            _, boost = self._modifiers()
            return boosted(self.b.regexp(fields, str(tok.value)), boost)
        if tok.kind == "RANGE":
            spec = tok.value
            assert isinstance(spec, RangeSpec)
            _, boost = self._modifiers()
            return boosted(self.b.range(fields, spec.lower, spec.upper, spec.include_lower,
                                        spec.include_upper), boost)
        if tok.kind == "TERM":
            assert isinstance(tok.value, Word)
            fuzzy, boost = self._modifiers()
            if fuzzy is not None and not tok.value.wildcards:   # term~ / term~N
                return boosted(self.b.fuzzy(fields, tok.value.text, fuzzy or None), boost)
            return boosted(self._term(fields, tok.value, explicit), boost)
        raise SyntaxFault(f"unexpected {tok.kind}")

    def _term(self, fields: Fields, word: Word, explicit: bool) -> Query:
        text, wild = word.text, word.wildcards
        if wild:
            if text == "*":
                return self.b.star(fields)
            if wild == [len(word.chars) - 1] and text.endswith("*"):
                return self.b.prefix(fields, text[:-1])
            if not self.allow_leading_wildcard and 0 in wild \
                    and any(self.is_mapped(f) for f, _ in fields):
                raise LeadingWildcard()     # on no mapped field: no hits, no error
            return self.b.wildcard(fields, word.pattern)
        if explicit and len(text) > 1 and text[0] in "<>":
            return self._comparison(fields, text)
        if len(text) > 1 and self.dated(fields[0][0] if explicit else None):
            return self.b.range(fields, text, text, True, True)
        return self.b.match(fields, text)

    def _comparison(self, fields: Fields, text: str) -> Query:
        """``field:>5``, ``>=5``, ``<5``, ``<=5`` (Elasticsearch's one-sided ranges)."""
        inclusive = len(text) > 2 and text[1] == "="
        value: str | None = text[2:] if inclusive else text[1:]
        if value == "*":
            value = None
        if text[0] == ">":
            return self.b.range(fields, value, None, inclusive, True)
        return self.b.range(fields, None, value, True, inclusive)


class LeadingWildcard(Exception):
    """``allow_leading_wildcard: false`` and a wildcard term starting with ``*`` or ``?``."""

    def __str__(self) -> str:
        return "'*' or '?' not allowed as first character in WildcardQuery"


#: what Lucene's ``QueryParser.escape`` escapes (whitespace and words such as AND are kept)
_LUCENE_SPECIAL = set('\\+-!():^[]"{}~*?|&/')


def lucene_escape(text: str) -> str:
    """``query_string``'s ``escape: true``: every operator character taken literally."""
    return "".join("\\" + c if c in _LUCENE_SPECIAL else c for c in text)


def _slop(text: str | None, default: int) -> int:
    """Lucene's ``handleQuotedTerm``: ``~N`` (a float, truncated), else ``phrase_slop``."""
    if not text:
        return default
    try:
        return int(float(text))
    except ValueError:
        return default
