"""``boosting``: the ``positive`` query's matches, their scores multiplied by
``negative_boost`` where the ``negative`` query also matches.

Lucene builds it as ``FunctionScoreQuery.boostByQuery``; here it is the same function score:
one ``weight`` function filtered by ``negative`` (documents it misses keep a factor of 1),
multiplied into the positive score.
"""
from __future__ import annotations

from typing import Any, Callable

from ...errors import ParsingError
from .nodes import Query
from .parse_helpers import ParseState, float_option, is_value
from .score_nodes import FilterFunction, FunctionScore, Weight


def parse_boosting(body: dict[str, Any], st: ParseState,
                   parse: Callable[[Any, ParseState], Query]) -> Query:
    """``BoostingQueryBuilder.fromXContent``: its keys, checks and error texts."""
    positive: Query | None = None
    negative: Query | None = None
    negative_boost = -1.0
    boost = 1.0
    for key, value in body.items():
        if key in ("positive", "negative") and isinstance(value, dict):
            if key == "positive":
                positive = parse(value, st)
            else:
                negative = parse(value, st)
        elif key == "negative_boost" and is_value(value):
            negative_boost = float_option("boosting", key, value)
        elif key == "boost" and is_value(value):
            boost = float_option("boosting", key, value)
        elif key != "_name":
            raise ParsingError(f"[boosting] query does not support [{key}]")
    if positive is None:
        raise ParsingError("[boosting] query requires 'positive' query to be set'")
    if negative is None:
        raise ParsingError("[boosting] query requires 'negative' query to be set'")
    if negative_boost < 0:
        raise ParsingError("[boosting] query requires 'negative_boost' to be set to be a "
                           "positive value'")
    return FunctionScore(query=positive, boost=boost, score_mode="multiply",
                         boost_mode="multiply",
                         functions=(FilterFunction(function=Weight(), filter=negative,
                                                   weight=negative_boost),))
