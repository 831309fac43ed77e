"""``_nodes``, ``_nodes/stats`` and ``_search_shards``: the cluster as connectors see it before
they read (sniffers, Spark and Hadoop connectors, Logstash).

Nodes are Ray's alive nodes (the backend's ``nodes()``; one synthetic node for in-process
shards), keyed by Ray's node id — the same id ``_cat/shards`` shows. Only the node that serves
HTTP (the front end that asked) has an ``http`` section: a sniffer connects only to nodes with
one, and no other node answers the REST API. Every node has the roles ``data``, ``ingest`` and
``master``, except that a node without a shardsearch data resource is only ``master`` (it holds
no shards).
"""
from __future__ import annotations

import hashlib
import time
from typing import Any

from ..errors import IllegalArgument
from .routing import selected_shards
from .status import VERSION

#: What ``_nodes`` can show per node, by Elasticsearch's metric names (the others are refused).
INFO_METRICS = ("http", "settings", "roles")
KNOWN_INFO_METRICS = ("settings", "os", "process", "jvm", "thread_pool", "transport", "http",
                      "plugins", "ingest", "aggregations", "indices", "remote_cluster_server")
STATS_METRICS = ("indices",)
KNOWN_STATS_METRICS = ("indices", "os", "process", "jvm", "thread_pool", "fs", "transport",
                       "http", "breaker", "script", "discovery", "ingest", "adaptive_selection",
                       "script_cache", "indexing_pressure", "repositories", "allocations")


def node_table(raw: list[dict[str, Any]], local_name: str, http_host: str) -> list[dict[str, Any]]:
    """The nodes in a stable order, the front end's one marked ``local`` (the node whose address
    is the HTTP host; else the first, where Ray runs the service)."""
    nodes = [dict(n) for n in raw] or [{"id": _stable_id(local_name), "resource": "node_0",
                                        "address": http_host, "name": local_name}]
    local = next((n for n in nodes if n.get("address") == http_host), nodes[0])
    local["local"] = True
    return nodes


def _stable_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:22]


def select_nodes(nodes: list[dict[str, Any]], spec: str | None) -> list[dict[str, Any]]:
    """``_all``, ``_local``, ``_master``, ids, names and ``*`` patterns (comma-separated)."""
    if spec in (None, "", "_all", "*"):
        return nodes
    out = []
    for part in spec.split(","):
        for n in nodes:
            hit = (part == "_local" and n.get("local")) or (part == "_master" and n is nodes[0]) \
                or part in (n["id"], n.get("name")) \
                or (part.endswith("*") and str(n.get("name", "")).startswith(part[:-1]))
            if hit and n not in out:
                out.append(n)
    return out


def split_target(first: str | None, second: str | None, known: tuple[str, ...]
                 ) -> tuple[str | None, tuple[str, ...] | None]:
    """``/_nodes/{x}``: ``x`` is metrics when every part is a metric name, else node ids (as
    Elasticsearch reads it); ``/_nodes/{ids}/{metrics}`` is both."""
    if second is not None:
        return first, tuple(second.split(","))
    if first is not None and all(p in known or p == "_all" for p in first.split(",")):
        return None, tuple(first.split(","))
    return first, None


def check_metrics(metrics: tuple[str, ...] | None, known: tuple[str, ...],
                  served: tuple[str, ...]) -> tuple[str, ...]:
    """The metrics to show: unknown ones are Elasticsearch's 400, known ones we do not measure
    are refused by name (never answered empty)."""
    if metrics is None or metrics == ("_all",):
        return served
    for m in metrics:
        if m not in known and m != "_all":
            raise IllegalArgument(f"request [/_nodes] contains unrecognized metric: [{m}]")
    missing = [m for m in metrics if m not in served and m != "_all"]
    if missing:
        raise IllegalArgument(f"[{','.join(missing)}] is not supported by this server: "
                              f"_nodes reports only {list(served)}")
    return metrics


def _identity(n: dict[str, Any]) -> dict[str, Any]:
    host = n.get("address") or "127.0.0.1"
    roles = ["data", "ingest", "master"] if n.get("resource") else ["master"]
    return {"name": n.get("name") or n["id"], "transport_address": f"{host}:9300",
            "host": host, "ip": host, "roles": roles, "attributes": {}}


def nodes_info(nodes: list[dict[str, Any]], cluster_name: str, metrics: tuple[str, ...],
               http: dict[str, Any]) -> dict[str, Any]:
    """``GET /_nodes``: Elasticsearch's header counts, ``cluster_name`` and nodes by id."""
    out: dict[str, Any] = {}
    for n in nodes:
        entry = dict(_identity(n), version=VERSION, build_flavor="default", build_type="tar",
                     build_hash="shardsearch")
        if "settings" in metrics:
            entry["settings"] = {"cluster": {"name": cluster_name},
                                 "node": {"name": entry["name"]}}
        if "http" in metrics and n.get("local"):
            entry["http"] = http
        out[n["id"]] = entry
    return {"_nodes": {"total": len(nodes), "successful": len(nodes), "failed": 0},
            "cluster_name": cluster_name, "nodes": out}


def nodes_stats(nodes: list[dict[str, Any]], cluster_name: str, infos: list[dict[str, Any]],
                metrics: tuple[str, ...]) -> dict[str, Any]:
    """``GET /_nodes/stats``: identity, and ``indices.docs.count`` of the copies each node
    holds (the one node statistic measured here)."""
    now = int(time.time() * 1000)
    out: dict[str, Any] = {}
    for n in nodes:
        entry = dict(_identity(n), timestamp=now)
        if "indices" in metrics:
            docs = sum(i.get("docs") or 0 for i in infos if i.get("node_id") == n["id"]
                       or (i.get("node_id") is None and n.get("local")))
            entry["indices"] = {"docs": {"count": docs, "deleted": 0}}
        out[n["id"]] = entry
    return {"_nodes": {"total": len(nodes), "successful": len(nodes), "failed": 0},
            "cluster_name": cluster_name, "nodes": out}


def search_shards(nodes: list[dict[str, Any]], names: list[str], number_of_shards: dict[str, int],
                  infos: list[dict[str, Any]], routing: str | None, preference: str | None
                  ) -> dict[str, Any]:
    """``GET /{index}/_search_shards``: the copies a search would visit, one array per shard
    (``routing`` and ``preference=_shards:`` narrow it as they narrow a search)."""
    by_id = {n["id"]: n for n in nodes}
    local = next((n for n in nodes if n.get("local")), nodes[0])
    groups: list[list[dict[str, Any]]] = []
    used: dict[str, dict[str, Any]] = {}
    for name in sorted(names):
        try:
            sids = selected_shards(number_of_shards[name], routing, preference)
        except ValueError as e:
            raise IllegalArgument(str(e)) from None
        for sid in sids:
            copies = [i for i in infos if i["index"] == name and i["shard"] == sid]
            group = []
            for k, c in enumerate(sorted(copies, key=lambda i: i.get("prirep", "p") != "p")):
                assigned = c.get("state", "STARTED") != "UNASSIGNED"
                node = by_id.get(c.get("node_id")) or local
                if assigned:
                    used[node["id"]] = node
                group.append({"state": c.get("state", "STARTED"),
                              "primary": c.get("prirep", "p") == "p",
                              "node": node["id"] if assigned else None,
                              "relocating_node": None, "shard": sid, "index": name,
                              "allocation_id": {"id": _stable_id(f"{name}/{sid}/{k}")}})
            groups.append(group)
    return {"nodes": {i: dict(_identity(n), version=VERSION, external_id="", ephemeral_id=i)
                      for i, n in sorted(used.items())},
            "indices": {name: {} for name in sorted(names)}, "shards": groups}
