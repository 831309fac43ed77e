"""The path of one search at the coordinator, as a list of named steps (:meth:`SearchPath.run`).

1. ``_resolve``: the index expression to indices and shards (one copy each); the request's
   limits checked before any fan-out (``checks.py``);
2. ``_statistics``: global term statistics when the query scores (one fan-out, cached; the
   snapshot is fixed here; ``statistics.py``);
3. ``_query``: every shard returns its top ``from + size`` in the global order, as arrays — or,
   for a deep page, samples then a range, or a single shard's window (``query_phase.py``);
4. ``_merge``: order the union, cut ``[from, from + size)`` (``reduce.py``);
4b. ``_aggregate``: the extra rounds a cut top-level ``terms`` needs to be exact
   (``aggs/rounds.py``; none for other aggregations) — before a later round the search pins
   the generations round 1 read (``round_pins.py``), so a merge between rounds cannot take
   its snapshot away;
5. ``_fetch``: only the shards on the page return ``_source`` for the page's documents, unless
   the query round brought them (``fetch_phase.py``); ``explain`` asks the same shards;
6. ``_response``: Elasticsearch's response, hits rendered by ``hits.py``, aggregations reduced
   by ``aggs/phase.py``.

A search at "now" may reuse statistics counted at generations a shard has since left: that
shard answers ``StaleGeneration`` and the search runs again from step 2 with a fresh count.
Cursors (point in time, scroll, page tokens) pick the snapshot and call :meth:`SearchPath.run`
(``cursor_phase.py``).
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

from ..engine.inner_hits import inner_hit_queries
from ..engine.query.nodes import Query
from ..engine.query.score_nodes import filters_by_score
from ..engine.scoring import Stats
from ..engine.shard_calls import ShardCalls
from ..engine.shard_messages import ShardHits, ShardQuery
from ..engine.sorting import SCORE_SORT, SortField, score_only
from ..errors import SearchPhaseExecution, StaleGeneration
from ..indices.catalog import IndexMeta
from ..indices.resolver import Access, filtered, search_routing
from ..indices.routing import selected_shards
from .aggs.phase import (aggregation_rounds, has_rounds, plan_shard_queries,
                         refuse_too_many, response_aggregations)
from .checks import check_request
from .slicing import shard_part, sliced_query
from .cursors import raw_sort_values
from .failures import all_failed
from .fetch_phase import explain_page, fetch_page, inner_hits_page
from .hits import render_hit
from .profile import SearchProfile
from .query_phase import QueryRound
from .collapse import expand_groups
from .hit_extras import decorate_hits, rescored_merge, shard_k
from .indices_boost import boosted, index_boost
from .reduce import ReducedQuery, merge, total_hits
from .request import SearchRequest
from .round_pins import RoundPins, SnapshotMoved
from .settings import SearchSettings
from .statistics import Statistics
from .suggest import reduce_suggest
from .suggest_indices import IndexPlans, SuggestPlans, plan_suggesters
from .tuning import SearchTuning


@dataclass
class _Search:
    """One search as it moves through the steps."""

    req: SearchRequest
    t0: float
    deadline: float | None          # statistics and query rounds (the fetch round has its own)
    metas: list[IndexMeta]
    sort: tuple[SortField, ...]
    shard_list: list[Any]           # (index rank, meta, shard id, copy ref)
    scoring: bool
    prof: SearchProfile | None
    queries: list[ShardQuery] = field(default_factory=list)
    hits_list: list[tuple[Any, ShardHits]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    fetch_failures: list[dict[str, Any]] = field(default_factory=list)
    timed_out: bool = False
    page_from: int = 0
    filters: dict[str, Query] = field(default_factory=dict)   # the query with alias filters
    docs: list[Any] = field(default_factory=list)   # the page's fetched documents, in order
    suggest: SuggestPlans | None = None             # built on first use (``suggest_plans``)

    def suggest_plans(self) -> SuggestPlans:
        """The suggesters' plans, each index's from its own mapping (``suggest_indices.py``)."""
        if self.suggest is None:
            self.suggest = plan_suggesters(self.req.suggest,
                                           [(m.name, m.mapping) for m in self.metas])
        return self.suggest


class SearchPath:
    """The steps of a search over a backend (no Ray in here: the backend hides it)."""

    def __init__(self, catalog: Any, backend: Any, settings: SearchSettings,
                 tuning: SearchTuning | None = None) -> None:
        self.catalog = catalog      # indices/admin.py: the indices and their expressions
        self.backend = backend
        self.settings = settings
        self.tuning = tuning or SearchTuning()
        self.shards = ShardCalls(backend)
        self.statistics = Statistics(backend)
        self.query_round = QueryRound(backend, self.tuning)

    def targets(self, req: SearchRequest) -> list[IndexMeta]:
        """The indices ``req`` names, in the order that ranks them for tie-breaks."""
        return [self.catalog.indices[n] for n in sorted(self.access(req))]

    def access(self, req: SearchRequest) -> dict[str, Access]:
        """The indices ``req`` names and the alias filters and routing they are reached by
        (``indices/resolver.py``); a closed index named explicitly is refused. A cursor's
        later pages name its indices and carry the access they were first resolved with."""
        out = self.catalog.resolve_access(
            req.indices, ignore_unavailable=req.ignore_unavailable,
            expand_wildcards=req.expand_wildcards, allow_no_indices=req.allow_no_indices,
            refuse_closed=True)
        if req.access is not None:
            out = {n: req.access.get(n, a) for n, a in out.items()}
        return out

    async def run(self, req: SearchRequest,
                  snapshot: dict[tuple[str, int], int]) -> dict[str, Any]:
        """One search on ``snapshot`` (the generations already pinned; ``{}`` for "now")."""
        if not snapshot and has_rounds(req):
            return await self._run_with_rounds(req)
        return await self._run_at(req, snapshot)

    async def _run_at(self, req: SearchRequest, snapshot: dict[tuple[str, int], int],
                      pins: RoundPins | None = None) -> dict[str, Any]:
        s = self._resolve(req)
        guessed = await self._statistics(s, snapshot)
        await self._query(s)
        if guessed and any(f["reason"].get("type") == StaleGeneration.es_type
                           for f in s.failures):
            self.statistics.forget()   # a shard refreshed: statistics and snapshot afresh
            return await self._run_at(req, snapshot, pins)
        refuse_too_many(s.failures)   # search.aggs.max_shard_terms: a 400, never partial
        _check_failures(s.failures, s.hits_list, req, "query")
        reduced = self._merge(s)
        await self._aggregate(s, pins)
        page, hits = await self._fetch(s, reduced)
        await self._hit_extras(s, reduced, page, hits, snapshot)
        return self._response(s, reduced, page, hits)

    async def _run_with_rounds(self, req: SearchRequest) -> dict[str, Any]:
        """A search at "now" whose aggregations may take several rounds (``aggs/rounds.py``)
        reads one snapshot in all of them (``round_pins.py``): round 1 runs unpinned and the
        generations it read are pinned only if a later round runs; should one of them be gone
        by then, the search runs again with each shard's latest generation pinned first."""
        pins = RoundPins(self.shards)
        try:
            return await self._run_at(req, {}, pins)
        except SnapshotMoved:
            pass
        finally:
            await pins.release()
        return await self._run_pinned(req)

    async def _run_pinned(self, req: SearchRequest) -> dict[str, Any]:
        """The search on each shard's latest generation, pinned before round 1 and released
        after the search — also on an error or a cancel."""
        pins = RoundPins(self.shards)
        try:
            refs = [((m.name, sid), ref) for _, m, sid, ref in self._resolve(req).shard_list]
            return await self._run_at(req, await pins.latest(refs))
        finally:
            await pins.release()

    # --- 1. resolve ---------------------------------------------------------------------------

    def _resolve(self, req: SearchRequest) -> _Search:
        t0 = time.perf_counter()
        # ``timeout``: the statistics and query rounds share one deadline (wall clock, which the
        # shards compare with too); the fetch round has its own (see ``fetch_page``)
        deadline = None if req.timeout_ms is None else time.time() + req.timeout_ms / 1000.0
        access = self.access(req)
        metas = [self.catalog.indices[n] for n in sorted(access)]
        check_request(req, metas, self.settings.store)
        sort = req.sort or SCORE_SORT   # search_after is checked by each shard, as in ES
        routing = {m.name: search_routing(req.routing, access[m.name].routing) for m in metas}
        shard_list = [(rank, m, sid, ref) for rank, m in enumerate(metas)   # one copy each
                      for sid, ref in enumerate(self.backend.session(m.shards, req.preference))
                      if sid in selected_shards(m.number_of_shards, routing[m.name],
                                                req.preference)
                      and _in_slice(req, m, sid)]
        scoring = any(sf.field == "_score" or sf.script is not None for sf in sort) \
            or req.track_scores or req.min_score is not None or req.explain \
            or bool(req.named) or bool(req.rescore) \
            or filters_by_score(req.query) or filters_by_score(req.post_filter) \
            or req.query is not None and bool(inner_hit_queries(req.query))
        # explain, named and rescore queries, inner hits, scripts (they may read _score)
        # and min_score need the statistics
        prof = SearchProfile(shard_list, req.query, req.from_, req.size) if req.profile else None
        filters = {m.name: filtered(req.query, access[m.name].filters) for m in metas}
        return _Search(req, t0, deadline, metas, sort, shard_list, scoring, prof,
                       filters=filters)

    # --- 2. statistics ------------------------------------------------------------------------

    async def _statistics(self, s: _Search, snapshot: dict[tuple[str, int], int]) -> bool:
        """Statistics and the snapshot they saw, and the shard queries built on them; returns
        whether the snapshot was a guess (see the module docstring)."""
        req = s.req
        stats, gens, guessed = await self.statistics.gather(s.shard_list, req, s.scoring,
                                                            snapshot, s.deadline, s.prof)
        s.queries = self._shard_queries(s, stats, gens, guessed)
        if req.search_type == "query_then_fetch" and s.scoring:
            await self.statistics.per_shard(s.shard_list, s.queries, req, gens, s.deadline)
        if s.prof is not None:
            s.prof.phase("stats")
        return guessed

    def _shard_queries(self, s: _Search, stats: Stats | None, gens: dict[tuple[str, int], int],
                       guessed: bool) -> list[ShardQuery]:
        req = s.req
        k = shard_k(req)
        plans = s.suggest_plans().per_index if req.suggest else {}
        none = IndexPlans()
        queries = [ShardQuery(query=boosted(_shard_query(req, s.filters.get(m.name, req.query),
                                                         m, sid),
                                            index_boost(req.indices_boost, m.name)),
                              sort=s.sort, k=k, index_rank=rank,
                              generation=gens.get((m.name, sid)), stats=stats,
                              after=req.search_after,
                              track_scores=s.scoring or not req.sort,
                              min_score=req.min_score, terminate_after=req.terminate_after,
                              deadline=s.deadline, profile=req.profile, latest=guessed,
                              collapse=req.collapse.field if req.collapse else None,
                              named=req.named, rescore=tuple(r.query for r in req.rescore),
                              suggest=plans.get(m.name, none).terms,
                              phrase_suggest=plans.get(m.name, none).phrases,
                              completion=plans.get(m.name, none).completion)
                   for rank, m, sid, _ in s.shard_list]
        if req.aggs is not None or req.post_filter is not None:
            plan_shard_queries(queries, req, self.settings.store)   # search/aggs/phase.py
        return queries

    # --- 3. query -----------------------------------------------------------------------------

    async def _query(self, s: _Search) -> None:
        req, prof, queries = s.req, s.prof, s.queries
        deep = self._use_deep_page(req, len(s.shard_list))
        k = shard_k(req)
        if not deep and prof is None and k <= self.tuning.prefetch_max:
            for q in queries:   # query-and-fetch: small pages save the fetch round trip
                q.prefetch = k
        if deep:
            s.hits_list, s.failures, s.timed_out, s.page_from = await self.query_round.deep(
                s.shard_list, queries, req.from_, req.size, s.deadline, prof)
        else:
            s.hits_list, s.failures, s.timed_out = await self.query_round.top_k(
                s.shard_list, queries, s.deadline, prof)
            s.page_from = req.from_ if req.search_after is None else 0
        if prof is not None:
            prof.method = "deep_page" if deep else \
                "search_after" if req.search_after is not None else "from_size"
            prof.cursor = "scroll" if req.scroll else None
            prof.phase("query")

    def _use_deep_page(self, req: SearchRequest, shards: int) -> bool:
        """Whether the query round uses the deep-page method (``search/sample_and_range.py``:
        samples and a range over several shards, one window of a single shard): for a from/size
        page at or beyond ``deep_page_threshold``, or when the request's ``paging`` asks for it;
        never after a cursor or with ``terminate_after``."""
        if req.search_after is not None or req.scroll or req.terminate_after is not None \
                or req.paging == "from_size" or req.aggs is not None \
                or req.collapse is not None or req.rescore or req.named or req.suggest:
            return False
        if req.paging == "deep_page":
            return True
        return req.from_ >= self.tuning.deep_page_threshold

    # --- 4. merge -----------------------------------------------------------------------------

    def _merge(self, s: _Search) -> ReducedQuery:
        if s.req.rescore:
            reduced = rescored_merge(s.req, [h for _, h in s.hits_list], s.sort, s.page_from)
        else:
            reduced = merge([h for _, h in s.hits_list], s.sort, s.page_from, s.req.size)
        if s.prof is not None:
            s.prof.phase("merge")
        return reduced

    # --- 4b. aggregation rounds ------------------------------------------------------------

    async def _aggregate(self, s: _Search, pins: RoundPins | None) -> None:
        if s.req.aggs is None:
            return
        hold = None if pins is None else functools.partial(
            pins.hold, [(e[3], h.generation) for e, h in s.hits_list])
        failures = await aggregation_rounds(self.shards, s.req, s.shard_list, s.queries,
                                            s.hits_list, s.deadline, s.prof, hold)
        _check_failures(failures, s.hits_list, s.req, "query")
        s.failures = s.failures + failures
        if s.prof is not None:
            s.prof.phase("aggregate")

    # --- 5. fetch (and explain) ---------------------------------------------------------------

    async def _fetch(self, s: _Search, reduced: ReducedQuery
                     ) -> tuple[list[Any], list[dict[str, Any]]]:
        """The page (entries whose document came back) and its rendered hits."""
        req = s.req
        page_docs, s.fetch_failures, fetch_timed_out = await fetch_page(
            self.shards, s.hits_list, reduced.page, req.timeout_ms, s.prof)
        if s.prof is not None:
            s.prof.phase("fetch")
        if s.fetch_failures and not req.allow_partial_search_results:
            raise _partial("fetch", s.fetch_failures)
        s.failures = s.failures + s.fetch_failures
        s.timed_out = s.timed_out or fetch_timed_out
        # hits whose shard failed or timed out in the fetch round drop out of the page
        page = [e for e, d in zip(reduced.page, page_docs) if d is not None]
        s.docs = [d for d in page_docs if d is not None]
        metas_by_name = {m.name: m for m in s.metas}
        hits = []
        for entry, doc in zip(page, (d for d in page_docs if d is not None)):
            h = s.hits_list[entry.shard_pos][1]
            hits.append(render_hit(req, s.sort, h, entry.row, doc, metas_by_name[h.index]))
        if req.explain:
            await explain_page(self.shards, s.hits_list, page, s.shard_list, s.queries, hits)
        if req.query is not None and inner_hit_queries(req.query):
            await inner_hits_page(self.shards, s.hits_list, page, s.shard_list, s.queries, hits)
        return page, hits

    # --- 5b. what each hit shows besides its document ----------------------------------------

    async def _hit_extras(self, s: _Search, reduced: ReducedQuery, page: list[Any],
                          hits: list[dict[str, Any]],
                          snapshot: dict[tuple[str, int], int]) -> None:
        """Rescored scores, ``matched_queries``, highlights, the collapse key and its
        ``inner_hits`` (``hit_extras.py``)."""
        req = s.req
        entries = [(s.hits_list[e.shard_pos][1], e.row) for e in page]
        decorate_hits(req, reduced, page, entries, s.docs, hits, s.metas)
        if req.collapse is not None and req.collapse.inner_hits and hits:
            keys = [h.groups[row] if h.groups is not None else None for h, row in entries]
            await expand_groups(self.run, req, hits, keys, snapshot)

    # --- 6. response --------------------------------------------------------------------------

    def _response(self, s: _Search, reduced: ReducedQuery, page: list[Any],
                  hits: list[dict[str, Any]]) -> dict[str, Any]:
        req, hits_list = s.req, s.hits_list
        resp: dict[str, Any] = {
            "took": int((time.perf_counter() - s.t0) * 1000),
            "timed_out": s.timed_out,
            "_shards": {"total": len(s.shard_list),
                        "successful": len(hits_list) - len(s.fetch_failures), "skipped": 0,
                        "failed": len(s.failures)},
            "hits": _hits_section(req, reduced, hits),
        }
        if s.failures:
            resp["_shards"]["failures"] = s.failures
        if req.aggs is not None:
            resp["aggregations"] = response_aggregations(req, hits_list, s.metas,
                                                         self.settings.store)
        if req.suggest:
            resp["suggest"] = reduce_suggest(req.suggest, [h.suggest for _, h in hits_list
                                                           if h.suggest is not None],
                                             s.suggest_plans().reduce_mappings,
                                             req.typed_keys,
                                             req.source)
        if req.terminate_after is not None:
            resp["terminated_early"] = any(h.terminated_early for _, h in hits_list)
        resp["_snapshot"] = {f"{h.index}:{h.shard}": h.generation for _, h in hits_list}
        if page:   # where a cursor continues from (internal, popped by cursor_phase.py)
            last = page[-1]
            resp["_after"] = raw_sort_values(hits_list[last.shard_pos][1], last.row)
        if s.prof is not None:   # built after ``took``: measuring bytes costs time of its own
            resp["profile"] = s.prof.to_dict(int((time.perf_counter() - s.t0) * 1e9))
        return resp


def _hits_section(req: SearchRequest, reduced: ReducedQuery,
                  hits: list[dict[str, Any]]) -> dict[str, Any]:
    """``hits``: the total as asked (object, legacy int or none), ``max_score`` and the page."""
    # a sorted search tracks the max score only with track_scores, even when it sorts by
    # _score among other keys (Elasticsearch's TopFieldCollector)
    track_max = req.track_scores or not req.sort or score_only(req.sort)
    total = total_hits(reduced.total, req.track_total_hits)
    out: dict[str, Any] = {}
    if total is not None:
        out["total"] = total["value"] if req.rest_total_hits_as_int else total
    elif req.rest_total_hits_as_int:
        out["total"] = -1  # untracked total in the legacy int form (ES SearchHits)
    # size 0 collects no top hits, so Elasticsearch has no max score to report
    out["max_score"] = reduced.max_score if track_max and req.size > 0 \
        and reduced.max_score is not None else None
    out["hits"] = hits
    return out


def _check_failures(failures: list[dict[str, Any]], answered: list[Any], req: SearchRequest,
                    phase: str) -> None:
    """No shard answered: the search fails; some failed: it fails unless partial results are
    allowed."""
    if failures and not answered:
        raise all_failed(failures)
    if failures and not req.allow_partial_search_results:
        raise _partial(phase, failures)


def _partial(phase: str, failures: list[dict[str, Any]]) -> SearchPhaseExecution:
    return SearchPhaseExecution("Partial shards failure", phase=phase, grouped=True,
                                failed_shards=failures,
                                root_cause=[f["reason"] for f in failures])


def _in_slice(req: SearchRequest, meta: IndexMeta, sid: int) -> bool:
    """Whether a sliced request reads shard ``sid`` at all (``slicing.py``)."""
    return req.slice is None or shard_part(req.slice, sid, meta.number_of_shards) is not None


def _shard_query(req: SearchRequest, query: Any, meta: IndexMeta, sid: int) -> Any:
    """The query one shard runs: ``query`` (the request's with its alias filters), narrowed to
    the shard's part of a slice."""
    if req.slice is None:
        return query
    part = shard_part(req.slice, sid, meta.number_of_shards)
    return query if part is None else sliced_query(query, part)
