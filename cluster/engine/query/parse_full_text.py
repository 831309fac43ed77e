"""Parsers of the full-text queries: ``match``, ``match_phrase(_prefix)``, ``multi_match``,
``query_string`` and ``simple_query_string`` (whose syntax ``query_string.py`` expands later).
"""
from __future__ import annotations

from typing import Any

from ...errors import IllegalArgument, ParsingError
from .bool_prefix import fuzzy_of
from .fuzzy_query import QUERY_STRING_KEYS, fuzzy_options
from .nodes import Match, MatchPhrase, MultiMatch, Query, QueryString
from .parse_helpers import (ParseState, bool_option, field_query, float_option, int_option,
                            is_value, require_field, text_value, token_name)
from .unsupported_options import check_query_string_options

_MATCH_OPTS = {"query", "operator", "minimum_should_match", "analyzer", "zero_terms_query",
               "fuzziness", "lenient", "prefix_length", "max_expansions", "fuzzy_rewrite",
               "auto_generate_synonyms_phrase_query", "fuzzy_transpositions"}


def operator_option(value: Any) -> str:
    """``Operator.fromString``: ``or`` / ``and`` in any case, else Java's enum error."""
    op = str(value).lower()
    if op not in ("or", "and"):
        raise IllegalArgument("No enum constant org.elasticsearch.index.query.Operator."
                              f"{str(value).upper()}")
    return op


def zero_terms_option(value: Any) -> str:
    z = str(value).lower()
    if z not in ("none", "all"):
        raise ParsingError(f"Unsupported zero_terms_query value [{value}]")
    return z


#: the most expansions of a phrase prefix we gather (each travels in the statistics round)
MAX_EXPANSIONS = 10_000


def max_expansions_option(name: str, value: Any) -> int:
    """``max_expansions``: not negative (Elasticsearch's check); 0 expands to one term, as
    Elasticsearch's ``MultiPhrasePrefixQuery`` does; above ``MAX_EXPANSIONS`` refused."""
    n = int_option(name, "max_expansions", value)
    if n < 0:
        raise IllegalArgument("No negative maxExpansions allowed.")
    if n > MAX_EXPANSIONS:
        raise IllegalArgument(f"[{name}] [max_expansions] above {MAX_EXPANSIONS} is not "
                              "supported by this server")
    return max(n, 1)


def _p_match(body: dict[str, Any], st: ParseState) -> Query:
    fname, o = field_query("match", body, ("query",), _MATCH_OPTS)
    if o.get("query") is None:
        raise ParsingError("No text specified for text query")
    return Match(field=require_field(fname), text=o["query"],
                 operator=operator_option(o.get("operator", "or")),
                 minimum_should_match=o.get("minimum_should_match"), analyzer=o.get("analyzer"),
                 zero_terms_query=zero_terms_option(o.get("zero_terms_query", "none")),
                 lenient=bool_option("match", "lenient", o.get("lenient", False)),
                 fuzzy=fuzzy_of("match", o),
                 boost=float_option("match", "boost", o.get("boost", 1.0)))


def _p_match_phrase(body: dict[str, Any], st: ParseState, prefix: bool = False) -> Query:
    name = "match_phrase_prefix" if prefix else "match_phrase"
    fname, o = field_query(name, body, ("query",),
                           {"query", "slop", "analyzer", "max_expansions", "zero_terms_query"})
    if o.get("query") is None:
        raise ParsingError("No text specified for text query")
    slop = int_option(name, "slop", o.get("slop", 0))
    if slop < 0:
        raise IllegalArgument("No negative slop allowed.")
    if "max_expansions" in o and not prefix:
        raise ParsingError("[match_phrase] query does not support [max_expansions]")
    return MatchPhrase(field=require_field(fname), text=o["query"], slop=slop,
                       analyzer=o.get("analyzer"), prefix=prefix,
                       max_expansions=max_expansions_option(name, o.get("max_expansions", 50)),
                       zero_terms_query=zero_terms_option(o.get("zero_terms_query", "none")),
                       boost=float_option(name, "boost", o.get("boost", 1.0)))


def parse_fields(value: Any, name: str = "multi_match") -> tuple[tuple[str, float], ...]:
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
            out.append((fname, float_option(name, "fields", b)))
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


def _p_multi_match(body: dict[str, Any], st: ParseState) -> Query:
    """``MultiMatchQueryBuilder.fromXContent``, with its per-type refusals (``slop`` with
    ``bool_prefix``, ``fuzziness`` with ``cross_fields`` and the phrase types)."""
    for k, v in body.items():
        if k == "fields":
            continue
        if not is_value(v):
            raise ParsingError(f"[multi_match] unknown token [{token_name(v)}] after [{k}]")
        if k not in _MULTI_MATCH_OPTS:
            raise ParsingError(f"[multi_match] query does not support [{k}]")
    if body.get("query") is None:
        raise ParsingError("No text specified for multi_match query")
    mtype = str(body.get("type", "best_fields")).lower()
    if mtype not in _MULTI_MATCH_TYPES:
        raise ParsingError(f"[multi_match] query does not support type {mtype}")
    slop = int_option("multi_match", "slop", body.get("slop", 0))
    if slop != 0 and mtype == "bool_prefix":
        raise ParsingError(f"[slop] not allowed for type [{mtype}]")
    if slop < 0:
        raise IllegalArgument("No negative slop allowed.")
    if "fuzziness" in body and mtype in ("cross_fields", "phrase", "phrase_prefix"):
        raise ParsingError(f"Fuzziness not allowed for type [{mtype}]")
    zero_terms = zero_terms_option(body.get("zero_terms_query", "none"))
    if zero_terms == "all" and mtype in ("phrase", "phrase_prefix", "bool_prefix"):
        raise IllegalArgument(f"[multi_match] [zero_terms_query] all with type [{mtype}] is "
                              "not supported by this server")
    if "auto_generate_synonyms_phrase_query" in body:   # no synonyms here: never changes terms
        bool_option("multi_match", "auto_generate_synonyms_phrase_query",
                    body["auto_generate_synonyms_phrase_query"])
    tb = body.get("tie_breaker")
    return MultiMatch(fields=parse_fields(body.get("fields", ["*"])), text=body["query"],
                      type=mtype, operator=operator_option(body.get("operator", "or")),
                      minimum_should_match=body.get("minimum_should_match"),
                      tie_breaker=None if tb is None
                      else float_option("multi_match", "tie_breaker", tb),
                      analyzer=body.get("analyzer"),
                      lenient=None if "lenient" not in body else
                      bool_option("multi_match", "lenient", body["lenient"]),
                      slop=slop, zero_terms_query=zero_terms,
                      max_expansions=max_expansions_option("multi_match",
                                                           body.get("max_expansions", 50)),
                      fuzzy=fuzzy_of("multi_match", body),
                      boost=float_option("multi_match", "boost", body.get("boost", 1.0)))


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


#: ``SimpleQueryStringFlag``: each operator's bit
_FLAGS = {"ALL": -1, "NONE": 0, "AND": 1, "NOT": 2, "OR": 4, "PREFIX": 8, "PHRASE": 16,
          "PRECEDENCE": 32, "ESCAPE": 64, "WHITESPACE": 128, "FUZZY": 256, "NEAR": 512,
          "SLOP": 512}
_ALL_BUT_FUZZY = 0x3FF & ~256


def simple_flags(value: Any) -> bool:
    """``simple_query_string``'s ``flags`` (``"OR|AND|..."`` or their bits): whether the
    FUZZY operator is on. Turning off any other operator is refused by name (this parser
    always applies them)."""
    if isinstance(value, int) and not isinstance(value, bool):
        bits = -1 if value < 0 else value
    elif not str(value).strip():
        bits = -1
    else:
        bits = 0
        for name in str(value).upper().split("|"):
            name = name.strip()
            if name not in _FLAGS:
                raise IllegalArgument(f"Unknown simple_query_string flag [{name}]")
            bits |= _FLAGS[name]
    if bits & _ALL_BUT_FUZZY != _ALL_BUT_FUZZY:
        raise IllegalArgument("[simple_query_string] [flags] other than ALL, or all but "
                              "FUZZY, are not supported by this server")
    return bool(bits & 256)


def _p_query_string(body: dict[str, Any], st: ParseState, simple: bool = False) -> Query:
    name = "simple_query_string" if simple else "query_string"
    allowed = _SIMPLE_QUERY_STRING_OPTS if simple else _QUERY_STRING_OPTS
    for k, v in body.items():
        if k not in allowed:
            raise ParsingError(f"[{name}] unsupported field [{k}]" if simple
                               else f"[{name}] query does not support [{k}]")
        if k != "fields" and not is_value(v):
            raise ParsingError(f"[{name}] unknown token [{token_name(v)}] after [{k}]")
    if "query" not in body:
        raise ParsingError(f"[{name}] must be provided with a [query]")
    check_query_string_options(name, body)
    fields: tuple[tuple[str, float], ...] = ()
    if "fields" in body:
        fields = parse_fields(body["fields"], name)
    elif "default_field" in body:
        fields = parse_fields([body["default_field"]], name)
    return QueryString(query=text_value(body["query"]), fields=fields,
                       type=_query_string_type(body.get("type", "best_fields")),
                       tie_breaker=_tie_breaker(name, body.get("tie_breaker")),
                       default_operator=operator_option(body.get("default_operator", "or")),
                       simple=simple, lenient=None if "lenient" not in body else
                       bool_option(name, "lenient", body["lenient"]),
                       analyzer=body.get("analyzer"),
                       minimum_should_match=body.get("minimum_should_match"),
                       fuzzy=fuzzy_options(name, body, QUERY_STRING_KEYS),
                       fuzzy_operator=simple_flags(body.get("flags", "ALL")) if simple
                       else True,
                       phrase_slop=_phrase_slop(name, body.get("phrase_slop", 0)),
                       allow_leading_wildcard=bool_option(
                           name, "allow_leading_wildcard", body.get("allow_leading_wildcard", True)),
                       escape=bool_option(name, "escape", body.get("escape", False)),
                       quote_field_suffix=None if body.get("quote_field_suffix") is None
                       else text_value(body["quote_field_suffix"]),
                       time_zone=_time_zone(body.get("time_zone")),
                       quote_analyzer=body.get("quote_analyzer"),
                       fields_and_default_field="fields" in body and "default_field" in body,
                       default_field=None if "fields" in body or body.get("default_field")
                       is None else text_value(body["default_field"]),
                       boost=float_option(name, "boost", body.get("boost", 1.0)))


def _time_zone(value: Any) -> str | None:
    """Checked when parsed, as Elasticsearch's ``ZoneId.of`` (a 400 where it answers 500)."""
    from ..aggs.dates import zone    # not at import time: ``aggs`` imports the query parsers
    if value is None:
        return None
    zone(text_value(value))
    return text_value(value)


def _phrase_slop(name: str, value: Any) -> int:
    """A phrase's slop cannot be negative (Lucene's ``PhraseQuery``): refused by name."""
    slop = int_option(name, "phrase_slop", value)
    if slop < 0:
        raise IllegalArgument(f"[{name}] [phrase_slop] cannot be negative")
    return slop


def _query_string_type(value: Any) -> str:
    """``MultiMatchQueryBuilder.Type.parse``: exact names only."""
    if value not in _MULTI_MATCH_TYPES:
        raise ParsingError(f"failed to parse [multi_match] query type [{value}]. unknown type.",
                           es_type="parse_exception")
    return str(value)


def _tie_breaker(name: str, value: Any) -> float | None:
    """``parser.floatValue()``: a bad numeric string fails as Java's ``parseFloat``."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ParsingError(f"For input string: \"{value}\"",
                               es_type="number_format_exception") from None
    return float_option(name, "tie_breaker", value)


PARSERS = {
    "match": _p_match,
    "match_phrase": _p_match_phrase,
    "match_phrase_prefix": lambda b, st: _p_match_phrase(b, st, prefix=True),
    "multi_match": _p_multi_match,
    "query_string": _p_query_string,
    "simple_query_string": lambda b, st: _p_query_string(b, st, simple=True),
}
