"""Waiting for ``wait_for_active_shards`` copies before a write, and after an index creation.

The rule (which shards are short) is ``cluster/indices/active_shards.py``; here the loop polls
the coordinator's health at level ``shards`` (as ``_cluster/health``'s own wait does), bounded
by the request's ``timeout`` (Elasticsearch's default for writes, 1m; at most a minute here,
as ``_cluster/health`` bounds its waits).
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

from ..cluster.indices.active_shards import (ActiveShardCount, parse_active_shard_count,
                                             short_shards, unavailable)
from ..cluster.values import parse_time_ms
from .deps import Coord

MAX_WAIT_S = 60.0
POLL_S = 0.2


def requested_count(params: dict[str, str]) -> ActiveShardCount | None:
    """The request's ``wait_for_active_shards`` (None: the default, the primary)."""
    return parse_active_shard_count(params.get("wait_for_active_shards"))


def needs_waiting(count: ActiveShardCount | None) -> bool:
    """``0``, ``1`` and the default hold whenever the write can be made at all."""
    return count is not None and count not in (0, 1)


async def wait_for_copies(coord: Coord, indices: list[str], count: ActiveShardCount,
                          timeout: str) -> tuple[str, int, int, int] | None:
    """Poll until every shard of ``indices`` has ``count`` active copies; the first shard
    still short when ``timeout`` runs out, or None."""
    timeout_s = min(parse_time_ms(timeout, "timeout") / 1000, MAX_WAIT_S)
    deadline = time.monotonic() + timeout_s
    while True:
        health: dict[str, Any] = await coord.call("health", ",".join(indices), "shards")
        short = short_shards(health, indices, count)
        if not short or time.monotonic() >= deadline:
            return short[0] if short else None
        await asyncio.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))


async def before_write(coord: Coord, params: dict[str, str],
                       names: list[tuple[str, bool]]) -> None:
    """Wait for the copies of the indices a write goes to (``names``: each target and whether
    the write may auto-create it); a 503 ``unavailable_shards_exception`` when they do not
    start in time. Parses the value even when there is nothing to wait for."""
    count = requested_count(params)
    if not needs_waiting(count) or not names:
        return
    assert count is not None
    timeout = params.get("timeout", "1m")
    parse_time_ms(timeout, "timeout")
    indices = await coord.call("write_targets", names)
    if not indices:
        return
    short = await wait_for_copies(coord, indices, count, timeout)
    if short is not None:
        raise unavailable(short, count, timeout)
