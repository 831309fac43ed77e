"""A shard: a write buffer plus immutable columnar segments, and the thin Ray actor around it.

``ShardCore`` is plain Python (tested without Ray). It answers the two phases of a search:

* ``query`` — the top ``k`` matching documents in the global order, as arrays (sort values,
  tie-break keys, addresses) plus the exact count of matches. It never returns documents.
* ``fetch`` — ``_source`` and metadata for the addresses of one page.

Writes arrive with a sequence number assigned by the coordinator; the latest sequence number
wins per ``_id`` whatever order the calls arrive in. A refresh turns the buffer into a segment
and advances the shard's generation; a search reads one generation (a snapshot).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from ..errors import MapperParsing, StaleGeneration
from .gcpause import gc_paused, release_kept
from .mapping import Mapping, parse_document
from .query.matching import Context, evaluate, evaluate_sparse, expand, explain, validate
from .shard_messages import FetchedDoc, ShardHits, ShardQuery
from .scoring import Stats
from .segment import (BufferedDoc, KeywordField, NumericField, Segment, TextField,
                      release_free_memory)
from .sorting import scale_date
from .sorting import (SortField, ascending_keys, check_sortable, coerce_after,
                      column_kind, compare_rows, field_type_for_sort, missing_substitute, order,
                      rank_key, smallest_rows, tiebreak)


@dataclass
class WriteOp:
    """One write as the coordinator sends it to the shard that owns the ``_id``."""

    op: str                      # index | create | delete | update
    id: str
    seq: int
    source: bytes | None = None  # JSON bytes (index/create), partial doc (update)
    fields: dict[str, list[Any]] | None = None   # parsed values; None: the shard parses source
    routing: str | None = None
    doc_as_upsert: bool = False
    upsert: bytes | None = None
    if_seq_no: int | None = None
    if_primary_term: int | None = None


_OP_CODES = {"index": "i", "create": "c", "delete": "d", "update": "u"}
_OP_NAMES = {v: k for k, v in _OP_CODES.items()}
_EXTRA = ("doc_as_upsert", "upsert", "if_seq_no", "if_primary_term")


class WriteBatch:
    """The writes of one bulk request for one shard, column by column.

    A bulk load sends thousands of writes per call: as columns (one string of op codes, the
    ids, the sequence numbers, every ``_source`` in one bytes object cut by ``offsets``) they
    cross to the shard, and into its log, for a fraction of the cost of one object per write.
    The rare per-write options (``if_seq_no``, upserts...) travel in ``extra``, by position.
    """

    __slots__ = ("ops", "ids", "seqs", "sources", "offsets", "routing", "extra")

    def __init__(self, ops: str, ids: list[str], seqs: np.ndarray, sources: bytes,
                 offsets: np.ndarray, routing: list[str | None] | None = None,
                 extra: dict[int, dict[str, Any]] | None = None) -> None:
        self.ops = ops
        self.ids = ids
        self.seqs = seqs
        self.sources = sources
        self.offsets = offsets      # int64[n + 1]; a write without source has an empty slice
        self.routing = routing      # None when no write has one
        self.extra = extra or {}

    @classmethod
    def of(cls, ops: list[WriteOp]) -> WriteBatch:
        """The columns of ``ops`` (``WriteBatch.of(ops).writes() == ops``)."""
        srcs = [op.source or b"" for op in ops]
        offsets = np.zeros(len(ops) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in srcs], out=offsets[1:])
        routing = [op.routing for op in ops]
        extra: dict[int, dict[str, Any]] = {}
        for i, op in enumerate(ops):
            e = {k: v for k in _EXTRA if (v := getattr(op, k)) is not None and v is not False}
            if op.source is None and op.op != "delete":
                e["no_source"] = True
            if op.fields is not None:
                e["fields"] = op.fields
            if e:
                extra[i] = e
        return cls("".join(_OP_CODES[op.op] for op in ops), [op.id for op in ops],
                   np.fromiter((op.seq for op in ops), dtype=np.int64, count=len(ops)),
                   b"".join(srcs), offsets,
                   routing if any(r is not None for r in routing) else None, extra)

    def __len__(self) -> int:
        return len(self.ids)

    def writes(self) -> list[WriteOp]:
        """One :class:`WriteOp` per write, in order."""
        out = []
        offs = self.offsets.tolist()
        seqs = self.seqs.tolist()
        src = self.sources
        routing = self.routing
        extra = self.extra
        for i, (code, doc_id) in enumerate(zip(self.ops, self.ids)):
            op = _OP_NAMES[code]
            a, b = offs[i], offs[i + 1]
            w = WriteOp(op, doc_id, seqs[i], src[a:b] if b > a or op != "delete" else None,
                        None, None if routing is None else routing[i])
            e = extra.get(i)
            if e is not None:
                for k, v in e.items():
                    if k == "no_source":
                        w.source = None
                    else:
                        setattr(w, k, v)
            out.append(w)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (WriteBatch, (self.ops, self.ids, self.seqs, self.sources, self.offsets,
                             self.routing, self.extra))


class BatchBuilder:
    """Collects one shard's writes of a bulk request, column by column (``build``)."""

    __slots__ = ("positions", "ops", "ids", "seqs", "sources", "lengths", "routing", "extra")

    def __init__(self) -> None:
        self.positions: list[int] = []     # the writes' places in the request
        self.ops: list[str] = []
        self.ids: list[str] = []
        self.seqs: list[int] = []
        self.sources: list[bytes] = []
        self.lengths: list[int] = []
        self.routing: list[str | None] | None = None
        self.extra: dict[int, dict[str, Any]] = {}

    def add(self, pos: int, op: str, doc_id: str, seq: int, source: bytes | None,
            routing: str | None = None, extra: dict[str, Any] | None = None) -> None:
        i = len(self.ids)
        self.positions.append(pos)
        self.ops.append(_OP_CODES[op])
        self.ids.append(doc_id)
        self.seqs.append(seq)
        if source is not None:
            self.sources.append(source)
            self.lengths.append(len(source))
        else:
            self.lengths.append(0)
            if op != "delete":
                extra = dict(extra or {}, no_source=True)
        if routing is not None and self.routing is None:
            self.routing = [None] * i
        if self.routing is not None:
            self.routing.append(routing)
        if extra:
            self.extra[i] = extra

    def build(self) -> WriteBatch:
        offsets = np.zeros(len(self.ids) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        return WriteBatch("".join(self.ops), self.ids, np.asarray(self.seqs, dtype=np.int64),
                          b"".join(self.sources), offsets, self.routing, self.extra)


def _deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


class ShardCore:
    """One shard's data and logic. Not thread-safe: the actor serialises calls."""

    def __init__(self, index: str, shard: int, mapping: Mapping | None = None) -> None:
        self.index = index
        self.shard = shard
        self.mapping = mapping or Mapping()
        self.buffer: dict[str, BufferedDoc] = {}
        self.segments: list[Segment] = []
        self.by_uid: dict[int, Segment] = {}
        self.live: dict[str, int] = {}   # id -> address (see ``locate``) of its live version
        self.tombstones: dict[str, tuple[int, int]] = {}   # id -> (seq, version) of a delete
        self.generation = 0
        self.max_seq = -1
        self._stats_cache: dict[tuple[int, int, str], tuple[int, int]] = {}
        self.pins: dict[str, int] = {}   # cursor key -> generation it keeps readable
        self._sorted_cache: dict[Any, _Candidates] = {}

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
        with gc_paused(keep=True):   # the write buffer stays until the next refresh
            if isinstance(ops, WriteBatch):
                ops = ops.writes()
            return [self._apply_one(op) for op in ops]

    def _apply_one(self, op: WriteOp) -> dict[str, Any]:
        cur = self._current(op.id)
        tomb = self.tombstones.get(op.id)
        if cur is not None and cur[0] > op.seq or tomb is not None and tomb[0] > op.seq and cur is None:
            # a later write to this id already arrived: this one is superseded
            return {"_id": op.id, "result": "noop", "status": 200, "_seq_no": op.seq,
                    "_version": cur[1] if cur else tomb[1]}  # type: ignore[index]
        self.max_seq = max(self.max_seq, op.seq)
        prev_version = cur[1] if cur is not None else (tomb[1] if tomb is not None else 0)
        if op.if_seq_no is not None:
            cur_seq = cur[0] if cur is not None else -2
            if cur_seq != op.if_seq_no:
                return _conflict(op.id, f"[{op.id}]: version conflict, required seqNo "
                                 f"[{op.if_seq_no}], primary term [{op.if_primary_term or 1}]. "
                                 + (f"current document has seqNo [{cur_seq}] and primary term [1]"
                                    if cur is not None else "but no document was found"),
                                 self.index, self.shard)
        if op.op == "delete":
            if cur is None:
                return {"_id": op.id, "result": "not_found", "status": 404, "_seq_no": op.seq,
                        "_version": prev_version + 1}
            self._retire(op.id)
            self.tombstones[op.id] = (op.seq, prev_version + 1)
            return {"_id": op.id, "result": "deleted", "status": 200, "_seq_no": op.seq,
                    "_version": prev_version + 1}
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
                merged = _deep_merge(orjson.loads(cur[2]), orjson.loads(op.source or b"{}"))
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
        self._retire(op.id)
        self.tombstones.pop(op.id, None)
        version = prev_version + 1
        self.buffer[op.id] = BufferedDoc(op.id, op.seq, version, source, fields or {},
                                         op.routing)
        result = "created" if cur is None else "updated"
        return {"_id": op.id, "result": result, "status": 201 if cur is None else 200,
                "_seq_no": op.seq, "_version": version}

    def refresh(self) -> int:
        """Make buffered writes (and deletes) searchable; returns the new generation."""
        gen = self.generation + 1
        release_kept()   # what apply froze is collectable again (release_free_memory below)
        if self.buffer:
            docs = list(self.buffer.values())
            built = Segment.build(docs, self.mapping.fields, gen)   # collector paused inside
            self.buffer = {}
            del docs
            release_free_memory()
            # Objects that stay are made once the buffer is freed, so they fill a few memory
            # pages side by side instead of pinning pages of the freed buffer (~20 MiB per
            # 60,000 documents): the segment's copy, its id strings (``Segment.ids``) and the
            # live map's addresses.
            seg = built.compacted()
            del built
            release_free_memory()
            self.segments.append(seg)
            self.by_uid[seg.uid] = seg
            base = seg.uid << 32
            with gc_paused():
                self.live.update(zip(seg.ids.tolist(), range(base, base + seg.n)))
        self.generation = gen
        return gen

    # --- reads ------------------------------------------------------------------------------

    def get(self, doc_id: str) -> FetchedDoc | None:
        """Real-time get: the latest acknowledged version, refreshed or not."""
        b = self.buffer.get(doc_id)
        if b is not None:
            return FetchedDoc(b.id, b.source, b.version, b.seq, b.routing)
        addr = self.live.get(doc_id)
        if addr is None:
            return None
        seg, i = self.locate(addr)
        return FetchedDoc(doc_id, seg.sources[i], int(seg.version[i]), int(seg.seq[i]),
                          seg.routing[i])

    def explain(self, q: ShardQuery, addrs: list[int]) -> list[dict[str, Any]]:
        """``explain: true``: the score breakdown (Lucene-style explanation tree) of each hit
        at ``addrs``, with the statistics the query phase scored with."""
        expanded = expand(q.query, self.mapping)
        ctx = Context(mapping=self.mapping, stats=q.stats, index_name=self.index)
        out = []
        for a in addrs:
            seg = self.by_uid[int(a) >> 32]
            out.extend(explain(expanded, seg, [int(a) & 0xFFFFFFFF], ctx))
        return out

    def fetch(self, addrs: list[int]) -> list[FetchedDoc]:
        """The fetch phase: documents at the addresses of one page (from the query phase)."""
        rows: dict[int, list[int]] = {}
        for a in addrs:
            rows.setdefault(int(a) >> 32, []).append(int(a) & 0xFFFFFFFF)
        sources = {uid: dict(zip(r, self.by_uid[uid].sources.take(r)))
                   for uid, r in rows.items()}   # each compressed block read once
        out = []
        for a in addrs:
            seg, i = self.locate(int(a))
            out.append(FetchedDoc(str(seg.ids[i]), sources[seg.uid][i], int(seg.version[i]),
                                  int(seg.seq[i]), seg.routing[i]))
        return out

    # --- pins: snapshots held by points in time, scrolls and page tokens ----------------------

    def pin(self, key: str, generation: int | None = None) -> int:
        """Keep ``generation`` (default: the latest refresh) readable for cursor ``key``.

        Segments are never dropped today; a future merge must keep every version visible at a
        pinned generation (``pinned_generations``). Idempotent per key.
        """
        gen = self.generation if generation is None else int(generation)
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

    def doc_count(self, generation: int | None = None) -> int:
        gen = self.generation if generation is None else generation
        return int(sum(int(seg.visible(gen).sum()) for seg in self.segments))

    def term_stats(self, fields: list[str], terms: list[tuple[str, str]],
                   generation: int | None = None) -> tuple[Stats, int]:
        """Local statistics over the snapshot's visible documents (summed by the coordinator).

        Per-segment figures are cached forever: what a generation sees never changes.
        """
        gen = self.generation if generation is None else generation
        st = Stats()
        for seg in self.segments:
            vis = seg.visible(gen)
            for f in fields:
                fd = seg.fields.get(f)
                if fd is None:
                    continue
                key = (seg.uid, gen, f)
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
            for f, t in terms:
                fd = seg.fields.get(f)
                if not isinstance(fd, (TextField, KeywordField)):
                    continue
                post = fd.postings.get(t)
                if post is None:
                    continue
                st.doc_freq[(f, t)] = st.doc_freq.get((f, t), 0) + int(vis[post[0]].sum())
        return st, gen

    def query(self, q: ShardQuery) -> ShardHits:
        """The query phase: top ``q.k`` in the global order as columns, plus the match count.

        Cost: O(n) vectorised work per segment to match and score, then O(m) to build the key
        columns of the m matches and O(c log c) to order the c that can reach the top ``k``.
        """
        t0 = time.perf_counter_ns()
        c = self._candidates(q)
        t1 = time.perf_counter_ns()
        top = self._top_k(q.sort, c.kinds, c.columns, c.missing, c.ties, q.k, c.ranks)
        hits = c.hits(top, q.track_scores, time.perf_counter_ns() - t0)
        if q.prefetch:   # small pages: the documents ride along, saving the fetch round trip
            hits.docs = self.fetch(hits.addr[:q.prefetch].tolist())
        if q.profile:
            hits.profile = {"match_ns": t1 - t0, "collect_ns": hits.took_ns - (t1 - t0)}
        if q.aggs is not None:   # partials from the same matches and snapshot as the hits
            from .aggs.leaf import leaf_aggregate
            hits.aggs = leaf_aggregate(self, q, c.parts)
        return hits

    def sample(self, q: ShardQuery, samples: int
               ) -> tuple[int, list[Any], list[int], list[str]]:
        """Deep paging, round 1: ``(m, keys, ranks, kinds)`` — the number of matches and the
        full sort keys (values + tie-break) of every ``ceil(m / samples)``-th match in the
        global order.

        O(m log m) on the shard; the transfer is O(samples) whatever the page's depth.
        """
        c = self._sorted_candidates(q)
        m = len(c.ties)
        if m == 0:
            return 0, [], [], c.kinds
        assert c.order is not None
        step = max(1, -(-m // samples))
        ranks = list(range(0, m, step))
        keys = c.keys_at(c.order[ranks])
        return m, keys, ranks, c.kinds

    def range(self, q: ShardQuery, lo: list[Any] | None, hi: list[Any] | None,
              limit: int) -> tuple[int, ShardHits]:
        """Deep paging, round 2: how many matches sort before ``lo``, and the matches in
        ``[lo, hi)`` in order (at most ``limit``). Keys are full keys as :meth:`sample` gives.
        """
        t0 = time.perf_counter_ns()
        c = self._sorted_candidates(q)
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

    def window(self, q: ShardQuery, start: int, limit: int) -> tuple[int, ShardHits]:
        """Deep paging when the search has one shard: its rows ``[start, start + limit)`` in
        order, in one round (with several shards no shard knows where the page starts; see
        :meth:`sample` and :meth:`range`). Answers ``(rows before the window, hits)``.

        O(m log m) for the first page of a query and snapshot (the order is cached), O(limit)
        after; the transfer is O(limit) whatever ``start``.
        """
        t0 = time.perf_counter_ns()
        c = self._sorted_candidates(q)
        assert c.order is not None
        rows = c.order[start:start + limit]
        hits = c.hits(rows, q.track_scores, time.perf_counter_ns() - t0)
        if q.prefetch:
            hits.docs = self.fetch(hits.addr[:q.prefetch].tolist())
        return min(start, len(c.order)), hits

    def _check_latest(self, q: ShardQuery) -> None:
        """A search at "now" that guessed this shard's generation: refuse a stale guess
        (before any cache is consulted, or a cached older snapshot would answer)."""
        if q.latest and q.generation is not None and q.generation != self.generation:
            raise StaleGeneration(f"shard [{self.index}][{self.shard}] is at generation "
                                  f"[{self.generation}], not [{q.generation}]")

    def _sorted_candidates(self, q: ShardQuery) -> _Candidates:
        """All matches with their full order, cached briefly for the rounds of one deep page."""
        import pickle
        self._check_latest(q)
        key = (pickle.dumps((q.query, q.sort, q.stats, q.min_score, q.after, q.index_rank)),
               self.generation if q.generation is None else q.generation)
        hit = self._sorted_cache.get(key)
        if hit is not None:
            return hit
        c = self._candidates(q)
        keys = ascending_keys(q.sort, c.kinds, c.columns, c.missing, c.ties, c.ranks)
        c.order = order(keys)
        if len(self._sorted_cache) >= 4:
            self._sorted_cache.pop(next(iter(self._sorted_cache)))
        self._sorted_cache[key] = c
        return c

    def _candidates(self, q: ShardQuery) -> _Candidates:
        """Every match of ``q`` in the snapshot (after ``search_after``), as columns."""
        self._check_latest(q)
        gen = self.generation if q.generation is None else q.generation
        mapping = self.mapping
        sort = q.sort
        fts = [field_type_for_sort(sf, mapping) for sf in sort]
        for sf, ft in zip(sort, fts):
            check_sortable(sf, ft, self.index)
        kinds = [column_kind(sf, ft) for sf, ft in zip(sort, fts)]
        # checked before matching, so an empty shard refuses a bad search_after too
        after = coerce_after(sort, kinds, fts, q.after) if q.after is not None else None
        expanded = expand(q.query, mapping)
        validate(expanded, mapping)
        ctx = Context(mapping=mapping, stats=q.stats, index_name=self.index)
        seg_parts: list[tuple[Segment, np.ndarray, np.ndarray]] = []
        total = 0
        remaining = q.terminate_after
        terminated = False
        for seg in self.segments:
            vis = seg.visible(gen)
            if not vis.any():
                continue
            sparse = evaluate_sparse(expanded, seg, ctx)
            if sparse is not None:
                docs, hit_scores = sparse
                keep = None if vis.all() else vis[docs]
                if q.min_score is not None:
                    above = hit_scores >= np.float32(q.min_score)
                    keep = above if keep is None else keep & above
                if keep is not None:
                    docs, hit_scores = docs[keep], hit_scores[keep]
            else:
                mask, scores = evaluate(expanded, seg, ctx)
                mask = mask & vis
                if q.min_score is not None:
                    mask &= scores >= np.float32(q.min_score)
                docs = np.flatnonzero(mask)
                hit_scores = scores[docs]
            if remaining is not None:
                if len(docs) >= remaining:
                    terminated = True
                    docs = docs[:remaining]
                remaining -= len(docs)
            if len(docs):
                seg_parts.append((seg, docs, hit_scores[:len(docs)]))
            total += len(docs)
            if remaining is not None and remaining <= 0:
                terminated = True
                break
        if seg_parts:
            scores_c = np.concatenate([s for _, _, s in seg_parts])
            ties_c = np.concatenate([tiebreak(q.index_rank, seg.seq[docs])
                                     for seg, docs, _ in seg_parts])
            addr_c = np.concatenate([(np.int64(seg.uid) << np.int64(32)) | docs.astype(np.int64)
                                     for seg, docs, _ in seg_parts])
        else:
            scores_c = np.zeros(0, dtype=np.float32)
            ties_c = np.zeros(0, dtype=np.int64)
            addr_c = np.zeros(0, dtype=np.int64)
        max_score = float(scores_c.max()) if len(scores_c) else None
        kw = [self._keyword_ranks(sf, ft, kind, seg_parts)
              for sf, ft, kind in zip(sort, fts, kinds)]
        columns: list[Any] = []
        missing: list[np.ndarray | None] = []
        for sf, ft, kind, r in zip(sort, fts, kinds, kw):
            if r is not None:   # strings only for the rows that leave the shard
                col, miss = RankedStrings(r[0], r[1]), r[0] < 0
            else:
                col, miss = self._sort_column(sf, ft, kind, seg_parts, scores_c, ties_c)
            columns.append(col)
            missing.append(miss)
        ranks = [r[0] if r is not None else None for r in kw]
        rank_values = [r[1] if r is not None else None for r in kw]
        if after is not None and len(ties_c):
            probe = _Candidates(self.index, self.shard, gen, sort, kinds, columns, missing,
                                scores_c, ties_c, addr_c, total, max_score, terminated,
                                ranks=ranks, rank_values=rank_values)
            keep = np.flatnonzero(compare_rows(sort, kinds, columns, missing,
                                               probe.in_rank_space(after),
                                               probe.rank_space())[0])
            columns = [col[keep] for col in columns]
            ranks = [r[keep] if r is not None else None for r in ranks]
            missing = [m[keep] if m is not None else None for m in missing]
            scores_c, ties_c, addr_c = scores_c[keep], ties_c[keep], addr_c[keep]
        return _Candidates(self.index, self.shard, gen, sort, kinds, columns, missing, scores_c,
                           ties_c, addr_c, total, max_score, terminated, ranks=ranks,
                           rank_values=rank_values, parts=seg_parts)

    @staticmethod
    def _top_k(sort: tuple, kinds: list[str], columns: list[np.ndarray],
               missing: list[np.ndarray | None], ties: np.ndarray, k: int,
               ranks: list[np.ndarray | None] | None = None) -> np.ndarray:
        """Rows of the top ``k`` in order. O(m) partition on the primary key, then
        O(c log c) for the c rows tied with or before the k-th."""
        m = len(ties)
        if k <= 0 or m == 0:
            return np.zeros(0, dtype=np.int64)
        cand = np.arange(m)
        prim = None
        if m > 4 * k and kinds and kinds[0] in ("score", "int", "float"):
            prim = ascending_keys(sort[:1], kinds[:1], columns[:1], missing[:1], ties)[0]
        elif m > 4 * k and kinds and kinds[0] == "keyword" and ranks and ranks[0] is not None:
            flag, rank = ascending_keys(sort[:1], kinds[:1], columns[:1], missing[:1], ties,
                                        ranks[:1])[:2]
            prim = (flag.astype(np.int64) << np.int64(40)) + rank
        if prim is not None:
            # pre-select on the primary key (keeping every tie at the cut)
            if len(sort) == 1 and prim.min() == prim.max():
                cand = smallest_rows(ties, k)   # all tied (match_all, filters): tie-break only
            else:
                cand = smallest_rows(prim, k)
            if len(sort) == 1 and len(cand) > k:
                # only the (unique) tie-break follows: of the rows tied at the cut, keep as
                # many of the smallest tie-breaks as the page still needs
                p = prim[cand]
                kth = p.max()
                below, at = cand[p < kth], cand[p == kth]
                need = k - len(below)
                t = ties[at]
                cand = np.concatenate([below, at[t <= np.partition(t, need - 1)[need - 1]]])
        keys = ascending_keys(sort, kinds, [c[cand] for c in columns],
                              [mm[cand] if mm is not None else None for mm in missing],
                              ties[cand],
                              [r[cand] if r is not None else None for r in ranks]
                              if ranks else None)
        return cand[order(keys)[:k]]

    def _keyword_ranks(self, sf: SortField, ft: Any, kind: str,
                       parts: list[tuple[Segment, np.ndarray, np.ndarray]]
                       ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(ranks, values)``: shard-wide ordinals of a keyword sort column (same order as its
        strings) and the shard's distinct values they index, so that ordering never sorts
        strings per query: O(m) lookups. None when the column is not a keyword or a
        ``missing`` substitute string takes part in the order."""
        if kind != "keyword" or missing_substitute(sf, kind, ft) is not None:
            return None
        use_max = sf.mode == "max" or (sf.mode is None and sf.desc)
        glob, distinct = self._global_ords(sf.field)
        out = []
        for seg, docs, _ in parts:
            fd = seg.fields.get(sf.field)
            if not isinstance(fd, KeywordField) or seg.uid not in glob:
                out.append(np.full(len(docs), -1, dtype=np.int64))
                continue
            ords = (fd.max_ord if use_max else fd.min_ord)[docs]
            out.append(np.where(ords < 0, -1, glob[seg.uid][np.maximum(ords, 0)]))
        return (np.concatenate(out) if out else np.zeros(0, dtype=np.int64)), distinct

    def _global_ords(self, field: str) -> tuple[dict[int, np.ndarray], np.ndarray]:
        """``(segment uid -> shard-wide rank of each of its ordinals, distinct values)`` for
        ``field``; rebuilt (one O(U log U) sort of the distinct values) only when the segment
        list changed."""
        segs = [s for s in self.segments if isinstance(s.fields.get(field), KeywordField)
                and len(s.fields[field].postings.terms)]  # type: ignore[union-attr]
        key = tuple(s.uid for s in segs)
        cache = self.__dict__.setdefault("_ords_cache", {})
        got = cache.get(field)
        if got is not None and got[0] == key:
            return got[1], got[2]
        values = [s.fields[field].sorted_values for s in segs]  # type: ignore[union-attr]
        out: dict[int, np.ndarray] = {}
        distinct = np.zeros(0, dtype=object)
        if len(segs) == 1:
            out[segs[0].uid] = np.arange(len(values[0]), dtype=np.int64)
            distinct = values[0]
        elif segs:
            distinct, inv = np.unique(np.concatenate(values), return_inverse=True)
            inv = inv.astype(np.int64).reshape(-1)
            start = 0
            for seg, v in zip(segs, values):
                out[seg.uid] = inv[start:start + len(v)]
                start += len(v)
        cache[field] = (key, out, distinct)
        return out, distinct

    def _sort_column(self, sf, ft, kind: str, parts, scores: np.ndarray,
                     ties: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        if kind == "score":
            return scores.astype(np.float32), None
        if kind == "tiebreak":
            return ties, None
        subst = missing_substitute(sf, kind, ft)
        if kind == "keyword":
            vals_l, miss_l = [], []
            for seg, docs, _ in parts:
                fd = seg.fields.get(sf.field)
                if not isinstance(fd, KeywordField):
                    vals_l.append(np.full(len(docs), "", dtype=object))
                    miss_l.append(np.ones(len(docs), dtype=bool))
                    continue
                use_max = sf.mode == "max" or (sf.mode is None and sf.desc)
                ords = (fd.max_ord if use_max else fd.min_ord)[docs]
                miss = ords < 0
                vals = fd.sorted_values[np.where(miss, 0, ords)] if len(fd.postings.terms) \
                    else np.full(len(docs), "", dtype=object)
                vals_l.append(vals)
                miss_l.append(miss)
            vals = np.concatenate(vals_l) if vals_l else np.zeros(0, dtype=object)
            miss = np.concatenate(miss_l) if miss_l else np.zeros(0, dtype=bool)
            if subst is not None:
                vals = np.where(miss, subst, vals).astype(object)
                miss = np.zeros(len(vals), dtype=bool)
            return vals.astype(object), miss
        dtype = np.int64 if kind == "int" else np.float64
        out_l = []
        for seg, docs, _ in parts:
            fd = seg.fields.get(sf.field)
            if not isinstance(fd, NumericField):
                out_l.append(np.full(len(docs), subst, dtype=dtype))
                continue
            mode = sf.mode or ("max" if sf.desc else "min")
            if mode == "max":
                vals = fd.max[docs]
            elif mode in ("avg", "sum", "median"):
                vals = _reduce_values(fd, docs, mode)
            else:
                vals = fd.min[docs]
            vals = np.where(fd.present[docs], scale_date(vals, sf, ft), subst).astype(dtype)
            out_l.append(vals)
        col = np.concatenate(out_l) if out_l else np.zeros(0, dtype=dtype)
        return col, None


class RankedStrings:
    """A keyword sort column held as shard-wide ranks into the shard's distinct values.

    Ordering only needs the ranks; strings are gathered for the rows asked for (the page, the
    samples), not for all m matches (an object gather of 56k strings cost ~0.5 ms a query).
    Indexing gives what the eager column gave: an object array (or one string); a missing
    value reads as "" (its ``missing`` flag is what counts).
    """

    __slots__ = ("ranks", "values")

    def __init__(self, ranks: np.ndarray, values: np.ndarray) -> None:
        self.ranks = ranks
        self.values = values

    def __len__(self) -> int:
        return len(self.ranks)

    def __getitem__(self, rows: Any) -> Any:
        r = self.ranks[rows]
        if np.ndim(r) == 0:
            return self.values[r] if r >= 0 else ""
        out = np.full(len(r), "", dtype=object)
        present = r >= 0
        out[present] = self.values[r[present]]
        return out


@dataclass
class _Candidates:
    """Every match of one query on this shard, as columns (rows in segment order)."""

    index: str
    shard: int
    generation: int
    sort: tuple[SortField, ...]
    kinds: list[str]
    columns: list[np.ndarray]
    missing: list[np.ndarray | None]
    scores: np.ndarray
    ties: np.ndarray
    addr: np.ndarray
    total: int
    max_score: float | None
    terminated: bool
    order: np.ndarray | None = None
    ranks: list[np.ndarray | None] | None = None   # shard-wide keyword ordinals per key
    rank_values: list[np.ndarray | None] | None = None  # the distinct values ranks index
    parts: list[Any] | None = None   # (segment, docs, scores) of every match, for aggregations

    def rank_space(self) -> list[np.ndarray | None] | None:
        """Keyword keys as ``2·rank`` integers (see ``sorting.rank_key``), tie-break last."""
        if not self.ranks or all(r is None for r in self.ranks):
            return None
        return [2 * r if r is not None else None for r in self.ranks] + [None]

    def in_rank_space(self, key: list[Any]) -> list[Any]:
        """A full key with its keyword values mapped like :meth:`rank_space`."""
        if not self.ranks or not self.rank_values:
            return key
        out = list(key)
        for j, vals in enumerate(self.rank_values):
            if vals is not None and j < len(out) and out[j] is not None:
                out[j] = rank_key(vals, out[j])
        return out

    def hits(self, rows: np.ndarray, track_scores: bool, took_ns: int) -> ShardHits:
        return ShardHits(
            index=self.index, shard=self.shard, total=self.total,
            columns=[c[rows] for c in self.columns],
            missing=[m[rows] if m is not None else None for m in self.missing],
            kinds=self.kinds, scores=self.scores[rows], ties=self.ties[rows],
            addr=self.addr[rows], max_score=self.max_score if track_scores else None,
            generation=self.generation, terminated_early=self.terminated, took_ns=took_ns)

    def extended(self) -> tuple[tuple[SortField, ...], list[str], list[np.ndarray],
                                list[np.ndarray | None]]:
        """The sort with the tie-break appended as a last key (a strict total order)."""
        return (self.sort + (SortField("_shard_doc"),), self.kinds + ["tiebreak"],
                self.columns + [self.ties], self.missing + [None])

    def keys_at(self, rows: np.ndarray) -> list[list[Any]]:
        """:meth:`key_at` of many rows, vectorised (``tolist`` gives Python scalars)."""
        cols = []
        for col, miss in zip(self.columns, self.missing):
            vals = col[rows].tolist()
            if miss is not None:
                vals = [None if mm else v for v, mm in zip(vals, miss[rows].tolist())]
            cols.append(vals)
        cols.append(self.ties[rows].tolist())
        return [list(k) for k in zip(*cols)]

    def key_at(self, row: int) -> list[Any]:
        """The full key of one row: its value per sort key (None when missing) + tie-break."""
        out: list[Any] = []
        for col, miss in zip(self.columns, self.missing):
            out.append(None if miss is not None and miss[row] else col[row].item()
                       if hasattr(col[row], "item") else col[row])
        out.append(int(self.ties[row]))
        return out


def _reduce_values(fd: NumericField, docs: np.ndarray, mode: str) -> np.ndarray:
    n = len(fd.present)
    sums = np.zeros(n, dtype=np.float64)
    counts = np.zeros(n, dtype=np.int64)
    np.add.at(sums, fd.value_docs, fd.values.astype(np.float64))
    np.add.at(counts, fd.value_docs, 1)
    if mode == "sum":
        out = sums
    else:
        out = np.divide(sums, np.maximum(counts, 1))
    vals = out[docs]
    if fd.values.dtype == np.int64:
        return np.round(vals).astype(np.int64)
    return vals


def _conflict(doc_id: str, reason: str, index: str, shard: int) -> dict[str, Any]:
    return {"_id": doc_id, "status": 409, "error": {
        "type": "version_conflict_engine_exception", "reason": reason, "index_uuid": "_na_",
        "shard": str(shard), "index": index}}
