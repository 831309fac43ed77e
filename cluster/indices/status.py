"""What the cluster reports about itself: shard copies, health, ``_cat/indices``, ``GET /``.

Read from the catalog and the backend's description of each copy (``describe``); the backend
hides whether a copy is an actor or a local object.
"""
from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from .health import cluster_health, index_health, status_of
from .node_metrics import assign, node_metrics
from .stats import copy_stats

VERSION = "8.15.0"

#: ``_cat/indices`` statistic columns (and their ``pri.`` twins): name -> (``_stats`` section,
#: key); ``*_time`` values are milliseconds, rendered as time columns
INDEX_STAT_COLUMNS = {
    "indexing.index_time": ("indexing", "index_time_in_millis"),
    "indexing.index_total": ("indexing", "index_total"),
    "indexing.delete_time": ("indexing", "delete_time_in_millis"),
    "indexing.delete_total": ("indexing", "delete_total"),
    "get.time": ("get", "time_in_millis"), "get.total": ("get", "total"),
    "search.query_time": ("search", "query_time_in_millis"),
    "search.query_total": ("search", "query_total"),
    "search.fetch_time": ("search", "fetch_time_in_millis"),
    "search.fetch_total": ("search", "fetch_total"),
    "refresh.time": ("refresh", "total_time_in_millis"), "refresh.total": ("refresh", "total"),
    "flush.total": ("flush", "total"), "flush.total_time": ("flush", "total_time_in_millis"),
    "merges.total": ("merges", "total")}


def _stat_columns(started: list[dict[str, Any]], prim: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    """The statistic columns of one index: all started copies, and ``pri.`` the primaries."""
    out: dict[str, Any] = {}
    for name, (section, key) in INDEX_STAT_COLUMNS.items():
        out[name] = sum(c[section][key] for c in started)
        out["pri." + name] = sum(c[section][key] for c in prim)
    return out


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

    async def health(self, expr: str | None = None, level: str = "cluster") -> dict[str, Any]:
        """green / yellow / red from the copies' states (``health.py``), over the indices
        ``expr`` names (all by default); ``level`` adds them one by one (and their shards)."""
        infos = await self.shard_infos()
        names = self.catalog.resolve(expr or "_all", include_closed=True)
        if expr is not None:
            infos = [i for i in infos if i["index"] in names]
        out = {"cluster_name": self.cluster_name,
               **cluster_health(infos, self.backend.nodes(),
                                self.dir_problems if expr is None else [])}
        if level in ("indices", "shards"):
            out["indices"] = index_health(infos, [self.catalog.indices[n] for n in names],
                                          level)
        return out

    async def cat_indices(self, expr: str | None) -> list[dict[str, Any]]:
        """``GET /_cat/indices``: one row per index, its health and primary document count."""
        names = self.catalog.resolve(expr or "_all", include_closed=True)
        infos = await self.shard_infos()
        out = []
        for n in sorted(names):
            m = self.catalog.indices[n]
            mine = [i for i in infos if i["index"] == n]
            started = [copy_stats(i) for i in mine if i["state"] == "STARTED"]
            prim = [copy_stats(i) for i in mine
                    if i["state"] == "STARTED" and i.get("prirep", "p") == "p"]
            docs = sum(p["docs"]["count"] for p in prim)
            store = sum(c["store"]["size_in_bytes"] for c in started)
            health = status_of(mine)
            why = "; ".join(f"[{i['shard']}] copy [{i.get('copy')}]: {i['reason']}"
                            for i in mine if i.get("reason") and i["state"] != "STARTED")
            out.append({"health": health, "status": m.state, "index": n, "uuid": m.uuid,
                        "pri": str(m.number_of_shards), "rep": str(m.number_of_replicas),
                        "docs.count": str(docs),
                        "docs.deleted": str(sum(p["docs"]["deleted"] for p in prim)),
                        "creation.date": m.created_ms, "store.size": store,
                        "pri.store.size": sum(p["store"]["size_in_bytes"] for p in prim),
                        "dataset.size": store, "health.reason": why or None,
                        **_stat_columns(started, prim)})
        if expr in (None, "_all", "*"):
            # index directories that cannot be opened: red rows naming the damage
            for p in self.dir_problems:
                out.append({"health": "red", "status": "open", "index": p.get("index")
                            or p["uuid"], "uuid": p["uuid"], "pri": None, "rep": None,
                            "docs.count": None, "docs.deleted": None, "store.size": None,
                            "pri.store.size": None, "health.reason": f"{p['reason']} "
                            f"({p['path']})"})
        return out

    async def cat_nodes(self, samples: list[tuple[str | None, dict[str, Any]]] = ()
                        ) -> list[dict[str, Any]]:
        """``_cat/nodes``: the Ray nodes shard copies can live on, how many each holds, and
        the metrics of their processes (``node_metrics.py``): ``samples`` of the coordinator
        and the front end, plus those the copies sent with their ``info``."""
        infos = await self.shard_infos()
        nodes = self.backend.nodes() or [{"id": "local", "name": self.node_name,
                                          "address": "127.0.0.1", "resource": True}]
        copies = [(r.get("node_id"), r["host"]) for r in infos if r.get("host")]
        by_node = assign(nodes, list(samples) + copies)
        # the master is the first node, the one ``_nodes/_master`` names (``nodes.py``)
        return [{"ip": n.get("address"), "id": n.get("id"), "name": n.get("name") or n["id"],
                 "node.role": "dim" if n.get("resource") else "m",   # as _nodes' roles
                 "master": "*" if k == 0 else "-",
                 "cluster_manager": "*" if k == 0 else "-",
                 "node.roles": "data,ingest,master" if n.get("resource") else "master",
                 "version": VERSION, "build": "shardsearch",
                 "shards": sum(1 for r in infos if r.get("node_id") == n.get("id")),
                 **node_metrics(by_node[n["id"]], n.get("memory"))}
                for k, n in enumerate(nodes)]

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
