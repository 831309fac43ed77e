"""The query DSL: JSON -> a tree of small frozen dataclasses (pure parsing, no data access).

Parsing checks structure and reports errors with Elasticsearch's types and wording. What a
query *means* for a field (which analyzer, which column) is decided where the data is, in
``matcher.py``, from the index's mapping.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import IllegalArgument, ParsingError, TooManyClauses

MAX_CLAUSE_COUNT = 1024
MAX_NESTED_DEPTH = 30


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
    """``query_string`` / ``simple_query_string`` / URI ``q=``; expanded by ``querystring.py``."""

    query: str = ""
    fields: tuple[tuple[str, float], ...] = ()
    default_operator: str = "or"
    simple: bool = False
    lenient: bool = False
    analyzer: str | None = None


def _num(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParsingError(f"[{what}] failed to parse: expected a number but found [{value}]")
    try:
        return float(value)
    except ValueError:
        raise ParsingError(f"[{what}] failed to parse: expected a number but found "
                           f"[{value}]") from None


class _Counter:
    def __init__(self) -> None:
        self.clauses = 0


def parse_query(dsl: Any) -> Query:
    """Parse the body's ``query`` object. Raises ``ParsingError`` and friends on bad input."""
    counter = _Counter()
    q = _parse(dsl, 0, counter)
    return q


def _single_key(dsl: Any, where: str = "query") -> tuple[str, Any]:
    if not isinstance(dsl, dict):
        raise ParsingError(f"[_na] query malformed, must start with start_object"
                           if where == "query" else f"[{where}] query malformed")
    if len(dsl) == 0:
        raise ParsingError("query malformed, empty clause found")
    if len(dsl) > 1:
        keys = list(dsl)
        raise ParsingError(f"[{keys[0]}] malformed query, expected [END_OBJECT] but found "
                           "[FIELD_NAME]")
    return next(iter(dsl.items()))


def _parse(dsl: Any, depth: int, counter: _Counter) -> Query:
    if depth > MAX_NESTED_DEPTH:
        raise TooManyClauses(
            f"Query contains too many nested clauses; maxClauseCount is set to {MAX_CLAUSE_COUNT}",
            es_type="too_many_nested_clauses")
    name, body = _single_key(dsl)
    counter.clauses += 1
    if counter.clauses > MAX_CLAUSE_COUNT:
        raise TooManyClauses(f"too many clauses; maxClauseCount is set to {MAX_CLAUSE_COUNT}")
    parser = _PARSERS.get(name)
    if parser is None:
        raise ParsingError(f"unknown query [{name}]", es_type="parsing_exception")
    return parser(body, depth, counter)


def _expect_object(name: str, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ParsingError(f"[{name}] query malformed, no start_object after query name")
    return body


def _boost(name: str, body: dict[str, Any]) -> float:
    return _num(body.get("boost", 1.0), f"{name}.boost")


def _field_query(name: str, body: Any, value_key: str,
                 allowed: set[str]) -> tuple[str, dict[str, Any]]:
    """``{field: value}`` or ``{field: {value_key: value, ...}}`` -> (field, options)."""
    body = _expect_object(name, body)
    fields = [k for k in body if k not in ("boost", "_name")]
    if len(fields) != 1:
        if not fields:
            raise ParsingError(f"[{name}] query doesn't support multiple fields, found none"
                               if name != "term" else "[term] query malformed, no field")
        raise ParsingError(f"[{name}] query doesn't support multiple fields, found "
                           f"[{fields[0]}] and [{fields[1]}]")
    fname = fields[0]
    spec = body[fname]
    if isinstance(spec, dict):
        for k in spec:
            if k not in allowed and k not in ("boost", "_name"):
                raise ParsingError(f"[{name}] query does not support [{k}]")
        opts = dict(spec)
        if value_key not in opts:
            if name in ("range",):
                pass
            else:
                raise ParsingError(f"[{name}] query malformed, no [{value_key}] field")
    elif isinstance(spec, list):
        raise ParsingError(f"[{name}] query does not support array of values")
    else:
        opts = {value_key: spec}
    if "boost" in body:
        opts.setdefault("boost", body["boost"])
    return fname, opts


def _p_match_all(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("match_all", body)
    for k in body:
        if k not in ("boost", "_name"):
            raise ParsingError(f"[match_all] query does not support [{k}]")
    return MatchAll(boost=_boost("match_all", body))


def _p_match_none(body: Any, depth: int, c: _Counter) -> Query:
    _expect_object("match_none", body)
    return MatchNone()


_MATCH_OPTS = {"query", "operator", "minimum_should_match", "analyzer", "zero_terms_query",
               "fuzziness", "lenient", "prefix_length", "max_expansions", "auto_generate_synonyms_phrase_query",
               "fuzzy_transpositions", "cutoff_frequency"}


def _operator(value: Any) -> str:
    op = str(value).lower()
    if op not in ("or", "and"):
        raise ParsingError(f"Unknown operator [{value}]", es_type="illegal_argument_exception")
    return op


def _p_match(body: Any, depth: int, c: _Counter) -> Query:
    fname, o = _field_query("match", body, "query", _MATCH_OPTS)
    return Match(field=fname, text=o["query"], operator=_operator(o.get("operator", "or")),
                 minimum_should_match=o.get("minimum_should_match"), analyzer=o.get("analyzer"),
                 zero_terms_query=str(o.get("zero_terms_query", "none")).lower(),
                 boost=_num(o.get("boost", 1.0), "match.boost"))


def _p_match_phrase(body: Any, depth: int, c: _Counter, prefix: bool = False) -> Query:
    name = "match_phrase_prefix" if prefix else "match_phrase"
    fname, o = _field_query(name, body, "query", {"query", "slop", "analyzer", "max_expansions",
                                                  "zero_terms_query"})
    return MatchPhrase(field=fname, text=o["query"], slop=int(_num(o.get("slop", 0), "slop")),
                       analyzer=o.get("analyzer"), prefix=prefix,
                       boost=_num(o.get("boost", 1.0), f"{name}.boost"))


def _parse_fields(value: Any) -> tuple[tuple[str, float], ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ParsingError("[fields] must be an array of field names")
    out = []
    for f in value:
        if not isinstance(f, str):
            raise ParsingError("[fields] must be an array of field names")
        if "^" in f:
            name, _, b = f.rpartition("^")
            out.append((name, _num(b, "fields boost")))
        else:
            out.append((f, 1.0))
    return tuple(out)


def _p_multi_match(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("multi_match", body)
    if "query" not in body:
        raise ParsingError("No text specified for multi_match query")
    mtype = str(body.get("type", "best_fields")).lower()
    if mtype not in ("best_fields", "most_fields", "cross_fields", "phrase", "phrase_prefix",
                     "bool_prefix"):
        raise ParsingError(f"failed to parse [multi_match] query type [{mtype}]. unknown type.")
    tb = body.get("tie_breaker")
    return MultiMatch(fields=_parse_fields(body.get("fields", ["*"])), text=body["query"],
                      type=mtype, operator=_operator(body.get("operator", "or")),
                      minimum_should_match=body.get("minimum_should_match"),
                      tie_breaker=None if tb is None else _num(tb, "tie_breaker"),
                      analyzer=body.get("analyzer"), boost=_boost("multi_match", body))


def _p_term(body: Any, depth: int, c: _Counter) -> Query:
    fname, o = _field_query("term", body, "value", {"value", "case_insensitive"})
    v = o["value"]
    if isinstance(v, (dict, list)) or v is None:
        raise ParsingError("[term] query does not support array of values" if isinstance(v, list)
                           else f"[term] query does not support [{fname}]")
    return Term(field=fname, value=v, case_insensitive=bool(o.get("case_insensitive", False)),
                boost=_num(o.get("boost", 1.0), "term.boost"))


def _p_terms(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("terms", body)
    fields = [k for k in body if k not in ("boost", "_name")]
    if len(fields) != 1:
        raise ParsingError("[terms] query does not support multiple fields" if fields
                           else "[terms] query requires a field")
    vals = body[fields[0]]
    if not isinstance(vals, list):
        raise ParsingError(f"[terms] query does not support [{fields[0]}]")
    if len(vals) > 65536:
        raise IllegalArgument("The number of terms [" + str(len(vals)) + "] used in the Terms "
                              "Query request has exceeded the allowed maximum of [65536].")
    return Terms(field=fields[0], values=tuple(vals), boost=_boost("terms", body))


def _p_range(body: Any, depth: int, c: _Counter) -> Query:
    fname, o = _field_query("range", body, "gte", {"gt", "gte", "lt", "lte", "from", "to",
                                                   "include_lower", "include_upper", "format",
                                                   "time_zone", "relation"})
    gt, gte, lt, lte = o.get("gt"), o.get("gte"), o.get("lt"), o.get("lte")
    if "from" in o:
        if o.get("include_lower", True):
            gte = o["from"]
        else:
            gt = o["from"]
    if "to" in o:
        if o.get("include_upper", True):
            lte = o["to"]
        else:
            lt = o["to"]
    return Range(field=fname, gt=gt, gte=gte, lt=lt, lte=lte, format=o.get("format"),
                 boost=_num(o.get("boost", 1.0), "range.boost"))


def _p_exists(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("exists", body)
    if "field" not in body:
        raise ParsingError("[exists] must be provided with a [field]")
    return Exists(field=str(body["field"]), boost=_boost("exists", body))


def _p_ids(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("ids", body)
    vals = body.get("values", [])
    if not isinstance(vals, list):
        raise ParsingError("[ids] values must be an array")
    return Ids(values=tuple(str(v) for v in vals), boost=_boost("ids", body))


def _p_prefix(body: Any, depth: int, c: _Counter) -> Query:
    fname, o = _field_query("prefix", body, "value", {"value", "case_insensitive", "rewrite"})
    return Prefix(field=fname, value=str(o["value"]),
                  case_insensitive=bool(o.get("case_insensitive", False)),
                  boost=_num(o.get("boost", 1.0), "prefix.boost"))


def _p_wildcard(body: Any, depth: int, c: _Counter) -> Query:
    body2 = body
    if isinstance(body, dict):
        body2 = {k: ({"value": v.get("wildcard", v.get("value"))} | {kk: vv for kk, vv in v.items()
                                                                      if kk not in ("wildcard", "value")}
                     if isinstance(v, dict) else v) for k, v in body.items()}
    fname, o = _field_query("wildcard", body2, "value", {"value", "case_insensitive", "rewrite"})
    return Wildcard(field=fname, pattern=str(o["value"]),
                    case_insensitive=bool(o.get("case_insensitive", False)),
                    boost=_num(o.get("boost", 1.0), "wildcard.boost"))


def _clauses(name: str, value: Any, depth: int, c: _Counter) -> tuple[Query, ...]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise ParsingError(f"[bool] query does not support [{name}]")
    return tuple(_parse(v, depth + 1, c) for v in value)


def _p_bool(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("bool", body)
    for k in body:
        if k not in ("must", "should", "filter", "must_not", "minimum_should_match", "boost",
                     "_name", "adjust_pure_negative"):
            raise ParsingError(f"[bool] query does not support [{k}]")
    return Bool(must=_clauses("must", body.get("must", []), depth, c),
                should=_clauses("should", body.get("should", []), depth, c),
                filter=_clauses("filter", body.get("filter", []), depth, c),
                must_not=_clauses("must_not", body.get("must_not", []), depth, c),
                minimum_should_match=body.get("minimum_should_match"),
                boost=_boost("bool", body))


def _p_constant_score(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("constant_score", body)
    if "filter" not in body:
        raise ParsingError("[constant_score] requires a 'filter' element")
    return ConstantScore(filter=_parse(body["filter"], depth + 1, c),
                         boost=_boost("constant_score", body))


def _p_dis_max(body: Any, depth: int, c: _Counter) -> Query:
    body = _expect_object("dis_max", body)
    qs = body.get("queries")
    if not isinstance(qs, list) or not qs:
        raise ParsingError("[dis_max] requires 'queries' field with at least one clause")
    return DisMax(queries=tuple(_parse(q, depth + 1, c) for q in qs),
                  tie_breaker=_num(body.get("tie_breaker", 0.0), "tie_breaker"),
                  boost=_boost("dis_max", body))


def _p_query_string(body: Any, depth: int, c: _Counter, simple: bool = False) -> Query:
    name = "simple_query_string" if simple else "query_string"
    body = _expect_object(name, body)
    if "query" not in body:
        raise ParsingError(f"[{name}] must be provided with a [query]")
    fields: tuple[tuple[str, float], ...] = ()
    if "fields" in body:
        fields = _parse_fields(body["fields"])
    elif "default_field" in body:
        fields = _parse_fields([body["default_field"]])
    return QueryString(query=str(body["query"]), fields=fields,
                       default_operator=_operator(body.get("default_operator", "or")),
                       simple=simple, lenient=bool(body.get("lenient", False)),
                       analyzer=body.get("analyzer"), boost=_boost(name, body))


_PARSERS = {
    "match_all": _p_match_all,
    "match_none": _p_match_none,
    "match": _p_match,
    "match_phrase": _p_match_phrase,
    "match_phrase_prefix": lambda b, d, c: _p_match_phrase(b, d, c, prefix=True),
    "multi_match": _p_multi_match,
    "term": _p_term,
    "terms": _p_terms,
    "range": _p_range,
    "exists": _p_exists,
    "ids": _p_ids,
    "prefix": _p_prefix,
    "wildcard": _p_wildcard,
    "bool": _p_bool,
    "constant_score": _p_constant_score,
    "dis_max": _p_dis_max,
    "query_string": _p_query_string,
    "simple_query_string": lambda b, d, c: _p_query_string(b, d, c, simple=True),
}


def minimum_should_match(spec: Any, optional_count: int) -> int:
    """Elasticsearch's ``minimum_should_match`` forms: ``2``, ``-1``, ``"75%"``, ``"-25%"``."""
    if spec is None:
        return 0
    s = str(spec).strip()
    if "<" in s:
        # conditional form "3<90%": apply the right side above the threshold
        result = optional_count
        for part in s.split():
            left, _, right = part.partition("<")
            if optional_count > int(left):
                result = minimum_should_match(right, optional_count)
        return result
    if s.endswith("%"):
        pct = float(s[:-1])
        calc = int(optional_count * pct / 100.0) if pct >= 0 else \
            optional_count - int(optional_count * -pct / 100.0)
        result = calc
    else:
        v = int(float(s))
        result = v if v >= 0 else optional_count + v
    return max(0, min(result, optional_count)) if optional_count else max(0, result)
