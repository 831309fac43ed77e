"""Exact page starts learnt from deep pages, so a placed deep page takes one round like page 1.

A deep page in two rounds (``sample_and_range.py``) ends with the coordinator holding every
shard's matches in ``[lo, hi)`` and the exact count before ``lo``: merged, each row up to the
first row a shard may have cut off (a shard that sent its ``limit`` rows) has an exact global
rank. Kept per query and snapshot (the samples' key: what a generation sees never changes),
those ranks place a later deep page — the same page again, the next or the previous one —
whose ``from`` falls among them: its first hit's full key is known, so every shard sends how
many of its matches sort before that key (their sum is ``from``) and its first ``size`` rows
from it, with their documents. One round, as page 1 takes, and the same page as the two-round
method, because the order is a strict total order (sort keys + unique tie-break).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.candidates import keys_of
from ..engine.shard_messages import ShardHits
from ..engine.sorting import SortField
from .reduce import global_order

# keys kept around the page that taught them: a few pages back, many forward (bounds memory)
KEEP_BEFORE = 256
KEEP_AFTER = 1024


@dataclass(frozen=True)
class Anchors:
    """Full keys (sort values + tie-break, as shards' samples give them) of consecutive global
    ranks ``start, start + 1, ...``."""

    start: int
    keys: list[list[Any]]

    def key_at(self, rank: int) -> list[Any] | None:
        """The full key of the hit at global rank ``rank``, or None when not known."""
        i = rank - self.start
        return self.keys[i] if 0 <= i < len(self.keys) else None


def learn(hits: list[ShardHits], sort: tuple[SortField, ...], before: int, limit: int,
          from_: int) -> Anchors | None:
    """The exact ranks a complete range round (every shard answered) teaches: ``before`` is
    the number of matches before ``lo`` in all, ``limit`` the per-shard cap of the round."""
    pos, rows = global_order(hits, sort)
    if not len(pos):
        return None
    end = len(pos)   # rows [0, end) of the merge have exact ranks
    for p, h in enumerate(hits):
        if len(h) >= limit:   # this shard may have more rows after its last: stop there
            last = np.flatnonzero((pos == p) & (rows == len(h) - 1))
            end = min(end, int(last[0]) + 1)
    first = max(0, from_ - before - KEEP_BEFORE)
    stop = min(end, from_ - before + KEEP_AFTER)
    if stop <= first:
        return None
    pos, rows = pos[first:stop], rows[first:stop]
    keys: list[list[Any] | None] = [None] * len(pos)
    for p, h in enumerate(hits):
        at = np.flatnonzero(pos == p)
        for i, k in zip(at.tolist(), full_keys(h, rows[at])):
            keys[i] = k
    return Anchors(before + first, keys)  # type: ignore[arg-type]


def full_keys(h: ShardHits, rows: np.ndarray) -> list[list[Any]]:
    """Rows' full keys in the form ``Shard.sample`` sends them (``Candidates.keys_at``)."""
    return keys_of(h.columns, h.missing, h.ties, rows)
