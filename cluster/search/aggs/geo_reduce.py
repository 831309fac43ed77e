"""The exact reduce of ``geo_bounds`` and ``geo_centroid`` partials: counts and the integer
sums of encoded coordinates add, extremes take their min and max, so 1 and N shards agree
bit for bit."""
from __future__ import annotations

import numpy as np

from ...engine.aggs.partials import GeoStats


def reduce_geo_stats(got: list[tuple[GeoStats, np.ndarray]], n: int) -> GeoStats:
    """Counts and integer sums add, extremes take their min and max: exact."""
    out = GeoStats(np.zeros(n, dtype=np.int64), np.zeros((n, 2), dtype=np.int64),
                   np.full((n, 3), -np.inf), np.full((n, 3), np.inf))
    for p, m in got:
        out.count[m] += p.count
        out.sums[m] += p.sums
        out.maxs[m] = np.maximum(out.maxs[m], p.maxs)
        out.mins[m] = np.minimum(out.mins[m], p.mins)
    return out
