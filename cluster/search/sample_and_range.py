"""Deep pages at the cost of shallow ones: find where page ``from`` starts from shard samples.

The classic method asks every shard for its top ``from + size`` candidates, so transfer and
merge grow with depth. Here, in two rounds whose size does not depend on ``from``:

1. every shard sorts its matches and sends its match count ``n_j`` and the full keys of every
   ``t_j``-th match (``t_j = ceil(n_j / samples)``), with their local ranks;
2. ordering all samples globally bounds the global rank of each sample from below and above.
   ``lo`` is the last sample whose rank is surely ``<= from``; ``hi`` the first whose rank is
   surely ``>= from + size``. Every shard then sends how many of its matches sort before ``lo``
   (exact) and its matches in ``[lo, hi)``, at most ``from - L(lo) + size`` of them — a bound of
   about ``sum(t_j) + size``, independent of depth.

The page is then ``[from - sum(before_j), ... + size)`` of the merged range: *identical* to the
classic merge, because the order is a strict total order (sort keys + unique tie-break).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.sorting import SortField, ascending_keys, order

DEFAULT_SAMPLES = 512


@dataclass(frozen=True)
class Bracket:
    """The keys bounding the page and the per-shard candidate limit for round 2."""

    lo: list[Any] | None
    hi: list[Any] | None
    limit: int
    lo_rank_lower_bound: int


def _columns(sort: tuple[SortField, ...], kinds: list[str], keys: list[list[Any]]
             ) -> tuple[list[np.ndarray], list[np.ndarray | None], np.ndarray]:
    cols: list[np.ndarray] = []
    missing: list[np.ndarray | None] = []
    for j, kind in enumerate(kinds):
        vals = [k[j] for k in keys]
        if kind == "keyword":
            miss = np.array([v is None for v in vals], dtype=bool)
            cols.append(np.array(["" if v is None else v for v in vals], dtype=object))
            missing.append(miss)
        elif kind in ("int", "tiebreak"):
            cols.append(np.array(vals, dtype=np.int64))
            missing.append(None)
        elif kind == "score":
            cols.append(np.array(vals, dtype=np.float32))
            missing.append(None)
        else:
            cols.append(np.array(vals, dtype=np.float64))
            missing.append(None)
    ties = np.array([k[-1] for k in keys], dtype=np.int64)
    return cols, missing, ties


def bracket(sort: tuple[SortField, ...], kinds: list[str],
            samples: list[tuple[int, list[list[Any]], list[int]]], from_: int,
            size: int) -> Bracket:
    """Choose ``lo``/``hi`` from the shards' samples ``[(n_j, keys_j, ranks_j), ...]``.

    O(S log S) for S samples in all.
    """
    rows = [(j, i) for j, (_, keys, _) in enumerate(samples) for i in range(len(keys))]
    if not rows:
        return Bracket(None, None, from_ + size, 0)
    all_keys = [samples[j][1][i] for j, i in rows]
    cols, missing, ties = _columns(sort, kinds, all_keys)
    ordr = order(ascending_keys(sort, kinds, cols, missing, ties))
    # For the sample at each position of the global order: bounds on its global rank. Its
    # own shard contributes the sample's rank; every other shard s, with a_s of its samples
    # before this position, at least ranks_s[a_s - 1] + 1 (0 when a_s = 0) and at most
    # ranks_s[a_s] (n_s when a_s is all of them). Vectorised: one pass per shard.
    shard_of = np.repeat(np.arange(len(samples)), [len(k) for _, k, _ in samples])[ordr]
    own_rank = np.concatenate([np.asarray(r, dtype=np.int64) for _, _, r in samples])[ordr]
    upper = np.zeros(len(ordr), dtype=np.int64)
    lower = np.zeros(len(ordr), dtype=np.int64)
    for s, (n_s, _, ranks_s) in enumerate(samples):
        mine = shard_of == s
        before = np.cumsum(mine) - mine             # samples of s strictly before
        r = np.asarray(ranks_s, dtype=np.int64)
        up = np.append(r, n_s)[before]
        low = np.append(0, r + 1)[before]
        upper += np.where(mine, own_rank, up)
        lower += np.where(mine, own_rank, low)
    past = np.flatnonzero(lower >= from_ + size)
    end = int(past[0]) if len(past) else len(ordr) - 1
    hi = all_keys[int(ordr[end])] if len(past) else None
    fits = np.flatnonzero(upper[:end + 1] <= from_)
    lo: list[Any] | None = None
    lo_lb = 0
    if len(fits):
        lo, lo_lb = all_keys[int(ordr[fits[-1]])], int(lower[fits[-1]])
    limit = from_ - lo_lb + size
    return Bracket(lo, hi, limit, lo_lb)
