"""The query round of a search: every shard's top ``k``, or a deep page's samples and range.

A classic page asks each shard for its top ``from + size`` in the global order. A deep page
(``search/sample_and_range.py``) asks for samples first, brackets the page between two sort
keys, then asks each shard only for its rows in the bracket; a single shard serves the page's
window directly. A deep page the coordinator has already placed (``search/page_anchors.py``)
takes one round from its first hit's key.
"""
from __future__ import annotations

import functools
import pickle
from dataclasses import replace
from typing import Any

from ..engine.shard_calls import ShardCalls
from ..engine.shard_messages import ShardHits, ShardQuery
from .failures import answers
from .fanout import fan_out, share
from .page_anchors import Anchors, learn
from .profile import SearchProfile
from .sample_and_range import bracket
from .tuning import SearchTuning


class QueryRound:
    """The query round over a backend; deep pages keep their samples (see ``_samples_key``)."""

    def __init__(self, backend: Any, tuning: SearchTuning) -> None:
        self.shards = ShardCalls(backend)
        self.tuning = tuning
        self.samples_memo: dict[bytes, Any] = {}
        self.anchors_memo: dict[bytes, Anchors] = {}

    async def top_k(self, shard_list: list[Any], queries: list[ShardQuery],
                    deadline: float | None, prof: SearchProfile | None = None
                    ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]], bool]:
        """Every shard's top ``k`` (one fan-out, within ``deadline``; see ``search/fanout.py`` for
        retries). Returns the answers, the failures and whether a shard timed out."""
        outcomes = await fan_out([functools.partial(self.shards.query, ref, q)
                                  for (_, _, _, ref), q in zip(shard_list, queries)], deadline)
        failures: list[dict[str, Any]] = []
        answered, timed_out = answers(
            shard_list, outcomes, failures,
            None if prof is None else lambda i, e, o: prof.query_hits(e, o, queries[i].k))
        return [(entry, hits) for _, entry, hits in answered], failures, timed_out

    async def deep(self, shard_list: list[Any], queries: list[ShardQuery], from_: int,
                   size: int, deadline: float | None = None,
                   prof: SearchProfile | None = None
                   ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]], bool, int]:
        """Query phase for deep pages (``search/sample_and_range.py``): samples, then a range.

        The samples get half the time left until ``deadline``, the range round the rest; a
        shard that fails or times out in either round is left out (its matches are then
        missing from the count before the page, as a failed shard's are from a classic page).
        """
        if len(shard_list) == 1:   # one shard knows where the page starts: one round
            return await self._window(shard_list[0], queries[0], from_, size, deadline,
                                      prof)
        key = self._samples_key(shard_list, queries) if prof is None else None
        if key is not None and size > 0:
            placed = await self._placed(shard_list, queries, key, from_, size, deadline)
            if placed is not None:
                return placed
        failures: list[dict[str, Any]] = []
        timed_out = False
        memo = self.samples_memo
        cached = memo.get(key) if key is not None else None
        if cached is not None:
            live, samples, kinds = cached
        else:
            first = share(deadline, 0.5)
            outcomes = await fan_out([functools.partial(self.shards.sample, ref,
                                                        replace(q, deadline=first),
                                                        self.tuning.deep_page_samples)
                                      for (_, _, _, ref), q in zip(shard_list, queries)], first)
            answered, timed_out = answers(
                shard_list, outcomes, failures,
                None if prof is None else lambda i, e, o: prof.sample(e, o))
            live, samples, kinds = [], [], None
            for i, _, (n, keys, ranks, k) in answered:
                live.append(i)
                samples.append((n, keys, ranks))
                if kinds is None or n:
                    kinds = k
            if key is not None and not failures and not timed_out:
                _keep(memo, key, (live, samples, kinds))
        sort = queries[0].sort
        br = bracket(sort, kinds or [], samples, from_, size)
        # the range round's rows (about size + 2 matches/samples per shard) bring their
        # documents only when they are few (``prefetch_deep_max``; not when profiling)
        prefetch = br.limit if prof is None and br.limit <= self.tuning.prefetch_deep_max else 0
        outcomes2 = await fan_out([functools.partial(self.shards.range, shard_list[i][3],
                                                     replace(queries[i], prefetch=prefetch),
                                                     br.lo, br.hi, br.limit)
                                   for i in live], deadline)
        answered, late = answers(
            [shard_list[i] for i in live], outcomes2, failures,
            None if prof is None else lambda i, e, o: prof.query_hits(e, o, br.limit))
        before = sum(below for _, _, (below, _) in answered)
        if key is not None and not failures and not (timed_out or late):
            anchors = learn([hits for _, _, (_, hits) in answered], sort, before, br.limit,
                            from_)
            if anchors is not None:
                _keep(self.anchors_memo, key, anchors)
        return [(entry, hits) for _, entry, (_, hits) in answered], failures, \
            timed_out or late, max(0, from_ - before)

    async def _placed(self, shard_list: list[Any], queries: list[ShardQuery], key: bytes,
                      from_: int, size: int, deadline: float | None
                      ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]], bool,
                                 int] | None:
        """A deep page whose first hit's key is known (``search/page_anchors.py``): one round,
        every shard's first ``size`` rows from that key with their documents; None when the
        page is not placed, or when the shards' counts before the key do not add up to
        ``from`` (the anchors are then dropped and the two rounds answer)."""
        anchors = self.anchors_memo.get(key)
        lo = anchors.key_at(from_) if anchors is not None else None
        if lo is None:
            return None
        prefetch = size if size <= self.tuning.prefetch_deep_max else 0
        outcomes = await fan_out([functools.partial(self.shards.range, ref,
                                                    replace(q, prefetch=prefetch), lo, None,
                                                    size)
                                  for (_, _, _, ref), q in zip(shard_list, queries)], deadline)
        failures: list[dict[str, Any]] = []
        answered, timed_out = answers(shard_list, outcomes, failures, None)
        before = sum(below for _, _, (below, _) in answered)
        if not failures and not timed_out and before != from_:
            self.anchors_memo.pop(key, None)
            return None
        return [(entry, hits) for _, entry, (_, hits) in answered], failures, timed_out, \
            max(0, from_ - before)

    @staticmethod
    def _samples_key(shard_list: list[Any], queries: list[ShardQuery]) -> bytes | None:
        """What a deep page's samples depend on, or None when a shard's generation is not
        named: the samples of a query at given generations never change (what a generation
        sees is fixed), so the next deep page of the same query — the next page, a repeat —
        skips round 1. A generation that was a guess (``latest``) is checked by the range
        round: a shard that has refreshed answers ``StaleGeneration`` and the search runs
        again, with new generations and so a new key."""
        if any(q.generation is None for q in queries):
            return None
        return pickle.dumps([(m.name, m.uuid, sid, q.query, q.sort, q.stats, q.after,
                              q.min_score, q.index_rank, q.generation)
                             for (_, m, sid, _), q in zip(shard_list, queries)])

    async def _window(self, entry: Any, q: ShardQuery, from_: int, size: int,
                      deadline: float | None, prof: SearchProfile | None
                      ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]], bool, int]:
        """The deep page of a single-shard search: the shard's rows ``[from, from + size)``
        with their documents, whatever the depth."""
        prefetch = size if prof is None and size <= self.tuning.prefetch_deep_max else 0
        outcomes = await fan_out([functools.partial(self.shards.window, entry[3],
                                                    replace(q, prefetch=prefetch), from_,
                                                    size)], deadline)
        failures: list[dict[str, Any]] = []
        answered, timed_out = answers(
            [entry], outcomes, failures,
            None if prof is None else lambda i, e, o: prof.query_hits(e, o, size))
        if not answered:
            return [], failures, timed_out, 0
        below, hits = answered[0][2]
        return [(entry, hits)], [], False, max(0, from_ - below)


def _keep(memo: dict[bytes, Any], key: bytes, value: Any, most: int = 64) -> None:
    """Remember ``value`` under ``key``, forgetting the oldest entry beyond ``most``."""
    if key not in memo and len(memo) >= most:
        memo.pop(next(iter(memo)))
    memo[key] = value
