"""Query nodes that compute their own scores: ``function_score`` and ``script_score``.

Kept apart from ``nodes.py`` (the matching queries): these wrap an inner query and replace or
combine its score with functions of the document's doc values (``score_functions.py``
computes them, ``function_score.py`` evaluates the nodes over a segment).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .nodes import MatchAll, Query

#: ``max_boost``'s default: Java's ``Float.MAX_VALUE``
FLOAT_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class FieldValueFactor:
    """``field_value_factor``: ``modifier(factor * value)``, ``missing`` when absent."""

    field: str
    factor: float = 1.0
    modifier: str = "none"
    missing: float | None = None


@dataclass(frozen=True)
class Decay:
    """``gauss`` / ``exp`` / ``linear`` around ``origin`` on a numeric or date field. Origin,
    scale and offset stay as sent: a date field reads them with date math and time units."""

    shape: str
    field: str
    origin: Any = None
    scale: Any = None
    offset: Any = 0
    decay: float = 0.5
    multi_value_mode: str = "min"


@dataclass(frozen=True)
class RandomScore:
    """``random_score``: a hash of ``seed`` and the document's ``field`` value (``_id`` when
    no field), in [0, 1): the same for a document whatever shard holds it."""

    seed: int = 0
    field: str = "_id"


@dataclass(frozen=True)
class ScriptFunction:
    """``script_score`` as a function (inside ``function_score``): the script's value."""

    script: Any = None          # a compiled script (``engine.script.Compiled``)


@dataclass(frozen=True)
class Weight:
    """A function that is only its weight (``{"weight": 2}``)."""


ScoreFn = FieldValueFactor | Decay | RandomScore | ScriptFunction | Weight


@dataclass(frozen=True)
class FilterFunction:
    """One entry of ``functions``: applies to the documents ``filter`` matches; its value is
    ``weight * function`` (weight 1 when not given)."""

    function: ScoreFn
    filter: Query = field(default_factory=MatchAll)
    weight: float | None = None


@dataclass(frozen=True)
class FunctionScore(Query):
    query: Query = field(default_factory=MatchAll)
    functions: tuple[FilterFunction, ...] = ()
    score_mode: str = "multiply"
    boost_mode: str = "multiply"
    max_boost: float = FLOAT_MAX
    min_score: float | None = None


@dataclass(frozen=True)
class ScriptScore(Query):
    """``script_score``: the script's value replaces the inner query's score."""

    query: Query = field(default_factory=MatchAll)
    script: Any = None
    min_score: float | None = None


@dataclass(frozen=True)
class DistanceFeature(Query):
    """``distance_feature`` on a date field: ``boost * pivot / (pivot + distance)`` from
    ``origin`` for the documents with a value (the closest of several)."""

    field: str = ""
    origin: Any = None
    pivot: Any = None


@dataclass(frozen=True)
class TermsLookup(Query):
    """``terms`` with a document lookup: the values at ``path`` of document ``id`` in
    ``index``. The coordinator replaces it by a plain ``terms`` before the query goes to the
    shards (``search/terms_lookup.py``); a shard never evaluates one."""

    field: str = ""
    index: str = ""
    id: str = ""
    path: str = ""
    routing: str | None = None


def filters_by_score(q: Any) -> bool:
    """Whether which documents match ``q`` depends on scores (a ``function_score`` or
    ``script_score`` with ``min_score`` anywhere in it): such a search needs the global
    statistics even when nothing is sorted by score."""
    if isinstance(q, (FunctionScore, ScriptScore)) and q.min_score is not None:
        return True
    if isinstance(q, FilterFunction):
        return filters_by_score(q.filter)
    if not isinstance(q, Query):
        return False
    for name in q.__dataclass_fields__:
        v = getattr(q, name)
        items = v if isinstance(v, tuple) else (v,)
        if any(isinstance(x, (Query, FilterFunction)) and filters_by_score(x) for x in items):
            return True
    return False
