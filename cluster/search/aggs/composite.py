"""Rendering ``composite``: the reduced keys in composite order, the first ``size``, and
``after_key`` (the last bucket's key) to page on."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import orjson

from ...engine.aggs.dates import zone
from ...engine.aggs.parse import AggNode
from ...engine.ip import decode as ip_decode
from .buckets import _bucket, format_date_key, format_number

if TYPE_CHECKING:
    from .reduce import Result
    from .render import RenderContext


def _compare(node: AggNode, a: list[Any], b: list[Any]) -> int:
    for src, x, y in zip(node.params["_sources"], a, b):
        if x == y:
            continue
        desc = src.params.get("order", "asc") == "desc"
        mo = src.params.get("missing_order", "default")
        last = mo == "last" or (mo == "default" and desc)
        if x is None or y is None:
            return (1 if last else -1) * (1 if x is None else -1)
        c = -1 if x < y else 1
        return -c if desc else c
    return 0


def _shown(src: AggNode, value: Any, ctx: RenderContext) -> Any:
    ft = ctx.field_type(src.field) if src.type == "terms" else None
    if ft is not None and ft.type == "ip" and isinstance(value, str):
        return ip_decode(value)
    fmt = src.params.get("format")
    if value is None or fmt is None:
        return value
    if src.type == "date_histogram":
        return format_date_key(int(value), fmt, zone(src.params.get("time_zone")))
    return format_number(value, fmt)


def render_composite(node: AggNode, res: Result | None, owner: int | None,
                     ctx: RenderContext) -> dict[str, Any]:
    rows: list[tuple[list[Any], int]] = []
    if res is not None and res.owner is not None and owner is not None:
        a, b = res.rows_of(owner)
        rows = [(orjson.loads(res.keys[r]), r) for r in range(a, b)]  # type: ignore[index]
    rows.sort(key=functools.cmp_to_key(lambda x, y: _compare(node, x[0], y[0])))
    size = int(node.params.get("size", 10))
    if size > ctx.max_buckets:
        ctx.spend(size)   # Elasticsearch refuses a page larger than search.max_buckets
    rows = rows[:size]
    ctx.spend(len(rows))
    names = [s.name for s in node.params["_sources"]]
    buckets = []
    for key, r in rows:
        shown = {n: _shown(s, v, ctx) for n, s, v in zip(names, node.params["_sources"], key)}
        buckets.append(_bucket({"key": shown}, int(res.counts[r]), node, res, r, ctx))  # type: ignore
    out: dict[str, Any] = {}
    if buckets:
        out["after_key"] = dict(buckets[-1]["key"])
    out["buckets"] = buckets
    return out
