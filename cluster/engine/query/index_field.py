"""Queries on the ``_index`` metadata field: every document of a shard has the same value, so
such a query matches all of the shard's documents or none (Elasticsearch's
``IndexFieldMapper``, a constant field: ``term``/``terms``/``match`` take simple ``*``
patterns, ``prefix``, ``wildcard`` and ``regexp`` match the index name).
"""
from __future__ import annotations

import re
from typing import Any

from . import nodes as Q
from .pattern_syntax import lucene_regex, wildcard_regex


def _simple_match(pattern: str, name: str) -> bool:
    """Elasticsearch's ``Regex.simpleMatch``: ``*`` matches any run of characters."""
    if "*" not in pattern:
        return pattern == name
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), name) is not None


def index_matches(q: Q.Query, index_name: str) -> bool | None:
    """Whether ``q`` (a query on ``_index``) matches the shard of index ``index_name``; None
    for a query type this field does not answer here (evaluated as usual)."""
    if isinstance(q, Q.Term):
        return _simple_match(str(q.value), index_name)
    if isinstance(q, Q.Terms):
        return any(_simple_match(str(v), index_name) for v in q.values)
    if isinstance(q, Q.Match):
        return _simple_match(str(q.text), index_name)
    if isinstance(q, Q.Prefix):
        name = index_name.lower() if q.case_insensitive else index_name
        return name.startswith(q.value.lower() if q.case_insensitive else q.value)
    if isinstance(q, Q.Wildcard):
        return bool(wildcard_regex(q.pattern, q.case_insensitive).fullmatch(index_name))
    if isinstance(q, Q.Regexp):
        return bool(lucene_regex(q.value, q.flags, q.case_insensitive).fullmatch(index_name))
    return None


_PATTERN_TEXTS = {
    Q.Prefix: "Can only use prefix queries on keyword, text and wildcard fields",
    Q.Wildcard: "Can only use wildcard queries on keyword, text and wildcard fields",
    Q.Regexp: "Can only use regexp queries on keyword and text fields",
    Q.Fuzzy: "Can only use fuzzy queries on keyword and text fields",
}


def pattern_on_term_field_error(q: Any, ft: Any) -> str | None:
    """Elasticsearch's refusal of a ``prefix``/``wildcard``/``regexp`` query on a field that has
    no term dictionary of strings (numbers, dates, booleans, ip, ranges) — such a query would
    otherwise match nothing without a word; None when ``q`` is fine."""
    text = _PATTERN_TEXTS.get(type(q))
    if text is None or ft is None:
        return None
    if ft.kind not in ("numeric", "date", "boolean", "range") and ft.type != "ip":
        return None
    return f"{text} - not on [{q.field}] which is of type [{ft.type}]"
