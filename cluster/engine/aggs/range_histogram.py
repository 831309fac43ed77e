"""``histogram`` and ``date_histogram`` on a range field: a document lands in every bucket its
``[lo, hi]`` pairs overlap (Elasticsearch's ``RangeHistogramAggregator``).

Each pair's first and last bucket keys are computed with the histogram's own rounding, clipped
to ``hard_bounds``; the keys between are stepped through for all pairs at once (NumPy for fixed
steps, the calendar's next key otherwise). The expansion is bounded: more than
``MAX_RANGE_BUCKETS`` (pair, bucket) entries on a shard is a 400, as an open-ended range with no
``hard_bounds`` would be.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...errors import IllegalArgument

MAX_RANGE_BUCKETS = 1_000_000
Keys = Callable[[np.ndarray], np.ndarray]


def expand_ranges(pairs: list[tuple[np.ndarray, np.ndarray]], key_of: Keys, step: Keys,
                  lo_clip: Any, hi_clip: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per segment ``(row, key)`` of every bucket each pair of ``(row, interleaved values)``
    overlaps; keys outside ``[lo_clip, hi_clip]`` (None: open) are not made."""
    out = []
    budget = MAX_RANGE_BUCKETS
    for r, v in pairs:
        rows, lo, hi = r[0::2], v[0::2], v[1::2]
        if lo_clip is not None:
            lo = np.maximum(lo, lo_clip)
        if hi_clip is not None:
            hi = np.minimum(hi, hi_clip)
        live = lo <= hi
        rows, cur, last = rows[live], key_of(lo[live]), key_of(hi[live])
        got_r, got_k = [], []
        while len(cur):
            budget -= len(cur)
            if budget < 0:
                raise IllegalArgument(f"a range field's histogram would make more than "
                                      f"[{MAX_RANGE_BUCKETS}] buckets on a shard; narrow the "
                                      "ranges with [hard_bounds]")
            got_r.append(rows)
            got_k.append(cur)
            cur = step(cur)
            keep = cur <= last
            rows, cur, last = rows[keep], cur[keep], last[keep]
        out.append((np.concatenate(got_r) if got_r else np.zeros(0, np.int64),
                    np.concatenate(got_k) if got_k else np.zeros(0, v.dtype)))
    return out


def numeric_expansion(node: Any, pairs: list[tuple[np.ndarray, np.ndarray]]
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``histogram``: keys ``floor((v - offset) / interval) · interval + offset``."""
    interval = float(node.params["interval"])
    offset = float(node.params.get("offset", 0) or 0)
    hb = node.params.get("hard_bounds") if isinstance(node.params.get("hard_bounds"), dict) \
        else {}

    def key_of(v: np.ndarray) -> np.ndarray:
        return np.floor((v.astype(np.float64) - offset) / interval) * interval + offset
    lo = None if hb.get("min") is None else float(hb["min"])
    hi = None if hb.get("max") is None else float(hb["max"])
    floats = [(r, v.astype(np.float64)) for r, v in pairs]
    for _, v in floats:
        if not np.isfinite(v).all() and (lo is None or hi is None):
            raise IllegalArgument("a range field's histogram needs [hard_bounds] for "
                                  "unbounded ranges")
    return expand_ranges(floats, key_of, lambda k: k + interval, lo, hi)


def date_expansion(pairs: list[tuple[np.ndarray, np.ndarray]], key_of: Keys, step: Keys,
                   lo: int | None, hi: int | None, last_key: int | None = None
                   ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``date_histogram``: the caller's rounding and next key, in millis. ``last_key`` caps
    the keys: with an ``offset``, OpenSearch ends a range's buckets at ``hard_bounds.max``
    rounded *without* the offset (found by the differential test; the offset-free case and
    the lower bound agree with the plain rule)."""
    out = expand_ranges([(r, v.astype(np.int64)) for r, v in pairs], key_of, step, lo, hi)
    if last_key is None:
        return out
    return [(r[k <= last_key], k[k <= last_key]) for r, k in out]


def check_range_agg(node: Any, ft: Any) -> None:
    """Only histograms (and ``missing``) read a range field, as in Elasticsearch."""
    if node.type not in ("histogram", "date_histogram", "missing"):
        raise IllegalArgument(f"Field [{node.field}] of type [{ft.type if ft else 'range'}] "
                              f"is not supported for aggregation [{node.type}]")
