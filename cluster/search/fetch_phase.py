"""The fetch round of a search: the page's documents, from the page's shards only.

Small pages skip it (the query round brought the documents: query-and-fetch). ``explain``
asks the same shards for the page's score explanations.
"""
from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

from ..engine.shard_calls import ShardCalls
from ..engine.shard_messages import ShardQuery
from .failures import answers
from .profile import SearchProfile
from .fanout import fan_out


async def explain_page(shards: ShardCalls, hits_list: list[Any], page: list[Any],
                       shard_list: list[Any], queries: list[ShardQuery],
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
        calls.append(shards.explain(ref, plan[(m.name, sid)],
                                    [int(h.addr[page[i].row]) for i in rows]))
    for (pos, rows), (node, expls) in zip(by_shard.items(), await asyncio.gather(*calls)):
        (_, m, sid, _), _ = hits_list[pos]
        for i, x in zip(rows, expls):
            hits[i] = {"_shard": f"[{m.name}][{sid}]", "_node": node, **hits[i],
                       "_explanation": x}


async def inner_hits_page(shards: ShardCalls, hits_list: list[Any], page: list[Any],
                          shard_list: list[Any], queries: list[ShardQuery],
                          hits: list[dict[str, Any]]) -> None:
    """``inner_hits`` of ``nested`` queries: the page's shards find their hits' matching
    children with the query and statistics of the query phase; adds ``inner_hits``."""
    plan = {(m.name, sid): q for (_, m, sid, _), q in zip(shard_list, queries)}
    by_shard: dict[int, list[int]] = {}
    for i, e in enumerate(page):
        by_shard.setdefault(e.shard_pos, []).append(i)
    calls = []
    for pos, rows in by_shard.items():
        (_, m, sid, ref), h = hits_list[pos]
        calls.append(shards.inner_hits(ref, plan[(m.name, sid)],
                                       [int(h.addr[page[i].row]) for i in rows]))
    for (pos, rows), got in zip(by_shard.items(), await asyncio.gather(*calls)):
        for i, inner in zip(rows, got):
            hits[i]["inner_hits"] = inner


async def fetch_page(shards: ShardCalls, hits_list: list[Any], page: list[Any],
                     timeout_ms: float | None = None, prof: SearchProfile | None = None
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
        calls.append(functools.partial(shards.fetch, ref, addrs, deadline, prof is not None))
    failures: list[dict[str, Any]] = []
    answered, timed_out = answers(
        [hits_list[pos][0] for pos in keys], await fan_out(calls, deadline), failures,
        None if prof is None else lambda i, e, o: prof.fetch(e, o))
    for j, _, value in answered:
        docs = value[0] if prof is not None else value
        for i, d in zip(by_shard[keys[j]], docs):
            out[i] = d
    return out, failures, timed_out
