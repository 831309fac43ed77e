"""Query rescoring (``rescore``): re-rank the top ``window_size`` hits with a second query.

Elasticsearch rescores each shard's top ``window_size`` and merges; our rule is that scores
and pages do not depend on the shard count, so we rescore the *global* top ``window_size``:
every shard sends at least that many candidates, with the rescore queries' scores of each
(``engine/row_scores.py``, global statistics), and the coordinator combines and re-sorts the
window once. For one shard this is exactly Elasticsearch's answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.query.dsl import parse_query
from ..engine.query.nodes import Query
from ..engine.query.parse_helpers import token_name
from ..errors import IllegalArgument, ParsingError

SCORE_MODES = ("total", "multiply", "avg", "max", "min")
DEFAULT_WINDOW = 10


@dataclass(frozen=True)
class Rescorer:
    """One query rescorer (Elasticsearch's ``QueryRescorerBuilder``)."""

    query: Query
    window_size: int = DEFAULT_WINDOW
    query_weight: float = 1.0
    rescore_query_weight: float = 1.0
    score_mode: str = "total"


def parse_rescore(value: Any) -> tuple[Rescorer, ...]:
    """The body's ``rescore``: one rescorer or a list of them, applied in order."""
    if value is None:
        return ()
    entries = value if isinstance(value, list) else [value]
    return tuple(_parse_one(e) for e in entries)


def _parse_one(value: Any) -> Rescorer:
    if not isinstance(value, dict):
        raise ParsingError(f"rescore doesn't support values of type: {token_name(value)}")
    window = DEFAULT_WINDOW
    spec = None
    for k, v in value.items():
        if k == "window_size":
            if isinstance(v, bool) or not isinstance(v, int):
                raise ParsingError("[window_size] must be an integer")
            window = v
        elif k == "query":
            spec = v
        else:
            raise ParsingError(f"rescore doesn't support rescorer with name [{k}]")
    if window < 0:
        raise IllegalArgument(f"window_size must be greater than 0 but was [{window}]")
    if not isinstance(spec, dict) or "rescore_query" not in spec:
        raise ParsingError("missing rescore type")
    for k in spec:
        if k not in ("rescore_query", "query_weight", "rescore_query_weight", "score_mode"):
            raise ParsingError(f"[query] unknown field [{k}]")
    mode = spec.get("score_mode", "total")
    if mode not in SCORE_MODES:
        raise IllegalArgument(f"illegal score_mode [{mode}]")
    return Rescorer(parse_query(spec["rescore_query"]), window,
                    _weight(spec, "query_weight"), _weight(spec, "rescore_query_weight"), mode)


def _weight(spec: dict[str, Any], name: str) -> float:
    v = spec.get(name, 1.0)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ParsingError(f"[query] failed to parse field [{name}]")
    return float(v)


def combine(mode: str, primary: float, secondary: float) -> float:
    """Elasticsearch's ``QueryRescoreMode`` (both scores already weighted)."""
    if mode == "total":
        return primary + secondary
    if mode == "multiply":
        return primary * secondary
    if mode == "avg":
        return (primary + secondary) / 2
    if mode == "max":
        return max(primary, secondary)
    return min(primary, secondary)


def rescore_window(rescorers: tuple[Rescorer, ...], scores: list[float],
                   extra: list[list[float | None]]) -> tuple[list[int], list[float]]:
    """Apply the rescorers in order to entries already in the query's order.

    ``scores`` are the entries' scores; ``extra[j][i]`` rescorer j's query score of entry i
    (None: no match). Returns the new order (positions into the entries) and each position's
    new score. Ties keep the earlier order (which is the global total order)."""
    positions = list(range(len(scores)))
    current = [float(s) for s in scores]
    for j, r in enumerate(rescorers):
        window = positions[:r.window_size]
        rest = positions[r.window_size:]
        for p in window:
            s = extra[j][p]
            primary = current[p] * r.query_weight
            current[p] = primary if s is None else \
                combine(r.score_mode, primary, s * r.rescore_query_weight)
        window.sort(key=lambda p: -current[p])   # stable: ties keep the previous order
        positions = window + rest
    return positions, [current[p] for p in positions]


def rescore_errors(rescorers: tuple[Rescorer, ...], sorted_by_fields: bool) -> list[str]:
    """What Elasticsearch refuses with a rescore."""
    if rescorers and sorted_by_fields:
        return ["Cannot use [sort] option in conjunction with [rescore]."]
    return []
