"""``wait_for_active_shards`` of writes and index creation, as Elasticsearch's
``ActiveShardCount`` (pure: tested without Ray).

A write waits until each shard it writes to has enough active (``STARTED``) copies: ``all``
means every copy (the primary and its replicas), ``N`` means N copies, ``0``/``1`` (the
default: the primary) hold whenever the write can be made. The copies are counted in
``_cluster/health`` at level ``shards`` (``health.py``); the waiting loop is the HTTP layer's.
"""
from __future__ import annotations

from typing import Any, Literal

from ..errors import IllegalArgument, SearchError

ALL: Literal["all"] = "all"
ActiveShardCount = int | Literal["all"]


def parse_active_shard_count(value: str | None) -> ActiveShardCount | None:
    """``ActiveShardCount.parseString``: None (the default), ``all``, or an int >= 0."""
    if value is None:
        return None
    if value == ALL:
        return ALL
    try:
        n = int(value)
    except ValueError:
        raise IllegalArgument(f"cannot parse ActiveShardCount[{value}]") from None
    if n < 0:
        raise IllegalArgument("shard count cannot be a negative value")
    return n


def label(count: ActiveShardCount) -> str:
    """How Elasticsearch prints the count (``ActiveShardCount.toString``)."""
    return "ALL" if count == ALL else str(count)


def copies_needed(count: ActiveShardCount | None, replicas: int) -> int:
    """Active copies each shard needs: every copy for ``all``, 1 by default."""
    if count is None:
        return 1
    return 1 + replicas if count == ALL else count


def check_creatable(count: ActiveShardCount | None, replicas: int) -> None:
    """``validateActiveShardCount`` of index creation: N may not exceed the copies."""
    if count is not None and count != ALL and count > replicas + 1:
        raise IllegalArgument(f"invalid wait_for_active_shards[{label(count)}]: cannot be "
                              f"greater than number of shard copies [{replicas + 1}]")


def short_shards(health: dict[str, Any], indices: list[str], count: ActiveShardCount | None
                 ) -> list[tuple[str, int, int, int]]:
    """``(index, shard, have, need)`` of each shard of ``indices`` with too few active copies,
    read from a health body at level ``shards``; in index then shard order."""
    out = []
    for name in sorted(set(indices)):
        entry = health.get("indices", {}).get(name)
        if entry is None:
            continue
        need = copies_needed(count, int(entry["number_of_replicas"]))
        for sid, shard in sorted(entry.get("shards", {}).items(), key=lambda kv: int(kv[0])):
            if shard["active_shards"] < need:
                out.append((name, int(sid), shard["active_shards"], need))
    return out


def unavailable(short: tuple[str, int, int, int], count: ActiveShardCount,
                timeout: str) -> SearchError:
    """Elasticsearch's 503 for a write whose shard lacks copies after ``timeout``."""
    index, shard, have, need = short
    return SearchError(f"[{index}][{shard}] Not enough active copies to meet shard count of "
                       f"[{label(count)}] (have {have}, needed {need}). Timeout: [{timeout}]",
                       es_type="unavailable_shards_exception", status=503,
                       index=index, shard=str(shard))
