"""A shard's remote interface, typed: one method per verb the layers above the engine send.

Shards are reached through a ``ShardBackend`` (``distribution/``: in-process objects or
replicated Ray actors), whose ``call(ref, verb, *args)`` dispatches by name. :class:`ShardCalls`
is the one place those names are written for the coordinator's layers (how each verb travels —
a numbered command, a broadcast, a read — is in the tables of ``shard_messages.py``), so a
verb's arguments and answer are read from a signature, not from a string at each call site.
The distribution layer's own calls between a group and its copies (``position``, ``drop``,
catch-up) stay inside it.
"""
from __future__ import annotations

from typing import Any

from .mapping import Mapping
from .scoring import Stats
from .shard_messages import FetchedDoc, ShardHits, ShardQuery


class ShardCalls:
    """Typed calls to shard refs of ``backend`` (``backend.call`` is looked up on every call,
    so a test may still wrap it)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    # --- a search's reads -----------------------------------------------------------------------

    async def term_stats(self, ref: Any, fields: list[str], terms: list[tuple[str, str]],
                         generation: int | None, deadline: float | None) -> tuple[Stats, int]:
        """The shard's statistics of ``terms`` at ``generation`` (None: latest), and which."""
        return await self.backend.call(ref, "term_stats", fields, terms, generation, deadline)

    async def query(self, ref: Any, q: ShardQuery) -> ShardHits:
        """The shard's top ``q.k`` in the global order."""
        return await self.backend.call(ref, "query", q)

    async def sample(self, ref: Any, q: ShardQuery, samples: int
                     ) -> tuple[int, list[Any], list[int], list[str]]:
        """A deep page's first round: matches, sampled sort keys, their ranks, key kinds."""
        return await self.backend.call(ref, "sample", q, samples)

    async def range(self, ref: Any, q: ShardQuery, lo: list[Any] | None, hi: list[Any] | None,
                    limit: int) -> tuple[int, ShardHits]:
        """A deep page's second round: matches below ``lo``, and the rows in the bracket."""
        return await self.backend.call(ref, "range", q, lo, hi, limit)

    async def window(self, ref: Any, q: ShardQuery, start: int, limit: int
                     ) -> tuple[int, ShardHits]:
        """A single shard's deep page: its rows ``[start, start + limit)``."""
        return await self.backend.call(ref, "window", q, start, limit)

    async def fetch(self, ref: Any, addrs: list[int], deadline: float | None,
                    profile: bool) -> Any:
        """The page's documents (with ``profile``: ``(docs, timings)``)."""
        return await self.backend.call(ref, "fetch", addrs, deadline, profile)

    async def explain(self, ref: Any, q: ShardQuery, addrs: list[int]
                      ) -> tuple[str, list[dict[str, Any]]]:
        """(node id, explanations) of the page's hits on this shard."""
        return await self.backend.call(ref, "explain", q, addrs)

    async def inner_hits(self, ref: Any, q: ShardQuery, addrs: list[int]
                         ) -> list[dict[str, Any]]:
        """The ``inner_hits`` of the page's hits on this shard."""
        return await self.backend.call(ref, "inner_hits", q, addrs)  # type: ignore[no-any-return]

    async def get(self, ref: Any, doc_id: str) -> FetchedDoc | None:
        """The real-time get of one document."""
        return await self.backend.call(ref, "get", doc_id)

    # --- snapshots and simulated trouble (every in-sync copy) ----------------------------------

    async def pin(self, ref: Any, key: str, generation: int | None) -> int:
        """Pin ``generation`` (None: the latest) under ``key``; returns the generation pinned."""
        return await self.backend.call(ref, "pin", key, generation)

    async def unpin(self, ref: Any, keys: list[str]) -> int:
        return await self.backend.call(ref, "unpin", keys)

    async def simulate(self, ref: Any, spec: dict[str, Any] | None) -> None:
        """Set (None: clear) the shard's simulated trouble (``distribution/simulation.py``)."""
        return await self.backend.call(ref, "simulate", spec)

    async def force_merge(self, ref: Any, max_num_segments: int | None,
                          only_expunge_deletes: bool, flush: bool) -> int:
        """``_forcemerge`` on every in-sync copy (each merges its own segments)."""
        return await self.backend.call(ref, "force_merge", max_num_segments,
                                       only_expunge_deletes, flush)

    # --- commands (numbered, every in-sync copy) -----------------------------------------------

    async def apply(self, ref: Any, batch: Any, mapping: Mapping, refresh: bool) -> Any:
        """A batch of writes under ``mapping``: the items' results and the generation."""
        return await self.backend.call(ref, "apply", batch, mapping, refresh)

    async def refresh(self, ref: Any) -> int:
        return await self.backend.call(ref, "refresh")

    async def set_mapping(self, ref: Any, mapping: Mapping) -> None:
        return await self.backend.call(ref, "set_mapping", mapping)
