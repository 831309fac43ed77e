"""Mergeable sketches past a threshold, exact below it (Apache DataSketches).

**cardinality.**
A shard ships a bucket's distinct values while they are at most ``precision_threshold``
(Elasticsearch's default 3,000, at most 40,000): the coordinator's union of exact sets is then
exact. Past it, the bucket's values go into a HyperLogLog sketch (``hll_sketch``, HLL_4,
``lg_k`` from the threshold: 2^lg_k ≥ 4 × threshold, between 2^4 and 2^18 registers), so what
a shard ships and the coordinator holds per bucket is bounded by the sketch's size, whatever
the field's cardinality. The coordinator merges sketches (and exact values of the shards
below the threshold) with ``hll_union``; the estimate's relative standard error is about
``1.04 / sqrt(2^lg_k)`` (0.8 % at the default threshold, 0.2 % at 40,000).

**percentiles, percentile_ranks.** A shard ships a bucket's values while they are at most
:data:`EXACT_PERCENTILE_VALUES` (the coordinator ranks them exactly when no shard sketched);
past it, a t-digest of them (``tdigest_double`` with ``k`` = ``tdigest.compression``, default
100, within [10, 65,535]), merged on the coordinator with the other shards' digests and values.
A t-digest's error is in rank, largest at the median and small at the tails: with ``k`` =
100 up to about 3 % of the count at the median (measured on log-normal data; 1.8 % with 200),
under 0.1 % at the 1st and 99th percentiles; the tests allow 4 % at ``k`` = 100.

**median_absolute_deviation.** The same threshold and digest, with ``k`` = ``compression``
(Elasticsearch's default 1,000). From the merged digest's distribution function ``F``, the
median ``m`` is ``F⁻¹(1/2)`` and the deviation is the ``d`` with ``F(m + d) − F(m − d) = 1/2``
(found by bisection): the median of ``|x − m|`` read off the same digest, so its error is in
rank too — the fraction of values within ``d`` of ``m`` is 1/2 up to about twice the digest's
rank error near the median (measured under 0.5 % of the count at ``k`` = 1,000; the tests
allow 2 %).
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

import datasketches
import numpy as np

DEFAULT_PRECISION_THRESHOLD = 3_000
MAX_PRECISION_THRESHOLD = 40_000


EXACT_PERCENTILE_VALUES = 10_000


def digest_k(params: dict[str, Any]) -> int:
    """``tdigest.compression`` as the digest's ``k``."""
    td = params.get("tdigest") or {}
    return max(10, min(65_535, int(round(float(td.get("compression", 100.0))))))


def digest_of(values: np.ndarray, k: int) -> bytes:
    t = datasketches.tdigest_double(k)
    t.update(np.asarray(values, dtype=np.float64))
    return bytes(t.serialize())


def merged_digest(digests: list[bytes], exact: list[np.ndarray], k: int) -> Any:
    """One digest of every shard's digest and the other shards' values."""
    t = datasketches.tdigest_double(k)
    for b in digests:
        t.merge(datasketches.tdigest_double.deserialize(b))
    vals = [v for v in exact if len(v)]
    if vals:
        t.update(np.concatenate(vals).astype(np.float64))
    return t


def mad_k(params: dict[str, Any]) -> int:
    """``compression`` of a median_absolute_deviation as the digest's ``k``."""
    return max(10, min(65_535, int(round(float(params.get("compression", 1000.0))))))


def mad_of_digest(t: Any) -> float:
    """The median absolute deviation a digest describes (see the module docstring).
    O(log(range / precision)) rank lookups."""
    m = float(t.get_quantile(0.5))
    hi = max(float(t.get_max_value()) - m, m - float(t.get_min_value()))
    lo = 0.0
    for _ in range(200):                 # bisection to the doubles' precision
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if float(t.get_rank(m + mid)) - float(t.get_rank(m - mid)) >= 0.5:
            hi = mid
        else:
            lo = mid
    return hi


def precision_threshold(params: dict[str, Any]) -> int:
    """The node's threshold, capped as Elasticsearch caps it."""
    pt = params.get("precision_threshold")
    return min(MAX_PRECISION_THRESHOLD, DEFAULT_PRECISION_THRESHOLD if pt is None else int(pt))


def lg_k(threshold: int) -> int:
    """Sketch registers (log2): at least 4 per value of the threshold, within [4, 18]."""
    return max(4, min(18, math.ceil(math.log2(max(1, threshold))) + 2))


def relative_error(lg: int) -> float:
    """One relative standard error of an HLL estimate with 2^lg registers."""
    return 1.04 / math.sqrt(2 ** lg)


def _items(values: np.ndarray) -> list[Any]:
    """Values as the sketch hashes them: strings as strings, every number as a double (so a
    long and a double of the same value, from two indices, count once)."""
    if values.dtype == object:
        items = values.tolist()
        if set(map(type, items)) == {str}:   # keywords: as they are, no copy
            return items
        return [v if isinstance(v, str) else float(v) for v in items]
    return values.astype(np.float64).tolist()


def sketch_of(values: np.ndarray, lg: int) -> bytes:
    """A compact HLL sketch of ``values``."""
    h = datasketches.hll_sketch(lg, datasketches.tgt_hll_type.HLL_4)
    deque(map(h.update, _items(values)), maxlen=0)   # the loop in C: one call per value
    return bytes(h.serialize_compact())


def merged_estimate(sketches: list[bytes], exact: list[np.ndarray], lg: int) -> int:
    """The union's estimated distinct count: shards' sketches and other shards' values."""
    u = datasketches.hll_union(lg)
    for b in sketches:
        u.update(datasketches.hll_sketch.deserialize(b))
    if any(len(v) for v in exact):
        u.update(datasketches.hll_sketch.deserialize(
            sketch_of(np.concatenate([v.astype(object) for v in exact]), lg)))
    return int(round(u.get_estimate()))
