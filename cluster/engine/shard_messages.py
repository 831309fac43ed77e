"""Records that cross actor boundaries: the shard's query plan and its partial hits.

Partial hits are columnar (NumPy arrays) because moving 10k candidates as arrays costs a
fraction of moving them as dicts; ``_source`` never appears here — only the fetch phase moves it,
and only for the page.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .query.nodes import Query
from .scoring import Stats
from .sorting import SortField

# A shard's verbs, by how a replicated shard runs them (the one table: the replicated backend
# routes by it, a copy's fast lane serves only reads):
# commands change the shard: numbered, sent to every in-sync copy, durable before acknowledged
COMMANDS = frozenset({"apply", "refresh", "set_mapping", "configure"})
# broadcasts reach every in-sync copy without a number (a pin must hold wherever a search reads)
BROADCASTS = frozenset({"pin", "unpin", "simulate", "force_merge"})
# a search's reads: served on a copy's fast lane too (every other call goes to one copy by Ray)
READS = frozenset({"query", "fetch", "fetch_seqs", "term_stats", "sample", "range", "window"})


@dataclass
class ShardQuery:
    """What the coordinator asks one shard in the query phase."""

    query: Query
    sort: tuple[SortField, ...]          # never empty: () is normalised to ``_score`` desc
    k: int                               # candidates wanted (from + size, or size after a cursor)
    index_rank: int                      # this shard's index among those searched (tie-break)
    generation: int | None = None        # snapshot to read; None = the shard's latest refresh
    stats: Stats | None = None           # global statistics (None: no scoring needed)
    after: list[Any] | None = None       # search_after values (already checked for length)
    track_scores: bool = True
    min_score: float | None = None
    terminate_after: int | None = None
    deadline: float | None = None        # wall-clock time (time.time()) the answer is due by
    profile: bool = False                # fill ``ShardHits.profile`` (``"profile": true``)
    prefetch: int = 0                    # query-and-fetch: also return the top rows' documents
    latest: bool = False                 # ``generation`` is a guess of the latest refresh:
                                         # raise StaleGeneration when the shard moved past it
    aggs: Any = None                     # engine.aggs.AggRequest: also compute partials
    agg_query: Query | None = None       # with a post_filter: the query aggregations see
    agg_cuts: dict[str, Any] | None = None   # top-level terms name -> engine.aggs.tput.Cut
    max_shard_terms: int | None = None   # refuse to ship more keyed buckets (None: no limit)
    collapse: str | None = None          # field collapsing: the first row of each group only
    named: tuple[tuple[str, Query], ...] = ()   # named queries to report for the top rows
    rescore: tuple[Query, ...] = ()      # rescore queries to score the top rows with
    suggest: tuple[tuple[str, str, tuple[str, ...], int, int], ...] = ()   # term suggesters:
                                         # (name, field, tokens, max_edits, prefix_length)
    phrase_suggest: tuple[tuple[str, str, tuple[str, ...], int, int], ...] = ()   # the same,
                                         # for phrase suggesters' generators (suggest_phrase.py)
    completion: tuple[Any, ...] = ()     # suggest_completion.CompletionPlan of each completion
                                         # suggester


@dataclass
class ShardHits:
    """A shard's answer to the query phase: its top ``k`` in the global order, as columns."""

    index: str
    shard: int
    total: int                           # matching documents on this shard (exact)
    columns: list[np.ndarray]            # one per sort key, already in the key's value space
    missing: list[np.ndarray | None]     # keyword columns: which rows have no value
    kinds: list[str]                     # per key: score / int / float / keyword / tiebreak
    scores: np.ndarray                   # float32, _score of each candidate (NaN if untracked)
    ties: np.ndarray                     # int64 tie-break (index rank << 40 | seq)
    addr: np.ndarray                     # int64 address for the fetch phase
    max_score: float | None
    generation: int
    terminated_early: bool = False
    timed_out: bool = False              # the deadline stopped it: the matches found before
    took_ns: int = 0
    profile: dict[str, Any] | None = None   # shard-side timings when the query asked for them
    docs: list[FetchedDoc] | None = None    # query-and-fetch: documents of the first rows
    aggs: dict[str, Any] | None = None      # aggregation partials (engine/aggs/partials.py)
    groups: list[Any] | None = None         # collapse: each row's group key
    named: list[dict[str, float]] | None = None   # each row's matched named queries -> score
    rescore: list[np.ndarray] | None = None  # per rescore query: each row's score (NaN: no match)
    suggest: dict[str, Any] | None = None    # term suggesters' partials (engine/suggest_terms.py)

    def __len__(self) -> int:
        return len(self.addr)


@dataclass
class FetchedDoc:
    """One document of the page, as the fetch phase returns it."""

    id: str
    source: bytes
    version: int
    seq: int
    routing: str | None = None
    ignored: tuple[str, ...] = ()        # fields whose malformed values were skipped

