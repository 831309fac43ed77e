"""What the cluster reports about itself: shard copies, health, ``_cat/indices``, ``GET /``.

Read from the catalog and the backend's description of each copy (``describe``); the backend
hides whether a copy is an actor or a local object.
"""
from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from .health import cluster_health, status_of

VERSION = "8.15.0"


class ClusterStatus:
    """The cluster's name and identity, and the status verbs read from its copies."""

    def __init__(self, catalog: Any, backend: Any, cluster_name: str = "shardsearch") -> None:
        self.catalog = catalog      # admin.py: the indices and their expressions
        self.backend = backend
        self.cluster_name = cluster_name
        self.cluster_uuid = uuid.uuid4().hex[:22]
        self.node_name = os.uname().nodename if hasattr(os, "uname") else "node"
        self.dir_problems: list[dict[str, Any]] = []   # index directories that cannot open

    async def shard_infos(self) -> list[dict[str, Any]]:
        """One row per shard copy (primary ``p`` / replica ``r``): state, node, documents."""
        refs = [(m, sid, ref) for m in self.catalog.indices.values()
                for sid, ref in enumerate(m.shards)]
        outcomes = await asyncio.gather(*(self.backend.describe(ref) for _, _, ref in refs),
                                        return_exceptions=True)
        names = {n["id"]: n for n in self.backend.nodes()}
        out = []
        for (m, sid, _), rows in zip(refs, outcomes):
            if isinstance(rows, BaseException):
                rows = [{"prirep": "p", "state": "UNASSIGNED", "docs": None, "node_id": None}]
            for r in rows:
                node = names.get(r.get("node_id")) or {}
                out.append({**r, "index": m.name, "shard": sid, "node_name": node.get("name"),
                            "node_ip": node.get("address")})
        return out

    async def health(self) -> dict[str, Any]:
        """green / yellow / red from the copies' states (``health.py``)."""
        infos = await self.shard_infos()
        return {"cluster_name": self.cluster_name,
                **cluster_health(infos, self.backend.nodes(), self.dir_problems)}

    async def cat_indices(self, expr: str | None) -> list[dict[str, Any]]:
        """``GET /_cat/indices``: one row per index, its health and primary document count."""
        names = self.catalog.resolve(expr or "_all")
        infos = await self.shard_infos()
        out = []
        for n in sorted(names):
            m = self.catalog.indices[n]
            mine = [i for i in infos if i["index"] == n]
            docs = sum(i["docs"] or 0 for i in mine if i.get("prirep", "p") == "p")
            health = status_of(mine)
            why = "; ".join(f"[{i['shard']}] copy [{i.get('copy')}]: {i['reason']}"
                            for i in mine if i.get("reason") and i["state"] != "STARTED")
            out.append({"health": health, "status": "open", "index": n, "uuid": m.uuid,
                        "pri": str(m.number_of_shards), "rep": str(m.number_of_replicas),
                        "docs.count": str(docs), "docs.deleted": "0", "store.size": None,
                        "pri.store.size": None, "health.reason": why or None})
        if expr in (None, "_all", "*"):
            # index directories that cannot be opened: red rows naming the damage
            for p in self.dir_problems:
                out.append({"health": "red", "status": "open", "index": p.get("index")
                            or p["uuid"], "uuid": p["uuid"], "pri": None, "rep": None,
                            "docs.count": None, "docs.deleted": None, "store.size": None,
                            "pri.store.size": None, "health.reason": f"{p['reason']} "
                            f"({p['path']})"})
        return out

    def info(self) -> dict[str, Any]:
        """``GET /``: who answers, in the shape Elasticsearch clients check on connect."""
        return {"name": self.node_name, "cluster_name": self.cluster_name,
                "cluster_uuid": self.cluster_uuid,
                "version": {"number": VERSION, "build_flavor": "default", "build_type": "tar",
                            "build_hash": "shardsearch", "build_date": "2026-11-01T00:00:00Z",
                            "build_snapshot": False, "lucene_version": "9.11.1",
                            "minimum_wire_compatibility_version": "7.17.0",
                            "minimum_index_compatibility_version": "7.0.0",
                            "distribution": "shardsearch"},
                "tagline": "You Know, for Search"}
