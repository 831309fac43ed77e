"""Parsers of the term-level queries: ``term``, ``terms``, ``range``, ``exists``, ``ids``,
``prefix``, ``wildcard`` and ``regexp`` (exact values, not analyzed text).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...errors import IllegalArgument, ParsingError, SearchError, XContentParseError
from .nodes import Exists, Ids, Prefix, Query, Range, Regexp, Term, Terms, Wildcard
from .parse_helpers import (ParseState, bool_option, did_you_mean, field_query, float_option,
                            is_value, require_field, text_value, token_name)
from .unsupported_options import check_regexp_options, check_rewrite


def _p_term(body: dict[str, Any], st: ParseState) -> Query:
    fname, o = field_query(
        "term", body, ("value", "term"), {"value", "term", "case_insensitive"},
        array_message="[term] query does not support arrays for value - use a bool query with "
                      "multiple term clauses in the should section or use a Terms query if "
                      "scoring is not required")
    value = o.get("value", o.get("term"))
    fname = require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    return Term(field=fname, value=value,
                case_insensitive=bool_option("term", "case_insensitive",
                                             o.get("case_insensitive", False)),
                boost=float_option("term", "boost", o.get("boost", 1.0)))




def _p_terms(body: dict[str, Any], st: ParseState) -> Query:
    fname: str | None = None
    values: list[Any] = []
    lookup: Any = None
    boost = 1.0
    for key, spec in body.items():
        if isinstance(spec, list):
            if fname is not None:
                raise ParsingError("[terms] query does not support multiple fields")
            fname = key
            for v in spec:
                if v is None:
                    raise ParsingError("No value specified for terms query")
                if not is_value(v):
                    raise ParsingError(f"[terms] unknown token [{token_name(v)}] after [{key}]")
                values.append(v)
        elif isinstance(spec, dict):
            if fname is not None:
                raise ParsingError("[terms] query does not support multiple fields")
            from .parse_scoring import terms_lookup
            lookup = terms_lookup(key, spec)
            fname = key
        elif key == "boost":
            boost = float_option("terms", key, spec)
        elif key != "_name":
            raise ParsingError(f"[terms] query does not support [{key}]")
    if fname is None:
        raise ParsingError("[terms] query requires a field name, followed by array of terms or "
                           "a document lookup specification")
    if not fname:
        raise IllegalArgument("field name cannot be null.")
    if lookup is not None:
        return replace(lookup, boost=boost)
    return Terms(field=fname, values=tuple(values), boost=boost)


_RANGE_OPTS = {"gt", "gte", "lt", "lte", "from", "to", "include_lower", "include_upper",
               "format", "time_zone", "relation"}


def _p_range(body: dict[str, Any], st: ParseState) -> Query:
    fname, o = field_query("range", body, ("gte",), _RANGE_OPTS, short_form=False)
    fname = require_field(fname)
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
            inc_lower = bool_option("range", k, v)
        elif k == "include_upper":
            inc_upper = bool_option("range", k, v)
    rel = str(o.get("relation", "intersects")).lower()
    if rel not in ("intersects", "within", "contains"):
        raise IllegalArgument(f"{o.get('relation')} is not a valid relation")
    return Range(field=fname,
                 gt=lower if not inc_lower else None, gte=lower if inc_lower else None,
                 lt=upper if not inc_upper else None, lte=upper if inc_upper else None,
                 format=o.get("format"), time_zone=o.get("time_zone"), relation=rel,
                 boost=float_option("range", "boost", o.get("boost", 1.0)), rewritten=True)


def _p_exists(body: dict[str, Any], st: ParseState) -> Query:
    field_name = None
    boost = 1.0
    for k, v in body.items():
        if not is_value(v):
            raise ParsingError(f"[exists] unknown token [{token_name(v)}] after [{k}]")
        if k == "field":
            field_name = text_value(v)
        elif k == "boost":
            boost = float_option("exists", k, v)
        elif k != "_name":
            raise ParsingError(f"[exists] query does not support [{k}]")
    if field_name is None:
        raise ParsingError("[exists] must be provided with a [field]")
    if field_name == "_source":
        raise SearchError("The _source field is not searchable", es_type="query_shard_exception",
                          status=400)
    return Exists(field=require_field(field_name), boost=boost)


def _p_ids(body: dict[str, Any], st: ParseState) -> Query:
    # an ObjectParser in Elasticsearch
    values: list[str] = []
    boost = 1.0
    for k, v in body.items():
        if k == "values":
            if not isinstance(v, list):
                raise XContentParseError(f"[ids] values doesn't support values of type: "
                                         f"{token_name(v)}")
            for x in v:
                if not isinstance(x, (str, int, float)) or isinstance(x, bool):
                    raise XContentParseError("[ids] failed to parse field [values]")
                values.append(text_value(x))
        elif k == "boost":
            boost = float_option("ids", k, v)
        elif k != "_name":
            raise XContentParseError(
                f"[ids] unknown field [{k}]{did_you_mean(k, ('values', 'boost', '_name'))}")
    return Ids(values=tuple(values), boost=boost)


def _p_prefix(body: dict[str, Any], st: ParseState) -> Query:
    fname, o = field_query("prefix", body, ("value", "prefix"),
                           {"value", "prefix", "case_insensitive", "rewrite"})
    value = o.get("value", o.get("prefix"))
    fname = require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    check_rewrite("prefix", o.get("rewrite"))
    return Prefix(field=fname, value=text_value(value),
                  case_insensitive=bool_option("prefix", "case_insensitive",
                                               o.get("case_insensitive", False)),
                  boost=float_option("prefix", "boost", o.get("boost", 1.0)))


def _p_wildcard(body: dict[str, Any], st: ParseState) -> Query:
    fname, o = field_query("wildcard", body, ("value", "wildcard"),
                           {"value", "wildcard", "case_insensitive", "rewrite"})
    value = o.get("value", o.get("wildcard"))
    fname = require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    check_rewrite("wildcard", o.get("rewrite"))
    return Wildcard(field=fname, pattern=text_value(value),
                    case_insensitive=bool_option("wildcard", "case_insensitive",
                                                 o.get("case_insensitive", False)),
                    boost=float_option("wildcard", "boost", o.get("boost", 1.0)))


REGEXP_FLAGS = {"ALL", "ANYSTRING", "COMPLEMENT", "EMPTY", "INTERSECTION", "INTERVAL", "NONE"}


def _p_regexp(body: dict[str, Any], st: ParseState) -> Query:
    fname, o = field_query("regexp", body, ("value",),
                           {"value", "flags", "flags_value", "case_insensitive",
                            "max_determinized_states", "rewrite"})
    value = o.get("value")
    fname = require_field(fname)
    if value is None:
        raise IllegalArgument("value cannot be null")
    flags = str(o.get("flags", "ALL")).upper()
    for f in flags.split("|"):
        if f and f not in REGEXP_FLAGS:
            raise IllegalArgument(f"Unknown regexp flag [{f}]")
    check_regexp_options(o)
    return Regexp(field=fname, value=text_value(value), flags=flags,
                  case_insensitive=bool_option("regexp", "case_insensitive",
                                               o.get("case_insensitive", False)),
                  boost=float_option("regexp", "boost", o.get("boost", 1.0)))


PARSERS = {
    "term": _p_term,
    "terms": _p_terms,
    "range": _p_range,
    "exists": _p_exists,
    "ids": _p_ids,
    "prefix": _p_prefix,
    "wildcard": _p_wildcard,
    "regexp": _p_regexp,
}
