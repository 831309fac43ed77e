"""``"profile": true``: what one search cost, shard by shard, in Elasticsearch's shape plus ours.

Elasticsearch's ``profile.shards[]`` entries (``id`` = ``[node][index][shard]``, ``searches`` with
the query's ``time_in_nanos`` and ``breakdown``, ``rewrite_time``, ``collector``, ``fetch``, and
``dfs`` when global statistics were gathered) are filled with what a shard measured itself.
Lucene's fine breakdown does not exist here (a query is evaluated as whole-segment array
operations), so the breakdown's keys are present but only ``score`` (matching and scoring) is
non-zero; the collector is the top-``k`` selection.

Our own figures, under ``shardsearch`` keys, are what the central merge costs — the subject of
``notebooks/cost_of_deep_paging.ipynb``:

* per shard (``profile.shards[i].shardsearch``): ``candidates`` sent in the query phase (for the
  deep-page method, ``sample_candidates`` of round 1 too), ``bytes`` (NumPy ``nbytes`` of the
  candidate arrays, plus pickled samples), ``pickled_bytes`` (what the hop serialises), round
  trips seen by the coordinator, ``retries``, ``simulated_delay_ns``, fetched documents and
  their ``_source`` bytes;
* per search (``profile.shardsearch``): ``method`` (``from_size`` = classic merge of every
  shard's top ``from + size``, ``search_after``, ``deep_page``, or the cursor ``scroll`` /
  ``pit``), ``query_phase`` (the algorithm the query phase used), totals of the above,
  ``merge_ns`` at the coordinator, the time of each phase and ``took_ns``.

Only shards that answered appear in ``profile.shards`` (as in Elasticsearch); failed and timed
out shards are listed in ``profile.shardsearch.unanswered``.
"""
from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field
from typing import Any

from .fanout import Outcome

_BREAKDOWN_KEYS = (
    "set_min_competitive_score_count", "match_count", "shallow_advance_count",
    "set_min_competitive_score", "next_doc", "match", "next_doc_count", "score_count",
    "compute_max_score_count", "compute_max_score", "advance", "advance_count",
    "count_weight_count", "score", "build_scorer_count", "create_weight", "shallow_advance",
    "count_weight", "create_weight_count", "build_scorer")

_LUCENE_NAMES = {"MatchAll": "MatchAllDocsQuery", "MatchNone": "MatchNoDocsQuery",
                 "Term": "TermQuery", "Terms": "TermInSetQuery", "Match": "BooleanQuery",
                 "Bool": "BooleanQuery", "MatchPhrase": "PhraseQuery",
                 "Range": "IndexOrDocValuesQuery", "Prefix": "PrefixQuery",
                 "Wildcard": "WildcardQuery", "Exists": "FieldExistsQuery",
                 "ConstantScore": "ConstantScoreQuery", "DisMax": "DisjunctionMaxQuery",
                 "Ids": "TermInSetQuery", "Nested": "ESToParentBlockJoinQuery"}


def query_type(query: Any) -> str:
    name = type(query).__name__
    return _LUCENE_NAMES.get(name, name + "Query")


def describe(query: Any, limit: int = 300) -> str:
    """A short, Lucene-like description of a query node."""
    name = type(query).__name__
    if name == "MatchAll":
        return "*:*"
    f = getattr(query, "field", None)
    for attr in ("text", "value", "values"):
        v = getattr(query, attr, None)
        if f and v is not None:
            return f"{f}:{v}"[:limit]
    return repr(query)[:limit]


def hits_nbytes(hits: Any) -> int:
    """Bytes of the candidate columns a shard sends (``ShardHits``), as NumPy counts them;
    an object (keyword) column counts its strings' UTF-8 bytes too."""
    n = 0
    arrays = list(hits.columns) + [m for m in hits.missing if m is not None] \
        + [hits.scores, hits.ties, hits.addr]
    for a in arrays:
        n += int(a.nbytes)
        if a.dtype == object:
            n += sum(len(str(v).encode()) for v in a)
    return n


def pickled_size(obj: Any) -> int:
    """What a hop serialises (pickle protocol 5, arrays in-band): an estimate of the wire."""
    try:
        return len(pickle.dumps(obj, protocol=5))
    except Exception:  # noqa: BLE001 - an estimate only
        return 0


@dataclass
class ShardCost:
    """Everything measured for one shard during one search."""

    index: str
    shard: int
    node: str = "local"
    answered: bool = False
    failed: bool = False
    timed_out: bool = False
    retries: int = 0
    k: int = 0
    candidates: int = 0
    sample_candidates: int = 0
    matches: int = 0
    bytes: int = 0
    payloads: list[Any] = field(default_factory=list)   # pickled later, outside ``took``
    query_ns: int = 0           # shard-side (ES ``time_in_nanos``)
    match_ns: int = 0
    collect_ns: int = 0
    query_round_trip_ns: int = 0
    stats_round_trip_ns: int | None = None
    fetch_ns: int | None = None
    fetch_round_trip_ns: int = 0
    fetched: int = 0
    fetch_bytes: int = 0
    simulated_delay_ns: int = 0
    agg_rounds: dict[str, dict[str, int]] = field(default_factory=dict)   # cut terms, by name


class SearchProfile:
    """Collects :class:`ShardCost` per shard while a search runs; renders the ``profile``."""

    def __init__(self, shard_list: list[Any], query: Any, from_: int, size: int) -> None:
        self.costs = {(m.name, sid): ShardCost(m.name, sid) for _, m, sid, _ in shard_list}
        self.query = query
        self.from_ = from_
        self.size = size
        self.method = "from_size"
        self.cursor: str | None = None
        self.t0 = time.perf_counter_ns()
        self.phase_ns: dict[str, int] = {}
        self._phase_start = self.t0

    def cost(self, entry: Any) -> ShardCost:
        _, m, sid, _ = entry
        return self.costs[(m.name, sid)]

    def phase(self, name: str) -> None:
        """Close the phase that ran since the previous call (``stats``, ``query``, ``merge``,
        ``fetch``)."""
        now = time.perf_counter_ns()
        self.phase_ns[name] = self.phase_ns.get(name, 0) + now - self._phase_start
        self._phase_start = now

    def _outcome(self, c: ShardCost, o: Outcome) -> None:
        c.retries += o.retries
        if o.timed_out:
            c.timed_out = True
        elif o.error is not None:
            c.failed = True

    def stats(self, entry: Any, o: Outcome) -> None:
        c = self.cost(entry)
        self._outcome(c, o)
        c.stats_round_trip_ns = o.round_trip_ns

    def query_hits(self, entry: Any, o: Outcome, k: int) -> None:
        """A query-phase answer (``query``, or the deep page's ``range`` round)."""
        c = self.cost(entry)
        self._outcome(c, o)
        c.query_round_trip_ns += o.round_trip_ns
        c.k = k
        if not o.ok:
            return
        hits = o.value[1] if isinstance(o.value, tuple) else o.value
        c.answered = True
        c.candidates += len(hits)
        c.matches = hits.total
        c.bytes += hits_nbytes(hits)
        c.payloads.append(o.value)
        c.query_ns += hits.took_ns
        prof = hits.profile or {}
        c.match_ns += prof.get("match_ns", hits.took_ns)
        c.collect_ns += prof.get("collect_ns", 0)
        c.node = prof.get("node", c.node)
        c.simulated_delay_ns += prof.get("simulated_delay_ns", 0)

    def sample(self, entry: Any, o: Outcome) -> None:
        """The deep page's round 1: ``(matches, keys, ranks, kinds)``."""
        c = self.cost(entry)
        self._outcome(c, o)
        c.query_round_trip_ns += o.round_trip_ns
        if o.ok:
            c.sample_candidates += len(o.value[1])
            c.payloads.append(o.value)

    def agg_rounds(self, entry: Any, name: str, rounds: int, shipped: int,
                   distinct: int) -> None:
        """A cut ``terms`` (``aggs/rounds.py``): how many rounds, how many of the shard's
        ``distinct`` keys it shipped to find the top (rounds 1-3 never ship a key twice; the
        last round's sub-aggregations of the final keys are not counted)."""
        self.cost(entry).agg_rounds[name] = {"rounds": rounds, "keys_shipped": shipped,
                                             "distinct_keys": distinct}

    def fetch(self, entry: Any, o: Outcome) -> None:
        c = self.cost(entry)
        self._outcome(c, o)
        c.fetch_round_trip_ns += o.round_trip_ns
        if not o.ok:
            return
        docs, info = o.value if isinstance(o.value, tuple) else (o.value, {})
        c.fetched += len(docs)
        c.fetch_bytes += sum(len(d.source or b"") for d in docs)
        c.fetch_ns = (c.fetch_ns or 0) + int(info.get("took_ns", 0))
        c.simulated_delay_ns += int(info.get("simulated_delay_ns", 0))
        c.node = info.get("node", c.node)

    # --- rendering --------------------------------------------------------------------------

    def to_dict(self, took_ns: int) -> dict[str, Any]:
        """The response's ``profile`` object (pickles the payloads: call after ``took``)."""
        shards = []
        unanswered = []
        total = {"candidates": 0, "sample_candidates": 0, "bytes": 0, "pickled_bytes": 0,
                 "fetched": 0, "fetch_bytes": 0, "retries": 0}
        for c in self.costs.values():
            pickled = sum(pickled_size(p) for p in c.payloads)
            c.bytes += sum(pickled_size(p[1]) for p in c.payloads
                           if isinstance(p, tuple) and len(p) == 4)   # samples: no arrays
            total["candidates"] += c.candidates
            total["sample_candidates"] += c.sample_candidates
            total["bytes"] += c.bytes
            total["pickled_bytes"] += pickled
            total["fetched"] += c.fetched
            total["fetch_bytes"] += c.fetch_bytes
            total["retries"] += c.retries
            if not c.answered:
                unanswered.append({"index": c.index, "shard": c.shard, "failed": c.failed,
                                   "timed_out": c.timed_out, "retries": c.retries})
                continue
            shards.append(self._shard_entry(c, pickled))
        ours = {"method": self.cursor or self.method, "query_phase": self.method,
                "cursor": self.cursor, "from": self.from_, "size": self.size,
                "shards": len(self.costs), "answered": len(shards), **total,
                "stats_phase_ns": self.phase_ns.get("stats", 0),
                "query_phase_ns": self.phase_ns.get("query", 0),
                "merge_ns": self.phase_ns.get("merge", 0),
                "aggregate_phase_ns": self.phase_ns.get("aggregate", 0),
                "fetch_phase_ns": self.phase_ns.get("fetch", 0),
                "took_ns": took_ns, "unanswered": unanswered}
        return {"shards": shards, "shardsearch": ours}

    def _shard_entry(self, c: ShardCost, pickled: int) -> dict[str, Any]:
        breakdown = {k: 0 for k in _BREAKDOWN_KEYS}
        breakdown["score"] = c.match_ns
        breakdown["score_count"] = c.matches
        breakdown["next_doc_count"] = c.matches
        entry: dict[str, Any] = {
            "id": f"[{c.node}][{c.index}][{c.shard}]", "node_id": c.node,
            "shard_id": c.shard, "index": c.index, "cluster": "(local)",
        }
        if c.stats_round_trip_ns is not None:
            entry["dfs"] = {"statistics": {
                "type": "statistics", "description": "collect term statistics",
                "time_in_nanos": c.stats_round_trip_ns,
                "breakdown": {"term_statistics": c.stats_round_trip_ns,
                              "term_statistics_count": 1, "collection_statistics": 0,
                              "collection_statistics_count": 1, "create_weight": 0,
                              "create_weight_count": 0, "rewrite": 0, "rewrite_count": 0}}}
        entry["searches"] = [{
            "query": [{"type": query_type(self.query), "description": describe(self.query),
                       "time_in_nanos": c.match_ns, "breakdown": breakdown}],
            "rewrite_time": 0,
            "collector": [{"name": "TopDocsCollector", "reason": "search_top_hits",
                           "time_in_nanos": c.collect_ns}],
        }]
        entry["aggregations"] = [   # Elasticsearch's shape; our counters under ``debug``
            {"type": "StringTermsAggregator", "description": name, "time_in_nanos": 0,
             "breakdown": {}, "debug": {"result_strategy": "tput", **figures}}
            for name, figures in c.agg_rounds.items()]
        if c.fetch_ns is not None:
            entry["fetch"] = {
                "type": "fetch", "description": "", "time_in_nanos": c.fetch_ns,
                "breakdown": {"load_source": c.fetch_ns, "load_source_count": c.fetched,
                              "load_stored_fields": 0, "load_stored_fields_count": c.fetched,
                              "next_reader": 0, "next_reader_count": 1 if c.fetched else 0},
                "debug": {"stored_fields": ["_id", "_routing", "_source"]},
                "children": []}
        entry["shardsearch"] = {
            "k": c.k, "candidates": c.candidates, "sample_candidates": c.sample_candidates,
            "matches": c.matches, "bytes": c.bytes, "pickled_bytes": pickled,
            "query_ns": c.query_ns, "query_round_trip_ns": c.query_round_trip_ns,
            "stats_round_trip_ns": c.stats_round_trip_ns,
            "fetch_ns": c.fetch_ns, "fetch_round_trip_ns": c.fetch_round_trip_ns,
            "fetched": c.fetched, "fetch_bytes": c.fetch_bytes, "retries": c.retries,
            "simulated_delay_ns": c.simulated_delay_ns}
        return entry
