"""Rendering of bucket aggregations: terms, histograms (with empty buckets), ranges, filters.

Per owner, the reduced rows are cut and ordered here: ``min_doc_count``, ``order`` (count,
key, or a sub-aggregation's value), ``size``; ``sum_other_doc_count`` is what the cut left out
(exact: nothing was cut before). Keys render as Elasticsearch renders them: strings, longs,
doubles (``Double.toString``), dates as millis plus ``key_as_string``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ...engine.aggs.ip_values import resolve_ip_ranges
from ...engine.ip import decode as ip_decode, render as ip_render
from ...engine.aggs.bucket import resolve_ranges
from ...engine.aggs.dates import iso, next_key, parse_offset, round_down, zone, UNIT_MS
from ...engine.aggs.parse import AggNode
from ...errors import IllegalArgument
from ...engine.dates import format_date, parse_date_math
from ...engine.numformat import decimal_format, java_double
from .pipeline import run_parents

if TYPE_CHECKING:
    from .reduce import Result
    from .render import RenderContext

SINGLE_BUCKET = ("filter", "missing", "global", "nested", "reverse_nested")


def format_number(value: float, fmt: str | None) -> str:
    if fmt is None or fmt == "use_field_mapping":
        return java_double(value) if isinstance(value, float) else str(value)
    return decimal_format(value, fmt)


def format_date_key(ms: int, fmt: str | None, tz: Any) -> str:
    tzinfo = tz or zone(None)
    first = fmt.split("||")[0].strip() if fmt else None
    if first in (None, "strict_date_optional_time", "date_optional_time", "iso8601",
                 "strict_date_optional_time_nanos", "strict_date_time", "date_time"):
        return iso(ms, tzinfo)
    if first == "epoch_millis":
        return str(ms)
    if first == "epoch_second":
        return str(ms // 1000)
    off = tzinfo.utcoffset(None) if hasattr(tzinfo, "utcoffset") else None
    if off is None:
        import datetime as _dt
        off = _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).astimezone(
            tzinfo).utcoffset()
    return str(format_date(ms + int(off.total_seconds() * 1000), None, first))


def _key_out(kind: str, key: Any, node: AggNode, ctx: RenderContext, tz: Any = None
             ) -> dict[str, Any]:
    fmt = node.params.get("format")
    if kind in ("keyword", "unmapped") and isinstance(key, str):
        ft = ctx.field_type(node.field) if kind == "keyword" else None
        return {"key": ip_decode(key) if ft is not None and ft.type == "ip" else key}
    if kind == "date":
        ft = ctx.field_type(node.field)
        return {"key": int(key), "key_as_string": format_date_key(
            int(key), fmt or (ft.format if ft is not None else None), tz)}
    if kind == "boolean":
        return {"key": int(key), "key_as_string": "true" if int(key) else "false"}
    if kind == "long":
        out: dict[str, Any] = {"key": int(key)}
    else:
        out = {"key": float(key)}
    if fmt is not None:
        out["key_as_string"] = format_number(out["key"], fmt)
    return out


def _bucket(head: dict[str, Any], count: int, node: AggNode, res: Result | None,
            row: int | None, ctx: RenderContext) -> dict[str, Any]:
    out = dict(head)
    out["doc_count"] = int(count)
    if node.subs:
        out.update(ctx.render_level(node.subs, res.subs if res is not None else {}, row, ctx))
    return out


def render_keyed(node: AggNode, res: Result | None, owner: int | None, ctx: RenderContext
                 ) -> dict[str, Any]:
    a, b = res.rows_of(owner) if res is not None and owner is not None \
        and res.owner is not None else (0, 0)
    if node.type == "terms":
        return _terms(node, res, a, b, ctx)
    return _histogram(node, res, a, b, ctx)


def _order_rows(node: AggNode, res: Result | None, rows: list[int | None],
                keys: list[Any], counts: list[int], ctx: RenderContext) -> list[int]:
    """Positions of ``rows`` sorted by the aggregation's ``order`` (stable, last key first)."""
    pos = list(range(len(rows)))
    for path, direction in reversed(node.params.get("order") or [("_key", "asc")]):
        desc = direction == "desc"
        if path == "_count":
            vals: list[Any] = counts
        elif path == "_key":
            vals = keys
        else:
            fill = -math.inf if desc else math.inf
            vals = [v if v is not None else fill
                    for v in (_path_value(node, res, r, path, ctx) for r in rows)]
        pos.sort(key=lambda i: vals[i], reverse=desc)
    return pos


def _path_value(node: AggNode, res: Result | None, row: int | None, path: str,
                ctx: RenderContext) -> float | None:
    """A sub-aggregation's value for one bucket: ``metric``, ``stats.avg``, ``filter>metric``,
    ``filter._count``."""
    steps = path.split(">")
    cur_node, cur_res, cur_row = node, res, row
    for i, step in enumerate(steps):
        name, _, prop = step.partition(".")
        if name == "_count":
            return None if cur_row is None else float(cur_res.counts[cur_row])  # type: ignore
        sub = next((s for s in cur_node.subs if s.name == name), None)
        if sub is None:
            raise IllegalArgument(f"Invalid aggregation order path [{path}]. Unknown "
                                  f"aggregation [{name}]")
        sub_res = cur_res.subs.get(name) if cur_res is not None else None
        if sub.type in SINGLE_BUCKET and (i < len(steps) - 1 or prop):
            if prop in ("doc_count", "_count") or not prop:
                if i == len(steps) - 1:
                    return None if cur_row is None or sub_res is None else \
                        float(sub_res.counts[cur_row])  # type: ignore[index]
            cur_node, cur_res = sub, sub_res
            continue
        return ctx.metric_value(sub, sub_res, cur_row, prop or None)
    return None


def _terms(node: AggNode, res: Result | None, a: int, b: int, ctx: RenderContext
           ) -> dict[str, Any]:
    p = node.params
    mdc, size = p.get("min_doc_count", 1), p.get("size", 10)
    kind = res.value_kind if res is not None else "unmapped"
    rows = [r for r in range(a, b) if res is not None and res.counts[r] >= mdc]  # type: ignore
    keys = [res.keys[r] for r in rows] if res is not None else []  # type: ignore[index]
    counts = [int(res.counts[r]) for r in rows] if res is not None else []  # type: ignore
    order = _order_rows(node, res, rows, keys, counts, ctx)
    top = order[:size]
    ctx.spend(len(top))
    buckets = [_bucket(_key_out(kind, _py(keys[i]), node, ctx), counts[i], node, res, rows[i],
                       ctx) for i in top]
    buckets = run_parents(node, buckets, ctx.typed_keys)
    if p.get("show_term_doc_count_error"):
        buckets = [_with_count_error(b) for b in buckets]
    other = res.other if res is not None else 0   # cut by the rounds (top level only)
    out: dict[str, Any] = {"doc_count_error_upper_bound": 0,
                           "sum_other_doc_count": other + sum(counts)
                           - sum(counts[i] for i in top),
                           "buckets": buckets}
    return out


def _with_count_error(bucket: dict[str, Any]) -> dict[str, Any]:
    """A bucket with its ``doc_count_error_upper_bound`` after ``doc_count``, where
    Elasticsearch prints it: always 0 here, as every shard's counts reach the reduce."""
    out: dict[str, Any] = {}
    for k, v in bucket.items():
        out[k] = v
        if k == "doc_count":
            out["doc_count_error_upper_bound"] = 0
    return out


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def _histogram(node: AggNode, res: Result | None, a: int, b: int, ctx: RenderContext
               ) -> dict[str, Any]:
    p = node.params
    is_date = node.type == "date_histogram"
    mdc = p.get("min_doc_count", 0)
    kind = "date" if is_date else "double"
    tz = zone(p.get("time_zone")) if is_date else None
    present: dict[Any, int] = {}
    if res is not None and res.keys is not None:
        for r in range(a, b):
            k = int(res.keys[r]) if is_date else float(res.keys[r])
            present[k] = r
    keys = sorted(present)
    if mdc == 0:
        keys = _fill(node, keys, ctx, tz)
    rows: list[int | None] = [present.get(k) for k in keys]
    counts = [int(res.counts[r]) if r is not None and res is not None else 0  # type: ignore
              for r in rows]
    sel = [i for i, c in enumerate(counts) if c >= mdc]
    rows, keys, counts = [rows[i] for i in sel], [keys[i] for i in sel], [counts[i] for i in sel]
    order = _order_rows(node, res, rows, keys, counts, ctx)
    ctx.spend(len(order))
    buckets = [_bucket(_key_out(kind, keys[i], node, ctx, tz), counts[i], node, res, rows[i],
                       ctx) for i in order]
    buckets = run_parents(node, buckets, ctx.typed_keys)
    if p.get("keyed"):
        return {"buckets": {b.get("key_as_string", java_double(b["key"]) if not is_date
                                  else str(b["key"])): b for b in buckets}}
    return {"buckets": buckets}


def _fill(node: AggNode, keys: list[Any], ctx: RenderContext, tz: Any) -> list[Any]:
    """Every key between the smallest and largest (widened by ``extended_bounds``, clipped
    by ``hard_bounds``) — the empty buckets of ``min_doc_count: 0``."""
    p = node.params
    is_date = node.type == "date_histogram"
    lo, hi = (keys[0], keys[-1]) if keys else (None, None)
    eb = p.get("extended_bounds")
    if isinstance(eb, dict):
        for side in ("min", "max"):
            if eb.get(side) is None:
                continue
            k = _round_key(node, eb[side], ctx, tz)
            lo = k if lo is None or (side == "min" and k < lo) else lo
            hi = k if hi is None or (side == "max" and k > hi) else hi
    hb = p.get("hard_bounds")
    if isinstance(hb, dict) and lo is not None:
        if hb.get("min") is not None:
            lo = max(lo, _round_key(node, hb["min"], ctx, tz, ceil=True))
        if hb.get("max") is not None:
            hi = min(hi, _bound_value(node, hb["max"], ctx))
    if lo is None or hi is None or lo > hi:
        return keys
    out: list[Any] = []
    if is_date:
        fixed, unit = p.get("fixed_ms"), p.get("unit")
        est = (hi - lo) // (fixed or UNIT_MS[unit]) + 1
        ctx.spend(0) if est <= ctx.max_buckets else ctx.spend(int(est))
        k, offset = lo, parse_offset(p.get("offset"))
        while k <= hi:
            out.append(k)
            k = next_key(k, unit, fixed, tz, offset)
    else:
        interval, offset = float(p["interval"]), float(p.get("offset", 0) or 0)
        first, last = round((lo - offset) / interval), round((hi - offset) / interval)
        if last - first + 1 > ctx.max_buckets:
            ctx.spend(int(last - first + 1))
        out = [i * interval + offset for i in range(int(first), int(last) + 1)]
    return sorted(set(out) | set(keys))


def _bound_value(node: AggNode, value: Any, ctx: RenderContext) -> float:
    if node.type != "date_histogram":
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    ft = ctx.field_type(node.field)
    return parse_date_math(value, ft if ft is not None and ft.kind == "date" else None)


def _round_key(node: AggNode, value: Any, ctx: RenderContext, tz: Any, ceil: bool = False
               ) -> Any:
    p = node.params
    v = _bound_value(node, value, ctx)
    if node.type == "date_histogram":
        k = int(round_down(np.array([int(v)]), p.get("unit"), p.get("fixed_ms"), tz,
                           parse_offset(p.get("offset")))[0])
        return next_key(k, p.get("unit"), p.get("fixed_ms"), tz,
                        parse_offset(p.get("offset"))) if ceil and k < v else k
    interval, offset = float(p["interval"]), float(p.get("offset", 0) or 0)
    k = math.floor((v - offset) / interval) * interval + offset
    return k + interval if ceil and k < v else k


def render_fixed(node: AggNode, res: Result | None, owner: int | None, ctx: RenderContext
                 ) -> dict[str, Any]:
    width = res.width if res is not None and res.width else 1
    base = owner * width if owner is not None else None

    def count(b: int) -> int:
        if base is None or res is None or res.counts is None:
            return 0
        return int(res.counts[base + b])

    def row(b: int) -> int | None:
        return None if base is None else base + b
    if node.type in SINGLE_BUCKET:
        return _bucket({}, count(0), node, res, row(0), ctx)
    if node.type == "filters":
        names = [n for n, _ in node.queries]
        if node.params.get("other_bucket"):
            names.append(node.params.get("other_bucket_key", "_other_"))
        ctx.spend(len(names))
        buckets = [_bucket({}, count(b), node, res, row(b), ctx) for b in range(len(names))]
        if node.keyed_filters and node.params.get("keyed", True):
            return {"buckets": dict(zip(names, buckets))}
        return {"buckets": buckets}
    if node.type == "ip_range":
        return _ip_ranges(node, res, count, row, ctx)
    return _ranges(node, res, count, row, ctx)


def _ip_ranges(node: AggNode, res: Result | None, count: Any, row: Any, ctx: RenderContext
               ) -> dict[str, Any]:
    """Elasticsearch's ``InternalBinaryRange``: bounds as addresses, an open end left out, a
    key from the mask or ``from-to`` with ``*`` for an open end."""
    spans = resolve_ip_ranges(node)
    ctx.spend(len(spans))
    buckets = []
    for b, (key, first, end) in enumerate(spans):
        lo = None if first is None else ip_render(first)
        hi = None if end is None else ip_render(end)
        head: dict[str, Any] = {"key": key if key is not None else f"{lo or '*'}-{hi or '*'}"}
        if lo is not None:
            head["from"] = lo
        if hi is not None:
            head["to"] = hi
        buckets.append(_bucket(head, count(b), node, res, row(b), ctx))
    if node.params.get("keyed"):
        return {"buckets": {bk["key"]: {k: v for k, v in bk.items() if k != "key"}
                            for bk in buckets}}
    return {"buckets": buckets}


def _ranges(node: AggNode, res: Result | None, count: Any, row: Any, ctx: RenderContext
            ) -> dict[str, Any]:
    ft = ctx.field_type(node.field)
    is_date = node.type == "date_range" or (ft is not None and ft.kind == "date")
    fmt = node.params.get("format")
    tz = zone(node.params.get("time_zone")) if is_date else None
    spans = resolve_ranges(node, _Mappings(ctx))
    ctx.spend(len(spans))

    def text(v: float) -> str:
        if is_date:
            return format_date_key(int(v), fmt or (ft.format if ft is not None else None), tz)
        return format_number(v, fmt) if fmt else java_double(v)
    buckets = []
    for b, (key, lo, hi) in enumerate(spans):
        head: dict[str, Any] = {"key": key if key is not None else
                                (text(lo) if lo != -math.inf else "*") + "-"
                                + (text(hi) if hi != math.inf else "*")}
        if lo != -math.inf:
            head["from"] = lo
            if is_date or fmt:
                head["from_as_string"] = text(lo)
        if hi != math.inf:
            head["to"] = hi
            if is_date or fmt:
                head["to_as_string"] = text(hi)
        buckets.append(_bucket(head, count(b), node, res, row(b), ctx))
    if node.params.get("keyed"):
        return {"buckets": {bk["key"]: {k: v for k, v in bk.items() if k != "key"}
                            for bk in buckets}}
    return {"buckets": buckets}


class _Mappings:
    """The first mapping that has a field (a ``Mapping.get`` for ``resolve_ranges``)."""

    def __init__(self, ctx: RenderContext) -> None:
        self.ctx = ctx

    def get(self, name: str) -> Any:
        return self.ctx.field_type(name)
