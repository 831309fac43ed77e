"""``_forcemerge``, ``_segments`` and ``_cat/segments``: merges asked for, and what is merged.

Segments are per shard copy (a merge is not replicated: copies merge on their own), so the
listings have one entry per copy, as Elasticsearch's do. What we cannot know honestly is left
out (``_segments``) or empty (``_cat/segments``): Lucene's ``version`` and ``compound``, a
segment's heap ``memory``, the node's ``ip``. ``committed`` is always false: no segment is ever
written to disk as such — a copy's durability is its write-ahead log and snapshots of its
documents (a restarted copy rebuilds one segment from its snapshot and replays the log).
A segment built from a full write buffer and not refreshed yet is listed with ``search: false``
(``searchable`` false), as Elasticsearch lists a flushed segment no reader opened yet; it is not
counted in ``num_search_segments``.
``size`` is the segment's in-memory size (columns, postings, compressed ``_source``).
"""
from __future__ import annotations

import asyncio
from typing import Any

from ..engine.shard_calls import ShardCalls
from ..errors import IllegalArgument


def segment_name(uid: int) -> str:
    """Lucene-style name: ``_`` and the generation in base 36."""
    digits, n = "", uid
    while True:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if n == 0:
            return "_" + digits


async def force_merge(admin: Any, expr: str | None, max_num_segments: int | None,
                      only_expunge_deletes: bool, flush: bool) -> dict[str, Any]:
    if max_num_segments is not None and only_expunge_deletes:
        raise IllegalArgument("cannot set only_expunge_deletes and max_num_segments at the "
                              "same time, those two parameters are mutually exclusive",
                              es_type="action_request_validation_exception")
    if max_num_segments is not None and max_num_segments < 1:
        raise IllegalArgument(f"max_num_segments must be positive, got [{max_num_segments}]",
                              es_type="action_request_validation_exception")
    names = admin.resolve(expr or "_all")
    refs = [s for n in names for s in admin.indices[n].shards]
    calls = ShardCalls(admin.backend)
    outs = await asyncio.gather(*(calls.force_merge(r, max_num_segments, only_expunge_deletes,
                                                    flush) for r in refs),
                                return_exceptions=True)
    failed = sum(1 for o in outs if isinstance(o, BaseException))
    return {"_shards": {"total": len(refs), "successful": len(refs) - failed, "failed": failed}}


async def segment_rows(admin: Any, status: Any, expr: str | None) -> list[dict[str, Any]]:
    """One row per segment of every started copy of the indices ``expr`` names."""
    names = set(admin.resolve(expr or "_all"))
    rows = []
    for info in await status.shard_infos():
        if info["index"] not in names or info.get("state") != "STARTED":
            continue
        for seg in info.get("segment_list") or []:
            rows.append({"index": info["index"], "shard": info["shard"],
                         "prirep": info.get("prirep", "p"), "node": info.get("node_id"),
                         "uid": seg["uid"], "docs": seg["docs"], "deleted": seg["deleted"],
                         "bytes": seg["bytes"], "search": seg.get("search", True)})
    return rows


async def segments(admin: Any, status: Any, expr: str | None) -> dict[str, Any]:
    """``GET /{index}/_segments`` in Elasticsearch's shape."""
    names = admin.resolve(expr or "_all")
    infos = [i for i in await status.shard_infos() if i["index"] in names]
    indices: dict[str, Any] = {n: {"shards": {}} for n in names}
    ok = 0
    for info in infos:
        if info.get("state") != "STARTED" or info.get("segment_list") is None:
            continue
        ok += 1
        segs = {segment_name(s["uid"]): {"generation": s["uid"], "num_docs": s["docs"],
                                         "deleted_docs": s["deleted"],
                                         "size_in_bytes": s["bytes"], "committed": False,
                                         "search": s.get("search", True)}
                for s in info["segment_list"]}
        searched = sum(1 for s in segs.values() if s["search"])
        indices[info["index"]]["shards"].setdefault(str(info["shard"]), []).append({
            "routing": {"state": "STARTED", "primary": info.get("prirep", "p") == "p",
                        "node": info.get("node_id")},
            "num_committed_segments": 0, "num_search_segments": searched, "segments": segs})
    return {"_shards": {"total": len(infos), "successful": ok, "failed": 0},
            "indices": indices}


def cat_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``GET /_cat/segments`` rows (Elasticsearch's columns; unknown ones None)."""
    return [{"index": r["index"], "shard": str(r["shard"]), "prirep": r["prirep"], "ip": None,
             "id": r["node"], "segment": segment_name(r["uid"]), "generation": str(r["uid"]),
             "docs.count": str(r["docs"]), "docs.deleted": str(r["deleted"]),
             "size": f"{r['bytes']}b", "size.memory": None, "committed": "false",
             "searchable": "true" if r["search"] else "false", "version": None,
             "compound": None} for r in rows]
