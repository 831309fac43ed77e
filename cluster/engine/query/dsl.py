"""The query DSL: JSON -> a tree of small frozen dataclasses (pure parsing, no data access).

Parsing checks structure and reports errors with Elasticsearch's types and wording. What a
query *means* for a field (which analyzer, which column) is decided where the data is, in
``matching.py``, from the index's mapping.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import IllegalArgument, ParsingError, SearchError, XContentParseError


@dataclass(frozen=True)
class Query:
    boost: float = 1.0


@dataclass(frozen=True)
class MatchAll(Query):
    pass


@dataclass(frozen=True)
class MatchNone(Query):
    pass


@dataclass(frozen=True)
class Match(Query):
    field: str = ""
    text: Any = None
    operator: str = "or"
    minimum_should_match: Any = None
    analyzer: str | None = None
    zero_terms_query: str = "none"
    lenient: bool = False


@dataclass(frozen=True)
class MatchPhrase(Query):
    field: str = ""
    text: Any = None
    slop: int = 0
    analyzer: str | None = None
    prefix: bool = False


@dataclass(frozen=True)
class MultiMatch(Query):
    fields: tuple[tuple[str, float], ...] = ()
    text: Any = None
    type: str = "best_fields"
    operator: str = "or"
    minimum_should_match: Any = None
    tie_breaker: float | None = None
    analyzer: str | None = None
    lenient: bool | None = None


@dataclass(frozen=True)
class Term(Query):
    field: str = ""
    value: Any = None
    case_insensitive: bool = False


@dataclass(frozen=True)
class Terms(Query):
    field: str = ""
    values: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Range(Query):
    field: str = ""
    gt: Any = None
    gte: Any = None
    lt: Any = None
    lte: Any = None
    format: str | None = None
    time_zone: str | None = None


@dataclass(frozen=True)
class Exists(Query):
    field: str = ""


@dataclass(frozen=True)
class Ids(Query):
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prefix(Query):
    field: str = ""
    value: str = ""
    case_insensitive: bool = False


@dataclass(frozen=True)
class Wildcard(Query):
    field: str = ""
    pattern: str = ""
    case_insensitive: bool = False


@dataclass(frozen=True)
class Regexp(Query):
    """A Lucene regular expression that a whole term must match."""

    field: str = ""
    value: str = ""
    flags: str = "ALL"
    case_insensitive: bool = False


@dataclass(frozen=True)
class Bool(Query):
    must: tuple[Query, ...] = ()
    should: tuple[Query, ...] = ()
    filter: tuple[Query, ...] = ()
    must_not: tuple[Query, ...] = ()
    minimum_should_match: Any = None


@dataclass(frozen=True)
class ConstantScore(Query):
    filter: Query = field(default_factory=MatchAll)


@dataclass(frozen=True)
class DisMax(Query):
    queries: tuple[Query, ...] = ()
    tie_breaker: float = 0.0


@dataclass(frozen=True)
class QueryString(Query):
    """``query_string`` / ``simple_query_string`` / URI ``q=``; expanded by ``query_string.py``."""

    query: str = ""
    fields: tuple[tuple[str, float], ...] = ()
    default_operator: str = "or"
    simple: bool = False
    lenient: bool = False
    analyzer: str | None = None


# --- parsing ----------------------------------------------------------------------------------
#
# Error wording follows Elasticsearch 8: hand-written parsers (match, term, range, ...) raise
# ``parsing_exception``; ``bool`` is an ObjectParser there, so its errors are
# ``x_content_parse_exception`` and an error inside one of its clauses is wrapped in
# "[bool] failed to parse field [must]". Elasticsearch prefixes these reasons with a
# ``[line:col]`` location; we have no token positions, so reasons start at the bracketed name.

MAX_CLAUSE_COUNT = 1024       # indices.query.bool.max_clause_count
MAX_NESTED_DEPTH = 30         # indices.query.bool.max_nested_depth

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


def _levenshtein_similarity(a: str, b: str) -> float:
    """Lucene's ``LevenshteinDistance.getDistance``: 1 - edits / max(len)."""
    if not a and not b:
        return 1.0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return 1.0 - prev[-1] / max(len(a), len(b))


def did_you_mean(name: str, candidates: Any) -> str:
    """Elasticsearch's ``SuggestingErrorOnUnknown.suggest``: ``" did you mean [x]?"`` or ``""``."""
    scored = [(_levenshtein_similarity(name, c), c) for c in candidates]
    keys = [c for d, c in sorted(((d, c) for d, c in scored if d > 0.5),
                                 key=lambda t: (-t[0], t[1]))]
    if not keys:
        return ""
    if len(keys) == 1:
        return f" did you mean [{keys[0]}]?"
    return " did you mean any of [" + ", ".join(keys) + "]?"


def _token(value: Any) -> str:
    """The JSON token Elasticsearch's parser would name for ``value``."""
    if isinstance(value, dict):
        return "START_OBJECT"
    if isinstance(value, list):
        return "START_ARRAY"
    if isinstance(value, str):
        return "VALUE_STRING"
    if isinstance(value, bool):
        return "VALUE_BOOLEAN"
    if value is None:
        return "VALUE_NULL"
    return "VALUE_NUMBER"


def _is_value(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _num(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParsingError(f"[{what}] failed to parse: expected a number but found [{value}]")
    try:
        return float(value)
    except ValueError:
        raise ParsingError(f"[{what}] failed to parse: expected a number but found "
                           f"[{value}]") from None


def _float(name: str, key: str, value: Any) -> float:
    """``parser.floatValue()`` of a hand-written query parser (numbers or numeric strings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParsingError(f"[{name}] failed to parse field [{key}]: expected a number, found "
                           f"[{_token(value)}]")
    try:
        return float(value)
    except ValueError:
        raise ParsingError(f"[{name}] failed to parse field [{key}]",
                           caused_by={"type": "number_format_exception",
                                      "reason": f"For input string: \"{value}\""}) from None


def _int(name: str, key: str, value: Any) -> int:
    f = _float(name, key, value)
    if isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
        raise ParsingError(f"[{name}] failed to parse field [{key}]",
                           caused_by={"type": "number_format_exception",
                                      "reason": f"For input string: \"{value}\""})
    return int(f)


def _bool_value(name: str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ParsingError(f"[{name}] failed to parse field [{key}]",
                       caused_by={"type": "illegal_argument_exception",
                                  "reason": f"Failed to parse value [{value}] as only [true] or "
                                            "[false] are allowed."})


def _text_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _State:
    """Parse state: how deep the current query object is nested."""

    def __init__(self) -> None:
        self.depth = 0


def parse_query(dsl: Any) -> Query:
    """Parse the body's ``query`` object into query nodes.

    Raises ``ParsingError`` / ``XContentParseError`` / ``IllegalArgument`` with Elasticsearch's
    wording. Nesting is bounded (``MAX_NESTED_DEPTH`` query objects), so recursion is bounded.
    Clause counts are checked later, against the mapping (``matcher.check_clause_limits``).
    """
    return _parse(dsl, _State())


def _parse(dsl: Any, st: _State) -> Query:
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
    if _names_itself(body):
        raise ParsingError(f"[{name}] query: [_name] (named queries and matched_queries) is not "
                           "supported by this server")
    if len(dsl) > 1:
        raise ParsingError(f"[{name}] malformed query, expected [END_OBJECT] but found "
                           "[FIELD_NAME]")
    return q


def _names_itself(body: dict[str, Any]) -> bool:
    """Whether a query object carries ``_name``, at its top or in its field's options."""
    return "_name" in body or any(isinstance(v, dict) and "_name" in v for v in body.values())


def _multiple_fields(name: str, first: str | None, second: str) -> None:
    if first is not None:
        raise ParsingError(f"[{name}] query doesn't support multiple fields, found [{first}] "
                           f"and [{second}]")


def _field_query(name: str, body: dict[str, Any], value_keys: tuple[str, ...],
                 allowed: set[str], *, short_form: bool = True,
                 array_message: str | None = None) -> tuple[str | None, dict[str, Any]]:
    """The ``{field: value}`` / ``{field: {option: ...}}`` shape shared by single-field queries.

    Returns ``(field, options)``; the short form's value is stored under ``value_keys[0]``.
    Mirrors the token loop of Elasticsearch's hand-written parsers.
    """
    field_name: str | None = None
    opts: dict[str, Any] = {}
    for key, spec in body.items():
        if isinstance(spec, dict):
            _multiple_fields(name, field_name, key)
            field_name = key
            for k, v in spec.items():
                if k not in allowed and k not in ("boost", "_name"):
                    raise ParsingError(f"[{name}] query does not support [{k}]")
                if isinstance(v, dict) or (isinstance(v, list) and k in value_keys
                                           and array_message is None):
                    raise ParsingError(f"[{name}] unknown token [{_token(v)}] after [{k}]")
                if isinstance(v, list) and k in value_keys:
                    raise ParsingError(array_message or "")
                opts[k] = v
        elif isinstance(spec, list):
            raise ParsingError(f"[{name}] query does not support array of values"
                               if name != "match" else
                               f"[{name}] unknown token [START_ARRAY] after [{key}]")
        else:
            if not short_form:
                raise ParsingError(f"[{name}] query does not support [{key}]")
            _multiple_fields(name, field_name, key)
            field_name = key
            opts = {value_keys[0]: spec}
    return field_name, opts


def _require_field(field_name: str | None) -> str:
    if not field_name:
        raise IllegalArgument("field name is null or empty")
    return field_name


def _p_match_all(body: dict[str, Any], st: _State) -> Query:
    boost = 1.0
    for k, v in body.items():
        if k == "boost":
            boost = _float("match_all", k, v)
        elif k != "_name":
            raise ParsingError(f"[match_all] query does not support [{k}]")
    return MatchAll(boost=boost)


def _p_match_none(body: dict[str, Any], st: _State) -> Query:
    for k in body:
        if k not in ("boost", "_name"):
            raise ParsingError(f"[match_none] query does not support [{k}]")
    return MatchNone()


_MATCH_OPTS = {"query", "operator", "minimum_should_match", "analyzer", "zero_terms_query",
               "fuzziness", "lenient", "prefix_length", "max_expansions", "fuzzy_rewrite",
               "auto_generate_synonyms_phrase_query", "fuzzy_transpositions"}


def _operator(value: Any) -> str:
    """``Operator.fromString``: ``or`` / ``and`` in any case, else Java's enum error."""
    op = str(value).lower()
    if op not in ("or", "and"):
        raise IllegalArgument("No enum constant org.elasticsearch.index.query.Operator."
                              f"{str(value).upper()}")
    return op


def _zero_terms(value: Any) -> str:
    z = str(value).lower()
    if z not in ("none", "all"):
        raise ParsingError(f"Unsupported zero_terms_query value [{value}]")
    return z


def _p_match(body: dict[str, Any], st: _State) -> Query:
    fname, o = _field_query("match", body, ("query",), _MATCH_OPTS)
    if o.get("query") is None:
        raise ParsingError("No text specified for text query")
    return Match(field=_require_field(fname), text=o["query"],
                 operator=_operator(o.get("operator", "or")),
                 minimum_should_match=o.get("minimum_should_match"), analyzer=o.get("analyzer"),
                 zero_terms_query=_zero_terms(o.get("zero_terms_query", "none")),
                 lenient=_bool_value("match", "lenient", o.get("lenient", False)),
                 boost=_float("match", "boost", o.get("boost", 1.0)))


def _p_match_phrase(body: dict[str, Any], st: _State, prefix: bool = False) -> Query:
    name = "match_phrase_prefix" if prefix else "match_phrase"
    fname, o = _field_query(name, body, ("query",),
                            {"query", "slop", "analyzer", "max_expansions", "zero_terms_query"})
    if o.get("query") is None:
        raise ParsingError("No text specified for text query")
    slop = _int(name, "slop", o.get("slop", 0))
    if slop < 0:
        raise IllegalArgument("No negative slop allowed.")
    return MatchPhrase(field=_require_field(fname), text=o["query"], slop=slop,
                       analyzer=o.get("analyzer"), prefix=prefix,
                       boost=_float(name, "boost", o.get("boost", 1.0)))


def _parse_fields(value: Any, name: str = "multi_match") -> tuple[tuple[str, float], ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ParsingError(f"[{name}] query does not support [fields]")
    out = []
    for f in value:
        if not isinstance(f, str):
            raise ParsingError(f"[{name}] query does not support [fields]")
        if "^" in f:
            fname, _, b = f.partition("^")
            out.append((fname, _float(name, "fields", b)))
        else:
            out.append((f, 1.0))
    return tuple(out)


_MULTI_MATCH_OPTS = {"query", "fields", "type", "operator", "minimum_should_match",
                     "tie_breaker", "analyzer", "boost", "_name", "slop", "fuzziness",
                     "prefix_length", "max_expansions", "fuzzy_rewrite", "lenient",
                     "zero_terms_query", "auto_generate_synonyms_phrase_query",
                     "fuzzy_transpositions"}
_MULTI_MATCH_TYPES = ("best_fields", "most_fields", "cross_fields", "phrase", "phrase_prefix",
                      "bool_prefix")


def _p_multi_match(body: dict[str, Any], st: _State) -> Query:
    for k, v in body.items():
        if k == "fields":
            continue
        if not _is_value(v):
            raise ParsingError(f"[multi_match] unknown token [{_token(v)}] after [{k}]")
        if k not in _MULTI_MATCH_OPTS:
            raise ParsingError(f"[multi_match] query does not support [{k}]")
    if body.get("query") is None:
        raise ParsingError("No text specified for multi_match query")
    mtype = str(body.get("type", "best_fields")).lower()
    if mtype not in _MULTI_MATCH_TYPES:
        raise ParsingError(f"[multi_match] query does not support type {mtype}")
    tb = body.get("tie_breaker")
    return MultiMatch(fields=_parse_fields(body.get("fields", ["*"])), text=body["query"],
                      type=mtype, operator=_operator(body.get("operator", "or")),
                      minimum_should_match=body.get("minimum_should_match"),
                      tie_breaker=None if tb is None else _float("multi_match", "tie_breaker", tb),
                      analyzer=body.get("analyzer"),
                      lenient=None if "lenient" not in body else
                      _bool_value("multi_match", "lenient", body["lenient"]),
                      boost=_float("multi_match", "boost", body.get("boost", 1.0)))


def _p_term(body: dict[str, Any], st: _State) -> Query:
    fname, o = _field_query(
        "term", body, ("value", "term"), {"value", "term", "case_insensitive"},
        array_message="[term] query does not support arrays for value - use a bool query with "
                      "multiple term clauses in the should section or use a Terms query if "
                      "scoring is not required")
    value = o.get("value", o.get("term"))
    fname = _require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    return Term(field=fname, value=value,
                case_insensitive=_bool_value("term", "case_insensitive",
                                             o.get("case_insensitive", False)),
                boost=_float("term", "boost", o.get("boost", 1.0)))


MAX_TERMS_COUNT = 65536   # index.max_terms_count


def _p_terms(body: dict[str, Any], st: _State) -> Query:
    fname: str | None = None
    values: list[Any] = []
    boost = 1.0
    for key, spec in body.items():
        if isinstance(spec, list):
            if fname is not None:
                raise ParsingError("[terms] query does not support multiple fields")
            fname = key
            for v in spec:
                if v is None:
                    raise ParsingError("No value specified for terms query")
                if not _is_value(v):
                    raise ParsingError(f"[terms] unknown token [{_token(v)}] after [{key}]")
                values.append(v)
        elif isinstance(spec, dict):
            raise ParsingError("[terms] query does not support terms lookup")
        elif key == "boost":
            boost = _float("terms", key, spec)
        elif key != "_name":
            raise ParsingError(f"[terms] query does not support [{key}]")
    if fname is None:
        raise ParsingError("[terms] query requires a field name, followed by array of terms or "
                           "a document lookup specification")
    if len(values) > MAX_TERMS_COUNT:
        raise IllegalArgument(f"The number of terms [{len(values)}] used in the Terms Query "
                              f"request has exceeded the allowed maximum of [{MAX_TERMS_COUNT}]. "
                              "This maximum can be set by changing the [index.max_terms_count] "
                              "index level setting.")
    return Terms(field=fname, values=tuple(values), boost=boost)


_RANGE_OPTS = {"gt", "gte", "lt", "lte", "from", "to", "include_lower", "include_upper",
               "format", "time_zone", "relation"}


def _p_range(body: dict[str, Any], st: _State) -> Query:
    fname, o = _field_query("range", body, ("gte",), _RANGE_OPTS, short_form=False)
    fname = _require_field(fname)
    # Elasticsearch keeps one lower and one upper bound; later keys overwrite earlier ones
    lower: Any = None
    upper: Any = None
    inc_lower = inc_upper = True
    for k, v in o.items():
        if k in ("from", "gt", "gte"):
            lower = v
            if k != "from":
                inc_lower = k == "gte"
        elif k in ("to", "lt", "lte"):
            upper = v
            if k != "to":
                inc_upper = k == "lte"
        elif k == "include_lower":
            inc_lower = _bool_value("range", k, v)
        elif k == "include_upper":
            inc_upper = _bool_value("range", k, v)
    rel = str(o.get("relation", "intersects")).lower()
    if rel not in ("intersects", "within", "contains"):
        raise IllegalArgument(f"{o.get('relation')} is not a valid relation")
    return Range(field=fname,
                 gt=lower if not inc_lower else None, gte=lower if inc_lower else None,
                 lt=upper if not inc_upper else None, lte=upper if inc_upper else None,
                 format=o.get("format"), time_zone=o.get("time_zone"),
                 boost=_float("range", "boost", o.get("boost", 1.0)))


def _p_exists(body: dict[str, Any], st: _State) -> Query:
    field_name = None
    boost = 1.0
    for k, v in body.items():
        if not _is_value(v):
            raise ParsingError(f"[exists] unknown token [{_token(v)}] after [{k}]")
        if k == "field":
            field_name = _text_value(v)
        elif k == "boost":
            boost = _float("exists", k, v)
        elif k != "_name":
            raise ParsingError(f"[exists] query does not support [{k}]")
    if field_name is None:
        raise ParsingError("[exists] must be provided with a [field]")
    if field_name == "_source":
        raise SearchError("The _source field is not searchable", es_type="query_shard_exception",
                          status=400)
    return Exists(field=_require_field(field_name), boost=boost)


def _p_ids(body: dict[str, Any], st: _State) -> Query:
    # an ObjectParser in Elasticsearch
    values: list[str] = []
    boost = 1.0
    for k, v in body.items():
        if k == "values":
            if not isinstance(v, list):
                raise XContentParseError(f"[ids] values doesn't support values of type: "
                                         f"{_token(v)}")
            for x in v:
                if not isinstance(x, (str, int, float)) or isinstance(x, bool):
                    raise XContentParseError("[ids] failed to parse field [values]")
                values.append(_text_value(x))
        elif k == "boost":
            boost = _float("ids", k, v)
        elif k != "_name":
            raise XContentParseError(
                f"[ids] unknown field [{k}]{did_you_mean(k, ('values', 'boost', '_name'))}")
    return Ids(values=tuple(values), boost=boost)


def _p_prefix(body: dict[str, Any], st: _State) -> Query:
    fname, o = _field_query("prefix", body, ("value", "prefix"),
                            {"value", "prefix", "case_insensitive", "rewrite"})
    value = o.get("value", o.get("prefix"))
    fname = _require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    return Prefix(field=fname, value=_text_value(value),
                  case_insensitive=_bool_value("prefix", "case_insensitive",
                                               o.get("case_insensitive", False)),
                  boost=_float("prefix", "boost", o.get("boost", 1.0)))


def _p_wildcard(body: dict[str, Any], st: _State) -> Query:
    fname, o = _field_query("wildcard", body, ("value", "wildcard"),
                            {"value", "wildcard", "case_insensitive", "rewrite"})
    value = o.get("value", o.get("wildcard"))
    fname = _require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    return Wildcard(field=fname, pattern=_text_value(value),
                    case_insensitive=_bool_value("wildcard", "case_insensitive",
                                                 o.get("case_insensitive", False)),
                    boost=_float("wildcard", "boost", o.get("boost", 1.0)))


REGEXP_FLAGS = {"ALL", "ANYSTRING", "COMPLEMENT", "EMPTY", "INTERSECTION", "INTERVAL", "NONE"}


def _p_regexp(body: dict[str, Any], st: _State) -> Query:
    fname, o = _field_query("regexp", body, ("value",),
                            {"value", "flags", "flags_value", "case_insensitive",
                             "max_determinized_states", "rewrite"})
    value = o.get("value")
    fname = _require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    flags = str(o.get("flags", "ALL")).upper()
    for f in flags.split("|"):
        if f and f not in REGEXP_FLAGS:
            raise IllegalArgument(f"Unknown regexp flag [{f}]")
    return Regexp(field=fname, value=_text_value(value), flags=flags,
                  case_insensitive=_bool_value("regexp", "case_insensitive",
                                               o.get("case_insensitive", False)),
                  boost=_float("regexp", "boost", o.get("boost", 1.0)))


_BOOL_FIELDS = ("must", "should", "must_not", "filter", "adjust_pure_negative",
                "minimum_should_match", "boost", "_name")


def _p_bool(body: dict[str, Any], st: _State) -> Query:
    """Elasticsearch parses ``bool`` with an ObjectParser: its errors are
    ``x_content_parse_exception``, and a clause's error is wrapped per field."""
    clauses: dict[str, list[Query]] = {"must": [], "should": [], "filter": [], "must_not": []}
    msm: Any = None
    boost = 1.0
    for key, value in body.items():
        if key in clauses:
            if value is None:
                continue
            if not isinstance(value, (dict, list)):
                raise XContentParseError(f"[bool] {key} doesn't support values of type: "
                                         f"{_token(value)}")
            items = [value] if isinstance(value, dict) else value
            try:
                clauses[key].extend(_parse(item, st) for item in items)
            except SearchError as e:
                raise XContentParseError(f"[bool] failed to parse field [{key}]",
                                         caused_by=e.to_cause()) from None
        elif key == "minimum_should_match":
            if not _is_value(value):
                raise XContentParseError(f"[bool] minimum_should_match doesn't support values "
                                         f"of type: {_token(value)}")
            msm = value
        elif key == "boost":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise XContentParseError(f"[bool] boost doesn't support values of type: "
                                         f"{_token(value)}")
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
        elif key != "_name":
            raise XContentParseError(f"[bool] unknown field [{key}]"
                                     f"{did_you_mean(key, _BOOL_FIELDS)}")
    return Bool(must=tuple(clauses["must"]), should=tuple(clauses["should"]),
                filter=tuple(clauses["filter"]), must_not=tuple(clauses["must_not"]),
                minimum_should_match=msm, boost=boost)


def _p_constant_score(body: dict[str, Any], st: _State) -> Query:
    inner: Query | None = None
    boost = 1.0
    for key, value in body.items():
        if isinstance(value, dict):
            if key != "filter":
                raise ParsingError(f"[constant_score] query does not support [{key}]")
            inner = _parse(value, st)
        elif _is_value(value):
            if key == "boost":
                boost = _float("constant_score", key, value)
            elif key != "_name":
                raise ParsingError(f"[constant_score] query does not support [{key}]")
        else:
            raise ParsingError(f"unexpected token [{_token(value)}]")
    if inner is None:
        raise ParsingError("[constant_score] requires a 'filter' element")
    return ConstantScore(filter=inner, boost=boost)


def _p_dis_max(body: dict[str, Any], st: _State) -> Query:
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
            tie_breaker = _float("dis_max", key, value)
        elif key == "boost":
            boost = _float("dis_max", key, value)
        elif key != "_name":
            raise ParsingError(f"[dis_max] query does not support [{key}]")
    if not found:
        raise ParsingError("[dis_max] requires 'queries' field with at least one clause")
    return DisMax(queries=tuple(queries), tie_breaker=tie_breaker, boost=boost)


_QUERY_STRING_OPTS = {
    "query", "default_field", "fields", "default_operator", "analyzer", "quote_analyzer",
    "allow_leading_wildcard", "auto_generate_synonyms_phrase_query", "max_determinized_states",
    "enable_position_increments", "fuzziness", "fuzzy_prefix_length", "fuzzy_max_expansions",
    "fuzzy_rewrite", "phrase_slop", "analyze_wildcard", "rewrite", "minimum_should_match",
    "quote_field_suffix", "lenient", "time_zone", "type", "tie_breaker", "escape",
    "fuzzy_transpositions", "boost", "_name"}
_SIMPLE_QUERY_STRING_OPTS = {
    "query", "fields", "analyzer", "default_operator", "flags", "lenient", "analyze_wildcard",
    "auto_generate_synonyms_phrase_query", "minimum_should_match", "quote_field_suffix",
    "fuzzy_prefix_length", "fuzzy_max_expansions", "fuzzy_transpositions", "boost", "_name"}


def _p_query_string(body: dict[str, Any], st: _State, simple: bool = False) -> Query:
    name = "simple_query_string" if simple else "query_string"
    allowed = _SIMPLE_QUERY_STRING_OPTS if simple else _QUERY_STRING_OPTS
    for k, v in body.items():
        if k not in allowed:
            raise ParsingError(f"[{name}] unsupported field [{k}]" if simple
                               else f"[{name}] query does not support [{k}]")
        if k != "fields" and not _is_value(v):
            raise ParsingError(f"[{name}] unknown token [{_token(v)}] after [{k}]")
    if "query" not in body:
        raise ParsingError(f"[{name}] must be provided with a [query]")
    fields: tuple[tuple[str, float], ...] = ()
    if "fields" in body:
        fields = _parse_fields(body["fields"], name)
    elif "default_field" in body:
        fields = _parse_fields([body["default_field"]], name)
    return QueryString(query=_text_value(body["query"]), fields=fields,
                       default_operator=_operator(body.get("default_operator", "or")),
                       simple=simple, lenient=bool(body.get("lenient", False)),
                       analyzer=body.get("analyzer"),
                       boost=_float(name, "boost", body.get("boost", 1.0)))


_PARSERS = {
    "match_all": _p_match_all,
    "match_none": _p_match_none,
    "match": _p_match,
    "match_phrase": _p_match_phrase,
    "match_phrase_prefix": lambda b, st: _p_match_phrase(b, st, prefix=True),
    "multi_match": _p_multi_match,
    "term": _p_term,
    "terms": _p_terms,
    "range": _p_range,
    "exists": _p_exists,
    "ids": _p_ids,
    "prefix": _p_prefix,
    "wildcard": _p_wildcard,
    "regexp": _p_regexp,
    "bool": _p_bool,
    "constant_score": _p_constant_score,
    "dis_max": _p_dis_max,
    "query_string": _p_query_string,
    "simple_query_string": lambda b, st: _p_query_string(b, st, simple=True),
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
