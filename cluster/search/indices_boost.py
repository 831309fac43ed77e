"""``indices_boost``: multiply the scores of one index's documents (Elasticsearch's
``SearchSourceBuilder.indexBoosts``).

Both of Elasticsearch's shapes are read: the list ``[{"index": boost}, ...]`` and the older
object ``{"index": boost}``. Names may be patterns; an index takes the boost of the first entry
that names it. The boost wraps the index's query (a ``bool`` with that boost), so explain
and every score the shards report include it.
"""
from __future__ import annotations

import fnmatch
from typing import Any

from ..engine.query.nodes import Bool, Query
from ..engine.query.parse_helpers import token_name
from ..errors import IllegalArgument, ParsingError


def parse_indices_boost(value: Any) -> tuple[tuple[str, float], ...]:
    """``(index pattern, boost)`` pairs in the request's order."""
    if value is None:
        return ()
    if isinstance(value, dict):
        entries = [{k: v} for k, v in value.items()]
    elif isinstance(value, list):
        entries = value
    else:
        raise ParsingError(f"Expected [START_ARRAY] in [indices_boost] but found "
                           f"[{token_name(value)}]")
    out = []
    for e in entries:
        if not isinstance(e, dict) or len(e) != 1:
            raise ParsingError("Expected [START_OBJECT] in [indices_boost] with one index "
                               "name and its boost")
        (name, boost), = e.items()
        if isinstance(boost, bool) or not isinstance(boost, (int, float)):
            raise IllegalArgument(f"Expected [VALUE_NUMBER] in [indices_boost] but found "
                                  f"[{token_name(boost)}]")
        out.append((str(name), float(boost)))
    return tuple(out)


def index_boost(boosts: tuple[tuple[str, float], ...], index: str,
                aliases: tuple[str, ...] = ()) -> float:
    """The boost of ``index`` (1.0 when no entry names it, its aliases or a pattern of them)."""
    for pattern, boost in boosts:
        for name in (index,) + aliases:
            if name == pattern or fnmatch.fnmatchcase(name, pattern):
                return boost
    return 1.0


def boosted(query: Query, boost: float) -> Query:
    """``query`` with its scores multiplied by ``boost``."""
    return query if boost == 1.0 else Bool(must=(query,), boost=boost)
