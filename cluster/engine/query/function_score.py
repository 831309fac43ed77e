"""Evaluate ``function_score`` and ``script_score`` over one segment (``score_nodes.py``).

The inner query gives the mask and the query score; each function runs over the documents it
applies to only (the query's matches that its filter matches), vectorised over the segment's
columns (``score_functions.py``), except scripts, which run once per matching document within
the script budget and under :data:`MAX_SCRIPT_DOCS` per segment. Global statistics reach the
inner query as usual, and every function reads only the document's own values, so scores are
the same for 1 and N shards.
"""
from __future__ import annotations

import time
import zlib
from typing import Any, Callable

import numpy as np

from ...errors import IllegalArgument, ParsingError
from ...values import parse_time_ms
from ..script.errors import ScriptFault, script_error
from ..segment import KeywordField, NumericField, Segment
from . import nodes as Q
from . import score_functions as F
from . import score_nodes as S
from .context import Context
from .distance_feature import evaluate_distance_feature
from .field_values import date_bound
from .script_docs import SegmentDocs

Evaluate = Callable[[Q.Query, Segment, Context], tuple[np.ndarray, np.ndarray]]

#: the most documents of one segment a scoring script runs on (a 400 above it, not a long run)
MAX_SCRIPT_DOCS = 100_000


def evaluate_function_score(q: S.FunctionScore, seg: Segment, ctx: Context,
                            evaluate: Evaluate) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)``: the query's matches, scored by ``boost_mode(query score * boost,
    score_mode(functions))``, less those under ``min_score``. The boost scales the inner
    query's score, not the result (Lucene's ``BoostQuery`` hands its boost to the weight of
    ``FunctionScoreQuery``, which passes it to the inner query): with ``boost_mode: replace``
    it has no effect, as in Elasticsearch."""
    mask, qscores = evaluate(q.query, seg, ctx)
    if q.boost != 1.0:   # Lucene passes the BoostQuery's boost down to the inner query
        qscores = (qscores * np.float32(q.boost)).astype(np.float32)
    docs = np.flatnonzero(mask)
    parts = []
    for ff in q.functions:
        ctx.cancel.check()
        applies = np.ones(len(docs), dtype=bool) if isinstance(ff.filter, Q.MatchAll) \
            else evaluate(ff.filter, seg, ctx)[0][docs]
        weight = 1.0 if ff.weight is None else ff.weight
        value = np.ones(len(docs))
        sub = docs[applies]
        value[applies] = function_values(ff.function, seg, sub, qscores[sub], ctx) * weight
        parts.append((applies, value, weight))
    factor = F.combine_functions(parts, q.score_mode, len(docs))
    final = F.combine_boost(qscores[docs], factor, q.boost_mode, q.max_boost)
    bad = np.flatnonzero(~(final >= 0))
    if len(bad):
        raise IllegalArgument("function score query returned an invalid score: "
                              f"{_java_float(final[bad[0]])} for doc: {int(docs[bad[0]])}")
    return _finish(seg.n, docs, final, q.min_score)


def evaluate_script_score(q: S.ScriptScore, seg: Segment, ctx: Context,
                          evaluate: Evaluate) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)``: the script's value times ``boost`` for each of the query's matches,
    less those under ``min_score`` (compared with the boosted value, as ``ScriptScoreQuery``)."""
    mask, qscores = evaluate(q.query, seg, ctx)
    docs = np.flatnonzero(mask)
    values = script_values(q.script, seg, docs, qscores[docs], ctx, "script_score query")
    final = values.astype(np.float32)
    if q.boost != 1.0:
        final = (final * np.float32(q.boost)).astype(np.float32)
    return _finish(seg.n, docs, final, q.min_score)


def _finish(n: int, docs: np.ndarray, final: np.ndarray,
            min_score: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The segment-wide mask and scores of the documents at or above ``min_score``."""
    if min_score is not None:
        keep = final >= np.float32(min_score)
        docs, final = docs[keep], final[keep]
    mask = np.zeros(n, dtype=bool)
    mask[docs] = True
    scores = np.zeros(n, dtype=np.float32)
    scores[docs] = final
    return mask, scores


def _java_float(v: Any) -> str:
    f = float(v)
    return "NaN" if f != f else repr(f)


def function_values(fn: S.ScoreFn, seg: Segment, docs: np.ndarray, qscores: np.ndarray,
                    ctx: Context) -> np.ndarray:
    """The unweighted value of one function for documents ``docs`` (float64)."""
    if isinstance(fn, S.Weight):
        return np.ones(len(docs))
    if isinstance(fn, S.FieldValueFactor):
        return _field_value_factor(fn, seg, docs, ctx)
    if isinstance(fn, S.Decay):
        return _decay(fn, seg, docs, ctx)
    if isinstance(fn, S.RandomScore):
        return F.random_scores(_random_keys(fn.field, seg, docs, ctx), fn.seed)
    values = script_values(fn.script, seg, docs, qscores, ctx, "script score function")
    return values


def _field_value_factor(fn: S.FieldValueFactor, seg: Segment, docs: np.ndarray,
                        ctx: Context) -> np.ndarray:
    ft = ctx.mapping.get(fn.field)
    if ft is None:
        if fn.missing is None:
            raise IllegalArgument(f"Unable to find a field mapper for field [{fn.field}]. No "
                                  "'missing' value defined.")
        values, present = np.zeros(len(docs)), np.zeros(len(docs), dtype=bool)
    elif ft.kind not in ("numeric", "date", "boolean"):
        raise IllegalArgument(f"field [{fn.field}] is of type [{ft.type}], but only numeric "
                              "types are supported.")
    else:
        fd = seg.fields.get(fn.field)
        if isinstance(fd, NumericField):
            values, present = fd.min[docs], fd.present[docs]
        else:
            values, present = np.zeros(len(docs)), np.zeros(len(docs), dtype=bool)
    return F.field_value_factor(values, present, fn.field, fn.factor, fn.modifier, fn.missing)


def decay_parameters(fn: S.Decay, ctx: Context) -> tuple[float, float, float]:
    """``(origin, scale, offset)`` in the field's value space: numbers, or for dates the
    stored unit (date math for the origin, ``now`` by default; time units for the others)."""
    ft = ctx.mapping.get(fn.field)
    if ft is None:
        raise ParsingError(f"unknown field [{fn.field}]", es_type="parse_exception")
    if ft.kind == "date":
        now = ctx.now_ms if ctx.now_ms is not None else int(time.time() * 1000)
        unit = 1_000_000 if ft.type == "date_nanos" else 1
        origin = date_bound(ft, "now" if fn.origin is None else fn.origin, False, None, None,
                            Context(mapping=ctx.mapping, stats=None, now_ms=now))
        scale = parse_time_ms(fn.scale, f"{fn.field}.scale") * unit
        offset = parse_time_ms(fn.offset, f"{fn.field}.offset") * unit
        return float(origin), scale, offset
    if ft.type == "geo_point":
        raise IllegalArgument(f"[{fn.shape}] decay on [geo_point] field [{fn.field}] is not "
                              "supported by this server (numeric and date fields are)")
    if ft.kind != "numeric":
        raise IllegalArgument(f"field [{fn.field}] is of type [{ft.type}], but only numeric "
                              "types are supported.")
    if fn.origin is None:
        raise ParsingError("both [scale] and [origin] must be set for numeric fields.",
                           es_type="parse_exception")
    try:
        return float(fn.origin), float(fn.scale), float(fn.offset)
    except (TypeError, ValueError):
        raise ParsingError(f"failed to parse [{fn.shape}] score function: origin, scale and "
                           f"offset of numeric field [{fn.field}] must be numbers",
                           es_type="parse_exception") from None


def _decay(fn: S.Decay, seg: Segment, docs: np.ndarray, ctx: Context) -> np.ndarray:
    origin, scale, offset = decay_parameters(fn, ctx)
    if not scale > 0:
        raise IllegalArgument("[scale] must be greater than 0.")
    fd = seg.fields.get(fn.field)
    if not isinstance(fd, NumericField):
        return np.ones(len(docs))
    dist, _ = F.decay_distances(fd.values, fd.value_docs, seg.n, origin, offset,
                                fn.multi_value_mode)
    return F.decay_curve(fn.shape, scale, fn.decay, dist[docs])


def _random_keys(field: str, seg: Segment, docs: np.ndarray, ctx: Context) -> np.ndarray:
    """A uint64 key per document from the value of ``field`` (``_id`` by default): the crc32
    of its text, or a number's bits. A document without a value has key 0."""
    if field == "_id":
        return _crc(seg.ids[docs].tolist())
    if field == "_seq_no":    # one sequence per index, assigned by the coordinator
        return seg.seq[docs].astype(np.uint64)
    ft = ctx.mapping.get(field)
    fd = seg.fields.get(field)
    if ft is None or ft.kind == "text":
        raise IllegalArgument(f"field [{field}] of [random_score] must be a mapped field with "
                              "doc values (keyword, numeric, date or boolean)")
    if isinstance(fd, NumericField):
        bits = fd.min[docs].astype(np.float64).view(np.uint64)
        return np.where(fd.present[docs], bits, np.uint64(0))
    if isinstance(fd, KeywordField):
        ords = fd.min_ord[docs]
        terms = fd.postings.term_list
        return _crc([terms[o] if o >= 0 else "" for o in ords.tolist()])
    return np.zeros(len(docs), dtype=np.uint64)


def _crc(texts: list[str]) -> np.ndarray:
    return np.fromiter((zlib.crc32(t.encode()) for t in texts), dtype=np.uint64,
                       count=len(texts))


def script_values(script: Any, seg: Segment, docs: np.ndarray, qscores: np.ndarray,
                  ctx: Context, what: str) -> np.ndarray:
    """The script's value for each of ``docs`` (``_score`` = the inner query's score), each run
    within the script budget; at most :data:`MAX_SCRIPT_DOCS` documents per segment."""
    if len(docs) > MAX_SCRIPT_DOCS:
        raise IllegalArgument(f"[{what}] would run its script on [{len(docs)}] documents of one "
                              f"segment, more than this server's limit of [{MAX_SCRIPT_DOCS}]; "
                              "narrow its query")
    lookup = SegmentDocs(seg, ctx.mapping)
    out = np.empty(len(docs))
    scores = qscores.tolist()
    for i, d in enumerate(docs.tolist()):
        ctx.cancel.tick()
        value = _number(script.run({"doc": lookup.doc(d), "_score": scores[i]}, ctx.cancel),
                        script.source)
        if not value >= 0:
            raise IllegalArgument(_negative(what, value, d))
        out[i] = value
    return out


def _negative(what: str, value: float, doc: int) -> str:
    """Elasticsearch's texts: ``ScriptScoreQuery`` and ``ScriptScoreFunction``."""
    if what == "script_score query":
        return (f"script_score script returned an invalid score [{_java_float(value)}] for doc "
                f"[{doc}]. Must be a non-negative score!")
    return f"script score function must not produce negative scores, but got: [{value}]"


def _number(value: Any, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise script_error(source, ScriptFault(
            "class_cast_exception", "Cannot cast the script's value to double: a score "
            "script must return a number", 0, len(source)), compile_time=False)
    return float(value)


def _unresolved_lookup(q: Any, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    raise ParsingError("[terms] lookups are resolved in a search's [query], [post_filter] and "
                       "aggregation filters only; this one is in a place this server does not "
                       "resolve them")


def evaluators(evaluate: Evaluate) -> dict[type, Any]:
    """The evaluators of the scoring nodes, for the dispatch table of ``matching.py``."""
    return {
        S.FunctionScore: lambda q, seg, ctx: evaluate_function_score(q, seg, ctx, evaluate),
        S.ScriptScore: lambda q, seg, ctx: evaluate_script_score(q, seg, ctx, evaluate),
        S.DistanceFeature: evaluate_distance_feature,
        S.TermsLookup: _unresolved_lookup,
    }
