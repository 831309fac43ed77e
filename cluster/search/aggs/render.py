"""The ``aggregations`` section of a search response, in Elasticsearch's shapes.

Reads the reduced, owner-indexed results (``reduce.py``) from the top owner down; this is the
only place that cuts (``size``, ``min_doc_count``), orders and fills empty buckets, so the cut
sees every shard's counts. Honours ``typed_keys``, ``keyed``, ``format`` and ``meta``, and
``search.max_buckets`` (counted over the buckets rendered).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine.aggs.parse import PIPELINE_TYPES, AggNode, AggRequest
from ...engine.aggs.sketches import mad_of_digest
from ...engine.numformat import java_double
from ...errors import SearchError
from .buckets import render_fixed, render_keyed
from .pipeline import run_siblings
from .reduce import Result, reduce_aggs

DEFAULT_MAX_BUCKETS = 65_536
TYPED = {"avg": "avg", "sum": "sum", "min": "min", "max": "max", "stats": "stats",
         "extended_stats": "extended_stats", "value_count": "value_count",
         "cardinality": "cardinality", "weighted_avg": "weighted_avg",
         "histogram": "histogram", "date_histogram": "date_histogram", "range": "range",
         "date_range": "date_range", "ip_range": "ip_range", "filter": "filter", "filters": "filters",
         "missing": "missing", "global": "global", "composite": "composite",
         "nested": "nested", "reverse_nested": "reverse_nested",
         "top_hits": "top_hits", "percentiles": "tdigest_percentiles", "percentile_ranks": "tdigest_percentile_ranks",
         "median_absolute_deviation": "median_absolute_deviation",
         **{k: k for k in ("geo_distance", "geohash_grid", "geotile_grid", "geo_bounds",
                           "geo_centroid")}}


class TooManyBuckets(SearchError):
    es_type = "too_many_buckets_exception"
    status = 400


@dataclass
class RenderContext:
    """What rendering needs besides the results: the searched indices' mappings (for date
    formats and ranges), ``typed_keys`` and the bucket budget."""

    mappings: list[Any]
    typed_keys: bool = False
    max_buckets: int = DEFAULT_MAX_BUCKETS
    buckets: int = 0
    # bucket rendering (``buckets.py``) recurses into sub-aggregations through these two, so it
    # needs no import of this module back
    render_level: Any = None
    metric_value: Any = None

    def __post_init__(self) -> None:
        self.render_level = self.render_level or render_level
        self.metric_value = self.metric_value or metric_value

    def field_type(self, name: str | None) -> Any:
        for m in self.mappings:
            ft = m.get(name) if name else None
            if ft is not None:
                return ft
        return None

    def spend(self, n: int) -> None:
        self.buckets += n
        if self.buckets > self.max_buckets:
            raise TooManyBuckets(
                "Trying to create too many buckets. Must be less than or equal to: "
                f"[{self.max_buckets}] but was [{self.buckets}]. This limit can be set by "
                "changing the [search.max_buckets] cluster level setting.",
                extra={"max_buckets": self.max_buckets})


def aggregations_response(req: AggRequest, partials: list[dict[str, Any]], mappings: list[Any],
                          typed_keys: bool = False, max_buckets: int = DEFAULT_MAX_BUCKETS
                          ) -> dict[str, Any]:
    """Reduce the shards' partials and render them (the response's ``aggregations``)."""
    reduced = reduce_aggs(req.nodes, partials)
    ctx = RenderContext(mappings, typed_keys, max_buckets)
    return render_level(req.nodes, reduced, 0, ctx)


def render_level(nodes: tuple[AggNode, ...], results: dict[str, Result], owner: int | None,
                 ctx: RenderContext) -> dict[str, Any]:
    """Sibling aggregations of one bucket (``owner`` None: an empty bucket made up to fill a
    histogram gap — every count is zero)."""
    out: dict[str, Any] = {}
    for node in nodes:
        if node.type in PIPELINE_TYPES:
            continue
        res = results.get(node.name)
        body = render_one(node, res, owner, ctx)
        if node.meta is not None:
            body["meta"] = node.meta
        out[type_name(node, res) + "#" + node.name if ctx.typed_keys else node.name] = body
    run_siblings(nodes, out, ctx.typed_keys)
    return out


def type_name(node: AggNode, res: Result | None) -> str:
    if node.type == "terms":
        kind = res.value_kind if res is not None else "unmapped"
        return {"long": "lterms", "date": "lterms", "boolean": "lterms",
                "double": "dterms"}.get(kind, "sterms")
    return TYPED[node.type]


def render_one(node: AggNode, res: Result | None, owner: int | None, ctx: RenderContext
               ) -> dict[str, Any]:
    if node.type in ("terms", "histogram", "date_histogram"):
        return render_keyed(node, res, owner, ctx)
    if node.type == "composite":
        from .composite import render_composite
        return render_composite(node, res, owner, ctx)
    if node.type in ("range", "date_range", "ip_range", "filter", "filters", "missing",
                     "global", "nested", "reverse_nested"):
        return render_fixed(node, res, owner, ctx)
    if node.type in ("percentiles", "percentile_ranks"):
        return render_percentiles(node, res, owner, ctx)
    if node.type.startswith("geo"):
        from .geo import render_geo
        return render_geo(node, res, owner, ctx)
    if node.type == "median_absolute_deviation":
        return render_mad(node, res, owner, ctx)
    if node.type == "top_hits":
        from .tophits import render_top_hits
        return render_top_hits(node, res, owner)
    if node.type == "cardinality":
        n = 0 if res is None or owner is None or res.distinct is None \
            else int(res.distinct[owner])
        return {"value": n}
    return render_stats(node, res, owner, ctx)


def stat_values(node: AggNode, res: Result | None, owner: int | None) -> dict[str, Any]:
    """count, sum, min, max, avg (and sum of squares) of one owner as Python numbers."""
    st = res.stats if res is not None else None
    if st is None or owner is None:
        return {"count": 0, "sum": 0.0, "min": None, "max": None, "avg": None, "sumsq": 0.0}
    count = st.count[owner].item()
    total = float(st.sum[owner])
    return {"count": count, "sum": total,
            "min": float(st.min[owner]) if count else None,
            "max": float(st.max[owner]) if count else None,
            "avg": total / count if count else None, "sumsq": float(st.sumsq[owner])}


def metric_value(node: AggNode, res: Result | None, owner: int | None, prop: str | None
                 ) -> float | None:
    """The single value (or named property) of a metric, for ordering buckets by it."""
    if node.type == "cardinality":
        return float(render_one(node, res, owner, RenderContext([]))["value"])
    v = stat_values(node, res, owner)
    if prop is None:
        prop = {"avg": "avg", "sum": "sum", "min": "min", "max": "max", "value_count": "count",
                "weighted_avg": "avg"}.get(node.type)
        if prop is None:
            raise SearchError(f"buckets_path must reference either a number value or a single "
                              f"value numeric metric aggregation, but [{node.name}] contains "
                              "multiple values. Please specify which to use.",
                              es_type="aggregation_execution_exception", status=400)
    if prop in ("value", "count") and node.type == "value_count":
        return float(v["count"])
    if prop == "value":
        prop = {"avg": "avg", "sum": "sum", "min": "min", "max": "max",
                "weighted_avg": "avg"}[node.type]
    if prop in ("std_deviation", "variance"):
        return _extended(v).get(prop)
    return v.get(prop)


def render_stats(node: AggNode, res: Result | None, owner: int | None, ctx: RenderContext
                 ) -> dict[str, Any]:
    v = stat_values(node, res, owner)
    fmt = _Formatter(node, res, ctx)
    if node.type == "value_count":
        out: dict[str, Any] = {"value": v["count"]}
        return out
    if node.type in ("avg", "weighted_avg"):
        return fmt.value({}, "value", v["avg"])
    if node.type in ("sum", "min", "max"):
        return fmt.value({}, "value", v[node.type])
    out = {"count": v["count"], "min": v["min"], "max": v["max"], "avg": v["avg"],
           "sum": v["sum"]}
    if node.type == "extended_stats":
        out.update(_extended(v, float(node.params.get("sigma", 2.0))))
    for key in ("min", "max", "avg", "sum"):
        if out[key] is not None and fmt.active:
            out[key + "_as_string"] = fmt.text(out[key])
    return out


def _rank_median(sorted_vals: np.ndarray) -> float:
    """The value at rank ``floor(n / 2)``: the median as the exact percentiles give it."""
    return float(sorted_vals[min(len(sorted_vals) // 2, len(sorted_vals) - 1)])


def render_mad(node: AggNode, res: Result | None, owner: int | None, ctx: RenderContext
               ) -> dict[str, Any]:
    """Exact median absolute deviation: the median of ``|x - median(x)|`` (Elasticsearch
    estimates both medians with a t-digest; here they are the exact percentiles' median) —
    or, for a bucket some shard sketched, the deviation its merged digest describes."""
    fmt = _Formatter(node, res, ctx)
    digest = res.extra.get(owner) if res is not None and isinstance(res.extra, dict) else None
    if digest is not None:
        return fmt.value({}, "value", mad_of_digest(digest))
    vals = np.zeros(0)
    if res is not None and res.values is not None and owner is not None:
        a, b = res.rows_of(owner)
        vals = res.values[a:b]
    if not len(vals):
        return {"value": None}
    mad = _rank_median(np.sort(np.abs(vals - _rank_median(vals))))
    return fmt.value({}, "value", mad)


def render_percentiles(node: AggNode, res: Result | None, owner: int | None,
                       ctx: RenderContext) -> dict[str, Any]:
    """Exact percentiles: the value at rank ``floor(p/100 · n)`` of the sorted values (what
    t-digest gives while every centroid is one value); ranks count values below plus half
    those equal. A bucket some shard sketched answers from the merged t-digest."""
    vals = np.zeros(0)
    if res is not None and res.values is not None and owner is not None:
        a, b = res.rows_of(owner)
        vals = res.values[a:b]
    n = len(vals)
    fmt = _Formatter(node, res, ctx)
    rows = []
    digest = res.extra.get(owner) if res is not None and isinstance(res.extra, dict) else None
    for p in node.params["_points"]:
        if digest is not None:   # some shard sketched this bucket (``sketches.py``)
            v = float(digest.get_quantile(p / 100.0)) if node.type == "percentiles" \
                else min(100.0, float(digest.get_rank(p)) * 100.0)
        elif node.type == "percentiles":
            v = float(vals[min(int(math.floor(p / 100.0 * n)), n - 1)]) if n else None
        else:
            below = int(np.searchsorted(vals, p, "left"))
            equal = int(np.searchsorted(vals, p, "right")) - below
            v = min(100.0, (below + equal / 2.0) / n * 100.0) if n else None
        rows.append((p, v))
    if node.params.get("keyed", True) is False:
        return {"values": [fmt.value({"key": p}, "value", v) for p, v in rows]}
    out: dict[str, Any] = {}
    for p, v in rows:
        out[java_double(p)] = v
        if v is not None and fmt.active:
            out[java_double(p) + "_as_string"] = fmt.text(v)
    return {"values": out}


def _extended(v: dict[str, Any], sigma: float = 2.0) -> dict[str, Any]:
    n = v["count"]
    if not n:
        nulls = {k: None for k in ("variance", "variance_population", "variance_sampling",
                                   "std_deviation", "std_deviation_population",
                                   "std_deviation_sampling")}
        return {"sum_of_squares": None, **nulls, "std_deviation_bounds": {
            k: None for k in ("upper", "lower", "upper_population", "lower_population",
                              "upper_sampling", "lower_sampling")}}
    avg = v["sum"] / n
    var = max(0.0, (v["sumsq"] - v["sum"] * v["sum"] / n) / n)
    sd = math.sqrt(var)
    if n > 1:
        var_s = max(0.0, (v["sumsq"] - v["sum"] * v["sum"] / n) / (n - 1))
        sd_s: Any = math.sqrt(var_s)
        upper_s, lower_s = avg + sigma * sd_s, avg - sigma * sd_s
    else:   # 0 / 0: Elasticsearch's double NaN, which its JSON writes as the string "NaN"
        var_s = sd_s = upper_s = lower_s = "NaN"
    return {"sum_of_squares": v["sumsq"], "variance": var, "variance_population": var,
            "variance_sampling": var_s, "std_deviation": sd,
            "std_deviation_population": sd, "std_deviation_sampling": sd_s,
            "std_deviation_bounds": {
                "upper": avg + sigma * sd, "lower": avg - sigma * sd,
                "upper_population": avg + sigma * sd, "lower_population": avg - sigma * sd,
                "upper_sampling": upper_s, "lower_sampling": lower_s}}


class _Formatter:
    """``format`` of a metric: DecimalFormat on numbers, the date format on date fields."""

    def __init__(self, node: AggNode, res: Result | None, ctx: RenderContext) -> None:
        self.fmt = node.params.get("format")
        ft = ctx.field_type(node.field)
        self.date_ft = ft if ft is not None and ft.kind == "date" else None
        self.active = self.fmt is not None or self.date_ft is not None

    def text(self, value: float) -> str:
        from .buckets import format_date_key, format_number
        if self.date_ft is not None:
            return format_date_key(int(value), self.fmt or self.date_ft.format, None)
        return format_number(value, self.fmt)

    def value(self, out: dict[str, Any], key: str, value: float | None) -> dict[str, Any]:
        out[key] = value
        if value is not None and self.active and not (isinstance(value, float)
                                                      and math.isinf(value)):
            out[key + "_as_string"] = self.text(value)
        return out
