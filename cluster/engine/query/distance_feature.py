"""``distance_feature`` on ``date`` and ``date_nanos`` fields: documents with a value score
``boost * pivot / (pivot + |value - origin|)`` (Lucene's ``LongDistanceFeatureQuery``; of
several values, the closest to the origin counts). A document's score depends only on its own
values, so it is the same for 1 and N shards. ``geo_point`` fields are not supported.
"""
from __future__ import annotations

import time

import numpy as np

from ...errors import IllegalArgument
from ...values import parse_time_ms
from ..segment import NumericField, Segment
from .context import Context
from .field_values import date_bound
from .score_nodes import DistanceFeature


def parameters(q: DistanceFeature, ctx: Context) -> tuple[float, float] | None:
    """``(origin, pivot)`` in the field's stored unit; None for an unmapped field (matches
    nothing, as Elasticsearch)."""
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return None
    if ft.type == "geo_point":
        raise IllegalArgument(f"[distance_feature] on [geo_point] field [{q.field}] is not "
                              "supported by this server (date and date_nanos fields are)")
    if ft.kind != "date":
        raise IllegalArgument(f"Illegal data type of [{ft.type}]! [distance_feature] query can "
                              "only be run on a date, date_nanos or geo_point field type!")
    now = ctx.now_ms if ctx.now_ms is not None else int(time.time() * 1000)
    # Elasticsearch parses the origin rounding up (``2024-05-15`` is its last millisecond)
    origin = date_bound(ft, q.origin, True, None, None,
                        Context(mapping=ctx.mapping, stats=None, now_ms=now))
    unit = 1_000_000 if ft.type == "date_nanos" else 1
    pivot = parse_time_ms(q.pivot, "pivot") * unit
    if not pivot > 0:
        raise IllegalArgument("pivotDistance must be > 0, got " + str(int(pivot)))
    return float(origin), pivot


def distances(q: DistanceFeature, seg: Segment, origin: float) -> tuple[np.ndarray, np.ndarray]:
    """``(present, distance)`` per document: the smallest distance of its values."""
    fd = seg.fields.get(q.field)
    present = np.zeros(seg.n, dtype=bool)
    dist = np.full(seg.n, np.inf)
    if isinstance(fd, NumericField) and len(fd.values):
        docs = fd.value_docs.astype(np.intp, copy=False)
        np.minimum.at(dist, docs, np.abs(fd.values.astype(np.float64) - origin))
        present[docs] = True
    return present, dist


def evaluate_distance_feature(q: DistanceFeature, seg: Segment,
                              ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` over the segment (float scores, as Lucene computes in double)."""
    params = parameters(q, ctx)
    if params is None:
        return np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=np.float32)
    origin, pivot = params
    present, dist = distances(q, seg, origin)
    scores = np.zeros(seg.n, dtype=np.float32)
    scores[present] = (q.boost * (pivot / (pivot + dist[present]))).astype(np.float32)
    return present, scores


def check_required(body: dict[str, object]) -> None:
    """``DistanceFeatureQueryBuilder``'s parser: ``field``, ``origin`` and ``pivot`` are
    required."""
    missing = [k for k in ("field", "origin", "pivot") if k not in body]
    if missing:
        raise IllegalArgument(f"Required [{', '.join(missing)}]")
