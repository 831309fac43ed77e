"""A shard's side of the bounded ``terms`` rounds: which of its buckets it ships.

A top-level ``terms`` ordered by count (or by key) does not need every shard's every bucket to
be exact (``cluster/search/aggs/tput.py`` runs the rounds). Each round asks a shard for a *cut*
of its ``(key, count)`` buckets at the search's snapshot:

* ``top``: its first ``k`` by count desc, key asc (TPUT's round 1);
* ``key``: its first ``k`` in key order (exact alone: a key among the global first ``size``
  has fewer than ``size`` keys before it on every shard that holds it);
* ``at_least``: every bucket with at least ``threshold`` documents but the first ``k`` by
  count, shipped already (TPUT's round 2);
* ``all``: no cut (the later rounds, whose keys the node's ``_keys`` already restricts).

A cut partial also carries the shard's bucket total and key count (exact
``sum_other_doc_count``) and ``bound``: no bucket left out has more documents. Pure NumPy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import SearchError
from .partials import Keyed

#: ``search.aggs.max_shard_terms``: most keyed buckets one shard ships for one search
DEFAULT_MAX_SHARD_TERMS = 1_000_000


class TooManyShardTerms(SearchError):
    """A shard would ship more buckets than ``search.aggs.max_shard_terms`` allows."""

    es_type = "too_many_buckets_exception"
    status = 400


@dataclass(frozen=True)
class Cut:
    """What a shard keeps of one top-level ``terms`` partial."""

    mode: str                 # top / key / at_least / all
    k: int = 0
    desc: bool = False        # ``key``: descending key order
    threshold: int = 0        # ``at_least`` (``k``: round 1's cut, not shipped again)


def key_ranks(keys: np.ndarray) -> np.ndarray:
    """Each key's rank in ascending key order (strings or numbers)."""
    order = np.argsort(keys, kind="stable")
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[order] = np.arange(len(keys))
    return ranks


def _by_count(part: Keyed, ranks: np.ndarray | None = None) -> np.ndarray:
    """Bucket positions by count desc, key asc (the order round 1 cuts in)."""
    return np.lexsort((key_ranks(part.keys) if ranks is None else ranks, -part.counts))


def apply_cut(part: Keyed, cut: Cut) -> Keyed:
    """``part`` (one owner, no sub-aggregations) reduced to the buckets ``cut`` keeps."""
    n = len(part.counts)
    total, distinct = int(part.counts.sum()), n
    if cut.mode == "all":
        keep = np.arange(n)
        bound = 0
    elif cut.mode == "at_least":   # but not round 1's top k, already shipped
        rest = _by_count(part)[cut.k:]
        keep = np.sort(rest[part.counts[rest] >= cut.threshold])
        bound = max(0, cut.threshold - 1)
    else:
        ranks = key_ranks(part.keys)
        if cut.mode == "top":
            order = _by_count(part, ranks)
        else:
            order = np.argsort(-ranks if cut.desc else ranks, kind="stable")
        keep = np.sort(order[:cut.k])
        # a left-out bucket has no more documents than the last one shipped
        bound = 0 if n <= cut.k or cut.mode == "key" else int(part.counts[order[cut.k - 1]])
    return Keyed(part.owner[keep], part.keys[keep], part.counts[keep], subs=part.subs,
                 value_kind=part.value_kind, total=total, distinct=distinct, bound=bound)


def shipped_buckets(partials: dict[str, Any]) -> int:
    """Keyed buckets in a shard's partials, at every depth (what the limit counts)."""
    n = 0
    for p in partials.values():
        if isinstance(p, Keyed):
            n += len(p.counts)
        subs = getattr(p, "subs", None)
        if subs:
            n += shipped_buckets(subs)
    return n


def check_shipped(partials: dict[str, Any], limit: int) -> None:
    """Refuse to ship more than ``limit`` keyed buckets (Elasticsearch's error shape)."""
    n = shipped_buckets(partials)
    if n > limit:
        raise TooManyShardTerms(
            f"Trying to create too many buckets. Must be less than or equal to: [{limit}] but "
            f"this number of buckets was [{n}]. This limit can be set by changing the "
            "[search.aggs.max_shard_terms] cluster level setting.",
            extra={"max_buckets": limit})
