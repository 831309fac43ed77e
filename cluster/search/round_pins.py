"""The pins one search at "now" holds so that all its aggregation rounds read one snapshot.

A cut ``terms`` (``aggs/rounds.py``) may ask the shards again after the query round, at the
generation each shard answered with. A merge between the rounds could drop versions that
generation sees (``engine/merging.py`` keeps only pinned generations readable), so the later
rounds need that generation pinned. Most searches need no later round, so round 1 runs
unpinned and :meth:`RoundPins.hold` pins the generations round 1 read only when a later round
is about to run. A pin taken while a merge is being built makes the merge abandon itself
(``_loses_pinned``), so once held the generation stays readable. If a shard can no longer pin
the generation it read (merged away in between), :class:`SnapshotMoved` sends the search back
to the start, pinning each shard's latest generation before round 1 (:meth:`RoundPins.latest`).
Every pin taken is released under the search's key when it ends (:meth:`RoundPins.release`).
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

from ..engine.shard_calls import ShardCalls


class SnapshotMoved(Exception):
    """A shard can no longer pin the generation round 1 read: search again, pinned first."""


class RoundPins:
    """One search's pins, under one key, on the shard copies it reaches."""

    def __init__(self, calls: ShardCalls) -> None:
        self.calls = calls
        self.key = f"search-rounds-{uuid.uuid4().hex}"
        self.refs: list[Any] = []       # every ref a pin was sent to (released at the end)

    async def latest(self, refs: list[tuple[tuple[str, int], Any]]) -> dict[tuple[str, int], int]:
        """Pin each shard's latest generation; returns them by (index, shard). A shard that
        cannot pin is left out (searched at "now", as without the pin)."""
        self.refs += [ref for _, ref in refs]
        outs = await asyncio.gather(*(self.calls.pin(ref, self.key, None) for _, ref in refs),
                                    return_exceptions=True)
        return {k: int(o) for (k, _), o in zip(refs, outs) if not isinstance(o, BaseException)}

    async def hold(self, read: list[tuple[Any, int]]) -> None:
        """Pin, on each shard ``ref``, the generation round 1 read there; raises
        :class:`SnapshotMoved` when one of them cannot be pinned any more."""
        self.refs += [ref for ref, _ in read]
        outs = await asyncio.gather(*(self.calls.pin(ref, self.key, gen) for ref, gen in read),
                                    return_exceptions=True)
        if any(isinstance(o, BaseException) or int(o) != gen for (_, gen), o in zip(read, outs)):
            raise SnapshotMoved()

    async def release(self) -> None:
        """Unpin every copy pinned — also on an error or a cancel."""
        if self.refs:
            await asyncio.shield(asyncio.gather(*(self.calls.unpin(ref, [self.key])
                                                  for ref in self.refs),
                                                return_exceptions=True))
