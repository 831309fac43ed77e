"""The extra aggregation rounds of a search: a cut ``terms`` made exact (``tput.py``).

The query round brought each shard's round-1 cut of every bounded top-level ``terms``
(``phase.plan_shard_queries``). Here, per such aggregation, the later rounds ask the shards
that answered — the same copies (``shard_list``'s refs) at the generation each answered with,
so every round reads the snapshot the hits and the other aggregations read:

2. ``at_least T`` (only shards whose bound reaches ``T``);
3. the candidates' exact counts (only shards that have not reported them);
4. with sub-aggregations, the final keys' buckets and their sub-aggregations.

Each round is a ``query`` call with ``k = 0`` and an aggregation request of that one
``terms`` (its ``_keys`` restricting the later rounds), within the search's deadline. The
final keys then replace the shards' partials, so the reducer and the renderer see ordinary
partials holding the exact counts of exactly the top keys, plus ``other``.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from ...engine.aggs.parse import AggNode, AggRequest
from ...engine.aggs.partials import Keyed
from ...engine.aggs.tput import Cut
from ...engine.shard_calls import ShardCalls
from ...engine.shard_messages import ShardHits, ShardQuery
from ..failures import answers
from ..fanout import fan_out
from ..profile import SearchProfile
from .tput import TermsRounds, cut_for


class _Shards:
    """The shards that answered the query round, and how to ask them one more round."""

    def __init__(self, calls: ShardCalls, shard_list: list[Any], queries: list[ShardQuery],
                 hits_list: list[tuple[Any, ShardHits]], deadline: float | None,
                 hold: Callable[[], Awaitable[None]] | None) -> None:
        pos = {id(e): i for i, e in enumerate(shard_list)}
        self.calls, self.deadline, self.hold = calls, deadline, hold
        self.entries = [e for e, _ in hits_list]
        self.hits = [h for _, h in hits_list]
        self.queries = [queries[pos[id(e)]] for e in self.entries]

    async def ask(self, node: AggNode, asks: dict[int, Cut | list[Any]],
                  failures: list[dict[str, Any]]) -> dict[int, Keyed]:
        """One round: shard ``s`` gets ``asks[s]`` (a cut of every key, or only these keys).
        Before the first, ``hold`` pins the snapshot round 1 read (``search/round_pins.py``)."""
        if self.hold is not None:
            hold, self.hold = self.hold, None
            await hold()
        order = sorted(asks)
        calls = []
        for s in order:
            ask = asks[s]
            one = node if isinstance(ask, Cut) else dataclasses.replace(
                node, params={**node.params, "_keys": list(ask)})
            cut = ask if isinstance(ask, Cut) else Cut("all")
            q = dataclasses.replace(
                self.queries[s], k=0, prefetch=0, profile=False, latest=False,
                generation=self.hits[s].generation, aggs=AggRequest((one,)),
                agg_cuts={node.name: cut})
            calls.append(functools.partial(self.calls.query, self.entries[s][3], q))
        outcomes = await fan_out(calls, self.deadline)
        answered, _ = answers([self.entries[s] for s in order], outcomes, failures)
        return {order[i]: hits.aggs[node.name] for i, _, hits in answered}


async def terms_rounds(calls: ShardCalls, req: Any, shard_list: list[Any],
                       queries: list[ShardQuery], hits_list: list[tuple[Any, ShardHits]],
                       deadline: float | None, prof: SearchProfile | None,
                       hold: Callable[[], Awaitable[None]] | None = None
                       ) -> list[dict[str, Any]]:
    """Run the later rounds of every cut ``terms``; replace the shards' partials of it by the
    final buckets. Returns the failures of the extra rounds (Elasticsearch's shape)."""
    failures: list[dict[str, Any]] = []
    if req.aggs is None or not hits_list:
        return failures
    shards = _Shards(calls, shard_list, queries, hits_list, deadline, hold)
    for node in req.aggs.nodes:
        cut = cut_for(node)
        if cut is None:
            continue
        bare = dataclasses.replace(node, subs=())
        state = TermsRounds(len(shards.hits), int(node.params.get("size", 10)))
        for s, h in enumerate(shards.hits):
            state.add(s, h.aggs[node.name], first=True)
        rounds = 1
        if cut.mode == "top":
            t = state.threshold()
            second = [s for s in range(state.m) if state.needs_threshold(s, t)]
            if second:
                rounds += 1
                at_least = Cut("at_least", cut.k, threshold=t)
                got = await shards.ask(bare, {s: at_least for s in second}, failures)
                for s in second:
                    state.lower_bound(s, t)   # a shard lost here keeps its round-1 counts
                for s, part in got.items():
                    state.add(s, part)
            asked = state.candidates()
            if asked:
                rounds += 1
                for s, part in (await shards.ask(bare, asked, failures)).items():
                    state.add(s, part)
                state.settle(asked)
        top = state.top(cut)
        other = state.other(top)
        finals = {s: state.partial(s, top, other if s == 0 else 0) for s in range(state.m)}
        if node.subs and top:
            rounds += 1
            keys = [k for k, _ in top]
            got = await shards.ask(node, {s: keys for s in range(state.m)
                                          if len(finals[s].counts)}, failures)
            for s, part in got.items():
                part.other = finals[s].other
                finals[s] = part
        for s, h in enumerate(shards.hits):
            h.aggs[node.name] = finals[s]
        if prof is not None:
            for s, e in enumerate(shards.entries):
                prof.agg_rounds(e, node.name, rounds, state.shipped[s], state.distinct[s])
    return failures
