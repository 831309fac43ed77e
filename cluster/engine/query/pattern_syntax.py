"""Lucene's pattern syntaxes (``wildcard``, ``regexp``) translated into linear-time RE2
patterns (``patterns.py``) that must match a whole term."""
from __future__ import annotations

import re

from ...errors import IllegalArgument
from .patterns import EMPTY_LANGUAGE, LinearPattern, compile_linear, escape


def wildcard_regex(pattern: str, case_insensitive: bool = False) -> LinearPattern:
    """Lucene wildcard (``*``, ``?``, ``\\`` escapes) as a linear-time (RE2) pattern."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else escape(ch))
        i += 1
    return compile_linear("".join(out), case_insensitive, pattern)


_REGEX_CLASSES = {"d": r"[0-9]", "D": r"[^0-9]", "s": r"[ \t\n\r\f\v]",
                  "S": r"[^ \t\n\r\f\v]", "w": r"[a-zA-Z0-9_]", "W": r"[^a-zA-Z0-9_]"}


def lucene_regex(pattern: str, flags: str = "ALL",
                 case_insensitive: bool = False) -> LinearPattern:
    """A Lucene ``RegExp`` as a linear-time (RE2) pattern that must match a whole term.

    Lucene's syntax: ``. ? * + {n,m} | ( ) [...]``, ``"literal"``, ``\\c`` escapes any
    character (``\\d \\s \\w`` and their negations are classes); with the default flags
    ``@`` is any string, ``#`` the empty language and ``<1-10>`` a numeric interval. ``^`` and
    ``$`` are ordinary characters. ``~`` (complement) and ``&`` (intersection) are read as
    literal characters here.
    """
    on = set(flags.split("|")) if flags else set()
    every = "ALL" in on
    anystring = every or "ANYSTRING" in on
    empty = every or "EMPTY" in on
    interval = every or "INTERVAL" in on
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            out.append(_REGEX_CLASSES.get(nxt, escape(nxt)) if not in_class
                       else (_REGEX_CLASSES.get(nxt, escape(nxt))[1:-1]
                             if nxt in _REGEX_CLASSES else escape(nxt)))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
                out.append("]")
            elif c in "[&~|" or c == "\\":
                out.append(escape(c))
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append("[")
            if i + 1 < n and pattern[i + 1] == "^":
                out.append("^")
                i += 1
            i += 1
            continue
        if c == '"':
            end = pattern.find('"', i + 1)
            if end < 0:
                raise IllegalArgument(f"expected '\"' at position {n}")
            out.append(escape(pattern[i + 1:end]))
            i = end + 1
            continue
        if c == "@" and anystring:
            out.append(".*")
        elif c == "#" and empty:
            out.append(EMPTY_LANGUAGE)
        elif c == "<" and interval and (m := re.match(r"<(\d+)-(\d+)>", pattern[i:])):
            lo, hi = sorted((int(m.group(1)), int(m.group(2))))
            width = len(m.group(1)) if len(m.group(1)) == len(m.group(2)) else 0
            if hi - lo <= 10_000:
                nums = [str(v).zfill(width) for v in range(lo, hi + 1)]
                out.append("(?:" + "|".join(sorted(nums, key=len, reverse=True)) + ")")
            else:
                out.append(r"\d+")
            i += m.end()
            continue
        elif c in ".?*+|(){},":
            out.append(c)
        else:
            out.append(escape(c))
        i += 1
    return compile_linear("".join(out), case_insensitive, pattern)
