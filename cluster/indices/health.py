"""Cluster health from the state of every shard copy (pure: tested without Ray).

Elasticsearch's rule: ``red`` when some shard has no active copy (its data cannot be read),
``yellow`` when every shard has an active copy but some replica is not active (unassigned,
down, or still catching up), ``green`` when every copy is active. A copy row (as
``ClusterStatus.shard_infos`` in ``status.py`` lists them) has ``index``, ``shard``, ``prirep``
(``p``/``r``) and ``state`` (``STARTED``, ``INITIALIZING`` or ``UNASSIGNED``).
"""
from __future__ import annotations

from typing import Any


def _by_shard(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["index"], int(r["shard"])), []).append(r)
    return out


def status_of(rows: list[dict[str, Any]]) -> str:
    """green / yellow / red for the copies in ``rows`` (an index, or the whole cluster)."""
    shards = _by_shard(rows)
    if any(not any(c["state"] == "STARTED" for c in copies) for copies in shards.values()):
        return "red"
    if any(c["state"] != "STARTED" for c in rows):
        return "yellow"
    return "green"


def storage_problems(rows: list[dict[str, Any]], dir_problems: list[dict[str, Any]]
                     ) -> list[dict[str, Any]]:
    """What is wrong on disk, for ``_cluster/health`` (our extension key ``storage_problems``):
    index directories that cannot be opened, damaged copies, and failed flushes, syncs and
    writes (counted; flushes and syncs are retried)."""
    out = [{"kind": "index_directory", **p} for p in dir_problems]
    for r in rows:
        reason = r.get("reason") or ""
        if reason.startswith("corrupted"):
            out.append({"kind": "damaged_copy", "index": r["index"], "shard": int(r["shard"]),
                        "copy": r.get("copy"), "reason": reason})
        if r.get("storage_failures"):
            out.append({"kind": "failed_background_io", "index": r["index"],
                        "shard": int(r["shard"]), "copy": r.get("copy"),
                        **r["storage_failures"]})
    return out


def cluster_health(rows: list[dict[str, Any]], nodes: list[dict[str, Any]] | None = None,
                   dir_problems: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The body of ``GET /_cluster/health`` (without ``cluster_name``). An index directory
    that cannot be opened makes the cluster red (its shards have no copy that can serve)."""
    shards = _by_shard(rows)
    active_primary = sum(1 for copies in shards.values()
                         if any(c["state"] == "STARTED" for c in copies))
    active = sum(1 for c in rows if c["state"] == "STARTED")
    initializing = sum(1 for c in rows if c["state"] == "INITIALIZING")
    unassigned = sum(1 for c in rows if c["state"] == "UNASSIGNED")
    nodes = nodes or []
    data_nodes = [n for n in nodes if n.get("resource")] or nodes
    status = "red" if dir_problems else status_of(rows)
    out = {"status": status, "timed_out": False,
            "number_of_nodes": max(1, len(nodes)),
            "number_of_data_nodes": max(1, len(data_nodes)),
            "active_primary_shards": active_primary, "active_shards": active,
            "relocating_shards": 0, "initializing_shards": initializing,
            "unassigned_shards": unassigned, "delayed_unassigned_shards": 0,
            "number_of_pending_tasks": 0, "number_of_in_flight_fetch": 0,
            "task_max_waiting_in_queue_millis": 0,
            "active_shards_percent_as_number": 100.0 if not rows else 100.0 * active / len(rows)}
    problems = storage_problems(rows, dir_problems or [])
    if problems:
        out["storage_problems"] = problems
    return out


def _counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    shards = _by_shard(rows)
    return {"active_primary_shards": sum(1 for copies in shards.values()
                                         if any(c["state"] == "STARTED" for c in copies)),
            "active_shards": sum(1 for c in rows if c["state"] == "STARTED"),
            "relocating_shards": 0,
            "initializing_shards": sum(1 for c in rows if c["state"] == "INITIALIZING"),
            "unassigned_shards": sum(1 for c in rows if c["state"] == "UNASSIGNED")}


def index_health(rows: list[dict[str, Any]], metas: list[Any], level: str) -> dict[str, Any]:
    """``level=indices|shards``: per index (and per shard) status and copy counts."""
    out: dict[str, Any] = {}
    for m in metas:
        mine = [r for r in rows if r["index"] == m.name]
        entry = {"status": status_of(mine) if mine else "red",
                 "number_of_shards": m.number_of_shards,
                 "number_of_replicas": m.number_of_replicas, **_counts(mine)}
        if level == "shards":
            entry["shards"] = {
                str(sid): {"status": status_of(copies),
                           "primary_active": any(c["state"] == "STARTED" for c in copies),
                           **{k: v for k, v in _counts(copies).items()
                              if k != "active_primary_shards"}}
                for (_, sid), copies in sorted(_by_shard(mine).items())}
        out[m.name] = entry
    return out


RANK = {"green": 0, "yellow": 1, "red": 2}


def health_reached(body: dict[str, Any], wait_for_status: str | None,
                   no_initializing: bool, active_shards: str | None) -> bool:
    """Whether ``_cluster/health``'s ``wait_for_*`` conditions hold for ``body``."""
    if wait_for_status is not None and RANK[body["status"]] > RANK[wait_for_status]:
        return False
    if no_initializing and body["initializing_shards"]:
        return False
    if active_shards not in (None, "0"):
        total = body["active_shards"] + body["initializing_shards"] + body["unassigned_shards"]
        need = total if active_shards == "all" else int(active_shards)
        if body["active_shards"] < need:
            return False
    return True
