"""The arithmetic of ``function_score``, vectorised over a segment's documents (float64, as
Elasticsearch computes functions in double and rounds the combined score to float).

Pure functions of arrays: field value factors and their modifiers, decay curves over
per-document distances, shard-invariant random scores, and the two combinations
(``score_mode`` across functions, ``boost_mode`` with the query's score). Each is O(values).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...errors import IllegalArgument

SCORE_MODES = ("multiply", "sum", "avg", "first", "max", "min")
BOOST_MODES = ("multiply", "replace", "sum", "avg", "max", "min")
MULTI_VALUE_MODES = ("min", "max", "avg", "sum")
DECAY_SHAPES = ("gauss", "exp", "linear")

MODIFIERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "none": lambda v: v,
    "log": np.log10,
    "log1p": lambda v: np.log10(v + 1.0),
    "log2p": lambda v: np.log10(v + 2.0),
    "ln": np.log,
    "ln1p": np.log1p,
    "ln2p": lambda v: np.log(v + 2.0),
    "square": np.square,
    "sqrt": np.sqrt,
    "reciprocal": lambda v: 1.0 / v,
}


def field_value_factor(values: np.ndarray, present: np.ndarray, field: str, factor: float,
                       modifier: str, missing: float | None) -> np.ndarray:
    """``modifier(factor * value)`` per document (``value`` = its smallest value, as Lucene's
    sorted doc values give first). Absent without ``missing`` and negative results are
    Elasticsearch's errors."""
    if not present.all():
        if missing is None:
            raise IllegalArgument(f"Missing value for field [{field}]")
        values = np.where(present, values, missing)
    values = values.astype(np.float64)
    with np.errstate(all="ignore"):
        result = MODIFIERS[modifier](values * factor)
    bad = np.flatnonzero(result < 0)
    if len(bad):
        i = int(bad[0])
        raise IllegalArgument("field value function must not produce negative scores, but "
                              f"got: [{_java_double(result[i])}] for field value: "
                              f"[{_java_double(values[i])}]")
    return np.asarray(result, dtype=np.float64)


def _java_double(v: Any) -> str:
    """A double as Java's ``Double.toString`` prints the common cases."""
    f = float(v)
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return repr(f)


def decay_distances(values: np.ndarray, value_docs: np.ndarray, n: int, origin: float,
                    offset: float, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """``(distance, present)`` per document: ``max(0, |value - origin| - offset)`` of each
    value, reduced by ``multi_value_mode``; 0 for documents without a value (score 1)."""
    dist = np.maximum(0.0, np.abs(values.astype(np.float64) - origin) - offset)
    docs = value_docs.astype(np.intp, copy=False)
    present = np.zeros(n, dtype=bool)
    present[docs] = True
    if mode == "min":
        out = np.full(n, np.inf)
        np.minimum.at(out, docs, dist)
    elif mode == "max":
        out = np.full(n, -np.inf)
        np.maximum.at(out, docs, dist)
    else:
        out = np.zeros(n)
        np.add.at(out, docs, dist)
        if mode == "avg":
            counts = np.bincount(docs, minlength=n)
            out = np.divide(out, counts, out=np.zeros(n), where=counts > 0)
    return np.where(present, out, 0.0), present


def decay_curve(shape: str, scale: float, decay: float, distance: np.ndarray) -> np.ndarray:
    """Elasticsearch's ``GaussDecayFunction`` / ``ExponentialDecayFunction`` /
    ``LinearDecayFunction``: the score is ``decay`` at ``distance == scale``."""
    if shape == "gauss":
        sigma2 = 0.5 * scale ** 2 / math.log(decay)
        return np.asarray(np.exp(0.5 * distance ** 2 / sigma2))
    if shape == "exp":
        return np.asarray(np.exp(math.log(decay) / scale * distance))
    s = scale / (1.0 - decay)
    return np.asarray(np.maximum(0.0, (s - distance) / s))


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def random_scores(keys: np.ndarray, seed: int) -> np.ndarray:
    """A value in [0, 1) per key (uint64: a document's hashed field value), from ``seed``:
    splitmix64's finaliser, 24 bits kept as Elasticsearch's ``RandomScoreFunction``. The same
    key and seed give the same value on any shard."""
    with np.errstate(over="ignore"):
        x = keys.astype(np.uint64) ^ (np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * _GOLDEN)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(40)).astype(np.float64) / float(1 << 24)


def combine_functions(parts: list[tuple[np.ndarray, np.ndarray, float]], mode: str,
                      n: int) -> np.ndarray:
    """``score_mode`` over the functions that apply to each document; ``parts`` are
    ``(applies, weight * value, weight)``. A document no function applies to gets 1; ``avg``
    is weighted (sum of values / sum of weights), as Elasticsearch's ``FunctionScoreQuery``."""
    if mode == "first":
        out = np.ones(n)
        done = np.zeros(n, dtype=bool)
        for applies, value, _ in parts:
            take = applies & ~done
            out[take] = value[take]
            done |= applies
        return out
    if mode == "multiply":
        out = np.ones(n)
        for applies, value, _ in parts:
            out = np.where(applies, out * value, out)
        return out
    total, weights = np.zeros(n), np.zeros(n)
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    for applies, value, weight in parts:
        total = np.where(applies, total + value, total)
        weights = np.where(applies, weights + weight, weights)
        low = np.where(applies, np.minimum(low, value), low)
        high = np.where(applies, np.maximum(high, value), high)
    any_applied = weights != 0
    chosen = {"sum": total, "min": low, "max": high}.get(mode)
    if chosen is None:
        chosen = np.divide(total, weights, out=np.ones(n), where=any_applied)
    return np.where(any_applied, chosen, 1.0)


def combine_boost(query: np.ndarray, func: np.ndarray, mode: str,
                  max_boost: float) -> np.ndarray:
    """``boost_mode``: the query's score with the functions' (capped at ``max_boost``), as
    Elasticsearch's ``CombineFunction``, rounded to float."""
    q = query.astype(np.float64)
    f = np.minimum(func, max_boost)
    out = {"multiply": lambda: q * f, "replace": lambda: f, "sum": lambda: q + f,
           "avg": lambda: (q + f) / 2.0, "max": lambda: np.maximum(q, f),
           "min": lambda: np.minimum(q, f)}[mode]()
    return np.asarray(out, dtype=np.float64).astype(np.float32)
