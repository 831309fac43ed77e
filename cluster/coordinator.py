"""The coordinator: index metadata, write routing, and the two phases of every search.

``Coordinator`` is plain async Python over a :class:`~.distribution.local_backend.ShardBackend`;
the Ray actor (``distribution/coordinator_actor.py``) is a thin async shell around it, so one slow
search never blocks the others, and it runs only the verbs in ``Coordinator.VERBS``. The path of a
search (``search``):

1. resolve the index expression to shards; check the result window;
2. gather global term statistics when the query scores (one fan-out, the snapshot is fixed here);
3. query phase: every shard returns its top ``from + size`` in the global order, as arrays;
4. merge: order the union, cut ``[from, from + size)``;
5. fetch phase: only the shards on the page return ``_source`` for the page's documents;
6. build Elasticsearch's response.
"""
from __future__ import annotations

import asyncio
import fnmatch
import functools
import os
import pickle
import time
import uuid
from dataclasses import replace
from typing import Any

import orjson

from .distribution.local_backend import ShardBackend
from .search.sample_and_range import DEFAULT_SAMPLES, bracket
from .search.cursor_phase import CursorOps
from .search.cursors import raw_sort_values
from .errors import (IllegalArgument, SearchError, SearchPhaseExecution, StaleGeneration,
                     actor_died, domain_error)
from .search.fanout import fan_out, share
from .documents import bulk
from .documents.get import get_doc
from .indices.catalog import (IndexMeta)
from .indices.admin import IndexAdmin
from .indices.health import cluster_health, status_of
from .indices.routing import selected_shards
from .engine.limits import check_expensive_queries, expensive_allowed
from .engine.query.rewrite import expand, scoring_terms
from .engine.query.validation import check_clause_limits
from .search.reduce import merge, total_hits
from .engine.shard_messages import ShardHits, ShardQuery
from .engine.numformat import decimal_format
from .search.profile import SearchProfile
from .engine.query.dsl import MatchAll, Query
from .search.request import SearchRequest, refuse_unsupported
from .search.aggs.phase import plan_shard_queries, response_aggregations
from .engine.scoring import Stats
from .distribution.simulation import SimulationRule, Trouble, simulation_status
from .engine.sorting import SCORE_SORT, SortField, score_only, sort_value_out
from .engine.source_filter import filter_source

VERSION = "8.15.0"
class Coordinator(CursorOps):
    """Index metadata, write routing and search orchestration (no Ray in here)."""

    # the remote interface: the only methods the actor (and its fast lane) runs by name
    VERBS = frozenset({
        # indices
        "create_index", "delete_index", "resolve", "get_index", "index_exists", "get_mapping",
        "put_mapping", "field_caps", "get_settings", "put_settings", "refresh",
        # documents
        "bulk", "get_doc",
        # search and cursors
        "search", "count", "open_pit", "close_pits", "list_pits", "scroll", "clear_scroll",
        "get_cluster_settings", "put_cluster_settings",
        # cluster
        "health", "info", "cat_indices", "shard_infos", "simulate", "simulate_clear", "simulation",
    })

    # pages with from + size up to this come back with their documents from the query phase
    prefetch_max = 50
    # deep pages: the range round's rows come back with their documents up to this many
    # (a range holds ~size + 2 m / samples rows per shard, most not on the page: decompressing
    # hundreds of sources cost more than the fetch round it saves)
    prefetch_deep_max = 50

    def __init__(self, backend: ShardBackend, cluster_name: str = "shardsearch") -> None:
        self.backend = backend
        self.cluster_name = cluster_name
        self.cluster_uuid = uuid.uuid4().hex[:22]
        self.admin = IndexAdmin(backend)   # the catalog of indices and its admin API
        self.node_name = os.uname().nodename if hasattr(os, "uname") else "node"
        # pages at or beyond this depth use the sample-and-range method
        # (search/sample_and_range.py);
        # a request's ``paging`` parameter overrides the choice
        self.deep_page_threshold = 1000
        self.deep_page_samples = DEFAULT_SAMPLES
        # simulated trouble now on (distribution/simulation.py)
        self.sim_rules: list[SimulationRule] = []

    # --- indices (indices/admin.py) -------------------------------------------------------------

    @property
    def indices(self) -> dict[str, IndexMeta]:
        return self.admin.indices

    @property
    def durable(self) -> Any:
        return self.admin.durable

    @durable.setter
    def durable(self, value: Any) -> None:
        self.admin.durable = value

    @property
    def auto_refresh(self) -> bool:
        return self.admin.auto_refresh

    @auto_refresh.setter
    def auto_refresh(self, value: bool) -> None:
        self.admin.auto_refresh = value

    def create_index(self, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.admin.create_index(name, body)

    def auto_create(self, name: str) -> IndexMeta:
        return self.admin.auto_create(name)

    def delete_index(self, expr: str) -> dict[str, Any]:
        self.forget_cursors_of(self.admin.delete_index(expr))
        return {"acknowledged": True}

    def resolve(self, expr: str | tuple[str, ...] | list[str] | None, **options: Any) -> list[str]:
        return self.admin.resolve(expr, **options)

    def get_index(self, expr: str) -> dict[str, Any]:
        return self.admin.get_index(expr)

    def index_exists(self, expr: str) -> bool:
        return self.admin.index_exists(expr)

    def get_mapping(self, expr: str | None) -> dict[str, Any]:
        return self.admin.get_mapping(expr)

    def field_caps(self, expr: str | None, fields: list[str], **options: Any) -> dict[str, Any]:
        return self.admin.field_caps(expr, fields, **options)

    async def put_mapping(self, expr: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.admin.put_mapping(expr, body)

    def get_settings(self, expr: str | None) -> dict[str, Any]:
        return self.admin.get_settings(expr)

    def put_settings(self, expr: str | None, body: dict[str, Any]) -> dict[str, Any]:
        return self.admin.put_settings(expr, body)

    async def refresh(self, expr: str | None) -> dict[str, Any]:
        return await self.admin.refresh(expr)

    def mark_dirty(self, index: str, shard: int) -> None:
        self.admin.mark_dirty(index, shard)

    # --- documents (documents/) -------------------------------------------------------------

    async def bulk(self, items: list[dict[str, Any]] | bytes, refresh: bool = False,
                   as_json: bool = False) -> dict[str, Any]:
        """Apply a batch of writes (``documents/bulk.py``)."""
        return await bulk.bulk(self, items, refresh, as_json)

    async def get_doc(self, index: str, doc_id: str, routing: str | None = None,
                      realtime: bool = True) -> dict[str, Any]:
        return await get_doc(self.indices, self.backend, index, doc_id, routing)

    # --- search -------------------------------------------------------------------------------

    def _targets(self, req: SearchRequest) -> list[IndexMeta]:
        names = self.resolve(req.indices, ignore_unavailable=req.ignore_unavailable,
                             allow_no_indices=req.allow_no_indices)
        return [self.indices[n] for n in sorted(names)]

    async def search(self, req: SearchRequest,
                     snapshot: dict[tuple[str, int], int] | None = None) -> dict[str, Any]:
        """Run one search; see the module docstring for the phases.

        ``snapshot`` None means a top-level search: it goes through ``search_with_cursors``
        (point in time, scroll, page tokens; ``search/cursor_phase.py``), which comes back here
        with one.
        """
        if snapshot is None:
            resp = await self.search_with_cursors(req)
            if req.pit is not None and isinstance(resp.get("profile"), dict):
                resp["profile"]["shardsearch"].update(method="pit", cursor="pit")
            return resp
        t0 = time.perf_counter()
        # ``timeout``: the statistics and query rounds share one deadline (wall clock, which the
        # shards compare with too); the fetch phase has its own (see ``_fetch_phase``)
        deadline = None if req.timeout_ms is None else time.time() + req.timeout_ms / 1000.0
        metas = self._targets(req)
        if not req.scroll:
            for m in metas:
                window = req.from_ + req.size
                if window > m.max_result_window:
                    raise _shard_level(m.name, IllegalArgument(
                        "Result window is too large, from + size must be less than or equal to: "
                        f"[{m.max_result_window}] but was [{window}]. See the scroll api for a "
                        "more efficient way to request large data sets. This limit can be set by "
                        "changing the [index.max_result_window] index level setting."))
        elif metas:
            limit = min(m.max_result_window for m in metas)
            if req.size > limit:
                raise IllegalArgument(
                    "Batch size is too large, size must be less than or equal to: "
                    f"[{limit}] but was [{req.size}]. Scroll batch sizes cost as much memory as "
                    "result windows so they are controlled by the [index.max_result_window] "
                    "index level setting.")
        for m in metas:
            _check_fetch_limits(req, m)
            # too_many_clauses / regex length before any fan-out
            try:
                check_clause_limits(req.query, m.mapping, max_regex_length=int(
                    m.settings.get("max_regex_length", 1000)))
            except SearchError as e:
                if e.es_type != "query_shard_exception":
                    raise
                raise _shard_level(m.name, e) from None
            if not expensive_allowed(self._search_settings()):
                check_expensive_queries(expand(req.query, m.mapping), m.mapping)
        refuse_unsupported(req)
        sort = req.sort or SCORE_SORT   # search_after is checked by each shard, as in ES
        shard_list = [(rank, m, sid, ref) for rank, m in enumerate(metas)   # one copy each
                      for sid, ref in enumerate(self.backend.session(m.shards))
                      if sid in selected_shards(m.number_of_shards, req.routing, req.preference)]
        scoring = any(sf.field == "_score" for sf in sort) or req.track_scores \
            or req.min_score is not None or req.explain   # explain needs the statistics
        prof = SearchProfile(shard_list, req.query, req.from_, req.size) if req.profile else None
        stats, gens, guessed = await self._stats_cached(shard_list, req, scoring, snapshot,
                                                        deadline, prof)
        k = req.from_ + req.size if req.search_after is None else req.size
        queries = [ShardQuery(query=req.query, sort=sort, k=k, index_rank=rank,
                              generation=gens.get((m.name, sid)), stats=stats,
                              after=req.search_after,
                              track_scores=scoring or not req.sort,
                              min_score=req.min_score, terminate_after=req.terminate_after,
                              deadline=deadline, profile=req.profile, latest=guessed)
                   for rank, m, sid, _ in shard_list]
        if req.aggs is not None or req.post_filter is not None:
            plan_shard_queries(queries, req)   # search/aggs/phase.py
        if req.search_type == "query_then_fetch" and scoring:
            local = await fan_out([functools.partial(self._local_stats, ref, req.query, m,
                                                     gens.get((m.name, sid)), deadline)
                                   for _, m, sid, ref in shard_list], deadline)
            for q, o in zip(queries, local):
                q.stats = o.value if o.ok else None   # the query round then reports the shard
        if prof is not None:
            prof.phase("stats")
        deep = self._use_deep_page(req, len(shard_list))
        if not deep and prof is None and k <= self.prefetch_max:
            for q in queries:   # query-and-fetch: small pages save the fetch round trip
                q.prefetch = k
        if deep:
            hits_list, failures, timed_out, page_from = await self._deep_query_phase(
                shard_list, queries, req.from_, req.size, deadline, prof)
        else:
            hits_list, failures, timed_out = await self._query_phase(shard_list, queries,
                                                                     deadline, prof)
            page_from = req.from_ if req.search_after is None else 0
        if prof is not None:
            prof.method = "deep_page" if deep else \
                "search_after" if req.search_after is not None else "from_size"
            prof.cursor = "scroll" if req.scroll else None
            prof.phase("query")
        if guessed and any(f["reason"].get("type") == StaleGeneration.es_type
                           for f in failures):
            self._stats_memo().clear()   # a shard refreshed: statistics and snapshot afresh
            return await self.search(req, snapshot)
        if failures and not hits_list:
            raise _all_failed(failures)
        if failures and not req.allow_partial_search_results:
            raise SearchPhaseExecution("Partial shards failure", phase="query", grouped=True,
                                       failed_shards=failures,
                                       root_cause=[f["reason"] for f in failures])
        reduced = merge([h for _, h in hits_list], sort, page_from, req.size)
        if prof is not None:
            prof.phase("merge")
        page_docs, fetch_failures, fetch_timed_out = await self._fetch_phase(
            hits_list, reduced.page, req.timeout_ms, prof)
        if prof is not None:
            prof.phase("fetch")
        if fetch_failures and not req.allow_partial_search_results:
            raise SearchPhaseExecution("Partial shards failure", phase="fetch", grouped=True,
                                       failed_shards=fetch_failures,
                                       root_cause=[f["reason"] for f in fetch_failures])
        failures = failures + fetch_failures
        timed_out = timed_out or fetch_timed_out
        # hits whose shard failed or timed out in the fetch phase drop out of the page
        page = [e for e, d in zip(reduced.page, page_docs) if d is not None]
        hits = []
        metas_by_name = {m.name: m for m in metas}
        for entry, doc in zip(page, (d for d in page_docs if d is not None)):
            (rank, m, sid, _), h = hits_list[entry.shard_pos]
            hits.append(self._hit(req, sort, h, entry.row, doc, metas_by_name[h.index]))
        if req.explain:
            await self._explain_phase(hits_list, page, shard_list, queries, hits)
        # a sorted search tracks the max score only with track_scores, even when it sorts by
        # _score among other keys (Elasticsearch's TopFieldCollector)
        track_max = req.track_scores or not req.sort or score_only(req.sort)
        total = total_hits(reduced.total, req.track_total_hits)
        hits_obj: dict[str, Any] = {}
        if total is not None:
            hits_obj["total"] = total["value"] if req.rest_total_hits_as_int else total
        elif req.rest_total_hits_as_int:
            hits_obj["total"] = -1  # untracked total in the legacy int form (ES SearchHits)
        # size 0 collects no top hits, so Elasticsearch has no max score to report
        hits_obj["max_score"] = reduced.max_score if track_max and req.size > 0 \
            and reduced.max_score is not None else None
        hits_obj["hits"] = hits
        resp: dict[str, Any] = {
            "took": int((time.perf_counter() - t0) * 1000),
            "timed_out": timed_out,
            "_shards": {"total": len(shard_list),
                        "successful": len(hits_list) - len(fetch_failures), "skipped": 0,
                        "failed": len(failures)},
            "hits": hits_obj,
        }
        if failures:
            resp["_shards"]["failures"] = failures
        if req.aggs is not None:
            resp["aggregations"] = response_aggregations(req, hits_list, metas,
                                                         self._search_settings())
        if req.terminate_after is not None:
            resp["terminated_early"] = any(h.terminated_early for _, h in hits_list)
        resp["_snapshot"] = {f"{h.index}:{h.shard}": h.generation for _, h in hits_list}
        if page:   # where a cursor continues from (internal, popped by cursor_ops)
            last = page[-1]
            resp["_after"] = raw_sort_values(hits_list[last.shard_pos][1], last.row)
        if prof is not None:   # built after ``took``: measuring bytes costs time of its own
            resp["profile"] = prof.to_dict(int((time.perf_counter() - t0) * 1e9))
        return resp

    def _use_deep_page(self, req: SearchRequest, shards: int) -> bool:
        """Whether the query phase uses the deep-page method (``search/sample_and_range.py``:
        samples and a range over several shards, one window of a single shard): for a from/size
        page at or beyond ``deep_page_threshold``, or when the request's ``paging`` asks for it;
        never after a cursor or with ``terminate_after``."""
        if req.search_after is not None or req.scroll or req.terminate_after is not None \
                or req.paging == "from_size" or req.aggs is not None:
            return False
        if req.paging == "deep_page":
            return True
        return req.from_ >= self.deep_page_threshold

    def _stats_memo(self) -> dict[Any, Any]:
        return self.__dict__.setdefault("_stats_cache", {})

    async def _stats_cached(self, shard_list, req: SearchRequest, scoring: bool,
                            snapshot: dict[tuple[str, int], int] | None,
                            deadline: float | None, prof: SearchProfile | None
                            ) -> tuple[Stats | None, dict[tuple[str, int], int], bool]:
        """:meth:`_stats` without its fan-out when the same terms were counted on the same
        shards at the same generations: ``(stats, snapshot, guessed)``.

        A pinned snapshot (point in time, scroll, page token) names every generation, and what
        a generation sees never changes, so its statistics are cached for good. A search at
        "now" reuses the generations the last count saw and marks them ``guessed``: a shard
        that has refreshed since answers ``StaleGeneration`` and the search runs again with a
        fresh count — so results equal the uncached path's. Profiled and ``query_then_fetch``
        searches always count.
        """
        if prof is not None or req.search_type == "query_then_fetch" or not scoring \
                or isinstance(req.query, MatchAll):
            stats, gens = await self._stats(shard_list, req.query, scoring, req.search_type,
                                            snapshot, deadline, prof)
            return stats, gens, False
        pinned = bool(snapshot) and all((m.name, sid) in snapshot for _, m, sid, _ in shard_list)
        try:
            key = (repr(req.query), pinned,
                   tuple((m.name, m.uuid, getattr(m.mapping, "version", None), sid,
                          snapshot.get((m.name, sid)) if pinned and snapshot else None)
                         for _, m, sid, _ in shard_list))
        except Exception:  # noqa: BLE001 - an unprintable query: no cache
            key = None
        memo = self._stats_memo()
        got = memo.get(key) if key is not None else None
        if got is not None:
            return got[0], dict(got[1]), not pinned
        stats, gens = await self._stats(shard_list, req.query, scoring, req.search_type,
                                        snapshot, deadline, prof)
        if key is not None and all((m.name, sid) in gens for _, m, sid, _ in shard_list):
            if len(memo) >= 1024:
                memo.pop(next(iter(memo)))
            memo[key] = (stats, dict(gens))
        return stats, gens, False

    async def _stats(self, shard_list, query: Query, scoring: bool, search_type: str,
                     snapshot: dict[tuple[str, int], int] | None,
                     deadline: float | None = None, prof: SearchProfile | None = None
                     ) -> tuple[Stats | None, dict[tuple[str, int], int]]:
        """Global statistics (summed over every shard searched) and the snapshot they saw."""
        gens: dict[tuple[str, int], int] = dict(snapshot or {})
        if not scoring or isinstance(query, MatchAll):
            return None, gens
        per_index_terms = {}
        for _, m, _, _ in shard_list:
            if m.name not in per_index_terms:
                terms = scoring_terms(query, m.mapping)
                per_index_terms[m.name] = (sorted({f for f, _ in terms}), sorted(terms))
        if not any(t for _, t in per_index_terms.values()):
            return None, gens
        # at most half the time left: a shard too slow here is left out of the statistics
        # (scores then rest on the shards that answered) rather than sink the query round
        deadline = share(deadline, 0.5)
        calls = [functools.partial(self.backend.call, ref, "term_stats",
                                   *per_index_terms[m.name], gens.get((m.name, sid)), deadline)
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
        if search_type == "query_then_fetch":
            return total, gens
        return total, gens

    async def _local_stats(self, ref, query: Query, meta: IndexMeta, gen: int | None,
                           deadline: float | None = None) -> Stats:
        terms = scoring_terms(query, meta.mapping)
        st, _ = await self.backend.call(ref, "term_stats", sorted({f for f, _ in terms}),
                                        sorted(terms), gen, deadline)
        return st

    async def _query_phase(self, shard_list, queries: list[ShardQuery],
                           deadline: float | None, prof: SearchProfile | None = None
                           ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]], bool]:
        """Every shard's top ``k`` (one fan-out, within ``deadline``; see ``search/fanout.py`` for
        retries). Returns the answers, the failures and whether a shard timed out."""
        outcomes = await fan_out([functools.partial(self.backend.call, ref, "query", q)
                                  for (_, _, _, ref), q in zip(shard_list, queries)], deadline)
        failures: list[dict[str, Any]] = []
        answered, timed_out = _answers(
            shard_list, outcomes, failures,
            None if prof is None else lambda i, e, o: prof.query_hits(e, o, queries[i].k))
        return [(entry, hits) for _, entry, hits in answered], failures, timed_out

    async def _deep_query_phase(self, shard_list, queries: list[ShardQuery], from_: int,
                                size: int, deadline: float | None = None,
                                prof: SearchProfile | None = None
                                ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]],
                                           bool, int]:
        """Query phase for deep pages (``search/sample_and_range.py``): samples, then a range.

        The samples get half the time left until ``deadline``, the range round the rest; a
        shard that fails or times out in either round is left out (its matches are then
        missing from the count before the page, as a failed shard's are from a classic page).
        """
        if len(shard_list) == 1:   # one shard knows where the page starts: one round
            return await self._window_phase(shard_list[0], queries[0], from_, size, deadline,
                                            prof)
        failures: list[dict[str, Any]] = []
        timed_out = False
        key = self._samples_key(shard_list, queries) if prof is None else None
        memo = self._samples_memo()
        cached = memo.get(key) if key is not None else None
        if cached is not None:
            live, samples, kinds = cached
        else:
            first = share(deadline, 0.5)
            outcomes = await fan_out([functools.partial(self.backend.call, ref, "sample",
                                                        replace(q, deadline=first),
                                                        self.deep_page_samples)
                                      for (_, _, _, ref), q in zip(shard_list, queries)], first)
            answered, timed_out = _answers(
                shard_list, outcomes, failures,
                None if prof is None else lambda i, e, o: prof.sample(e, o))
            live, samples, kinds = [], [], None
            for i, _, (n, keys, ranks, k) in answered:
                live.append(i)
                samples.append((n, keys, ranks))
                if kinds is None or n:
                    kinds = k
            if key is not None and not failures and not timed_out:
                if len(memo) >= 64:
                    memo.pop(next(iter(memo)))
                memo[key] = (live, samples, kinds)
        sort = queries[0].sort
        br = bracket(sort, kinds or [], samples, from_, size)
        # the range round's rows (about size + 2 matches/samples per shard) bring their
        # documents only when they are few (``prefetch_deep_max``; not when profiling)
        prefetch = br.limit if prof is None and br.limit <= self.prefetch_deep_max else 0
        outcomes2 = await fan_out([functools.partial(self.backend.call, shard_list[i][3], "range",
                                                     replace(queries[i], prefetch=prefetch),
                                                     br.lo, br.hi, br.limit)
                                   for i in live], deadline)
        answered, late = _answers(
            [shard_list[i] for i in live], outcomes2, failures,
            None if prof is None else lambda i, e, o: prof.query_hits(e, o, br.limit))
        before = sum(below for _, _, (below, _) in answered)
        return [(entry, hits) for _, entry, (_, hits) in answered], failures, \
            timed_out or late, max(0, from_ - before)

    def _samples_memo(self) -> dict[bytes, Any]:
        return self.__dict__.setdefault("_samples_cache", {})

    @staticmethod
    def _samples_key(shard_list, queries: list[ShardQuery]) -> bytes | None:
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

    async def _window_phase(self, entry, q: ShardQuery, from_: int, size: int,
                            deadline: float | None, prof: SearchProfile | None
                            ) -> tuple[list[tuple[Any, ShardHits]], list[dict[str, Any]],
                                       bool, int]:
        """The deep page of a single-shard search: the shard's rows ``[from, from + size)``
        with their documents, whatever the depth."""
        prefetch = size if prof is None and size <= self.prefetch_deep_max else 0
        outcomes = await fan_out([functools.partial(self.backend.call, entry[3], "window",
                                                    replace(q, prefetch=prefetch), from_,
                                                    size)], deadline)
        failures: list[dict[str, Any]] = []
        answered, timed_out = _answers(
            [entry], outcomes, failures,
            None if prof is None else lambda i, e, o: prof.query_hits(e, o, size))
        if not answered:
            return [], failures, timed_out, 0
        below, hits = answered[0][2]
        return [(entry, hits)], [], False, max(0, from_ - below)

    async def _explain_phase(self, hits_list, page, shard_list, queries: list[ShardQuery],
                             hits: list[dict[str, Any]]) -> None:
        """``explain: true``: the page's shards explain their hits' scores with the query and
        statistics of the query phase; adds ``_shard``, ``_node`` and ``_explanation``."""
        plan = {(m.name, sid): q for (_, m, sid, _), q in zip(shard_list, queries)}
        by_shard: dict[int, list[int]] = {}
        for i, e in enumerate(page):
            by_shard.setdefault(e.shard_pos, []).append(i)
        calls = []
        for pos, rows in by_shard.items():
            (_, m, sid, ref), h = hits_list[pos]
            calls.append(self.backend.call(ref, "explain", plan[(m.name, sid)],
                                           [int(h.addr[page[i].row]) for i in rows]))
        for (pos, rows), (node, expls) in zip(by_shard.items(), await asyncio.gather(*calls)):
            (_, m, sid, _), _ = hits_list[pos]
            for i, x in zip(rows, expls):
                hits[i] = {"_shard": f"[{m.name}][{sid}]", "_node": node, **hits[i],
                           "_explanation": x}

    async def _fetch_phase(self, hits_list, page, timeout_ms: float | None = None,
                           prof: SearchProfile | None = None
                           ) -> tuple[list[Any], list[dict[str, Any]], bool]:
        """``_source`` for the page, from the page's shards only.

        Returns the documents in page order (None where the shard failed or timed out), the
        failures and whether a shard timed out. ``timeout`` bounds this phase on its own: the
        page's shards answered the query phase in time, and get as long again to send the
        documents (so a search answers within about twice its timeout plus the hops).
        """
        deadline = None if timeout_ms is None else time.time() + timeout_ms / 1000.0
        by_shard: dict[int, list[int]] = {}
        for i, e in enumerate(page):
            by_shard.setdefault(e.shard_pos, []).append(i)
        out: list[Any] = [None] * len(page)
        keys = []
        calls = []
        for pos in by_shard:
            (_, _, _, ref), h = hits_list[pos]
            if h.docs is not None and all(page[i].row < len(h.docs) for i in by_shard[pos]):
                for i in by_shard[pos]:   # query-and-fetch: already here
                    out[i] = h.docs[page[i].row]
                continue
            keys.append(pos)
            addrs = [int(h.addr[page[i].row]) for i in by_shard[pos]]
            calls.append(functools.partial(self.backend.call, ref, "fetch", addrs, deadline,
                                           prof is not None))
        failures: list[dict[str, Any]] = []
        answered, timed_out = _answers(
            [hits_list[pos][0] for pos in keys], await fan_out(calls, deadline), failures,
            None if prof is None else lambda i, e, o: prof.fetch(e, o))
        for j, _, value in answered:
            docs = value[0] if prof is not None else value
            for i, d in zip(by_shard[keys[j]], docs):
                out[i] = d
        return out, failures, timed_out

    def _hit(self, req: SearchRequest, sort: tuple[SortField, ...], h: ShardHits, row: int,
             doc: Any, meta: IndexMeta) -> dict[str, Any]:
        score: float | None = float(h.scores[row])
        if req.sort and not req.track_scores and not any(s.field == "_score" for s in req.sort):
            score = None
        hit: dict[str, Any] = {"_index": h.index, "_id": doc.id}
        if req.version:
            hit["_version"] = doc.version
        if req.seq_no_primary_term:
            hit["_seq_no"] = doc.seq
            hit["_primary_term"] = 1
        hit["_score"] = score
        if doc.routing is not None:
            hit["_routing"] = doc.routing
        if req.source.enabled:
            if req.source.is_identity:
                hit["_source"] = doc.source
            else:
                hit["_source"] = orjson.dumps(filter_source(orjson.loads(doc.source),
                                                            req.source.includes,
                                                            req.source.excludes))
        if req.fields or req.docvalue_fields:
            fields_out = _fields_section(orjson.loads(doc.source),
                                         list(req.fields) + list(req.docvalue_fields), meta)
            if fields_out:
                hit["fields"] = fields_out
        if (req.sort and not score_only(req.sort)) or req.search_after is not None:
            vals = []
            for j, sf in enumerate(sort):
                ft = meta.mapping.get(sf.field)
                kind = h.kinds[j]
                miss = h.missing[j]
                v = None if miss is not None and miss[row] else h.columns[j][row]
                if kind == "tiebreak":
                    v = int(h.ties[row])
                vals.append(sort_value_out(sf, kind, v, ft))
            hit["sort"] = vals
        return hit

    async def count(self, indices: tuple[str, ...], query: Query,
                    terminate_after: int | None = None, min_score: float | None = None,
                    routing: str | None = None, preference: str | None = None
                    ) -> dict[str, Any]:
        req = SearchRequest(indices=indices, query=query, size=0, track_total_hits=True,
                            terminate_after=terminate_after, min_score=min_score,
                            routing=routing, preference=preference)
        resp = await self.search(req)
        out = {"count": resp["hits"]["total"]["value"], "_shards": resp["_shards"]}
        if terminate_after is not None:
            out["terminated_early"] = resp.get("terminated_early", False)
        return out

    # --- cluster ------------------------------------------------------------------------------

    async def shard_infos(self) -> list[dict[str, Any]]:
        """One row per shard copy (primary ``p`` / replica ``r``): state, node, documents."""
        refs = [(m, sid, ref) for m in self.indices.values() for sid, ref in enumerate(m.shards)]
        outcomes = await asyncio.gather(*(self.backend.describe(ref) for _, _, ref in refs),
                                        return_exceptions=True)
        out = []
        for (m, sid, _), rows in zip(refs, outcomes):
            if isinstance(rows, BaseException):
                rows = [{"prirep": "p", "state": "UNASSIGNED", "docs": None, "node_id": None}]
            for r in rows:
                out.append({**r, "index": m.name, "shard": sid})
        return out

    async def health(self) -> dict[str, Any]:
        """green / yellow / red from the copies' states (``indices/health.py``)."""
        infos = await self.shard_infos()
        out = {"cluster_name": self.cluster_name,
               **cluster_health(infos, self.backend.nodes())}
        sim = self.simulation()
        if sim["enabled"]:   # ours: simulated trouble is on (distribution/simulation.py)
            out["simulation"] = sim
        return out

    # --- simulated trouble (experiments; see distribution/simulation.py) ---------------------

    async def simulate(self, index: str | None = None, shard: int | list[int] | None = None,
                       **knobs: Any) -> dict[str, Any]:
        """Give shard actors simulated latency, jitter, slow-down and failures.

        ``index`` None means every index, ``shard`` None every shard of it. Knobs all zero (or
        none) turn the trouble off for those shards. Trouble is per actor: a shard created later
        (a new index) starts without any.
        """
        trouble = Trouble.from_dict(knobs)
        names = self.resolve(index if index is not None else "_all",
                             allow_no_indices=index is None)
        targets: list[tuple[IndexMeta, int]] = []
        for n in names:
            meta = self.indices[n]
            targets += [(meta, sid) for sid in _shard_ids(shard, meta)]
        spec = None if trouble.is_noop else trouble.to_dict()
        await asyncio.gather(*(self.backend.call(meta.shards[sid], "simulate", spec)
                               for meta, sid in targets))
        hit = {(meta.uuid, sid) for meta, sid in targets}
        rules = [r for r in self._live_sim_rules() if (r.index_uuid, r.shard) not in hit]
        if spec is not None:
            rules += [SimulationRule(meta.name, meta.uuid, sid, trouble) for meta, sid in targets]
        self.sim_rules = rules
        return {"acknowledged": True, "shards": len(targets), "simulation": self.simulation()}

    async def simulate_clear(self) -> dict[str, Any]:
        """Turn all simulated trouble off (every shard actor is told, not only those listed)."""
        refs = [ref for m in self.indices.values() for ref in m.shards]
        await asyncio.gather(*(self.backend.call(ref, "simulate", None) for ref in refs),
                             return_exceptions=True)
        self.sim_rules = []
        return {"acknowledged": True, "simulation": self.simulation()}

    def simulation(self) -> dict[str, Any]:
        """What simulated trouble is on, per shard (``GET /_sim``)."""
        return simulation_status(self._live_sim_rules())

    def _live_sim_rules(self) -> list[SimulationRule]:
        """Rules of indices that still exist (a deleted index took its actors with it)."""
        uuids = {m.uuid for m in self.indices.values()}
        self.sim_rules = [r for r in self.sim_rules if r.index_uuid in uuids]
        return self.sim_rules

    async def cat_indices(self, expr: str | None) -> list[dict[str, Any]]:
        names = self.resolve(expr or "_all")
        infos = await self.shard_infos()
        out = []
        for n in sorted(names):
            m = self.indices[n]
            mine = [i for i in infos if i["index"] == n]
            docs = sum(i["docs"] or 0 for i in mine if i.get("prirep", "p") == "p")
            health = status_of(mine)
            out.append({"health": health, "status": "open", "index": n, "uuid": m.uuid,
                        "pri": str(m.number_of_shards), "rep": str(m.number_of_replicas),
                        "docs.count": str(docs), "docs.deleted": "0", "store.size": None,
                        "pri.store.size": None})
        return out

    def info(self) -> dict[str, Any]:
        return {"name": self.node_name, "cluster_name": self.cluster_name,
                "cluster_uuid": self.cluster_uuid,
                "version": {"number": VERSION, "build_flavor": "default", "build_type": "tar",
                            "build_hash": "shardsearch", "build_date": "2026-11-01T00:00:00Z",
                            "build_snapshot": False, "lucene_version": "9.11.1",
                            "minimum_wire_compatibility_version": "7.17.0",
                            "minimum_index_compatibility_version": "7.0.0",
                            "distribution": "shardsearch"},
                "tagline": "You Know, for Search"}


def _check_fetch_limits(req: SearchRequest, m: IndexMeta) -> None:
    """Per-index ceilings on what one search may ask for (ES ``DefaultSearchContext``)."""
    s = m.settings
    max_rescore = int(s.get("max_rescore_window", m.max_result_window))
    for w in req.rescore_windows:
        if w > max_rescore:
            raise IllegalArgument(
                f"Rescore window [{w}] is too large. It must be less than [{max_rescore}]. This "
                "prevents allocating massive heaps for storing the results to be rescored. This "
                "limit can be set by changing the [index.max_rescore_window] index level setting.")
    for what, n, key, default in (
            ("docvalue_fields", len(req.docvalue_fields), "max_docvalue_fields_search", 100),
            ("script_fields", len(req.script_fields), "max_script_fields", 32)):
        limit = int(s.get(key, default))
        if n > limit:
            raise IllegalArgument(
                f"Trying to retrieve too many {what}. Must be less than or equal to: [{limit}] "
                f"but was [{n}]. This limit can be set by changing the [index.{key}] index "
                "level setting.")


def _fields_section(source: dict[str, Any], specs: list[Any], meta: IndexMeta) -> dict[str, Any]:
    """The ``fields`` / ``docvalue_fields`` section: values of the requested paths as lists."""
    out: dict[str, Any] = {}
    flat: dict[str, list[Any]] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, prefix + k + ".")
        elif isinstance(node, list):
            for v in node:
                walk(v, prefix)
        elif node is not None:
            flat.setdefault(prefix[:-1], []).append(node)
    walk(source, "")
    for spec in specs:
        pat = spec.get("field") if isinstance(spec, dict) else spec
        if not isinstance(pat, str):
            continue
        for path, vals in flat.items():
            if path == pat or fnmatch.fnmatchcase(path, pat):
                out[path] = _formatted(vals, spec, meta.mapping.get(path))
        for path in list(meta.mapping.multi):
            for sub in meta.mapping.multi[path]:
                if (sub == pat or fnmatch.fnmatchcase(sub, pat)) and path in flat:
                    out[sub] = flat[path]
    return out


def _formatted(vals: list[Any], spec: Any, ft: Any) -> list[Any]:
    """``{"field": f, "format": "#.0"}`` on a numeric field: ``DecimalFormat`` strings."""
    fmt = spec.get("format") if isinstance(spec, dict) else None
    if not fmt or ft is None or ft.kind != "numeric" or fmt == "use_field_mapping":
        return vals
    return [decimal_format(v, fmt) if isinstance(v, (int, float)) and not isinstance(v, bool)
            else v for v in vals]


def _shard_ids(shard: Any, meta: IndexMeta) -> list[int]:
    """``shard`` of a simulate call: None (all), a number or a list of numbers, each in range."""
    if shard is None:
        return list(range(meta.number_of_shards))
    raw = shard if isinstance(shard, (list, tuple)) else [shard]
    out = []
    for s in raw:
        if isinstance(s, bool) or not isinstance(s, (int, str)) or not str(s).isdigit():
            raise IllegalArgument(f"[shard] must be a shard number or a list of them, got [{s}]")
        if int(s) >= meta.number_of_shards:
            raise IllegalArgument(f"shard [{s}] does not exist: index [{meta.name}] has "
                                  f"[{meta.number_of_shards}] shards")
        out.append(int(s))
    return sorted(set(out))


def _answers(entries: list[Any], outcomes: list[Any], failures: list[dict[str, Any]],
             record: Any = None) -> tuple[list[tuple[int, Any, Any]], bool]:
    """One round's outcomes sorted out: ``(position, entry, value)`` of the shards that
    answered; the failures, in Elasticsearch's shape, appended to ``failures``; and whether a
    shard timed out. ``record(position, entry, outcome)`` sees every outcome (profiles)."""
    answered: list[tuple[int, Any, Any]] = []
    timed_out = False
    for i, (entry, o) in enumerate(zip(entries, outcomes)):
        if record is not None:
            record(i, entry, o)
        if o.timed_out:
            timed_out = True
        elif o.error is not None:
            _, m, sid, _ = entry
            failures.append(_failure(m.name, sid, o.error))
        else:
            answered.append((i, entry, o.value))
            timed_out = timed_out or bool(getattr(o.value, "timed_out", False))  # a partial
    return answered, timed_out


def _failure(index: str, shard: int, exc: BaseException) -> dict[str, Any]:
    exc = domain_error(exc)
    if isinstance(exc, SearchError):
        reason = exc.to_cause()
    else:
        reason = {"type": "node_not_connected_exception" if actor_died(exc) else "exception",
                  "reason": f"shard [{index}][{shard}] unavailable: {type(exc).__name__}"}
    return {"shard": shard, "index": index, "node": None, "reason": reason}


def _all_failed(failures: list[dict[str, Any]]) -> SearchError:
    causes = [f["reason"] for f in failures]
    status = 503
    statuses = []
    for c in causes:
        if c.get("type") in ("illegal_argument_exception", "query_shard_exception",
                             "parsing_exception", "parse_exception",
                             "search_context_missing_exception"):
            statuses.append(404 if c["type"] == "search_context_missing_exception" else 400)
    if statuses and len(statuses) == len(causes):
        status = max(statuses)
    uniq = []
    for c in causes:
        if c not in uniq:
            uniq.append(c)
    return SearchPhaseExecution("all shards failed", status=status, phase="query",
                                grouped=True, failed_shards=failures, root_cause=uniq,
                                caused_by=uniq[0] if uniq else None)


def _shard_level(index: str, err: SearchError) -> SearchError:
    """An error Elasticsearch raises on each shard (a result window too large, a query that
    cannot be built for the mapping), found before the fan-out: reported as the shards would
    have, ``search_phase_execution_exception`` with the error as root cause (one grouped entry)."""
    return _all_failed([_failure(index, 0, err)])


def build_coordinator(data_dir: str | None = None) -> Coordinator:
    """The service's coordinator: replicated shard groups (Ray actors), the periodic refresh,
    and with ``data_dir`` indices kept on disk (reopened now)."""
    from .distribution.replication import ReplicatedBackend
    core = Coordinator(ReplicatedBackend(data_dir=data_dir))
    core.auto_refresh = True
    if data_dir is not None:
        from .distribution.durability import Durability
        core.durable = Durability(core, data_dir)
    return core


def get_coordinator(create: bool = True, data_dir: str | None = None) -> Any:
    """The named coordinator actor of this Ray namespace (created on first use); see
    :func:`~.distribution.runtime.coordinator_actor`."""
    from .distribution.runtime import coordinator_actor
    return coordinator_actor(build_coordinator, create=create, data_dir=data_dir)
