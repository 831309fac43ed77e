"""A shard's matches for one query, as columns, and the top ``k`` of them.

:func:`collect` is the scoring loop of the query phase: segment by segment it matches and
scores the snapshot's visible documents, then builds one column per sort key for the m
matches. It stops when the search's deadline passes or its caller goes away
(``cancellation.py``): with ``partial`` the matches of the segments already done are kept and
flagged ``timed_out`` — Elasticsearch's shards return what they collected before the timeout —
otherwise the stop is raised.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import ShardTimeout
from .cancellation import Cancellation
from .query.context import Context
from .query.matching import evaluate, evaluate_sparse
from .query.rewrite import expand
from .query.validation import validate
from .segment import Segment
from .shard_messages import ShardHits, ShardQuery
from .nested_sort import nested_parts
from .geo_sort import geo_sort_column
from .sort_columns import RankedStrings, keyword_ranks, sort_column
from .script_sort import script_sort_column
from .sorting import (SortField, ascending_keys, check_sortable, coerce_after, column_kind,
                      compare_rows, field_type_for_sort, order, rank_key, smallest_rows,
                      tiebreak)

Part = tuple[Segment, np.ndarray, np.ndarray]     # (segment, matching rows, their scores)


CACHE_BYTES = 64 << 20   # ordered matches kept per shard (deep pages, search_after): at most
                         # 4 queries and this many bytes of their arrays


@dataclass
class Candidates:
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
    timed_out: bool = False          # the deadline stopped matching: these are the segments'
                                     # matches collected before it (Elasticsearch's partial)

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
            generation=self.generation, terminated_early=self.terminated, took_ns=took_ns,
            timed_out=self.timed_out)

    def after(self, key: list[Any]) -> Candidates:
        """The rows that sort after ``key`` (``search_after``); total and max score stay
        those of every match, as Elasticsearch reports them."""
        keep = np.flatnonzero(compare_rows(self.sort, self.kinds, self.columns, self.missing,
                                           self.in_rank_space(key), self.rank_space())[0])
        return replace(self, columns=[col[keep] for col in self.columns],
                       missing=[m[keep] if m is not None else None for m in self.missing],
                       ranks=[r[keep] if r is not None else None for r in self.ranks or []],
                       scores=self.scores[keep], ties=self.ties[keep], addr=self.addr[keep])

    def extended(self) -> tuple[tuple[SortField, ...], list[str], list[np.ndarray],
                                list[np.ndarray | None]]:
        """The sort with the tie-break appended as a last key (a strict total order)."""
        return (self.sort + (SortField("_shard_doc"),), self.kinds + ["tiebreak"],
                self.columns + [self.ties], self.missing + [None])

    def keys_at(self, rows: np.ndarray) -> list[list[Any]]:
        """:meth:`key_at` of many rows, vectorised (``tolist`` gives Python scalars)."""
        return keys_of(self.columns, self.missing, self.ties, rows)

    def key_at(self, row: int) -> list[Any]:
        """The full key of one row: its value per sort key (None when missing) + tie-break."""
        out: list[Any] = []
        for col, miss in zip(self.columns, self.missing):
            out.append(None if miss is not None and miss[row] else col[row].item()
                       if hasattr(col[row], "item") else col[row])
        out.append(int(self.ties[row]))
        return out


def collect(core: Any, q: ShardQuery, cancel: Cancellation, partial: bool = False
            ) -> Candidates:
    """Every match of ``q`` on ``core`` (a ``ShardCore``) in the snapshot, after
    ``search_after``, as columns. O(n) vectorised work per segment, then O(m) for the sort
    columns of the m matches."""
    gen = core.generation if q.generation is None else q.generation
    sort = q.sort
    fts = [field_type_for_sort(sf, core.mapping) for sf in sort]
    for sf, ft in zip(sort, fts):
        check_sortable(sf, ft, core.index)
    kinds = [column_kind(sf, ft) for sf, ft in zip(sort, fts)]
    # checked before matching, so an empty shard refuses a bad search_after too
    after = coerce_after(sort, kinds, fts, q.after) if q.after is not None else None
    parts, total, terminated, timed_out = _match_segments(core, q, gen, cancel, partial)
    if parts:
        scores = np.concatenate([s for _, _, s in parts])
        ties = np.concatenate([tiebreak(q.index_rank, seg.seq[docs]) for seg, docs, _ in parts])
        addr = np.concatenate([(np.int64(seg.uid) << np.int64(32)) | docs.astype(np.int64)
                               for seg, docs, _ in parts])
    else:
        scores = np.zeros(0, dtype=np.float32)
        ties = np.zeros(0, dtype=np.int64)
        addr = np.zeros(0, dtype=np.int64)
    max_score = float(scores.max()) if len(scores) else None
    cache = core.__dict__.setdefault("_ords_cache", {})
    kw = []
    columns: list[Any] = []
    missing: list[np.ndarray | None] = []
    for sf, ft, kind in zip(sort, fts, kinds):
        s_parts, s_segs, s_cache = parts, core.segments, cache
        if sf.nested is not None:   # the children's values as the parents' column
            s_parts, s_segs = nested_parts(sf, parts, core.segments, core.mapping,
                                           _block_matcher(core, cancel))
            s_cache = {}
        r = keyword_ranks(s_segs, s_cache, sf, ft, kind, s_parts)
        kw.append(r)
        if r is not None:   # strings only for the rows that leave the shard
            col, miss = RankedStrings(r[0], r[1]), r[0] < 0
        elif sf.script is not None:
            col, miss = script_sort_column(sf, parts, scores, core.mapping, cancel)
        elif sf.geo is not None:
            col, miss = geo_sort_column(sf, parts, core.mapping)
        else:
            col, miss = sort_column(sf, ft, kind, s_parts, scores, ties)
        columns.append(col)
        missing.append(miss)
    c = Candidates(core.index, core.shard, gen, sort, kinds, columns, missing, scores, ties,
                   addr, total, max_score, terminated, ranks=[r[0] if r is not None else None
                                                              for r in kw],
                   rank_values=[r[1] if r is not None else None for r in kw], parts=parts,
                   timed_out=timed_out)
    return c.after(after) if after is not None and len(ties) else c


def _block_matcher(core: Any, cancel: Cancellation) -> Any:
    """``match(query, block)``: a nested sort's ``filter`` over a block of children."""
    ctx = Context(mapping=core.mapping, stats=None, index_name=core.index, cancel=cancel)
    return lambda query, block: evaluate(expand(query, core.mapping), block, ctx)[0]


def _match_segments(core: Any, q: ShardQuery, gen: int, cancel: Cancellation, partial: bool
                    ) -> tuple[list[Part], int, bool, bool]:
    """``(parts, total, terminated early, timed out)``: the scoring loop, one segment at a
    time, checking ``cancel`` before each (and inside compound queries and expansions)."""
    expanded = expand(q.query, core.mapping)
    validate(expanded, core.mapping)
    ctx = Context(mapping=core.mapping, stats=q.stats, index_name=core.index, cancel=cancel)
    parts: list[Part] = []
    total = 0
    remaining = q.terminate_after
    for seg in core.segments:
        try:
            cancel.check()
            vis = seg.visible(gen)
            if not vis.any():
                continue
            docs, hit_scores = _match_one(expanded, seg, vis, ctx, q.min_score)
        except ShardTimeout:
            if not partial:
                raise
            return parts, total, False, True
        if remaining is not None:
            if len(docs) >= remaining:
                docs = docs[:remaining]
            remaining -= len(docs)
        if len(docs):
            parts.append((seg, docs, hit_scores[:len(docs)]))
        total += len(docs)
        if remaining is not None and remaining <= 0:
            return parts, total, True, False
    return parts, total, False, False


def _match_one(expanded: Any, seg: Segment, vis: np.ndarray, ctx: Context,
               min_score: float | None) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)`` of the visible matches in one segment."""
    sparse = evaluate_sparse(expanded, seg, ctx)
    if sparse is not None:
        docs, hit_scores = sparse
        keep = None if vis.all() else vis[docs]
        if min_score is not None:
            above = hit_scores >= np.float32(min_score)
            keep = above if keep is None else keep & above
        if keep is not None:
            docs, hit_scores = docs[keep], hit_scores[keep]
        return docs, hit_scores
    mask, scores = evaluate(expanded, seg, ctx)
    mask = mask & vis
    if min_score is not None:
        mask &= scores >= np.float32(min_score)
    docs = np.flatnonzero(mask)
    return docs, scores[docs]


def sorted_candidates(core: Any, q: ShardQuery, cancel: Cancellation) -> Candidates:
    """All matches with their full order (deep paging), cached briefly on ``core`` for the
    rounds of one deep page. Never partial: the rounds must see the same matches."""
    hit = cached_sorted(core, q)
    return hit if hit is not None else store_sorted(core, q, collect(core, q, cancel))


def sorted_key(core: Any, q: ShardQuery) -> tuple[bytes, int]:
    """What decides a query's matches and their order on one snapshot."""
    import pickle
    return (pickle.dumps((q.query, q.sort, q.stats, q.min_score, q.after, q.index_rank)),
            core.generation if q.generation is None else q.generation)


def cached_sorted(core: Any, q: ShardQuery) -> Candidates | None:
    """The cached ordered matches of ``q`` on its snapshot, if any."""
    return core.__dict__.setdefault("_sorted_cache", {}).get(sorted_key(core, q))


def store_sorted(core: Any, q: ShardQuery, c: Candidates) -> Candidates:
    """``c`` (every match of ``q``, complete) with its full order, cached (the last 4)."""
    keys = ascending_keys(q.sort, c.kinds, c.columns, c.missing, c.ties, c.ranks)
    c.order = order(keys)
    cache: dict[Any, Candidates] = core.__dict__.setdefault("_sorted_cache", {})
    size = _bytes_of(c)
    if size > CACHE_BYTES:
        return c                      # used once, not kept
    while cache and (len(cache) >= 4 or
                     sum(_bytes_of(x) for x in cache.values()) + size > CACHE_BYTES):
        cache.pop(next(iter(cache)), None)
    cache[sorted_key(core, q)] = c
    return c


def _bytes_of(c: Candidates) -> int:
    """The arrays ``c`` holds (what keeping it costs beside the segments it points at)."""
    arrays = [*c.columns, *(m for m in c.missing if m is not None), c.scores, c.ties, c.addr,
              *(r for r in (c.ranks or []) if r is not None),
              *(a for _, docs, scores in (c.parts or []) for a in (docs, scores))]
    return sum(a.nbytes for a in [*arrays, c.order] if isinstance(a, np.ndarray))


def top_k(sort: tuple, kinds: list[str], columns: list[np.ndarray],
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


def keys_of(columns: list[np.ndarray], missing: list[np.ndarray | None], ties: np.ndarray,
            rows: np.ndarray) -> list[list[Any]]:
    """Full keys of ``rows``: their value per sort column (None where missing), then the
    tie-break; shared by :meth:`Candidates.keys_at` and a shard answer's columns."""
    cols = []
    for col, miss in zip(columns, missing):
        vals = col[rows].tolist()
        if miss is not None:
            vals = [None if mm else v for v, mm in zip(vals, miss[rows].tolist())]
        cols.append(vals)
    cols.append(ties[rows].tolist())
    return [list(k) for k in zip(*cols)]
