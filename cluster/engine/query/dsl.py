"""The query DSL: JSON -> a tree of query nodes (``nodes.py``; pure parsing, no data access).

Parsing checks structure and reports errors with Elasticsearch's types and wording
(``parse_helpers.py``). ``parse_query`` dispatches each ``{name: body}`` object to its parser:
full-text queries in ``parse_full_text.py``, term-level ones in ``parse_term_level.py``; the
compound queries (``bool``, ``constant_score``, ``dis_max``), which parse queries inside them,
are here with the dispatch.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...errors import IllegalArgument, ParsingError, SearchError, XContentParseError
from . import parse_full_text, parse_scoring, parse_term_level
from .nested_query import parse_nested
from .bool_prefix import parse_match_bool_prefix
from .boosting import parse_boosting
from .combined_fields import parse_combined_fields
from .more_like_this import parse_more_like_this
from .fuzzy_query import parse_fuzzy
from .geo_queries import PARSERS as GEO_PARSERS
from .intervals_dsl import parse_intervals
from .spans import SPAN_QUERIES, parse_span
from .nodes import Bool, ConstantScore, DisMax, MatchAll, MatchNone, Query
from .parse_helpers import (MAX_NESTED_DEPTH, ParseState, did_you_mean, float_option, is_value,
                            token_name)


#: every query name Elasticsearch 8 registers (for "did you mean" suggestions)
ES_QUERY_NAMES = (
    "bool", "boosting", "combined_fields", "constant_score", "dis_max", "distance_feature",
    "exists", "field_masking_span", "function_score", "fuzzy", "geo_bounding_box",
    "geo_distance", "geo_grid", "geo_polygon", "geo_shape", "has_child", "has_parent", "ids",
    "intervals", "knn", "match", "match_all", "match_bool_prefix", "match_none", "match_phrase",
    "match_phrase_prefix", "more_like_this", "multi_match", "nested", "parent_id", "percolate",
    "pinned", "prefix", "query_string", "range", "rank_feature", "regexp", "rule", "script",
    "script_score", "semantic", "shape", "simple_query_string", "span_containing",
    "span_field_masking", "span_first", "span_multi", "span_near", "span_not", "span_or",
    "span_term", "span_within", "sparse_vector", "term", "terms", "terms_set", "text_expansion",
    "weighted_tokens", "wildcard", "wrapper",
)


def parse_query(dsl: Any) -> Query:
    """Parse the body's ``query`` object into query nodes.

    Raises ``ParsingError`` / ``XContentParseError`` / ``IllegalArgument`` with Elasticsearch's
    wording. Nesting is bounded (``MAX_NESTED_DEPTH`` query objects), so recursion is bounded.
    Clause counts are checked later, against the mapping (``matcher.check_clause_limits``).
    """
    return _parse(dsl, ParseState())


def parse_named_query(dsl: Any) -> tuple[Query, tuple[tuple[str, Query], ...]]:
    """:func:`parse_query`, and the queries it names with ``_name`` (name -> its node, the
    last one of a name winning, as Elasticsearch's map of named queries does)."""
    st = ParseState()
    q = _parse(dsl, st)
    return q, tuple(st.named.items())


def _parse(dsl: Any, st: ParseState) -> Query:
    """``AbstractQueryBuilder.parseInnerQueryBuilder``: one ``{name: body}`` object."""
    if not isinstance(dsl, dict):
        raise ParsingError("[_na] query malformed, must start with start_object")
    if not dsl:
        raise IllegalArgument("query malformed, empty clause found")
    name, body = next(iter(dsl.items()))
    if not isinstance(body, dict):
        raise ParsingError(f"[{name}] query malformed, no start_object after query name")
    st.depth += 1
    if st.depth > MAX_NESTED_DEPTH:
        raise IllegalArgument("The nested depth of the query exceeds the maximum nested depth "
                              "for queries set in [indices.query.bool.max_nested_depth]")
    parser = _PARSERS.get(name)
    if parser is None:
        if name in ES_QUERY_NAMES:
            raise ParsingError(f"[{name}] query is not supported by this server")
        raise ParsingError(f"unknown query [{name}]{did_you_mean(name, ES_QUERY_NAMES)}")
    q = parser(body, st)
    st.depth -= 1
    query_name = _own_name(body)
    if query_name is not None:
        st.named[query_name] = q
    if len(dsl) > 1:
        raise ParsingError(f"[{name}] malformed query, expected [END_OBJECT] but found "
                           "[FIELD_NAME]")
    return q


def _own_name(body: dict[str, Any]) -> str | None:
    """A query object's ``_name``, at its top or in its field's options (None: unnamed)."""
    value = body.get("_name")
    if value is None:
        value = next((v["_name"] for v in body.values() if isinstance(v, dict) and "_name" in v),
                     None)
    if value is not None and not isinstance(value, str):
        raise ParsingError(f"[_name] must be a string, found [{token_name(value)}]")
    return value


def _p_match_all(body: dict[str, Any], st: ParseState) -> Query:
    boost = 1.0
    for k, v in body.items():
        if k == "boost":
            boost = float_option("match_all", k, v)
        elif k != "_name":
            raise ParsingError(f"[match_all] query does not support [{k}]")
    return MatchAll(boost=boost)


def _p_match_none(body: dict[str, Any], st: ParseState) -> Query:
    for k in body:
        if k not in ("boost", "_name"):
            raise ParsingError(f"[match_none] query does not support [{k}]")
    return MatchNone()


_BOOL_FIELDS = ("must", "should", "must_not", "filter", "adjust_pure_negative",
                "minimum_should_match", "boost", "_name")


def _p_bool(body: dict[str, Any], st: ParseState) -> Query:
    """Elasticsearch parses ``bool`` with an ObjectParser: its errors are
    ``x_content_parse_exception``, and a clause's error is wrapped per field."""
    clauses: dict[str, list[Query]] = {"must": [], "should": [], "filter": [], "must_not": []}
    msm: Any = None
    boost = 1.0
    adjust = True
    for key, value in body.items():
        if key in clauses:
            if value is None:
                continue
            if not isinstance(value, (dict, list)):
                raise XContentParseError(f"[bool] {key} doesn't support values of type: "
                                         f"{token_name(value)}")
            items = [value] if isinstance(value, dict) else value
            try:
                clauses[key].extend(_parse(item, st) for item in items)
            except SearchError as e:
                raise XContentParseError(f"[bool] failed to parse field [{key}]",
                                         caused_by=e.to_cause()) from None
        elif key == "minimum_should_match":
            if not is_value(value):
                raise XContentParseError(f"[bool] minimum_should_match doesn't support values "
                                         f"of type: {token_name(value)}")
            msm = value
        elif key == "boost":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise XContentParseError(f"[bool] boost doesn't support values of type: "
                                         f"{token_name(value)}")
            try:
                boost = float(value)
            except ValueError:
                raise XContentParseError("[bool] failed to parse field [boost]",
                                         caused_by={"type": "number_format_exception",
                                                    "reason": f"For input string: \"{value}\""}
                                         ) from None
        elif key == "adjust_pure_negative":
            if not isinstance(value, bool) and value not in ("true", "false"):
                raise XContentParseError("[bool] failed to parse field [adjust_pure_negative]")
            adjust = value in (True, "true")
        elif key != "_name":
            raise XContentParseError(f"[bool] unknown field [{key}]"
                                     f"{did_you_mean(key, _BOOL_FIELDS)}")
    if not adjust and clauses["must_not"] and not any(clauses[k] for k in
                                                      ("must", "should", "filter")):
        return MatchNone()   # Lucene's pure negative query: no match-all to subtract from
    return Bool(must=tuple(clauses["must"]), should=tuple(clauses["should"]),
                filter=tuple(clauses["filter"]), must_not=tuple(clauses["must_not"]),
                minimum_should_match=msm, boost=boost)


def _p_constant_score(body: dict[str, Any], st: ParseState) -> Query:
    inner: Query | None = None
    boost = 1.0
    for key, value in body.items():
        if isinstance(value, dict):
            if key != "filter":
                raise ParsingError(f"[constant_score] query does not support [{key}]")
            inner = _parse(value, st)
        elif is_value(value):
            if key == "boost":
                boost = float_option("constant_score", key, value)
            elif key != "_name":
                raise ParsingError(f"[constant_score] query does not support [{key}]")
        else:
            raise ParsingError(f"unexpected token [{token_name(value)}]")
    if inner is None:
        raise ParsingError("[constant_score] requires a 'filter' element")
    return ConstantScore(filter=inner, boost=boost)


def _p_dis_max(body: dict[str, Any], st: ParseState) -> Query:
    queries: list[Query] = []
    tie_breaker = 0.0
    boost = 1.0
    found = False
    for key, value in body.items():
        if key == "queries":
            found = True
            items = [value] if isinstance(value, dict) else value
            if not isinstance(items, list):
                raise ParsingError(f"[dis_max] query does not support [{key}]")
            queries.extend(_parse(item, st) for item in items)
        elif key == "tie_breaker":
            tie_breaker = float_option("dis_max", key, value)
        elif key == "boost":
            boost = float_option("dis_max", key, value)
        elif key != "_name":
            raise ParsingError(f"[dis_max] query does not support [{key}]")
    if not found:
        raise ParsingError("[dis_max] requires 'queries' field with at least one clause")
    return DisMax(queries=tuple(queries), tie_breaker=tie_breaker, boost=boost)


_PARSERS = {
    "match_all": _p_match_all,
    "match_none": _p_match_none,
    **parse_full_text.PARSERS,
    **parse_term_level.PARSERS,
    "bool": _p_bool,
    "constant_score": _p_constant_score,
    "dis_max": _p_dis_max,
    "boosting": lambda body, st: parse_boosting(body, st, _parse),
    "nested": lambda body, st: parse_nested(body, st, _parse),
    "intervals": parse_intervals,
    "match_bool_prefix": parse_match_bool_prefix,
    "combined_fields": parse_combined_fields,
    "more_like_this": parse_more_like_this,
    "fuzzy": parse_fuzzy,
    **{n: (lambda b, st, n=n: parse_span(n, b, st)) for n in SPAN_QUERIES},
    **parse_scoring.parsers(_parse),
    **GEO_PARSERS,
}


def minimum_should_match(spec: Any, optional_count: int) -> int:
    """Elasticsearch's ``Queries.calculateMinShouldMatch``: ``2``, ``-1``, ``"75%"``,
    ``"-25%"``, ``"3<90%"``, ``"2<-25% 9<-3"``. Not clamped above: asking for more optional
    clauses than there are matches nothing, as in Elasticsearch."""
    if spec is None:
        return 0
    s = str(spec).strip()
    result = optional_count
    try:
        if "<" in s:
            s = re.sub(r"\s*<\s*", "<", s)
            for part in s.split():
                upper, _, rest = part.partition("<")
                if optional_count <= int(upper):
                    return result
                result = minimum_should_match(rest, optional_count)
            return result
        if "%" in s:
            percent = int(s[:-1]) if s.endswith("%") else int(s)
            calc = float(np.float32(result * percent) * np.float32(1 / np.float32(100)))
            result = result + int(calc) if calc < 0 else int(calc)
        else:
            calc_i = int(s)
            result = result + calc_i if calc_i < 0 else calc_i
    except ValueError:
        raise IllegalArgument(f"For input string: \"{spec}\"",
                              es_type="number_format_exception") from None
    return max(result, 0)
