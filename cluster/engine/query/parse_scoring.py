"""Parsers of the scoring queries: ``function_score`` (its functions, modes and limits) and
``script_score``, with Elasticsearch's errors for bad shapes and combinations
(``FunctionScoreQueryBuilder.fromXContent`` and the score function builders).

The inner queries are parsed by the DSL's own ``parse_inner`` (passed in by ``dsl.py``, which
owns the dispatch), so nesting stays bounded by the same depth limit.
"""
from __future__ import annotations

from typing import Any, Callable

from ...errors import IllegalArgument, ParsingError, SearchError
from ..script import SCORE_CONTEXT, compile_script
from .distance_feature import check_required
from .nodes import MatchAll, Query
from .parse_helpers import ParseState, float_option, is_value, token_name
from .score_functions import BOOST_MODES, DECAY_SHAPES, MODIFIERS, MULTI_VALUE_MODES, SCORE_MODES
from .score_nodes import (FLOAT_MAX, Decay, DistanceFeature, FieldValueFactor, FilterFunction,
                          FunctionScore, RandomScore, ScoreFn, ScriptFunction, ScriptScore,
                          TermsLookup, Weight)

Inner = Callable[[Any, ParseState], Query]
_NAME = "function_score"
_MISPLACED = ("failed to parse [function_score] query. you can either define [functions] array "
              "or a single function, not both. ")
FUNCTION_NAMES = ("field_value_factor", "random_score", "script_score", *DECAY_SHAPES)


def _parse_error(reason: str) -> SearchError:
    """Elasticsearch's ``ElasticsearchParseException`` (``parse_exception``, 400)."""
    return ParsingError(reason, es_type="parse_exception")


def _function(name: str, body: Any) -> ScoreFn:
    """One score function object by its name (the named-object registry of ES)."""
    if not isinstance(body, dict):
        raise ParsingError(f"[{name}] malformed score function, expected an object")
    if name == "field_value_factor":
        return _field_value_factor(body)
    if name in DECAY_SHAPES:
        return _decay(name, body)
    if name == "random_score":
        return _random_score(body)
    if name == "script_score":
        if "script" not in body or len(body) != 1:
            extra = sorted(set(body) - {"script"})
            raise ParsingError(f"script_score query does not support [{extra[0]}]" if extra
                               else "script_score function requires a [script]")
        return ScriptFunction(compile_script(body["script"], SCORE_CONTEXT))
    raise ParsingError(f"unknown field [{name}]", es_type="named_object_not_found_exception")


def _field_value_factor(body: dict[str, Any]) -> ScoreFn:
    opts: dict[str, Any] = {}
    for key, value in body.items():
        if key not in ("field", "factor", "modifier", "missing"):
            raise ParsingError(f"[field_value_factor] field [{key}] is not supported")
        if not is_value(value):
            raise ParsingError(f"unexpected token [{token_name(value)}]")
        opts[key] = value
    if "field" not in opts:
        raise ParsingError("[field_value_factor] required field 'field' missing")
    modifier = str(opts.get("modifier", "none")).lower()
    if modifier not in MODIFIERS:
        raise IllegalArgument(f"Illegal modifier: {opts['modifier']}")
    missing = opts.get("missing")
    return FieldValueFactor(
        field=str(opts["field"]), modifier=modifier,
        factor=float_option("field_value_factor", "factor", opts.get("factor", 1.0)),
        missing=None if missing is None else float_option("field_value_factor", "missing",
                                                          missing))


def _decay(shape: str, body: dict[str, Any]) -> ScoreFn:
    field: str | None = None
    spec: dict[str, Any] = {}
    mode = "min"
    for key, value in body.items():
        if key == "multi_value_mode":
            mode = str(value).lower()
            if mode not in MULTI_VALUE_MODES:
                raise IllegalArgument(f"No multi value mode found for string [{value}]")
        elif isinstance(value, dict):
            if field is not None:
                raise _parse_error(f"failed to parse [{shape}] score function. expected only "
                                   f"one field but found [{field}] and [{key}]")
            field, spec = key, value
        else:
            raise _parse_error(f"failed to parse [{shape}] score function. unknown field "
                               f"[{key}]")
    if field is None:
        raise _parse_error(f"failed to parse [{shape}] score function. expected a field")
    unknown = sorted(set(spec) - {"origin", "scale", "offset", "decay"})
    if unknown:
        raise _parse_error(f"failed to parse [{shape}] score function. parameter "
                           f"[{unknown[0]}] not supported")
    if "scale" not in spec:
        raise _parse_error(f"[scale] must be set for the [{shape}] function on field "
                           f"[{field}]")
    decay = float_option(shape, "decay", spec.get("decay", 0.5))
    if not 0.0 < decay < 1.0:
        raise IllegalArgument("decay function's decay parameter must be in range 0..1!")
    return Decay(shape=shape, field=field, origin=spec.get("origin"), scale=spec["scale"],
                 offset=spec.get("offset", 0), decay=decay, multi_value_mode=mode)


def _random_score(body: dict[str, Any]) -> ScoreFn:
    seed = 0
    field = "_id"
    for key, value in body.items():
        if key == "seed":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ParsingError("random_score seed must be an int, long or string, not "
                                   f"'{token_name(value)}'")
            seed = int(value) if isinstance(value, (int, float)) else _string_seed(value)
        elif key == "field":
            field = str(value)
        else:
            raise ParsingError(f"random_score query does not support [{key}]")
    if "seed" not in body:
        raise ParsingError("[random_score] requires a [seed]: without one Elasticsearch draws "
                           "a new order per request; this server only runs repeatable ones")
    return RandomScore(seed=seed, field=field)


def _string_seed(value: str) -> int:
    """A string seed as a number (as Elasticsearch: a numeric string is its number, any other
    its Java ``hashCode``)."""
    try:
        return int(value)
    except ValueError:
        h = 0
        for ch in value:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return h - (1 << 32) if h >= 1 << 31 else h


def _weight(value: Any) -> float:
    w = float_option(_NAME, "weight", value)
    if w < 0:
        raise IllegalArgument("[weight] cannot be negative for a filtering function")
    return w


def _functions_array(items: Any, st: ParseState, inner: Inner) -> list[FilterFunction]:
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise ParsingError(f"failed to parse [{_NAME}] query. malformed query, expected a "
                               f"[START_OBJECT] while parsing functions but got a "
                               f"[{token_name(item)}] instead")
        flt: Query | None = None
        weight: float | None = None
        fn: ScoreFn | None = None
        fn_name = ""
        for key, value in item.items():
            if key == "filter":
                flt = inner(value, st)
            elif key == "weight":
                weight = _weight(value)
            elif isinstance(value, dict):
                if fn is not None:
                    raise _parse_error(f"failed to parse function_score functions. already "
                                       f"found [{fn_name}], now encountering [{key}].")
                fn, fn_name = _function(key, value), key
            else:
                raise _parse_error(f"failed to parse [{_NAME}] query. field [{key}] is not "
                                   "supported")
        if fn is None and weight is None:
            raise ParsingError(f"failed to parse [{_NAME}] query. an entry in functions list "
                               "is missing a function.")
        out.append(FilterFunction(function=fn or Weight(), filter=flt or MatchAll(),
                                  weight=weight))
    return out


def _mode(value: Any, allowed: tuple[str, ...], what: str) -> str:
    mode = str(value).lower()
    if mode not in allowed:
        raise IllegalArgument(f"Illegal {what} [{value}]")
    return mode


def parse_function_score(body: dict[str, Any], st: ParseState, inner: Inner) -> Query:
    """``function_score``: a query, functions (an array, or one at the top level), modes and
    limits; ``FunctionScoreQueryBuilder.fromXContent``'s errors."""
    query: Query | None = None
    functions: list[FilterFunction] = []
    single: str | None = None
    array = False
    opts: dict[str, Any] = {"score_mode": "multiply", "boost_mode": "multiply",
                            "max_boost": FLOAT_MAX, "min_score": None, "boost": 1.0}
    for key, value in body.items():
        if key == "query" and isinstance(value, dict):
            query = inner(value, st)
        elif key == "functions" and isinstance(value, list):
            if single is not None:
                raise ParsingError(_MISPLACED + f"already found [{single}], now encountering "
                                   "[functions].")
            array = True
            functions.extend(_functions_array(value, st, inner))
        elif isinstance(value, list):
            raise ParsingError(f"failed to parse [{_NAME}] query. array [{key}] is not "
                               "supported")
        elif key in ("score_mode", "boost_mode") and is_value(value):
            opts[key] = _mode(value, SCORE_MODES if key == "score_mode" else BOOST_MODES,
                              key.replace("_", " "))
        elif key in ("max_boost", "min_score", "boost") and is_value(value):
            opts[key] = float_option(_NAME, key, value)
        elif key == "_name":
            continue
        else:
            single = _single_function(key, value, single, array, functions)
    return FunctionScore(query=query or MatchAll(), functions=tuple(functions), **opts)


def _single_function(key: str, value: Any, single: str | None, array: bool,
                     functions: list[FilterFunction]) -> str:
    """A function written at the top level (``{"gauss": {...}}``, ``{"weight": 2}``)."""
    if single is not None:
        raise ParsingError(f"failed to parse [{_NAME}] query. already found function "
                           f"[{single}], now encountering [{key}]. use [functions] array if "
                           "you want to define several functions.")
    if array:
        raise ParsingError(_MISPLACED + f"already found [functions] array, now encountering "
                           f"[{key}].")
    if key == "weight" and is_value(value):
        functions.append(FilterFunction(function=Weight(), weight=_weight(value)))
    elif isinstance(value, dict):
        functions.append(FilterFunction(function=_function(key, value)))
    else:
        raise ParsingError(f"failed to parse [{_NAME}] query. field [{key}] is not supported")
    return key


def parse_script_score(body: dict[str, Any], st: ParseState, inner: Inner) -> Query:
    """``script_score``: ``query`` and ``script`` are required (``ScriptScoreQueryBuilder``)."""
    query: Query | None = None
    script: Any = None
    min_score: float | None = None
    boost = 1.0
    for key, value in body.items():
        if key == "query":
            query = inner(value, st)
        elif key == "script":
            if not isinstance(value, dict):   # declared ValueType.OBJECT in Elasticsearch
                raise ParsingError(f"[script_score] script doesn't support values of type: "
                                   f"{token_name(value)}", es_type="x_content_parse_exception")
            script = compile_script(value, SCORE_CONTEXT)
        elif key == "min_score":
            min_score = float_option("script_score", key, value)
        elif key == "boost":
            boost = float_option("script_score", key, value)
        elif key != "_name":
            raise ParsingError(f"[script_score] unknown field [{key}]",
                               es_type="x_content_parse_exception")
    missing = [k for k, v in (("query", query), ("script", script)) if v is None]
    if missing:   # ConstructingObjectParser's required arguments
        raise IllegalArgument(f"Required [{', '.join(missing)}]")
    return ScriptScore(query=query, script=script, min_score=min_score, boost=boost)


def parse_distance_feature(body: dict[str, Any], st: ParseState) -> Query:
    """``distance_feature``: ``field``, ``origin``, ``pivot`` (and ``boost``)."""
    for key, value in body.items():
        if key not in ("field", "origin", "pivot", "boost", "_name"):
            raise ParsingError(f"[distance_feature] unknown field [{key}]",
                               es_type="x_content_parse_exception")
        if not is_value(value) and key != "origin":   # a geo origin may be [lon, lat]
            raise ParsingError(f"[distance_feature] {key} doesn't support values of type: "
                               f"{token_name(value)}", es_type="x_content_parse_exception")
    check_required(body)
    return DistanceFeature(field=str(body["field"]), origin=body["origin"], pivot=body["pivot"],
                           boost=float_option("distance_feature", "boost",
                                              body.get("boost", 1.0)))


def terms_lookup(field: str, spec: dict[str, Any]) -> Query:
    """A ``terms`` query's lookup object (``TermsLookup.parseTermsLookup``'s errors)."""
    opts: dict[str, str] = {}
    for key, value in spec.items():
        if key not in ("index", "id", "path", "routing"):
            raise ParsingError(f"[terms] query does not support [{key}] within lookup element")
        if not is_value(value):
            raise ParsingError(f"[terms] unknown token [{token_name(value)}] after [{key}]")
        opts[key] = str(value)
    for key in ("id", "path", "index"):
        if key not in opts:
            raise IllegalArgument(f"[terms] query lookup element requires specifying the "
                                  f"{key}.")
    return TermsLookup(field=field, index=opts["index"], id=opts["id"], path=opts["path"],
                       routing=opts.get("routing"))


def parsers(inner: Inner) -> dict[str, Callable[[dict[str, Any], ParseState], Query]]:
    """The dispatch entries of this module, bound to the DSL's inner-query parser."""
    return {"function_score": lambda body, st: parse_function_score(body, st, inner),
            "script_score": lambda body, st: parse_script_score(body, st, inner),
            "distance_feature": parse_distance_feature}
