"""A shard: a write buffer plus immutable columnar segments (hosted by ``distribution/``).

``ShardCore`` is plain Python (tested without Ray). It answers the two phases of a search
(the scoring loop and the top ``k`` are in ``candidates.py``):

* ``query`` — the top ``k`` matching documents in the global order, as arrays (sort values,
  tie-break keys, addresses) plus the exact count of matches. It never returns documents.
* ``fetch`` — ``_source`` and metadata for the addresses of one page.

Writes arrive with a sequence number assigned by the coordinator; the latest sequence number
wins per ``_id`` whatever order the calls arrive in. A refresh turns the buffer into a segment
and advances the shard's generation; a search reads one generation (a snapshot).

Every search call takes an optional :class:`~.cancellation.Cancellation` (default: the
query's own deadline only) that the host fills with "was the caller cancelled?"; the query
phase answers what it collected before a deadline (``timed_out``), the other calls raise.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson

from ..errors import MapperParsing, SearchContextMissing, StaleGeneration
from .cancellation import Cancellation
from .after_page import after_candidates
from .candidates import Candidates, collect, sorted_candidates, top_k
from .collapse import collapsed_top
from .row_scores import score_rows
from .suggest_phrase import phrase_partial
from .suggest_terms import term_partial
from .gcpause import gc_paused, release_free_memory, release_kept
from .inner_hits import shard_inner_hits
from .doc_parsing import parse_document
from .field_alias import resolve_shard_query
from .suggest_completion import RefusedPlan, completion_partial
from .mapping import Mapping
from .nested import doc_sets
from .query.context import Context
from .query.explain import explain
from .query.fuzzy import FuzzySpec
from .query.fuzzy_query import candidates_stats, keep_local_top
from .query.rewrite import expand
from .shard_messages import FetchedDoc, ShardHits, ShardQuery
from .scoring import PrefixTerms, Stats
from .prefix_stats import add_prefix_terms, cut
from .segment import (BufferedDoc, KeywordField, Segment, TextField, ignored_fields,
                      load_build_modules)
from .sorting import compare_rows
from .writes import WriteBatch, WriteOp, deep_merge
from .live_ids import LiveIds
from .merge_policy import MergePolicy
from .merging import Merging
from .flushing import Flushing
from .page_fetch import fetch_page
from .source_cache import BlockCache
from .shard_counters import count, count_writes, new_counters


class ShardCore(Merging, Flushing):
    """One shard's data and logic. Not thread-safe: the host serialises calls (a hosted copy's
    background merges take the same lock to plan and to swap, ``merging.py``)."""

    def __init__(self, index: str, shard: int, mapping: Mapping | None = None) -> None:
        self.index = index
        self.shard = shard
        self.mapping = mapping or Mapping()
        self.buffer: dict[str, BufferedDoc] = {}
        # the bounded write buffer (``flushing.py``): off for a shard alone, on in a hosted copy
        self.flush_docs: int | None = None
        self.flush_at = 0   # after a failed build: the buffer size of the next try
        self.pending: list[Segment] = []   # built from the buffer, invisible until the refresh
        self.segments: list[Segment] = []
        self.by_uid: dict[int, Segment] = {}
        self.source_cache = BlockCache()   # decompressed _source blocks (``source_cache.py``)
        self.live = LiveIds()   # id -> address (see ``locate``) of its live version
        self.tombstones: dict[str, tuple[int, int]] = {}   # id -> (seq, version) of a delete
        self.generation = 0
        self.max_seq = -1
        self._stats_cache: dict[tuple[int, int, str], tuple[int, int]] = {}
        self.pins: dict[str, int] = {}   # cursor key -> generation it keeps readable
        self._sorted_cache: dict[Any, Candidates] = {}
        self.merge_policy = MergePolicy()
        # merged-away segments, by the generation of their merge: still addressable (a fetch
        # may follow a query phase that saw them) until no pin or recent call can need them
        self.retired: list[tuple[int, list[Segment]]] = []
        self.readable_from = 0   # older generations lost versions to a merge (unless pinned)
        self.merges = {"total": 0, "docs": 0, "dropped": 0, "abandoned": 0, "failed": 0}
        self.merge_due: Callable[[], None] | None = None   # a host's background merges
        self.counters = new_counters()   # for _stats (shard_counters.py)

    # --- writes ---------------------------------------------------------------------------

    def set_mapping(self, mapping: Mapping) -> None:
        if mapping.version >= self.mapping.version:
            self.mapping = mapping

    def locate(self, addr: int) -> tuple[Segment, int]:
        """``(segment, row)`` of an address: the segment's uid in the high 32 bits, the row in
        the low ones (one int per live document instead of a tuple)."""
        return self.by_uid[addr >> 32], addr & 0xFFFFFFFF

    def _current(self, doc_id: str) -> tuple[int, int, bytes] | None:
        """(seq, version, source) of the live version of ``doc_id``, or None."""
        b = self.buffer.get(doc_id)
        if b is not None:
            return b.seq, b.version, b.source
        addr = self.live.get(doc_id)
        if addr is not None:
            seg, i = self.locate(addr)
            return int(seg.seq[i]), int(seg.version[i]), seg.sources[i]
        return None

    def _retire(self, doc_id: str) -> None:
        """The live version stops being visible from the next refresh on."""
        self.buffer.pop(doc_id, None)
        addr = self.live.pop(doc_id, None)
        if addr is not None:
            seg, i = self.locate(addr)
            seg.deleted_gen[i] = self.generation + 1

    def apply(self, ops: list[WriteOp] | WriteBatch, mapping: Mapping | None = None
              ) -> list[dict[str, Any]]:
        """Apply writes in order; one result per op (``status`` plus Elasticsearch fields)."""
        if mapping is not None:
            self.set_mapping(mapping)
        t0 = time.perf_counter_ns()
        if not self.buffer:
            load_build_modules()
        with gc_paused(keep=True):   # the write buffer stays until the next refresh
            if isinstance(ops, WriteBatch):
                ops = ops.writes()
            out = [self._apply_one(op) for op in ops]
        self.maybe_flush()
        count_writes(self.counters, [op.op for op in ops], t0)
        return out

    def _apply_one(self, op: WriteOp) -> dict[str, Any]:
        cur = self._current(op.id)
        tomb = self.tombstones.get(op.id)
        if cur is not None and cur[0] > op.seq or tomb is not None and tomb[0] > op.seq and cur is None:
            # a later write to this id already arrived: this one is superseded, as if applied
            # just before it — unless it is conditional: then it came after, and its condition
            # is checked against the later version (it cannot have succeeded and been kept)
            if op.if_seq_no is not None or op.version_type is not None:
                prev = cur[1] if cur is not None else tomb[1]  # type: ignore[index]
                refused = self._precondition(op, cur, prev)
                if refused is not None:
                    return refused
            return {"_id": op.id, "result": "noop", "status": 200, "_seq_no": op.seq,
                    "_version": cur[1] if cur else tomb[1]}  # type: ignore[index]
        if op.seq > self.max_seq:
            self.max_seq = op.seq
        prev_version = cur[1] if cur is not None else (tomb[1] if tomb is not None else 0)
        if op.if_seq_no is not None or op.version_type is not None:   # a conditional write
            refused = self._precondition(op, cur, prev_version)
            if refused is not None:
                return refused
        if op.op == "delete":
            if cur is None:
                return {"_id": op.id, "result": "not_found", "status": 404, "_seq_no": op.seq,
                        "_version": op.version if op.version_type else prev_version + 1}
            deleted_version = op.version if op.version_type is not None else prev_version + 1
            self._retire(op.id)
            self.tombstones[op.id] = (op.seq, deleted_version)
            return {"_id": op.id, "result": "deleted", "status": 200, "_seq_no": op.seq,
                    "_version": deleted_version}
        if op.op == "create" and cur is not None:
            return _conflict(op.id, f"[{op.id}]: version conflict, document already exists "
                             f"(current version [{cur[1]}])", self.index, self.shard)
        source, fields = op.source, op.fields
        if op.op == "update":
            if cur is None:
                if op.doc_as_upsert or op.upsert is not None:
                    source = op.upsert if op.upsert is not None else op.source
                else:
                    return {"_id": op.id, "status": 404, "error": {
                        "type": "document_missing_exception",
                        "reason": f"[{op.id}]: document missing", "index": self.index,
                        "shard": str(self.shard), "index_uuid": "_na_"}}
            else:
                merged = deep_merge(orjson.loads(cur[2]), orjson.loads(op.source or b"{}"))
                new_source = orjson.dumps(merged)
                if new_source == cur[2]:
                    return {"_id": op.id, "result": "noop", "status": 200, "_seq_no": cur[0],
                            "_version": cur[1]}
                source = new_source
        if fields is None:
            # documents come as their JSON bytes, parsed here under the mapping that came
            # with them (the coordinator parsed those that could change it)
            try:
                fields, _ = parse_document(orjson.loads(source or b"{}"), self.mapping,
                                           op.id, dynamic=False)
            except MapperParsing as e:
                return {"_id": op.id, "status": 400, "error": e.to_cause()}
        assert source is not None
        if cur is not None:   # no live version: nothing to retire (the common bulk load)
            self._retire(op.id)
        self.tombstones.pop(op.id, None)
        version = op.version if op.version_type is not None else prev_version + 1
        self.buffer[op.id] = BufferedDoc(op.id, op.seq, version, source, fields or {},
                                         op.routing)
        result = "created" if cur is None else "updated"
        return {"_id": op.id, "result": result, "status": 201 if cur is None else 200,
                "_seq_no": op.seq, "_version": version}

    def _precondition(self, op: WriteOp, cur: tuple[int, int, bytes] | None,
                      prev_version: int) -> dict[str, Any] | None:
        """The 409 of a write whose condition fails: ``if_seq_no`` + ``if_primary_term`` (the
        one primary term here is 1), or an external ``version`` not above (``external``) or
        below (``external_gte``) the current one, with Elasticsearch's texts."""
        if op.if_seq_no is not None:
            cur_seq = cur[0] if cur is not None else -2
            term = 1 if op.if_primary_term is None else op.if_primary_term
            if cur_seq != op.if_seq_no or (cur is not None and term != 1):
                return _conflict(op.id, f"[{op.id}]: version conflict, required seqNo "
                                 f"[{op.if_seq_no}], primary term [{term}]. "
                                 + (f"current document has seqNo [{cur_seq}] and primary term [1]"
                                    if cur is not None else "but no document was found"),
                                 self.index, self.shard)
        if op.version_type is not None and op.version is not None and (
                cur is not None or op.id in self.tombstones):
            gte = op.version_type == "external_gte"
            if prev_version > op.version or (not gte and prev_version == op.version):
                return _conflict(op.id, f"[{op.id}]: version conflict, current version "
                                 f"[{prev_version}] is higher{' than' if gte else ' or equal to'} "
                                 f"the one provided [{op.version}]",
                                 self.index, self.shard)
        return None

    def refresh(self) -> int:
        """Make buffered writes (and deletes) and the segments built from the buffer meanwhile
        searchable; returns the new generation."""
        t0 = time.perf_counter_ns()
        gen = self.generation + 1
        release_kept()   # what apply froze is collectable again (release_free_memory below)
        fresh = []
        if self.buffer:   # built first: should it fail, the pending segments stay pending
            docs = list(self.buffer.values())
            fresh.append(Segment.build(docs, self.mapping.fields, gen))   # collector paused
            self.buffer = {}
            del docs
        built = self.take_pending() + fresh   # built from the full buffer at ``gen``
        del fresh   # ``built`` alone holds the originals: compact_built drops them all
        if built:
            release_free_memory(collect=False)   # the buffer went by reference counting
            # Objects that stay are made once the buffer is freed, so they fill a few memory
            # pages side by side instead of pinning pages of the freed buffer (~20 MiB per
            # 60,000 documents): the segments' copies and the live map's flags.
            self.segments.extend(self.compact_built(built))
            release_free_memory()
        self.generation = gen
        self.prune_retired()
        self.after_refresh()
        count(self.counters, "refresh", 1, t0)
        return gen

    # --- reads ------------------------------------------------------------------------------

    def get(self, doc_id: str) -> FetchedDoc | None:
        """Real-time get: the latest acknowledged version, refreshed or not."""
        count(self.counters, "get", 1, time.perf_counter_ns())
        b = self.buffer.get(doc_id)
        if b is not None:
            return FetchedDoc(b.id, b.source, b.version, b.seq, b.routing,
                              tuple(b.fields.get("_ignored", ())))
        addr = self.live.get(doc_id)
        if addr is None:
            return None
        seg, i = self.locate(addr)
        return FetchedDoc(doc_id, seg.sources[i], int(seg.version[i]), int(seg.seq[i]),
                          seg.routing[i], ignored_fields(seg, i))

    def explain(self, q: ShardQuery, addrs: list[int]) -> list[dict[str, Any]]:
        """``explain: true``: the score breakdown (Lucene-style explanation tree) of each hit
        at ``addrs``, with the statistics the query phase scored with."""
        q = resolve_shard_query(q, self.mapping.aliases)
        expanded = expand(q.query, self.mapping)
        ctx = Context(mapping=self.mapping, stats=q.stats, index_name=self.index)
        out = []
        for a in addrs:
            seg = self.by_uid[int(a) >> 32]
            out.extend(explain(expanded, seg, [int(a) & 0xFFFFFFFF], ctx))
        return out

    def inner_hits(self, q: ShardQuery, addrs: list[int]) -> list[dict[str, Any]]:
        """The ``inner_hits`` of the page's hits at ``addrs`` (``inner_hits.py``), scored
        with the statistics of the query phase."""
        q = resolve_shard_query(q, self.mapping.aliases)
        return shard_inner_hits(self, q.query, q.stats, addrs)

    def fetch(self, addrs: list[int]) -> list[FetchedDoc]:
        """The fetch phase: documents at the addresses of one page (from the query phase)."""
        t0 = time.perf_counter_ns()
        out = fetch_page(self.by_uid, addrs, self.source_cache)
        count(self.counters, "fetch", 1, t0)
        return out

    # --- pins: snapshots held by points in time, scrolls and page tokens ----------------------

    def pin(self, key: str, generation: int | None = None) -> int:
        """Keep ``generation`` (default: the latest refresh) readable for cursor ``key``.

        A merge keeps every version visible at a pinned generation (``segment_merge``), so a
        pinned snapshot reads the same after it. Idempotent per key.
        """
        gen = self.generation if generation is None else int(generation)
        if not self.can_read(gen):    # merged away: pinning it now would read other versions
            raise SearchContextMissing(f"generation [{gen}] of shard [{self.index}]"
                                       f"[{self.shard}] is no longer available (merged since)")
        self.pins[key] = gen
        return gen

    def unpin(self, keys: list[str]) -> int:
        """Release cursors' pins; returns how many were held."""
        return sum(1 for k in keys if self.pins.pop(k, None) is not None)

    def pinned_generations(self) -> dict[int, int]:
        """generation -> number of cursors pinning it (what a merge must preserve)."""
        out: dict[int, int] = {}
        for g in self.pins.values():
            out[g] = out.get(g, 0) + 1
        return out

    def doc_count(self, generation: int | None = None, nested: bool = False) -> int:
        """Visible documents; with ``nested``, their nested children too — Lucene's document
        count, which Elasticsearch's ``_cat/indices`` ``docs.count`` shows."""
        gen = self.generation if generation is None else generation
        return int(sum(int(vis.sum()) for seg in self.segments
                       for _, _, vis in (doc_sets(seg, seg.visible(gen)) if nested
                                         else [("", None, seg.visible(gen))])))

    def term_stats(self, fields: list[str], terms: list[tuple[str, str]],
                   generation: int | None = None, cancel: Cancellation | None = None
                   ) -> tuple[Stats, int]:
        """Local statistics over the snapshot's visible documents (summed by the coordinator);
        ``terms`` may hold ``PrefixTerms`` requests (``prefix_stats.py``) and fuzzy terms
        (``FuzzySpec``), whose best candidates are counted.

        Per-segment figures are cached forever: what a generation sees never changes.
        """
        gen = self.generation if generation is None else generation
        st = Stats()
        cancel = cancel or Cancellation()
        prefixes = [t for t in terms if isinstance(t, PrefixTerms)]
        pairs = [t for t in terms if not isinstance(t, PrefixTerms)]
        for seg in self.segments:
            cancel.check()
            for where, cols, vis in doc_sets(seg, seg.visible(gen)):
                self._add_stats(st, seg, gen, where, cols, vis, fields, pairs)
                st.num_docs += self._visible_count(seg, gen, where, vis)
                for req in prefixes:
                    add_prefix_terms(st, req, cols, vis)
        cut(st)
        keep_local_top(st)
        return st, gen

    def _visible_count(self, seg: Segment, gen: int, where: str, vis: np.ndarray) -> int:
        """Lucene's ``numDocs`` share of one document set (cached like the field figures)."""
        key = (seg.uid, gen, None, where)
        got = self._stats_cache.get(key)
        if got is None:
            got = self._stats_cache[key] = int(vis.sum())
        return got

    def _add_stats(self, st: Stats, seg: Segment, gen: int, where: str, cols: dict[str, Any],
                   vis: np.ndarray, fields: list[str], terms: list[tuple[str, str]]) -> None:
        """One document set's figures (a segment's documents, or one nested path's children:
        Lucene counts both, as they are documents of the same index)."""
        for f in fields:
            fd = cols.get(f)
            if fd is None:
                continue
            key = (seg.uid, gen, f, where)
            got = self._stats_cache.get(key)
            if got is None:
                # Lucene's docCount: documents with at least one term ("" has none)
                present = ((fd.lengths > 0) if isinstance(fd, TextField) else fd.present) & vis
                dc = int(present.sum())
                if isinstance(fd, TextField):
                    ttf = int(fd.lengths[vis].sum())
                elif isinstance(fd, KeywordField):
                    ttf = int(fd.value_count[vis].sum())
                else:
                    ttf = dc
                got = (dc, ttf)
                if len(self._stats_cache) > 100_000:
                    self._stats_cache.clear()
                self._stats_cache[key] = got
            st.doc_count[f] = st.doc_count.get(f, 0) + got[0]
            st.sum_ttf[f] = st.sum_ttf.get(f, 0) + got[1]
        for item in terms:
            if isinstance(item, FuzzySpec):   # a fuzzy term: its candidates, counted
                candidates_stats(st, item, cols.get(item.field), vis)
                continue
            f, t = item
            fd = cols.get(f)
            if not isinstance(fd, (TextField, KeywordField)):
                continue
            post = fd.postings.get(t)
            if post is None:
                continue
            st.doc_freq[(f, t)] = st.doc_freq.get((f, t), 0) + int(vis[post[0]].sum())

    def query(self, q: ShardQuery, cancel: Cancellation | None = None) -> ShardHits:
        """The query phase: top ``q.k`` in the global order as columns, plus the match count.

        Cost: O(n) vectorised work per segment to match and score, then O(m) to build the key
        columns of the m matches and O(c log c) to order the c that can reach the top ``k``.
        Past the deadline it answers the segments done so far, flagged ``timed_out``.
        """
        q = resolve_shard_query(q, self.mapping.aliases)
        t0 = time.perf_counter_ns()
        cancel = cancel or Cancellation(q.deadline)
        self._check_latest(q)
        for plan in q.completion:
            if isinstance(plan, RefusedPlan):
                raise plan.error
        paged = after_candidates(self, q, cancel)   # a search_after page of a known order
        c = paged[0] if paged is not None else collect(self, q, cancel, partial=True)
        t1 = time.perf_counter_ns()
        groups = None
        if paged is not None:
            top = paged[1]
        elif q.collapse is not None:
            top, groups = collapsed_top(self, q, c)
        else:
            top = top_k(q.sort, c.kinds, c.columns, c.missing, c.ties, q.k, c.ranks)
        hits = c.hits(top, q.track_scores, time.perf_counter_ns() - t0)
        hits.groups = groups
        if q.named or q.rescore:
            score_rows(self, q, hits)
        if q.suggest:
            hits.suggest = {name: term_partial(self.segments, c.generation, field, list(tokens),
                                               edits, prefix)
                            for name, field, tokens, edits, prefix in q.suggest}
        if q.phrase_suggest:
            hits.suggest = (hits.suggest or {}) | {
                name: phrase_partial(self.segments, c.generation, field, list(tokens), edits,
                                     prefix)
                for name, field, tokens, edits, prefix in q.phrase_suggest}
        if q.completion:
            hits.suggest = (hits.suggest or {}) | {
                plan.name: completion_partial(self.segments, c.generation, plan, self.index,
                                              self.mapping.source_enabled)
                for plan in q.completion}
        if q.prefetch:   # small pages: the documents ride along, saving the fetch round trip
            hits.docs = self.fetch(hits.addr[:q.prefetch].tolist())
        if q.profile:
            hits.profile = {"match_ns": t1 - t0, "collect_ns": hits.took_ns - (t1 - t0)}
        if q.aggs is not None:   # partials from the same matches and snapshot as the hits
            from .aggs.leaf import leaf_aggregate
            if c.timed_out and q.agg_query is None:
                # over the matches found in time (bounded), as Elasticsearch's partial
                # aggregations are; only a cancel stops them
                cancel = Cancellation(None, cancel.cancelled)
            hits.aggs = leaf_aggregate(self, q, c.parts, cancel)
        count(self.counters, "query", 1, t0)
        return hits

    def sample(self, q: ShardQuery, samples: int, cancel: Cancellation | None = None
               ) -> tuple[int, list[Any], list[int], list[str]]:
        """Deep paging, round 1: ``(m, keys, ranks, kinds)`` — the number of matches and the
        full sort keys (values + tie-break) of every ``ceil(m / samples)``-th match in the
        global order.

        O(m log m) on the shard; the transfer is O(samples) whatever the page's depth.
        """
        q = resolve_shard_query(q, self.mapping.aliases)
        c = self._sorted(q, cancel)
        m = len(c.ties)
        if m == 0:
            return 0, [], [], c.kinds
        assert c.order is not None
        step = max(1, -(-m // samples))
        ranks = list(range(0, m, step))
        keys = c.keys_at(c.order[ranks])
        return m, keys, ranks, c.kinds

    def range(self, q: ShardQuery, lo: list[Any] | None, hi: list[Any] | None,
              limit: int, cancel: Cancellation | None = None) -> tuple[int, ShardHits]:
        """Deep paging, round 2: how many matches sort before ``lo``, and the matches in
        ``[lo, hi)`` in order (at most ``limit``). Keys are full keys as :meth:`sample` gives.
        """
        q = resolve_shard_query(q, self.mapping.aliases)
        t0 = time.perf_counter_ns()
        c = self._sorted(q, cancel)
        sort_ext, kinds_ext, cols_ext, miss_ext = c.extended()
        rk_ext = c.rank_space()
        if lo is not None:
            gt, eq = compare_rows(sort_ext, kinds_ext, cols_ext, miss_ext, c.in_rank_space(lo),
                                  rk_ext)
            ge_lo = gt | eq
        else:
            ge_lo = np.ones(len(c.ties), dtype=bool)
        below = int((~ge_lo).sum())
        sel = ge_lo
        if hi is not None:
            gt_h, eq_h = compare_rows(sort_ext, kinds_ext, cols_ext, miss_ext,
                                      c.in_rank_space(hi), rk_ext)
            sel = sel & ~(gt_h | eq_h)
        assert c.order is not None
        ordered = c.order[sel[c.order]][:limit]
        hits = c.hits(ordered, q.track_scores, time.perf_counter_ns() - t0)
        if q.prefetch:   # the documents ride along (see Coordinator.prefetch_deep_max)
            hits.docs = self.fetch(hits.addr[:q.prefetch].tolist())
        return below, hits

    def window(self, q: ShardQuery, start: int, limit: int, cancel: Cancellation | None = None
               ) -> tuple[int, ShardHits]:
        """Deep paging when the search has one shard: its rows ``[start, start + limit)`` in
        order, in one round (with several shards no shard knows where the page starts; see
        :meth:`sample` and :meth:`range`). Answers ``(rows before the window, hits)``.

        O(m log m) for the first page of a query and snapshot (the order is cached), O(limit)
        after; the transfer is O(limit) whatever ``start``.
        """
        q = resolve_shard_query(q, self.mapping.aliases)
        t0 = time.perf_counter_ns()
        c = self._sorted(q, cancel)
        assert c.order is not None
        rows = c.order[start:start + limit]
        hits = c.hits(rows, q.track_scores, time.perf_counter_ns() - t0)
        if q.prefetch:
            hits.docs = self.fetch(hits.addr[:q.prefetch].tolist())
        return min(start, len(c.order)), hits

    def _sorted(self, q: ShardQuery, cancel: Cancellation | None) -> Candidates:
        """Every match in order, for the deep page's rounds (never partial)."""
        self._check_latest(q)
        return sorted_candidates(self, q, cancel or Cancellation(q.deadline))

    def _check_latest(self, q: ShardQuery) -> None:
        """A search at "now" that guessed this shard's generation: refuse a stale guess
        (before any cache is consulted, or a cached older snapshot would answer)."""
        if q.latest and q.generation is not None and q.generation != self.generation:
            raise StaleGeneration(f"shard [{self.index}][{self.shard}] is at generation "
                                  f"[{self.generation}], not [{q.generation}]")


def _conflict(doc_id: str, reason: str, index: str, shard: int) -> dict[str, Any]:
    return {"_id": doc_id, "status": 409, "error": {
        "type": "version_conflict_engine_exception", "reason": reason, "index_uuid": "_na_",
        "shard": str(shard), "index": index}}
