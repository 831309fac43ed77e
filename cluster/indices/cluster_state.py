"""``GET /_cluster/state``: the metadata subset (indices' settings, mappings, aliases, state;
the index templates) and the routing table (where each shard copy is), in Elasticsearch's shape.

Metrics served: ``metadata``, ``routing_table`` (and ``_all`` for both). Elasticsearch's others
(``nodes``, ``blocks``, ``version``, ``master_node``, ``customs``) describe machinery this
service does not have (no elected master, no cluster-state versions): refused by name.
"""
from __future__ import annotations

from typing import Any

from ..errors import IllegalArgument

SERVED = ("metadata", "routing_table")
NOT_SERVED = ("nodes", "blocks", "version", "master_node", "customs", "routing_nodes")


def parse_metrics(raw: str | None) -> list[str]:
    names = [m.strip() for m in (raw or "_all").split(",") if m.strip()]
    if "_all" in names:
        return list(SERVED)
    for m in names:
        if m in NOT_SERVED:
            raise IllegalArgument(f"[{m}] of the cluster state is not kept by this server")
        if m not in SERVED:
            raise IllegalArgument(f"Unknown metric [{m}] for the cluster state")
    return names


def _index_metadata(meta: Any, settings: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "state": meta.state, "settings": {"index": settings},
            "mappings": {"_doc": meta.mapping.to_body()},
            "aliases": sorted(meta.aliases), "primary_terms": {
                str(i): 1 for i in range(meta.number_of_shards)}}


def _routing(meta: Any, infos: list[dict[str, Any]]) -> dict[str, Any]:
    shards: dict[str, list[dict[str, Any]]] = {}
    for r in infos:
        if r["index"] != meta.name:
            continue
        shards.setdefault(str(r["shard"]), []).append({
            "state": r["state"], "primary": r.get("prirep", "p") == "p",
            "node": r.get("node_id"), "relocating_node": None, "shard": int(r["shard"]),
            "index": meta.name})
    return {"shards": shards}


def cluster_state(catalog: Any, status: Any, infos: list[dict[str, Any]],
                  metrics: list[str], expr: str | None) -> dict[str, Any]:
    """The body of ``GET /_cluster/state/{metric}/{index}``."""
    names = catalog.resolve(expr or "_all", include_closed=True)
    out: dict[str, Any] = {"cluster_name": status.cluster_name,
                           "cluster_uuid": status.cluster_uuid}
    if "metadata" in metrics:
        out["metadata"] = {
            "cluster_uuid": status.cluster_uuid,
            "templates": {},
            "indices": {n: _index_metadata(catalog.indices[n],
                                           catalog.settings_out(catalog.indices[n]))
                        for n in names},
            "index_template": {"index_template": dict(catalog.templates)},
            "component_template": {"component_template": dict(catalog.components)}}
    if "routing_table" in metrics:
        out["routing_table"] = {"indices": {n: _routing(catalog.indices[n], infos)
                                            for n in names}}
    return out
