"""Shard failures of a search, in Elasticsearch's shape.

Every round of a search (statistics, query, fetch) sorts its outcomes the same way: the shards
that answered, the failures as ``_shards.failures`` entries, and whether one timed out. When no
shard answered, the whole search fails as Elasticsearch's ``search_phase_execution_exception``.
"""
from __future__ import annotations

from typing import Any

from ..errors import SearchError, SearchPhaseExecution, actor_died, domain_error


def answers(entries: list[Any], outcomes: list[Any], failures: list[dict[str, Any]],
            record: Any = None) -> tuple[list[tuple[int, Any, Any]], bool]:
    """One round's outcomes sorted out: ``(position, entry, value)`` of the shards that
    answered; the failures, in Elasticsearch's shape, appended to ``failures``; and whether a
    shard timed out. ``record(position, entry, outcome)`` sees every outcome (profiles)."""
    answered: list[tuple[int, Any, Any]] = []
    timed_out = False
    for i, (entry, o) in enumerate(zip(entries, outcomes)):
        if record is not None:
            record(i, entry, o)
        if o.timed_out:
            timed_out = True
        elif o.error is not None:
            _, m, sid, _ = entry
            failures.append(failure(m.name, sid, o.error))
        else:
            answered.append((i, entry, o.value))
            timed_out = timed_out or bool(getattr(o.value, "timed_out", False))  # a partial
    return answered, timed_out


def failure(index: str, shard: int, exc: BaseException) -> dict[str, Any]:
    exc = domain_error(exc)
    if isinstance(exc, SearchError):
        reason = exc.to_cause()
    else:
        reason = {"type": "node_not_connected_exception" if actor_died(exc) else "exception",
                  "reason": f"shard [{index}][{shard}] unavailable: {type(exc).__name__}"}
    return {"shard": shard, "index": index, "node": None, "reason": reason}


def all_failed(failures: list[dict[str, Any]]) -> SearchError:
    causes = [f["reason"] for f in failures]
    status = 503
    statuses = []
    for c in causes:
        if c.get("type") in ("illegal_argument_exception", "query_shard_exception",
                             "parsing_exception", "parse_exception",
                             "search_context_missing_exception", "too_many_buckets_exception",
                             "script_exception", "number_format_exception"):
            statuses.append(404 if c["type"] == "search_context_missing_exception" else 400)
    if statuses and len(statuses) == len(causes):
        status = max(statuses)
    uniq = []
    for c in causes:
        if c not in uniq:
            uniq.append(c)
    # a root cause is shown without its own causes (Elasticsearch's REST_EXCEPTION_SKIP_CAUSE)
    roots = []
    for c in uniq:
        root = {k: v for k, v in c.items() if k != "caused_by"}
        if root not in roots:
            roots.append(root)
    return SearchPhaseExecution("all shards failed", status=status, phase="query",
                                grouped=True, failed_shards=failures, root_cause=roots,
                                caused_by=uniq[0] if uniq else None)


def shard_level(index: str, err: SearchError) -> SearchError:
    """An error Elasticsearch raises on each shard (a result window too large, a query that
    cannot be built for the mapping), found before the fan-out: reported as the shards would
    have, ``search_phase_execution_exception`` with the error as root cause (one grouped entry)."""
    return all_failed([failure(index, 0, err)])
