"""``query_string`` / ``simple_query_string`` syntax -> the query-node tree of ``dsl.py``.

Pure parsing: text is never analyzed here. Bare words become ``Match`` nodes (analyzed later,
where the mapping is known) and field names may stay patterns (``title*``, ``*``) that the
caller expands against the mapping.

``query_string`` follows Lucene's classic parser, with one simplification of its precedence:
``AND`` binds tighter than ``OR``, clauses written side by side are joined with the default
operator, and ``+``/``-``/``NOT`` mark the next clause as required/prohibited. Bad syntax raises
``ParsingError`` (``query_shard_exception``) with Elasticsearch's wording.

``simple_query_string`` follows Lucene's ``SimpleQueryParser``: operators apply left to right,
and whatever cannot be parsed is dropped instead of raising.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from ...errors import ParsingError, TooManyClauses
from .dsl import (MAX_CLAUSE_COUNT, MAX_NESTED_DEPTH, Bool, DisMax, Exists, Match, MatchAll,
                    MatchNone, MatchPhrase, Prefix, Query, QueryString, Range, Regexp, Wildcard)

__all__ = ["expand_query_string"]

Fields = Sequence[tuple[str, float]]
_Clause = tuple[str | None, Query]   # (occur: 'must' | 'should' | 'must_not' | None, query)

_WS = " \t\n\r\u3000"
# characters that end a bare term in query_string (Lucene's classic grammar; '+', '-', '*',
# '?' and '/' may appear inside a term)
_TERM_STOP = set(_WS) | set('!():^[]"{}~')
_NUMBER_CHARS = "0123456789."
_EXISTS_FIELD = "_exists_"
_SINGLE_CHAR_TOKENS = {"(": "LPAREN", ")": "RPAREN", ":": "COLON", "+": "PLUS", "-": "MINUS",
                       "!": "NOT"}


def expand_query_string(qs: QueryString, default_fields: Sequence[tuple[str, float]]) -> Query:
    """Parse ``qs.query`` into a query tree; bare words go to ``qs.fields`` or ``default_fields``.

    Raises ``ParsingError`` on bad ``query_string`` syntax (never for ``simple_query_string``)
    and ``TooManyClauses`` when parentheses nest more than 30 deep.
    """
    fields = tuple(qs.fields) or tuple(default_fields)
    # query_string keeps the best field's score; simple_query_string adds the fields' scores
    # (Elasticsearch builds it as most_fields, a dis_max with tie_breaker 1)
    builder = _Builder(qs.default_operator.lower(), qs.analyzer,
                       tie_breaker=1.0 if qs.simple else 0.0)
    if qs.simple:
        query = _SimpleParser(qs.query, fields, builder).parse()
    else:
        query = _ClassicParser(qs.query, fields, builder).parse()
    return _boosted(query, qs.boost)


# --------------------------------------------------------------------------- shared helpers


def _too_deep() -> TooManyClauses:
    return TooManyClauses("Query contains too many nested clauses; maxClauseCount is set to "
                          f"{MAX_CLAUSE_COUNT}", es_type="too_many_nested_clauses")


def _boosted(query: Query, boost: float) -> Query:
    """Multiply ``query``'s boost by ``boost`` (field boost x term boost, like Lucene)."""
    if boost == 1.0:
        return query
    return replace(query, boost=query.boost * boost)


def _negated(query: Query) -> Query:
    """Everything except ``query``."""
    return Bool(must=(MatchAll(),), must_not=(query,))


def _as_query(clause: _Clause) -> Query:
    """A clause standing on its own: a prohibited clause matches everything except it."""
    occur, query = clause
    return _negated(query) if occur == "must_not" else query


def _combine(items: list[_Clause], default_occur: str) -> _Clause:
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


class _Builder:
    """Makes the leaf nodes for one field, or a ``DisMax`` over several fields."""

    def __init__(self, default_operator: str, analyzer: str | None,
                 tie_breaker: float = 0.0) -> None:
        self.operator = "and" if default_operator == "and" else "or"
        self.analyzer = analyzer
        self.tie_breaker = tie_breaker

    def per_field(self, fields: Fields, make: Callable[[str, float], Query]) -> Query:
        """One node per field; several fields are combined with ``DisMax``."""
        if len(fields) == 1:
            name, boost = fields[0]
            return make(name, boost)
        return DisMax(queries=tuple(make(name, boost) for name, boost in fields),
                      tie_breaker=self.tie_breaker)

    def match(self, fields: Fields, text: str) -> Query:
        return self.per_field(fields, lambda f, b: Match(
            field=f, text=text, operator=self.operator, analyzer=self.analyzer, boost=b))

    def phrase(self, fields: Fields, text: str, slop: int) -> Query:
        return self.per_field(fields, lambda f, b: MatchPhrase(
            field=f, text=text, slop=slop, analyzer=self.analyzer, boost=b))

    def prefix(self, fields: Fields, value: str) -> Query:
        return self.per_field(fields, lambda f, b: Prefix(field=f, value=value, boost=b))

    def wildcard(self, fields: Fields, pattern: str) -> Query:
        return self.per_field(fields, lambda f, b: Wildcard(field=f, pattern=pattern, boost=b))

    def regexp(self, fields: Fields, pattern: str) -> Query:
        return self.per_field(fields, lambda f, b: Regexp(field=f, value=pattern, boost=b))

    def star(self, fields: Fields) -> Query:
        """``*``: every document for the ``*`` field, else documents that have the field."""
        return self.per_field(fields, lambda f, b: MatchAll(boost=b) if f == "*"
                              else Exists(field=f, boost=b))

    def range(self, fields: Fields, lower: str | None, upper: str | None,
              include_lower: bool, include_upper: bool) -> Query:
        def make(f: str, b: float) -> Query:
            return Range(field=f, boost=b,
                         gte=lower if include_lower else None,
                         gt=None if include_lower else lower,
                         lte=upper if include_upper else None,
                         lt=None if include_upper else upper)
        return self.per_field(fields, make)


# --------------------------------------------------------------------------- query_string


@dataclass(frozen=True)
class _Word:
    """A bare term as (character, was-escaped) pairs, so wildcards can tell ``*`` from ``\\*``."""

    chars: tuple[tuple[str, bool], ...]

    @property
    def text(self) -> str:
        return "".join(c for c, _ in self.chars)

    @property
    def wildcards(self) -> list[int]:
        return [i for i, (c, esc) in enumerate(self.chars) if c in "*?" and not esc]

    @property
    def pattern(self) -> str:
        """Wildcard pattern: escapes kept only where they protect ``*``, ``?`` or ``\\``."""
        return "".join("\\" + c if esc and c in "*?\\" else c for c, esc in self.chars)


@dataclass(frozen=True)
class _Tok:
    kind: str  # TERM PHRASE RANGE LPAREN RPAREN COLON AND OR NOT PLUS MINUS BOOST SLOP EOF
    value: object = None
    pos: int = 0


@dataclass(frozen=True)
class _RangeSpec:
    lower: str | None
    upper: str | None
    include_lower: bool
    include_upper: bool


class _Syntax(Exception):
    """Internal: bad syntax; turned into Elasticsearch's ``query_shard_exception``."""


class _Lexer:
    """Turns a ``query_string`` into tokens (whitespace is dropped)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def tokens(self) -> list[_Tok]:
        out: list[_Tok] = []
        while True:
            tok = self._next()
            out.append(tok)
            if tok.kind == "EOF":
                return out

    def _peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def _next(self) -> _Tok:
        s = self.s
        while self.i < len(s) and s[self.i] in _WS:
            self.i += 1
        start = self.i
        if self.i >= len(s):
            return _Tok("EOF", pos=start)
        c = s[self.i]
        two = s[self.i:self.i + 2]
        if two == "&&" or two == "||":
            self.i += 2
            return _Tok("AND" if two == "&&" else "OR", pos=start)
        if c in _SINGLE_CHAR_TOKENS:
            self.i += 1
            return _Tok(_SINGLE_CHAR_TOKENS[c], pos=start)
        if c == "^":
            self.i += 1
            number = self._number()
            if not number:
                raise _Syntax("boost without a number")
            return _Tok("BOOST", float(number), start)
        if c == "~":
            self.i += 1
            return _Tok("SLOP", self._number() or None, start)
        if c == '"':
            return _Tok("PHRASE", self._quoted(), start)
        if c in "[{":
            return _Tok("RANGE", self._range(), start)
        if c == "/":
            return _Tok("REGEX", self._regex(), start)
        if c in "]}":
            raise _Syntax("unexpected range end")
        word = self._word()
        if all(not esc for _, esc in word.chars) and word.text in ("AND", "OR", "NOT"):
            return _Tok(word.text, pos=start)
        return _Tok("TERM", word, start)

    def _number(self) -> str:
        j = self.i
        while self.i < len(self.s) and self.s[self.i] in _NUMBER_CHARS:
            self.i += 1
        number = self.s[j:self.i]
        try:
            float(number)
        except ValueError:
            if number:
                raise _Syntax("bad number") from None
        return number

    def _word(self) -> _Word:
        chars: list[tuple[str, bool]] = []
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                if self.i + 1 >= len(s):
                    raise _Syntax("term can not end with escape character")
                chars.append((s[self.i + 1], True))
                self.i += 2
                continue
            if c in _TERM_STOP:
                break
            chars.append((c, False))
            self.i += 1
        if not chars:
            raise _Syntax("empty term")
        return _Word(tuple(chars))

    def _quoted(self) -> str:
        """A ``"..."`` string starting at the quote; escapes are resolved."""
        s = self.s
        self.i += 1
        out: list[str] = []
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                if self.i + 1 >= len(s):
                    break
                out.append(s[self.i + 1])
                self.i += 2
            elif c == '"':
                self.i += 1
                return "".join(out)
            else:
                out.append(c)
                self.i += 1
        raise _Syntax("unterminated quote")

    def _regex(self) -> str:
        """A ``/regex/`` term (Lucene's REGEXPTERM): the raw text up to the next unescaped
        ``/`` (escapes are left for the regular expression to read)."""
        s = self.s
        self.i += 1
        out: list[str] = []
        while self.i < len(s):
            c = s[self.i]
            if c == "\\" and self.i + 1 < len(s):
                out.append(s[self.i:self.i + 2])
                self.i += 2
            elif c == "/":
                self.i += 1
                return "".join(out)
            else:
                out.append(c)
                self.i += 1
        raise _Syntax("unterminated regular expression")

    def _range_bound(self) -> tuple[str, bool]:
        """One bound: quoted, or up to whitespace / ``]`` / ``}``. Returns (text, quoted)."""
        while self._peek() and self._peek() in _WS:
            self.i += 1
        if self._peek() == '"':
            return self._quoted(), True
        out: list[str] = []
        while self._peek() and self._peek() not in _WS and self._peek() not in "]}":
            c = self._peek()
            if c == "\\" and self._peek(1):
                out.append(self._peek(1))
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        if not out:
            raise _Syntax("empty range bound")
        return "".join(out), False

    def _range(self) -> _RangeSpec:
        include_lower = self.s[self.i] == "["
        self.i += 1
        lower, lower_quoted = self._range_bound()
        save = self.i
        to, to_quoted = self._range_bound()
        if to == "TO" and not to_quoted:
            upper, upper_quoted = self._range_bound()
        else:                      # Lucene lets "TO" be left out: [a b]
            self.i = save
            upper, upper_quoted = self._range_bound()
        while self._peek() and self._peek() in _WS:
            self.i += 1
        end = self._peek()
        if not end or end not in "]}":
            raise _Syntax("unterminated range")
        self.i += 1
        return _RangeSpec(None if lower == "*" and not lower_quoted else lower,
                          None if upper == "*" and not upper_quoted else upper,
                          include_lower, end == "]")


_CLAUSE_START = {"TERM", "PHRASE", "RANGE", "REGEX", "LPAREN", "PLUS", "MINUS", "NOT"}
_MODIFIERS = {"PLUS": "must", "MINUS": "must_not", "NOT": "must_not"}


class _ClassicParser:
    """Recursive descent over ``query_string`` tokens::

        query   := or EOF
        or      := and ( ["OR" | juxtaposition if default OR] and )*
        and     := clause ( ["AND" | juxtaposition if default AND] clause )*
        clause  := [ "+" | "-" | "NOT" ] primary
        primary := [field ":"] ( term | phrase | range | "(" or ")" ) [ "~" N ] [ "^" N ]
    """

    def __init__(self, text: str, fields: Fields, builder: _Builder) -> None:
        self.text = text
        self.fields = fields
        self.b = builder
        self.toks: list[_Tok] = []
        self.k = 0

    def parse(self) -> Query:
        if not self.text.strip():
            return MatchNone()
        try:
            self.toks = _Lexer(self.text).tokens()
            result = self._or(self.fields, 0)
            if self._peek().kind != "EOF":
                raise _Syntax(f"unexpected {self._peek().kind}")
        except _Syntax:
            raise ParsingError(f"Failed to parse query [{self.text}]",
                               es_type="query_shard_exception") from None
        return _as_query(result)

    # -- token helpers
    def _peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.k + k, len(self.toks) - 1)]

    def _take(self) -> _Tok:
        tok = self.toks[self.k]
        self.k = min(self.k + 1, len(self.toks) - 1)
        return tok

    def _juxtaposed(self, operator: str) -> bool:
        return self.b.operator == operator and self._peek().kind in _CLAUSE_START

    # -- grammar
    def _or(self, fields: Fields, depth: int) -> _Clause:
        items = [self._and(fields, depth)]
        while True:
            if self._peek().kind == "OR":
                self._take()
            elif not self._juxtaposed("or"):
                break
            items.append(self._and(fields, depth))
        return _combine(items, "should")

    def _and(self, fields: Fields, depth: int) -> _Clause:
        items = [self._clause(fields, depth)]
        while True:
            if self._peek().kind == "AND":
                self._take()
            elif not self._juxtaposed("and"):
                break
            items.append(self._clause(fields, depth))
        return _combine(items, "must")

    def _clause(self, fields: Fields, depth: int) -> _Clause:
        occur = None
        if self._peek().kind in _MODIFIERS:
            occur = _MODIFIERS[self._take().kind]
        return occur, self._primary(fields, depth)

    def _primary(self, fields: Fields, depth: int) -> Query:
        tok = self._peek()
        if tok.kind == "TERM" and self._peek(1).kind == "COLON":
            self._take()
            self._take()
            assert isinstance(tok.value, _Word)
            name = tok.value.text
            if name == _EXISTS_FIELD:
                return self._exists()
            return self._value([(name, 1.0)], depth, explicit=True)
        return self._value(fields, depth, explicit=False)

    def _exists(self) -> Query:
        tok = self._take()
        if tok.kind == "TERM":
            assert isinstance(tok.value, _Word)
            name = tok.value.text
        elif tok.kind == "PHRASE":
            name = str(tok.value)
        else:
            raise _Syntax("_exists_ needs a field name")
        return _boosted(Exists(field=name), self._modifiers()[1])

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
                raise _too_deep()
            if self._peek().kind == "RPAREN":
                raise _Syntax("empty group")
            inner = self._or(fields, depth + 1)
            if self._take().kind != "RPAREN":
                raise _Syntax("unbalanced parenthesis")
            _, boost = self._modifiers()
            return _boosted(_as_query(inner), boost)
        if tok.kind == "PHRASE":
            slop, boost = self._modifiers()
            return _boosted(self.b.phrase(fields, str(tok.value), _slop(slop)), boost)
        if tok.kind == "REGEX":
            _, boost = self._modifiers()
            return _boosted(self.b.regexp(fields, str(tok.value)), boost)
        if tok.kind == "RANGE":
            spec = tok.value
            assert isinstance(spec, _RangeSpec)
            _, boost = self._modifiers()
            return _boosted(self.b.range(fields, spec.lower, spec.upper, spec.include_lower,
                                         spec.include_upper), boost)
        if tok.kind == "TERM":
            assert isinstance(tok.value, _Word)
            _, boost = self._modifiers()   # fuzziness (term~2) has no node: it is dropped
            return _boosted(self._term(fields, tok.value, explicit), boost)
        raise _Syntax(f"unexpected {tok.kind}")

    def _term(self, fields: Fields, word: _Word, explicit: bool) -> Query:
        text, wild = word.text, word.wildcards
        if wild:
            if text == "*":
                return self.b.star(fields)
            if wild == [len(word.chars) - 1] and text.endswith("*"):
                return self.b.prefix(fields, text[:-1])
            return self.b.wildcard(fields, word.pattern)
        if explicit and len(text) > 1 and text[0] in "<>":
            return self._comparison(fields, text)
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


def _slop(text: str | None) -> int:
    if not text:
        return 0
    try:
        return int(float(text))
    except ValueError:
        return 0


# --------------------------------------------------------------------------- simple_query_string

_SIMPLE_STOP = set(_WS) | set('"|+()')


class _SimpleParser:
    """Lucene's ``SimpleQueryParser``: ``+`` AND, ``|`` OR, ``-`` NOT, ``"phrase"~N``, ``word*``,
    ``( )``; operators apply left to right and unparsable bits are dropped."""

    def __init__(self, text: str, fields: Fields, builder: _Builder) -> None:
        self.s = text
        self.fields = fields
        self.b = builder
        self.default = "must" if builder.operator == "and" else "should"
        # matching ')' of each '(' and the next '"' at or after each index, found once so that
        # unbalanced input (e.g. thousands of '(') stays linear; backslash escapes are skipped
        self.close: dict[int, int] = {}
        self.next_quote = [len(text)] * (len(text) + 1)
        opened: list[int] = []
        quotes: list[int] = []
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == "(":
                opened.append(i)
            elif c == ")" and opened:
                self.close[opened.pop()] = i
            elif c == '"':
                quotes.append(i)
            i += 1
        nxt = len(text)
        for j in range(len(text), -1, -1):
            if quotes and quotes[-1] == j:
                nxt = quotes.pop()
            self.next_quote[j] = nxt

    def parse(self) -> Query:
        top = self._parse(0, len(self.s), 0)
        return MatchNone() if top is None else top

    def _parse(self, start: int, end: int, depth: int) -> Query | None:
        """Parse ``s[start:end]``; returns the query tree or ``None`` if nothing was found."""
        st = _SimpleState(self.default)
        i = start
        s = self.s
        while i < end:
            c = s[i]
            if c == "(":
                i = self._subquery(st, i, end, depth)
            elif c == '"':
                i = self._phrase(st, i, end)
            elif c in "+|":
                if st.operation is None and st.first is not None:
                    st.operation = "must" if c == "+" else "should"
                i += 1
            elif c == "-":
                st.negations += 1
                i += 1
                continue                 # keep the negation for the next clause
            elif c in _WS or c == ")":
                i += 1                   # whitespace; a stray ')' is dropped
            else:
                i = self._token(st, i, end)
            st.negations = 0
        return st.top

    def _subquery(self, st: _SimpleState, i: int, end: int, depth: int) -> int:
        j = self.close.get(i, end)
        if j >= end:                     # never closed: the '(' is dropped
            return i + 1
        if j == i + 1:                   # "()": nothing to apply the operator to
            st.operation = None
            return j + 1
        if depth + 1 > MAX_NESTED_DEPTH:
            raise _too_deep()
        st.add(self._parse(i + 1, j, depth + 1))
        return j + 1

    def _phrase(self, st: _SimpleState, i: int, end: int) -> int:
        j = self.next_quote[i + 1]
        if j >= end:                     # never closed: the '"' is dropped
            return i + 1
        text = _unescape(self.s[i + 1:j])
        j += 1
        slop = 0
        if j < end and self.s[j] == "~":
            j, slop = self._fuzziness(j + 1, end)
        if not text:                     # '""': nothing to apply the operator to
            st.operation = None
            return j
        st.add(self.b.phrase(self.fields, text, slop))
        return j

    def _fuzziness(self, j: int, end: int) -> tuple[int, int]:
        """Read the number after ``~`` up to the end of the token -> (next index, value)."""
        k = j
        while k < end and self.s[k] not in _SIMPLE_STOP:
            k += 1
        try:
            value = max(0, int(float(self.s[j:k])))
        except ValueError:
            value = 0
        return k, value

    def _token(self, st: _SimpleState, i: int, end: int) -> int:
        s = self.s
        out: list[str] = []
        prefix = False
        j = i
        while j < end:
            c = s[j]
            if c == "\\":
                if j + 1 < end:
                    out.append(s[j + 1])
                prefix = False
                j += 2
                continue
            if c in _SIMPLE_STOP:
                break
            if out and c == "~":         # fuzziness has no node: read and drop it
                j, _ = self._fuzziness(j + 1, end)
                break
            prefix = bool(out) and c == "*"
            out.append(c)
            j += 1
        if out:
            text = "".join(out)
            if prefix:
                st.add(self.b.prefix(self.fields, text[:-1]))
            elif text == "*":
                st.add(self.b.star(self.fields))
            else:
                st.add(self.b.match(self.fields, text))
        return max(j, i + 1)


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


class _SimpleState:
    """Left-to-right tree building of Lucene's ``SimpleQueryParser``: clauses joined by the same
    operator share one ``Bool``; a change of operator makes everything so far one clause of a new
    ``Bool``."""

    def __init__(self, default: str) -> None:
        self.default = default
        self.first: Query | None = None
        self.group: tuple[str, list[Query]] | None = None
        self.operation: str | None = None   # explicit operator waiting for the next clause
        self.negations = 0

    @property
    def top(self) -> Query | None:
        """The tree built so far (``None`` before the first clause)."""
        if self.group is None:
            return self.first
        operation, clauses = self.group
        return Bool(**{operation: tuple(clauses)})

    def add(self, branch: Query | None) -> None:
        if branch is None:
            return
        if self.negations % 2 == 1:
            branch = _negated(branch)
        if self.first is None:
            self.first = branch
        else:
            operation = self.operation or self.default
            if self.group is None or self.group[0] != operation:
                self.group = (operation, [self.top])  # type: ignore[list-item]
            self.group[1].append(branch)
        self.operation = None
