"""The partial results a shard ships to the coordinator: NumPy arrays indexed by *owner*.

Every aggregation is computed for a set of owners — the buckets of its parent (one owner at
the top level). A shard's partial is indexed by its local owners; the coordinator maps them to
global owners and reduces (``cluster/search/aggs/reduce.py``), so nesting to any depth needs no
per-bucket Python.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Stats:
    """avg, sum, min, max, stats, extended_stats, value_count, weighted_avg: per owner."""

    count: np.ndarray        # values seen (weighted_avg: summed weights)
    sum: np.ndarray          # (weighted_avg: summed value × weight)
    min: np.ndarray          # +inf when none
    max: np.ndarray          # -inf when none
    sumsq: np.ndarray


@dataclass
class Distinct:
    """cardinality: the distinct ``(owner, value)`` pairs of owners with at most
    ``precision_threshold`` of them; past it, an HLL sketch per owner (``sketches.py``)."""

    owner: np.ndarray
    values: np.ndarray       # object (strings) or numbers
    sketches: dict[int, bytes] = field(default_factory=dict)   # local owner -> HLL
    lg_k: int = 0


@dataclass
class Values:
    """percentiles, percentile_ranks: every value with its owner; an owner with more than
    ``EXACT_PERCENTILE_VALUES`` ships a t-digest instead (``sketches.py``; not
    median_absolute_deviation, still exact)."""

    owner: np.ndarray
    values: np.ndarray
    digests: dict[int, bytes] = field(default_factory=dict)   # local owner -> t-digest
    k: int = 0


@dataclass
class Keyed:
    """terms, histogram, date_histogram: one row per (owner, key) bucket with documents."""

    owner: np.ndarray
    keys: np.ndarray         # object (strings) or numbers
    counts: np.ndarray
    subs: dict[str, Any] = field(default_factory=dict)   # owners = rows of this partial
    value_kind: str = "keyword"   # keyword / long / double / date / boolean / unmapped
    # a top-level ``terms`` cut on the shard (``tput.py``): the counts of every key the shard
    # holds (``total``) and how many keys (``distinct``); ``bound``: no key left out has more
    # documents; ``other``: documents in buckets the coordinator cut (added once, at render)
    total: int = 0
    distinct: int = 0
    bound: int = 0
    other: int = 0


@dataclass
class Fixed:
    """range, date_range, filter, filters, missing, global: ``width`` buckets per owner,
    bucket ``b`` of owner ``o`` at ``o * width + b``."""

    width: int
    counts: np.ndarray
    subs: dict[str, Any] = field(default_factory=dict)
    value_kind: str = "double"


@dataclass
class GeoStats:
    """geo_bounds, geo_centroid: per owner, the point count, the sums of the points' 32-bit
    encoded latitudes and longitudes (integers: exact, so the centroid is the same for 1 and N
    shards), and the extremes ``top``, ``bottom`` and, apart for east and west of Greenwich,
    the leftmost and rightmost longitudes (``InternalGeoBounds``)."""

    count: np.ndarray        # int64[n]
    sums: np.ndarray         # int64[n, 2]: encoded lat, lon
    maxs: np.ndarray         # float64[n, 3]: top, pos_right, neg_right (-inf when none)
    mins: np.ndarray         # float64[n, 3]: bottom, pos_left, neg_left (+inf when none)


Partial = Stats | Distinct | Values | Keyed | Fixed | GeoStats
