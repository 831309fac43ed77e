"""``simple_query_string``: Lucene's ``SimpleQueryParser``.

Operators (``|``, ``+``, ``-``, quotes, parentheses, ``*``, ``~N``) apply left to right, and
whatever cannot be parsed is dropped instead of raising.
"""
from __future__ import annotations

from .nodes import Bool, MatchNone, Query
from .parse_helpers import MAX_NESTED_DEPTH
from .query_string_build import WHITESPACE, Fields, QueryBuilder, negated, too_deep

_SIMPLE_STOP = set(WHITESPACE) | set('"|+()')


class SimpleParser:
    """Lucene's ``SimpleQueryParser``: ``+`` AND, ``|`` OR, ``-`` NOT, ``"phrase"~N``, ``word*``,
    ``( )``; operators apply left to right and unparsable bits are dropped."""

    def __init__(self, text: str, fields: Fields, builder: QueryBuilder,
                 fuzzy_operator: bool = True) -> None:
        self.s = text
        self.fuzzy_operator = fuzzy_operator   # the FUZZY flag: ``term~N``
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
            elif c in WHITESPACE or c == ")":
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
            raise too_deep()
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

    def _edits(self, j: int, end: int) -> tuple[int, int]:
        """A term's ``~N`` as Lucene's ``SimpleQueryParser.parseFuzziness``: ``~`` alone is
        2 edits, a number that is not an integer is 0 (a plain term); more than 2 is 2, as
        OpenSearch answers."""
        k = j
        while k < end and self.s[k] not in _SIMPLE_STOP:
            k += 1
        text = self.s[j:k]
        if not text:
            return k, 2
        try:
            return k, min(2, max(0, int(text)))
        except ValueError:
            return k, 0

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
            if out and c == "~" and self.fuzzy_operator:   # term~N: an edit distance
                j, fuzzy = self._edits(j + 1, end)
                if fuzzy:
                    st.add(self.b.fuzzy(self.fields, "".join(out), fuzzy))
                    return max(j, i + 1)
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
            branch = negated(branch)
        if self.first is None:
            self.first = branch
        else:
            operation = self.operation or self.default
            if self.group is None or self.group[0] != operation:
                self.group = (operation, [self.top])  # type: ignore[list-item]
            self.group[1].append(branch)
        self.operation = None
