"""User patterns (``regexp``, ``wildcard``, ``query_string`` wildcards) matched in linear time.

Python's ``re`` backtracks: ``(a+)+b`` against a long run of ``a`` takes exponential time and
would pin a shard. Patterns are therefore translated (by ``matcher``) into a syntax RE2 and
``re`` share, and compiled with RE2 (``google-re2``), whose matching is linear in the text.
:class:`LinearPattern` keeps the translated source and ``re``-style flags so callers that only
*parse* the pattern (the literal prefix that narrows the term dictionary) keep working.

Elasticsearch's limit ``index.max_regex_length`` (1,000) is checked by the coordinator before the
search starts (``matcher.check_clause_limits``).
"""
from __future__ import annotations

import re
from typing import Any

import re2

from ...errors import IllegalArgument

RE2_MAX_MEM = 32 << 20           # RE2's budget per pattern; beyond it the pattern is refused
EMPTY_LANGUAGE = r"[^\s\S]"      # matches nothing, in both syntaxes (RE2 has no lookahead)


class LinearPattern:
    """A compiled RE2 pattern with the ``re.Pattern`` surface the matcher uses."""

    __slots__ = ("pattern", "flags", "_rx")

    def __init__(self, source: str, case_insensitive: bool = False) -> None:
        self.pattern = source
        self.flags = re.S | (re.I if case_insensitive else 0)
        opts = re2.Options()
        opts.dot_nl = True
        opts.case_sensitive = not case_insensitive
        opts.log_errors = False
        opts.max_mem = RE2_MAX_MEM
        self._rx = re2.compile(source, opts)

    def fullmatch(self, text: str) -> Any:
        return self._rx.fullmatch(text)


def compile_linear(source: str, case_insensitive: bool, original: str) -> LinearPattern:
    """``source`` (already translated from Lucene syntax) compiled for linear-time matching;
    a pattern RE2 cannot compile is the client's error, naming ``original``."""
    try:
        return LinearPattern(source, case_insensitive)
    except re2.error as e:
        reason = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
        raise IllegalArgument(f"failed to create query: invalid regular expression "
                              f"[{original}]: {reason}", es_type="query_shard_exception") from None


def escape(text: str) -> str:
    """``text`` as literal characters, written the same way for RE2 and ``re`` (``\\xHH`` for
    ASCII punctuation, spaces and controls; ``re.escape``'s ``\\ `` and ``\\<newline>`` are
    not RE2 syntax)."""
    return "".join(c if c.isalnum() or c == "_" or ord(c) > 127 else f"\\x{ord(c):02x}"
                   for c in text)
