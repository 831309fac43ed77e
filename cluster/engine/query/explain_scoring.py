"""``explain`` for ``function_score`` and ``script_score``: Lucene's explanation trees as
Elasticsearch builds them (``FunctionScoreQuery.explain``, ``CombineFunction.explain``, each
function's ``explainScore``, ``ScriptScoreQuery.explain``). Values are recomputed with the same
code as the scores (``function_score.py``), so the top value is the hit's ``_score``.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..script.javavalues import to_string
from ..segment import NumericField

from ..segment import Segment
from . import nodes as Q
from . import score_functions as F
from . import score_nodes as S
from .context import Context
from .distance_feature import distances, parameters
from .function_score import decay_parameters, function_values

Explanation = dict[str, Any]
Explain = Callable[[Q.Query, Segment, int, Context], Explanation]


def _x(value: Any, description: str, details: list[Explanation] | None = None) -> Explanation:
    return {"value": float(np.float32(value)), "description": description,
            "details": details or []}


def _java_float(v: float) -> str:
    return repr(float(np.float32(v)))


def explain_function_score(q: S.FunctionScore, seg: Segment, doc: int, ctx: Context,
                           explain: Explain, describe: Callable[[Q.Query], str],
                           evaluate: Any) -> Explanation:
    """The query's explanation (boosted as Lucene hands the boost down), the functions that
    apply with their filters, the ``score_mode`` combination, then the ``boost_mode`` one."""
    query_x = explain(q.query, seg, doc, ctx)
    if q.boost != 1.0:
        query_x = _x(np.float32(query_x["value"]) * np.float32(q.boost), "product of:",
                     [query_x, _x(q.boost, "boost")])
    qv = float(query_x["value"])
    parts, details = [], []
    docs = np.array([doc])
    for ff in q.functions:
        if not isinstance(ff.filter, Q.MatchAll) and not evaluate(ff.filter, seg, ctx)[0][doc]:
            continue
        raw = float(function_values(ff.function, seg, docs, np.array([qv]), ctx)[0])
        fx = _function_explanation(ff.function, raw, qv, seg, doc, ctx)
        weight = 1.0 if ff.weight is None else ff.weight
        if ff.weight is not None:
            fx = _x(np.float32(raw) * np.float32(weight), "product of:",
                    [fx, _x(weight, "weight")])
        parts.append((np.array([True]), np.array([raw * weight]), weight))
        if not isinstance(ff.filter, Q.MatchAll):   # a filtered function shows its filter
            fx = _x(raw * weight, "function score, product of:",
                    [_x(1.0, f"match filter: {describe(ff.filter)}"), fx])
        details.append(fx)
    if details:
        factor = float(F.combine_functions(parts, q.score_mode, 1)[0])
        factor_x = _x(factor, f"function score, score mode [{q.score_mode}]", details)
    else:
        factor_x = _x(1.0, "No function matched")
    return _combine_explanation(query_x, factor_x, q.boost_mode, q.max_boost)


def _combine_explanation(query_x: Explanation, func_x: Explanation, mode: str,
                         max_boost: float) -> Explanation:
    """``CombineFunction.explain`` of each ``boost_mode``."""
    capped = min(func_x["value"], max_boost)
    min_x = _x(capped, "min of:", [func_x, _x(max_boost, "maxBoost")])
    value = float(F.combine_boost(np.array([query_x["value"]], dtype=np.float32),
                                  np.array([func_x["value"]]), mode, max_boost)[0])
    if mode == "replace":
        return min_x
    description = {"multiply": "function score, product of:", "sum": "sum of",
                   "avg": "avg of", "min": "min of", "max": "max of:"}[mode]
    return _x(value, description, [query_x, min_x])


def _function_explanation(fn: S.ScoreFn, value: float, qv: float, seg: Segment, doc: int,
                          ctx: Context) -> Explanation:
    """One function's ``explainScore`` (its unweighted value)."""
    if isinstance(fn, S.Weight):
        return _x(1.0, "constant score 1.0 - no function provided")
    if isinstance(fn, S.FieldValueFactor):
        modifier = "" if fn.modifier == "none" else fn.modifier
        missing = "" if fn.missing is None else f"?:{fn.missing}"
        return _x(value, f"field value function: {modifier}(doc['{fn.field}'].value{missing} "
                         f"* factor={_java_float(fn.factor)})")
    if isinstance(fn, S.Decay):
        return _x(value, f"Function for field {fn.field}:",
                  [_x(value, _decay_formula(fn, seg, doc, ctx))])
    if isinstance(fn, S.RandomScore):
        return _x(value, f"random score function (seed: {fn.seed}, field: {fn.field})")
    return _x(value, f"script score function, computed with script:\"{_script(fn.script)}\"",
              [_x(qv, "_score: ")])


def _decay_formula(fn: S.Decay, seg: Segment, doc: int, ctx: Context) -> str:
    """``DecayFunction.explainFunction`` over ``getDistanceString``: the formula with the
    document's values, its origin and offset, and the processed scale."""
    origin, scale, offset = decay_parameters(fn, ctx)
    fd = seg.fields.get(fn.field)
    values: list[float] = []
    if isinstance(fd, NumericField):
        values = fd.values[fd.value_docs == doc].astype(np.float64).tolist()
    terms = ", ".join(f"Math.max(Math.abs({to_string(v)}(=doc value) - {to_string(origin)}"
                      f"(=origin))) - {to_string(offset)}(=offset), 0)" for v in values)
    distance = f"{fn.multi_value_mode.upper()}[{terms or '0.0'}]"   # no value: distance 0
    if fn.shape == "gauss":
        sigma = 0.5 * scale ** 2 / math.log(fn.decay)
        return f"exp(-0.5*pow({distance},2.0)/{to_string(-sigma)})"
    if fn.shape == "exp":
        return f"exp(- {distance} * {to_string(-math.log(fn.decay) / scale)})"
    s = scale / (1.0 - fn.decay)
    return f"max(0.0, (({to_string(s)} - {distance})/{to_string(s)})"


def _script(compiled: Any) -> str:
    """A script as Elasticsearch's ``Script.toString`` prints it."""
    return (f"Script{{type=inline, lang='painless', idOrCode='{compiled.source}', "
            f"options={{}}, params={to_string(compiled.params)}}}")


def explain_script_score(q: S.ScriptScore, seg: Segment, doc: int, ctx: Context,
                         explain: Explain, value: float) -> Explanation:
    """``ScriptScoreQuery.explain`` for a script without its own explanation: the script's
    value over the inner query's explanation, times the boost."""
    inner = explain(q.query, seg, doc, ctx)
    unboosted = float(np.float32(value) / np.float32(q.boost)) if q.boost != 1.0 else value
    script_x = _x(unboosted, f"script score function, computed with script:\""
                             f"{_script(q.script)}\"", [_x(inner["value"], "_score: ", [inner])])
    if q.boost == 1.0:
        return script_x
    return _x(value, "Boosted score, product of:", [_x(q.boost, "boost"), script_x])


def explain_distance_feature(q: S.DistanceFeature, seg: Segment, doc: int, ctx: Context,
                             value: float) -> Explanation:
    """Lucene's ``LongDistanceFeatureQuery`` explanation."""
    params = parameters(q, ctx)
    assert params is not None
    origin, pivot = params
    _, dist = distances(q, seg, origin)
    fd = seg.fields.get(q.field)
    assert isinstance(fd, NumericField)
    mine = fd.values[fd.value_docs == doc]
    closest = int(mine[np.argmin(np.abs(mine.astype(np.float64) - origin))])
    return _x(value, "Distance score, computed as weight * pivotDistance / (pivotDistance + "
                     "abs(value - origin)) from:",
              [_x(q.boost, "weight"), {"value": int(pivot), "description": "pivotDistance",
                                      "details": []},
               {"value": int(origin), "description": "origin", "details": []},
               {"value": closest, "description": "current value", "details": []}])
