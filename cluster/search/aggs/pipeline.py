"""Pipeline aggregations (no scripts), run on the rendered buckets after the reduce.

Sibling pipelines (``avg_bucket``, ``max_bucket``, ``min_bucket``, ``sum_bucket``,
``stats_bucket``) read a value from every bucket of a sibling multi-bucket aggregation through
``buckets_path``; parent pipelines (``cumulative_sum``, ``derivative``, ``bucket_sort``) rewrite
the bucket list of the histogram (or, for ``bucket_sort``, any multi-bucket aggregation) they
sit in. Everything is on the coordinator: shards never see pipelines.
"""
from __future__ import annotations

import math
from typing import Any

from ...engine.aggs.parse import AggNode
from ...engine.numformat import java_double
from ...errors import SearchError

SIBLING = {"avg_bucket", "max_bucket", "min_bucket", "sum_bucket", "stats_bucket"}
PARENT = {"cumulative_sum", "derivative", "bucket_sort"}
PIPELINES = SIBLING | PARENT
TYPED = {"avg_bucket": "simple_value", "sum_bucket": "simple_value",
         "max_bucket": "bucket_metric_value", "min_bucket": "bucket_metric_value",
         "stats_bucket": "stats_bucket", "cumulative_sum": "simple_value",
         "derivative": "derivative"}
_CLASS = {"terms": {"long": "LongTerms", "date": "LongTerms", "boolean": "LongTerms",
                    "double": "DoubleTerms"},
          "histogram": "InternalHistogram", "date_histogram": "InternalDateHistogram",
          "range": "InternalRange", "date_range": "InternalDateRange",
          "ip_range": "InternalBinaryRange",
          "filters": "InternalFilters"}


class InvalidPath(SearchError):
    es_type = "aggregation_execution_exception"
    status = 400


def _lookup(rendered: dict[str, Any], name: str) -> tuple[str, Any] | None:
    for key, value in rendered.items():
        if key == name or key.endswith("#" + name):
            return key, value
    return None


def _class_name(node: AggNode, rendered: Any) -> str:
    cls = _CLASS.get(node.type, node.type)
    if isinstance(cls, dict):
        keys = [b.get("key") for b in rendered.get("buckets", [])]
        kind = "double" if any(isinstance(k, float) for k in keys) else \
            "long" if keys and all(isinstance(k, int) for k in keys) else ""
        return cls.get(kind, "StringTerms")
    return str(cls)


def bucket_value(bucket: dict[str, Any], nodes: tuple[AggNode, ...], path: list[str]
                 ) -> float | None:
    """The number ``path`` names inside one rendered bucket (``_count``, ``_key``, ``m``,
    ``m.value``, ``stats.avg``, ``f>m``)."""
    head, _, prop = path[0].partition(".")
    if head == "_count":
        return float(bucket["doc_count"])
    if head == "_key":
        return bucket.get("key")
    node = next((n for n in nodes if n.name == head), None)
    found = _lookup(bucket, head)
    if node is None or found is None:
        raise InvalidPath(f"No aggregation found for path [{'>'.join(path)}]")
    value = found[1]
    if len(path) > 1:
        if "buckets" in value:
            raise InvalidPath("buckets_path must reference either a number value or a single "
                              "value numeric metric aggregation, got: [Object[]] at "
                              f"aggregation [{head}]")
        return bucket_value(value, node.subs, path[1:])
    if "buckets" in value:
        raise InvalidPath("buckets_path must reference either a number value or a single "
                          f"value numeric metric aggregation, got: "
                          f"[{_class_name(node, value)}] at aggregation [{head}]")
    if prop:
        key = "doc_count" if prop in ("_count", "doc_count") else prop
        return value.get(key)
    if "value" in value:
        return value["value"]
    if "doc_count" in value:
        return float(value["doc_count"])
    raise InvalidPath("buckets_path must reference either a number value or a single value "
                      f"numeric metric aggregation, but [{head}] contains multiple values. "
                      "Please specify which to use.")


def _sibling_path(text: str, nodes: tuple[AggNode, ...]) -> list[str]:
    """A sibling's ``buckets_path`` as elements; ``agg.name`` (ES's ``AGG_NAME.METRIC``
    spelling) names the multi-bucket ``agg`` and then ``name`` inside each of its buckets."""
    path = text.split(">")
    head, dot, rest = path[0].partition(".")
    if dot and not any(n.name == path[0] for n in nodes) and any(n.name == head for n in nodes):
        return [head, rest, *path[1:]]
    return path


def run_siblings(nodes: tuple[AggNode, ...], rendered: dict[str, Any], typed: bool) -> None:
    """Add the sibling pipelines of one level to its rendered aggregations (in place)."""
    for node in nodes:
        if node.type not in SIBLING:
            continue
        path = _sibling_path(str(node.params["buckets_path"]), nodes)
        target = next((n for n in nodes if n.name == path[0]), None)
        found = _lookup(rendered, path[0])
        if target is None or found is None or "buckets" not in found[1]:
            raise InvalidPath(f"No aggregation found for path [{node.params['buckets_path']}]")
        buckets = found[1]["buckets"]
        items = buckets.items() if isinstance(buckets, dict) else \
            ((b.get("key_as_string", _key_text(b.get("key"))), b) for b in buckets)
        pairs = []
        inner = path[1:] or ["_count"]
        skip_empty = node.params.get("gap_policy", "skip") == "skip" and inner != ["_count"]
        for key, b in items:
            if skip_empty and b.get("doc_count") == 0:
                continue     # ES's BucketHelpers: an empty bucket is a gap
            v = bucket_value(b, target.subs, inner)
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                pairs.append((key, float(v)))
        out = _sibling_result(node.type, pairs)
        if node.meta is not None:
            out["meta"] = node.meta
        rendered[(TYPED[node.type] + "#" if typed else "") + node.name] = out


def _key_text(key: Any) -> str:
    if isinstance(key, float):
        return java_double(key)
    return str(key)


def _sibling_result(kind: str, pairs: list[tuple[str, float]]) -> dict[str, Any]:
    vals = [v for _, v in pairs]
    if kind == "sum_bucket":
        return {"value": float(sum(vals))}
    if kind == "avg_bucket":
        return {"value": sum(vals) / len(vals) if vals else None}
    if kind in ("max_bucket", "min_bucket"):
        if not vals:
            return {"value": None, "keys": []}
        best = max(vals) if kind == "max_bucket" else min(vals)
        return {"value": best, "keys": [k for k, v in pairs if v == best]}
    n = len(vals)
    return {"count": n, "min": min(vals) if n else None, "max": max(vals) if n else None,
            "avg": sum(vals) / n if n else None, "sum": float(sum(vals))}


def run_parents(node: AggNode, buckets: list[dict[str, Any]], typed: bool
                ) -> list[dict[str, Any]]:
    """Apply the parent pipelines among ``node.subs`` to its rendered bucket list."""
    for sub in node.subs:
        if sub.type not in PARENT:
            continue
        name = (TYPED.get(sub.type, "") + "#" if typed and sub.type in TYPED else "") + sub.name
        if sub.type == "bucket_sort":
            buckets = _bucket_sort(sub, node, buckets)
            continue
        path = str(sub.params["buckets_path"]).split(">")
        prev: float | None = None
        total = 0.0
        for b in buckets:
            v = bucket_value(b, node.subs, path)
            if sub.type == "cumulative_sum":
                total += float(v) if v is not None and not math.isnan(float(v)) else 0.0
                b[name] = {"value": total}
            else:
                if prev is not None and v is not None:
                    b[name] = {"value": float(v) - prev}
                prev = float(v) if v is not None else prev
    return buckets


def _bucket_sort(sub: AggNode, node: AggNode, buckets: list[dict[str, Any]]
                 ) -> list[dict[str, Any]]:
    specs = sub.params.get("sort") or []
    specs = specs if isinstance(specs, list) else [specs]
    out = list(buckets)
    for spec in reversed(specs):
        if isinstance(spec, str):
            path, direction = spec, "asc"
        else:
            (path, how), = spec.items()
            direction = how.get("order", "asc") if isinstance(how, dict) else str(how)
        desc = direction == "desc"
        keyed = [(bucket_value(b, node.subs, path.split(">")), b) for b in out]
        present = [kb for kb in keyed if kb[0] is not None]
        present.sort(key=lambda kb: kb[0], reverse=desc)
        out = [b for _, b in present] + [b for v, b in keyed if v is None]
    start = int(sub.params.get("from", 0))
    size = sub.params.get("size")
    return out[start:start + int(size)] if size is not None else out[start:]
