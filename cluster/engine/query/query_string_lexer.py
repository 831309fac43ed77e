"""The lexer of Lucene's classic query syntax (``query_string``): text -> tokens.

Terms keep their escapes and wildcard positions (:class:`Word`); phrases, regular expressions
and ranges are single tokens. Bad syntax raises :class:`SyntaxFault`, which the parser reports
with Elasticsearch's wording.
"""
from __future__ import annotations

from dataclasses import dataclass

from .query_string_build import WHITESPACE

# characters that end a bare term in query_string (Lucene's classic grammar; '+', '-', '*',
# '?' and '/' may appear inside a term)
TERM_STOP = set(WHITESPACE) | set('!():^[]"{}~')
NUMBER_CHARS = "0123456789."
EXISTS_FIELD = "_exists_"
SINGLE_CHAR_TOKENS = {"(": "LPAREN", ")": "RPAREN", ":": "COLON", "+": "PLUS", "-": "MINUS",
                      "!": "NOT"}


@dataclass(frozen=True)
class Word:
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
class Tok:
    kind: str  # TERM PHRASE RANGE LPAREN RPAREN COLON AND OR NOT PLUS MINUS BOOST SLOP EOF
    value: object = None
    pos: int = 0


@dataclass(frozen=True)
class RangeSpec:
    lower: str | None
    upper: str | None
    include_lower: bool
    include_upper: bool


class SyntaxFault(Exception):
    """Internal: bad syntax; turned into Elasticsearch's ``query_shard_exception``."""


class Lexer:
    """Turns a ``query_string`` into tokens (whitespace is dropped)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def tokens(self) -> list[Tok]:
        out: list[Tok] = []
        while True:
            tok = self._next()
            out.append(tok)
            if tok.kind == "EOF":
                return out

    def _peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def _next(self) -> Tok:
        s = self.s
        while self.i < len(s) and s[self.i] in WHITESPACE:
            self.i += 1
        start = self.i
        if self.i >= len(s):
            return Tok("EOF", pos=start)
        c = s[self.i]
        two = s[self.i:self.i + 2]
        if two == "&&" or two == "||":
            self.i += 2
            return Tok("AND" if two == "&&" else "OR", pos=start)
        if c in SINGLE_CHAR_TOKENS:
            self.i += 1
            return Tok(SINGLE_CHAR_TOKENS[c], pos=start)
        if c == "^":
            self.i += 1
            number = self._number()
            if not number:
                raise SyntaxFault("boost without a number")
            return Tok("BOOST", float(number), start)
        if c == "~":
            self.i += 1
            return Tok("SLOP", self._number() or None, start)
        if c == '"':
            return Tok("PHRASE", self._quoted(), start)
        if c in "[{":
            return Tok("RANGE", self._range(), start)
        if c == "/":
            return Tok("REGEX", self._regex(), start)
        if c in "]}":
            raise SyntaxFault("unexpected range end")
        word = self._word()
        if all(not esc for _, esc in word.chars) and word.text in ("AND", "OR", "NOT"):
            return Tok(word.text, pos=start)
        return Tok("TERM", word, start)

    def _number(self) -> str:
        j = self.i
        while self.i < len(self.s) and self.s[self.i] in NUMBER_CHARS:
            self.i += 1
        number = self.s[j:self.i]
        try:
            float(number)
        except ValueError:
            if number:
                raise SyntaxFault("bad number") from None
        return number

    def _word(self) -> Word:
        chars: list[tuple[str, bool]] = []
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                if self.i + 1 >= len(s):
                    raise SyntaxFault("term can not end with escape character")
                chars.append((s[self.i + 1], True))
                self.i += 2
                continue
            if c in TERM_STOP:
                break
            chars.append((c, False))
            self.i += 1
        if not chars:
            raise SyntaxFault("empty term")
        return Word(tuple(chars))

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
        raise SyntaxFault("unterminated quote")

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
        raise SyntaxFault("unterminated regular expression")

    def _range_bound(self) -> tuple[str, bool]:
        """One bound: quoted, or up to whitespace / ``]`` / ``}``. Returns (text, quoted)."""
        while self._peek() and self._peek() in WHITESPACE:
            self.i += 1
        if self._peek() == '"':
            return self._quoted(), True
        out: list[str] = []
        while self._peek() and self._peek() not in WHITESPACE and self._peek() not in "]}":
            c = self._peek()
            if c == "\\" and self._peek(1):
                out.append(self._peek(1))
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        if not out:
            raise SyntaxFault("empty range bound")
        return "".join(out), False

    def _range(self) -> RangeSpec:
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
        while self._peek() and self._peek() in WHITESPACE:
            self.i += 1
        end = self._peek()
        if not end or end not in "]}":
            raise SyntaxFault("unterminated range")
        self.i += 1
        return RangeSpec(None if lower == "*" and not lower_quoted else lower,
                         None if upper == "*" and not upper_quoted else upper,
                         include_lower, end == "]")
