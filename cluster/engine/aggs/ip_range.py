"""``ip_range`` buckets.

Values of an ip field are ordinals into the shard's sorted dictionary of 128-bit keys
(``engine/ip.py``); a range is decided once per distinct address — the dictionary split into
two uint64 halves compared with NumPy — and each document's ordinal picks that answer. O(U·R)
for U distinct addresses and R ranges, then O(n·R) over the rows.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import IllegalArgument
from .bucket import _fixed, _pairs
from .collect import COLLECTORS, Rows, ShardView, concat, field_kind
from .ip_values import IpSpan, resolve_ip_ranges
from .parse import AggNode

_LOW = (1 << 64) - 1


def _halves(distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keys = [int(t, 16) for t in distinct.tolist()]
    hi = np.array([k >> 64 for k in keys], dtype=np.uint64)
    lo = np.array([k & _LOW for k in keys], dtype=np.uint64)
    return hi, lo


def _at_least(hi: np.ndarray, lo: np.ndarray, key: int) -> np.ndarray:
    kh, kl = np.uint64(key >> 64), np.uint64(key & _LOW)
    return (hi > kh) | ((hi == kh) & (lo >= kl))


def in_spans(distinct: np.ndarray, spans: list[IpSpan]) -> list[np.ndarray]:
    """Per span, a bool per distinct stored key: whether the address lies in it."""
    hi, lo = _halves(distinct)
    out = []
    for _, first, end in spans:
        m = np.ones(len(distinct), dtype=bool)
        if first is not None:
            m &= _at_least(hi, lo, first)
        if end is not None:
            m &= ~_at_least(hi, lo, end)
        out.append(m)
    return out


def ip_range(node: AggNode, view: ShardView, rows: Rows) -> Any:
    """Fixed buckets, one per range; a document counts once per range holding a value."""
    kind = field_kind(node, view)
    ft = view.mapping.get(node.field or "")
    if kind != "unmapped" and (ft is None or ft.type != "ip"):
        raise IllegalArgument(f"Field [{node.field}] of type [{ft.type if ft else kind}] is "
                              "not supported for aggregation [ip_range]")
    spans = resolve_ip_ranges(node)
    offsets = np.cumsum([0] + [len(d) for d in rows.docs])
    g_rows: list[np.ndarray] = []
    g_bucket: list[np.ndarray] = []
    if kind != "unmapped":
        pairs, distinct = _pairs(node, view, rows, "keyword")
        masks = in_spans(distinct if distinct is not None else np.zeros(0, object), spans)
        for si, (r, v) in enumerate(pairs):
            ords = v.astype(np.int64)
            for b, m in enumerate(masks):
                sel = m[ords] if len(m) else np.zeros(len(ords), dtype=bool)
                g_rows.append(r[sel] + offsets[si])
                g_bucket.append(np.full(int(sel.sum()), b, dtype=np.int64))
    return _fixed(node, view, rows, len(spans), concat(g_rows, np.int64),
                  concat(g_bucket, np.int64), offsets, "ip")


COLLECTORS["ip_range"] = ip_range
