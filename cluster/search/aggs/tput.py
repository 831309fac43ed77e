"""The exact top ``size`` of summed ``terms`` counts without every shard's every key (TPUT).

Cao & Wang's three-phase uniform threshold (2004), over ``m`` shards:

1. each shard ships its top ``k >= size`` keys by count (and its bucket total, and a bound:
   no key it left out has more documents than its ``k``-th); τ1 = the ``size``-th largest
   partial sum (a lower bound of the ``size``-th largest true sum);
2. each shard whose bound reaches ``T = ceil(τ1 / m)`` ships every key with ``>= T``
   documents; a key no shard has shipped then has fewer than ``T`` on every shard, so a sum
   below ``m·T``... at most ``m·(T - 1) < τ1``: it is not in the top;
3. each key's sum lies between its known counts (lower) and those plus the bound of every
   shard that has not reported it (upper); τ2 = the ``size``-th largest lower bound; the keys
   whose upper bound reaches τ2 are the candidates, whose missing counts the shards then
   report exactly. The top ``size`` of the candidates (count desc, key asc) is the exact top.

``sum_other_doc_count`` is exact too: every shard's bucket total minus the top's counts.
Everything here is pure (no I/O): ``rounds.py`` asks the shards.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...engine.aggs.parse import AggNode
from ...engine.aggs.partials import Keyed
from ...engine.aggs.tput import Cut


def cut_for(node: AggNode) -> Cut | None:
    """The round-1 cut of a top-level ``terms`` that rounds make exact, or None (the shards
    then ship every bucket, up to ``search.aggs.max_shard_terms``).

    Bounded: order by ``_count`` desc (TPUT) or by ``_key`` (each shard's first ``size`` keys
    suffice), with ``min_doc_count: 1`` (a larger one would make ``sum_other_doc_count`` count
    only the keys above it, which needs them all; 0 adds every key with no document)."""
    if node.type != "terms" or "_keys" in node.params:
        return None
    p = node.params
    if p.get("min_doc_count", 1) != 1:
        return None
    size = int(p.get("size", 10))
    order = p.get("order") or [("_count", "desc"), ("_key", "asc")]
    if order[0][0] == "_key":
        return Cut("key", size, desc=order[0][1] == "desc")
    if list(order[:2]) == [("_count", "desc"), ("_key", "asc")]:
        shard_size = p.get("shard_size")   # Elasticsearch's default shard_size
        return Cut("top", max(size, int(shard_size) if shard_size else size * 3 // 2 + 10))
    return None


def _py(key: Any) -> Any:
    return key.item() if isinstance(key, np.generic) else key


@dataclass
class TermsRounds:
    """What the coordinator knows of one ``terms`` across ``m`` shards, round after round."""

    m: int
    size: int
    counts: dict[Any, dict[int, int]] = field(default_factory=dict)   # key -> shard -> count
    bound: list[int] = field(default_factory=list)      # a key not reported has <= this
    total: list[int] = field(default_factory=list)      # every bucket's documents, per shard
    distinct: list[int] = field(default_factory=list)   # keys per shard
    shipped: list[int] = field(default_factory=list)    # keys shipped per shard, all rounds
    kinds: list[Keyed | None] = field(default_factory=list)   # a shard's partial (key dtype)

    def __post_init__(self) -> None:
        self.bound = [0] * self.m
        self.total = [0] * self.m
        self.distinct = [0] * self.m
        self.shipped = [0] * self.m
        self.kinds = [None] * self.m

    def add(self, s: int, part: Keyed, first: bool = False) -> None:
        """Shard ``s``'s answer to a round (its round-1 cut sets its bound and total)."""
        if first:
            self.bound[s], self.total[s], self.distinct[s] = part.bound, part.total, \
                part.distinct
            self.kinds[s] = part
        self.shipped[s] += len(part.counts)
        for key, c in zip(part.keys.tolist(), part.counts.tolist()):
            self.counts.setdefault(_py(key), {})[s] = int(c)

    def _lower(self) -> dict[Any, int]:
        return {k: sum(by.values()) for k, by in self.counts.items()}

    def _kth(self, values: Any) -> int:
        """The ``size``-th largest of ``values`` (0 when fewer)."""
        vals = sorted(values, reverse=True)
        return vals[self.size - 1] if len(vals) >= self.size else 0

    def threshold(self) -> int:
        """Round 2's ``T``: ceil(τ1 / m), at least 1."""
        return max(1, math.ceil(self._kth(self._lower().values()) / self.m))

    def needs_threshold(self, s: int, t: int) -> bool:
        """Whether shard ``s`` may hold an unreported key with ``t`` documents or more."""
        return self.bound[s] >= t

    def lower_bound(self, s: int, t: int) -> None:
        """Shard ``s`` reported every key with ``t`` documents or more."""
        self.bound[s] = min(self.bound[s], t - 1)

    def candidates(self) -> dict[int, list[Any]]:
        """Round 3: per shard, the candidate keys whose count there is still unknown."""
        lower = self._lower()
        tau2 = self._kth(lower.values())
        out: dict[int, list[Any]] = {}
        for key, by in self.counts.items():
            missing = [s for s in range(self.m) if s not in by and self.bound[s] > 0]
            if not missing:
                continue
            if lower[key] + sum(self.bound[s] for s in missing) >= tau2:
                for s in missing:
                    out.setdefault(s, []).append(key)
        return out

    def settle(self, asked: dict[int, list[Any]]) -> None:
        """After round 3: a candidate a shard was asked for and did not return has 0 there."""
        for s, keys in asked.items():
            for key in keys:
                self.counts[key].setdefault(s, 0)

    def exact(self, key: Any) -> bool:
        by = self.counts[key]
        return all(s in by or self.bound[s] == 0 for s in range(self.m))

    def top(self, cut: Cut) -> list[tuple[Any, int]]:
        """The final buckets ``(key, count)`` in the response's order (only exact keys: after
        round 3 every key that can be in the top is)."""
        sums = [(key, sum(by.values())) for key, by in self.counts.items() if self.exact(key)]
        if cut.mode == "key":
            sums.sort(key=lambda kc: kc[0], reverse=cut.desc)
        else:
            sums.sort(key=lambda kc: kc[0])
            sums.sort(key=lambda kc: kc[1], reverse=True)   # stable: key asc within a count
        return [kc for kc in sums[:self.size] if kc[1] > 0]

    def other(self, top: list[tuple[Any, int]]) -> int:
        """``sum_other_doc_count``: every shard's buckets minus the top's."""
        return sum(self.total) - sum(c for _, c in top)

    def partial(self, s: int, top: list[tuple[Any, int]], other: int) -> Keyed:
        """Shard ``s``'s exact counts of the final keys, as the reducer takes partials."""
        held = [(k, self.counts[k].get(s, 0)) for k, _ in top]
        held = [(k, c) for k, c in held if c > 0]
        like = self.kinds[s]
        dtype = like.keys.dtype if like is not None else object
        keys = np.array([k for k, _ in held], dtype=dtype) if held else np.zeros(0, dtype)
        return Keyed(np.zeros(len(held), dtype=np.int64), keys,
                     np.array([c for _, c in held], dtype=np.int64),
                     value_kind=like.value_kind if like is not None else "unmapped",
                     other=other)
