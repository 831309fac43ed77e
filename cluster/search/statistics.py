"""Global term statistics of a search: one fan-out before the query round, cached.

Scores must not depend on how documents fall on shards, so a scoring search first sums each
shard's document frequencies (``dfs``); the snapshot the statistics saw is the one the query
round then reads. ``query_then_fetch`` asks each shard for its own statistics instead.
"""
from __future__ import annotations

import functools
from typing import Any

from ..engine.query.fuzzy import FuzzySpec
from ..engine.query.nodes import (Bool, MatchAll, MatchPhrase, MultiMatch, Query,
                                  QueryString)
from ..engine.query.more_like_this import MoreLikeThis
from ..engine.query.rewrite import scoring_terms, walk
from ..engine.scoring import PrefixTerms, Stats
from ..engine.shard_calls import ShardCalls
from ..engine.shard_messages import ShardQuery
from ..indices.catalog import IndexMeta
from .fanout import fan_out, share
from .profile import SearchProfile
from .request import SearchRequest


class Statistics:
    """The statistics round over a backend, with its cache (see :meth:`gather`)."""

    def __init__(self, backend: Any) -> None:
        self.shards = ShardCalls(backend)
        self.memo: dict[Any, Any] = {}

    def forget(self) -> None:
        """A shard refreshed under a guessed snapshot: count afresh next time."""
        self.memo.clear()

    async def gather(self, shard_list: list[Any], req: SearchRequest, scoring: bool,
                     snapshot: dict[tuple[str, int], int] | None,
                     deadline: float | None, prof: SearchProfile | None
                     ) -> tuple[Stats | None, dict[tuple[str, int], int], bool]:
        """:meth:`_count` without its fan-out when the same terms were counted on the same
        shards at the same generations: ``(stats, snapshot, guessed)``.

        A pinned snapshot (point in time, scroll, page token) names every generation, and what
        a generation sees never changes, so its statistics are cached for good. A search at
        "now" reuses the generations the last count saw and marks them ``guessed``: a shard
        that has refreshed since answers ``StaleGeneration`` and the search runs again with a
        fresh count — so results equal the uncached path's. Profiled and ``query_then_fetch``
        searches always count.
        """
        query = stats_query(req)
        scoring = (scoring or needs_statistics(query, [m for _, m, _, _ in shard_list])
                   or _chooses_fuzzy_terms(query, shard_list))
        if prof is not None or req.search_type == "query_then_fetch" or not scoring \
                or isinstance(query, MatchAll):
            stats, gens = await self._count(shard_list, query, scoring, snapshot,
                                            deadline, prof)
            return stats, gens, False
        pinned = bool(snapshot) and all((m.name, sid) in snapshot for _, m, sid, _ in shard_list)
        try:
            key = (repr(query), pinned,
                   tuple((m.name, m.uuid, getattr(m.mapping, "version", None), sid,
                          snapshot.get((m.name, sid)) if pinned and snapshot else None)
                         for _, m, sid, _ in shard_list))
        except Exception:  # noqa: BLE001 - an unprintable query: no cache
            key = None
        memo = self.memo
        got = memo.get(key) if key is not None else None
        if got is not None:
            return got[0], dict(got[1]), not pinned
        stats, gens = await self._count(shard_list, query, scoring, snapshot,
                                        deadline, prof)
        if key is not None and all((m.name, sid) in gens for _, m, sid, _ in shard_list):
            if len(memo) >= 1024:
                memo.pop(next(iter(memo)))
            memo[key] = (stats, dict(gens))
        return stats, gens, False

    async def _count(self, shard_list: list[Any], query: Query, scoring: bool,
                     snapshot: dict[tuple[str, int], int] | None,
                     deadline: float | None = None, prof: SearchProfile | None = None
                     ) -> tuple[Stats | None, dict[tuple[str, int], int]]:
        """Global statistics (summed over every shard searched) and the snapshot they saw."""
        gens: dict[tuple[str, int], int] = dict(snapshot or {})
        if not scoring or isinstance(query, MatchAll):
            return None, gens
        per_index_terms = {m.name: stats_request(scoring_terms(query, m.mapping))
                           for _, m, _, _ in shard_list}
        if not any(t for _, t in per_index_terms.values()):
            return None, gens
        # at most half the time left: a shard too slow here is left out of the statistics
        # (scores then rest on the shards that answered) rather than sink the query round
        deadline = share(deadline, 0.5)
        calls = [functools.partial(self.shards.term_stats, ref, *per_index_terms[m.name],
                                   gens.get((m.name, sid)), deadline)
                 for _, m, sid, ref in shard_list]
        outcomes = await fan_out(calls, deadline)
        total = Stats()
        for entry, o in zip(shard_list, outcomes):
            _, m, sid, _ = entry
            if prof is not None:
                prof.stats(entry, o)
            if not o.ok:   # the shard's query round reports it (failed or timed out)
                continue
            st, gen = o.value
            total.add(st)
            gens[(m.name, sid)] = gen
        return total, gens

    async def _local(self, ref: Any, query: Query, meta: IndexMeta, gen: int | None,
                     deadline: float | None = None) -> Stats:
        fields, terms = stats_request(scoring_terms(query, meta.mapping))
        st, _ = await self.shards.term_stats(ref, fields, terms, gen, deadline)
        return st

    async def per_shard(self, shard_list: list[Any], queries: list[ShardQuery],
                        req: SearchRequest, gens: dict[tuple[str, int], int],
                        deadline: float | None) -> None:
        """``query_then_fetch``: each shard scores with its own statistics (a shard that
        cannot count them is reported by the query round)."""
        local = await fan_out([functools.partial(self._local, ref, stats_query(req), m,
                                                 gens.get((m.name, sid)), deadline)
                               for _, m, sid, ref in shard_list], deadline)
        for q, o in zip(queries, local):
            q.stats = o.value if o.ok else None


def stats_request(terms: set[Any]) -> tuple[list[str], list[Any]]:
    """``(fields, terms)`` for a shard's ``term_stats``, in a stable order: the ``(field,
    term)`` pairs and fuzzy terms (``FuzzySpec``), then the prefix expansions asked
    for (``PrefixTerms``)."""
    pairs = sorted(t for t in terms if not isinstance(t, PrefixTerms))
    prefixes = sorted((t for t in terms if isinstance(t, PrefixTerms)),
                      key=lambda p: (p.field, p.prefix, p.limit))
    fields = sorted({t[0] for t in pairs} | {p.field for p in prefixes})
    return fields, [*pairs, *prefixes]


def needs_statistics(query: Query, metas: list[Any]) -> bool:
    """Whether the query's *matches* depend on the statistics round (a phrase prefix's
    expansions, the terms ``more_like_this`` chooses), so that even a search that does not score gathers them."""
    nodes = walk(query)
    if any(isinstance(n, MoreLikeThis) for n in nodes):
        return True
    if not any(isinstance(n, (MatchPhrase, MultiMatch, QueryString)) for n in nodes):
        return False         # nothing that can become a phrase prefix: no analysis
    return any(isinstance(t, PrefixTerms) for m in metas
               for t in scoring_terms(query, m.mapping))


def _chooses_fuzzy_terms(query: Query, shard_list: list[Any]) -> bool:
    """Whether ``query`` holds a fuzzy term whose kept expansions are chosen over every shard:
    then even a search that does not score gathers statistics, so it matches what the same
    search sorted by score matches."""
    seen = set()
    for _, m, _, _ in shard_list:
        if m.name not in seen:
            seen.add(m.name)
            if any(isinstance(t, FuzzySpec) for t in scoring_terms(query, m.mapping)):
                return True
    return False


def stats_query(req: SearchRequest) -> Query:
    """The query whose terms the statistics count: the search's, and its rescore queries'
    (scored on the shards with the same global statistics), and a ``post_filter`` whose
    matches depend on them (``more_like_this``, phrase prefixes)."""
    extra = tuple(r.query for r in req.rescore)
    post = req.post_filter
    if post is not None and any(isinstance(n, (MoreLikeThis, MultiMatch))
                                or isinstance(n, MatchPhrase) and n.prefix for n in walk(post)):
        extra += (post,)
    return Bool(should=(req.query,) + extra) if extra else req.query
