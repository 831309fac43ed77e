"""``/_cat`` and its tables: indices, shards, segments, aliases, count, health, nodes.

Each endpoint declares Elasticsearch's columns (name, aliases, description, shown by default);
``api/cat_table.py`` renders them with ``h``, ``s``, ``v``, ``help``, ``bytes``, ``time`` and
``format=json``. Columns of ours (not in Elasticsearch) are hidden by default: ``health.reason``
(indices), ``pid``, ``copy``, ``storage.failures`` (shards), ``shards`` (nodes).
"""
from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, Response

from ...cluster.engine.query.dsl import parse_query
from ...cluster.engine.query.nodes import MatchAll
from ...cluster.errors import IllegalArgument
from ...cluster.distribution.shard_service import node_id
from ...cluster.indices.node_metrics import sample as node_sample
from ...cluster.search.request import check_params
from ...cluster.values import parse_time_ms
from ..body import json_body
from ..cat_table import CAT_PARAMS, Column, render
from ..deps import Coord
from ..params import COMMON, bool_param, query_params

router = APIRouter()

C = Column
INDICES = [C("health", ("h",), "current health status"), C("status", ("s",), "open/close status"),
           C("index", ("i", "idx"), "index name"), C("uuid", ("id",), "index uuid"),
           C("pri", ("p", "shards.primary", "shardsPrimary"), "number of primary shards",
             kind="number"),
           C("rep", ("r", "shards.replica", "shardsReplica"), "number of replica shards",
             kind="number"),
           C("docs.count", ("dc", "docsCount"), "available docs", kind="number"),
           C("docs.deleted", ("dd", "docsDeleted"), "deleted docs", kind="number"),
           C("creation.date", ("cd",), "index creation date (millisecond value)", False,
             "number"),
           C("store.size", ("ss", "storeSize"), "store size of primaries & replicas",
             kind="bytes"),
           C("pri.store.size", (), "store size of primaries", kind="bytes"),
           C("dataset.size", (), "total size of dataset", kind="bytes"),
           C("health.reason", (), "why a shard copy is not started (ours)", False)]
_STATS = [("indexing.index_time", ("iiti", "indexingIndexTime"), "time spent in indexing"),
          ("indexing.index_total", ("iito", "indexingIndexTotal"), "number of indexing ops"),
          ("indexing.delete_time", ("idti", "indexingDeleteTime"), "time spent in deletions"),
          ("indexing.delete_total", ("idto", "indexingDeleteTotal"), "number of delete ops"),
          ("get.time", ("gti", "getTime"), "time spent in get"),
          ("get.total", ("gto", "getTotal"), "number of get ops"),
          ("search.query_time", ("sqti", "searchQueryTime"), "time spent in query phase"),
          ("search.query_total", ("sqto", "searchQueryTotal"), "total query phase ops"),
          ("search.fetch_time", ("sfti", "searchFetchTime"), "time spent in fetch phase"),
          ("search.fetch_total", ("sfto", "searchFetchTotal"), "total fetch ops"),
          ("refresh.time", ("rti", "refreshTime"), "time spent in refreshes"),
          ("refresh.total", ("rto", "refreshTotal"), "total refreshes"),
          ("flush.total", ("ft", "flushTotal"), "number of flushes"),
          ("flush.total_time", ("ftt", "flushTotalTime"), "time spent in flush"),
          ("merges.total", ("mt", "mergesTotal"), "number of completed merge ops")]
for _name, _aliases, _desc in _STATS:   # Elasticsearch's hidden statistic columns, pri. twins
    _kind = "time" if _name.endswith("time") else "number"
    INDICES += [C(_name, _aliases, _desc, False, _kind), C("pri." + _name, (), _desc, False,
                                                           _kind)]
SHARDS = [C("index", ("i", "idx"), "index name"), C("shard", ("s", "sh"), "shard name",
                                                  kind="number"),
          C("prirep", ("p", "pr", "primaryOrReplica"), "primary or replica"),
          C("state", ("st",), "shard state"), C("docs", ("d", "dc"), "number of docs in shard",
                                                kind="number"),
          C("store", ("sto",), "store size of shard (how much disk it uses)", kind="bytes"),
          C("dataset", (), "total size of dataset", kind="bytes"),
          C("ip", (), "ip of node where it lives"), C("id", (), "unique id of node where it "
                                                       "lives", False),
          C("node", ("n",), "name of node where it lives"),
          C("unassigned.reason", ("ur",), "reason shard became unassigned", False),
          C("pid", (), "process id of the copy (ours)", False),
          C("copy", (), "copy number within its shard (ours)", False),
          C("storage.failures", (), "failed flushes, syncs, writes (ours)", False)]
SEGMENTS = [C("index", ("i", "idx"), "index name"), C("shard", ("s", "sh"), "shard name"),
            C("prirep", ("p", "pr", "primaryOrReplica"), "primary or replica"),
            C("ip", (), "ip of node where it lives"),
            C("id", (), "unique id of node where it lives", False),
            C("segment", ("seg",), "segment name"), C("generation", ("g", "gen"),
                                                      "segment generation"),
            C("docs.count", ("dc", "docsCount"), "number of docs in segment"),
            C("docs.deleted", ("dd", "docsDeleted"), "number of deleted docs in segment"),
            C("size", ("si",), "segment size in bytes"),
            C("size.memory", ("sm", "sizeMemory"), "segment memory in bytes"),
            C("committed", ("ic", "isCommitted"), "is segment committed"),
            C("searchable", ("is", "isSearchable"), "is segment searched"),
            C("version", ("v", "ver"), "version"), C("compound", ("ico", "isCompound"),
                                                     "is segment compound")]
ALIASES = [C("alias", ("a",), "alias name"), C("index", ("i", "idx"), "index alias points to"),
           C("filter", ("f", "fi"), "filter"),
           C("routing.index", ("ri", "routingIndex"), "index routing"),
           C("routing.search", ("rs", "routingSearch"), "search routing"),
           C("is_write_index", ("w", "isWriteIndex"), "write index")]
COUNT = [C("epoch", ("t", "time"), "seconds since 1970-01-01 00:00:00", kind="number"),
         C("timestamp", ("ts", "hms", "hour"), "time in HH:MM:SS"),
         C("count", ("dc", "docs.count", "docsCount"), "the document count", kind="number")]
HEALTH = [C("epoch", ("t", "time"), "seconds since 1970-01-01 00:00:00", kind="number"),
          C("timestamp", ("ts", "hms", "hour"), "time in HH:MM:SS"),
          C("cluster", ("cl",), "cluster name"), C("status", ("st",), "health status"),
          C("node.total", ("nt", "nodeTotal"), "total number of nodes", kind="number"),
          C("node.data", ("nd", "nodeData"), "number of nodes that can store data",
            kind="number"),
          C("shards", ("t", "sh", "shards.total", "shardsTotal"), "total number of shards",
            kind="number"),
          C("pri", ("p", "shards.primary", "shardsPrimary"), "number of primary shards",
            kind="number"),
          C("relo", ("r", "shards.relocating", "shardsRelocating"), "number of relocating "
            "nodes", kind="number"),
          C("init", ("i", "shards.initializing", "shardsInitializing"), "number of "
            "initializing nodes", kind="number"),
          C("unassign", ("u", "shards.unassigned", "shardsUnassigned"), "number of unassigned "
            "shards", kind="number"),
          C("pending_tasks", ("pt", "pendingTasks"), "number of pending tasks", kind="number"),
          C("max_task_wait_time", ("mtwt", "maxTaskWaitTime"), "wait time of longest task "
            "pending"),
          C("active_shards_percent", ("asp", "activeShardsPercent"), "active number of shards "
            "in percent")]
NODES = [C("id", ("id", "nodeId"), "unique node id", False),
         C("pid", ("p",), "process id", False, "number"),
         C("ip", ("i",), "ip address"),
         C("version", ("v",), "es version", False),
         C("build", ("b",), "es build hash", False),
         C("disk.total", ("dt", "diskTotal"), "total disk space", False, "bytes"),
         C("disk.used", ("du", "diskUsed"), "used disk space", False, "bytes"),
         C("disk.avail", ("d", "da", "disk", "diskAvail"), "available disk space", False,
           "bytes"),
         C("disk.used_percent", ("dup", "diskUsedPercent"), "used disk space percentage",
           False, "number"),
         C("heap.current", ("hc", "heapCurrent"), "used heap", False, "bytes"),
         C("heap.percent", ("hp", "heapPercent"), "used heap ratio", kind="number"),
         C("heap.max", ("hm", "heapMax"), "max configured heap", False, "bytes"),
         C("ram.current", ("rc", "ramCurrent"), "used machine memory", False, "bytes"),
         C("ram.percent", ("rp", "ramPercent"), "used machine memory ratio", kind="number"),
         C("ram.max", ("rm", "ramMax"), "total machine memory", False, "bytes"),
         C("file_desc.current", ("fdc", "fileDescriptorCurrent"), "used file descriptors",
           False, "number"),
         C("file_desc.percent", ("fdp", "fileDescriptorPercent"), "used file descriptor ratio",
           False, "number"),
         C("file_desc.max", ("fdm", "fileDescriptorMax"), "max file descriptors", False,
           "number"),
         C("cpu", ("cpu",), "recent cpu usage", kind="number"),
         C("load_1m", ("l",), "1m load avg", kind="number"),
         C("load_5m", ("l",), "5m load avg", kind="number"),
         C("load_15m", ("l",), "15m load avg", kind="number"),
         C("uptime", ("u",), "node uptime", False, "time"),
         C("node.role", ("r", "role", "nodeRole"), "m:master eligible node, d:data node, "
           "i:ingest node, -:coordinating node only"),
         C("master", ("m",), "*:current master"),
         C("node.roles", ("rs",), "all roles (OpenSearch's column)", False),
         C("cluster_manager", ("cm",), "*:current cluster manager (OpenSearch's column)",
           False),
         C("name", ("n",), "node name"),
         C("shards", (), "number of shard copies on the node (ours)", False, "number")]
ENDPOINTS = ["/_cat/aliases", "/_cat/aliases/{alias}", "/_cat/count", "/_cat/count/{index}",
             "/_cat/health", "/_cat/indices", "/_cat/indices/{index}", "/_cat/nodes",
             "/_cat/segments", "/_cat/segments/{index}", "/_cat/shards",
             "/_cat/shards/{index}"]


def _params(request: Request, extra: set[str] = frozenset()) -> dict[str, str]:
    params = query_params(request)
    check_params(params, CAT_PARAMS | extra, request.url.path)
    if "master_timeout" in params:   # one coordinator, always local: checked, no wait
        parse_time_ms(params["master_timeout"], "master_timeout")
    if "local" in params:
        bool_param(params, "local")
    return params


@router.get("/_cat")
async def cat_list(request: Request) -> Response:
    """``GET /_cat``: the endpoints served, as Elasticsearch lists its own."""
    check_params(query_params(request), COMMON, request.url.path)
    return PlainTextResponse("=^.^=\n" + "".join(e + "\n" for e in ENDPOINTS))


@router.get("/_cat/indices")
@router.get("/_cat/indices/{index}")
async def cat_indices(request: Request, coord: Coord, index: str | None = None) -> Response:
    params = _params(request, {"health"})
    rows = await coord.call("cat_indices", index)
    want = params.get("health")
    if want is not None:
        if want not in ("green", "yellow", "red"):
            raise IllegalArgument(f"No enum constant for [health]: [{want}]")
        rows = [r for r in rows if r.get("health") == want]
    return render(rows, INDICES, params)


def _failures(f: dict[str, Any] | None) -> str | None:
    """A copy's failed flushes, syncs and writes (our column), e.g. ``flush=2,sync=0,write=1``."""
    if not f:
        return None
    return ",".join(f"{k}={f.get(k, 0)}" for k in ("flush", "sync", "write"))


@router.get("/_cat/shards")
@router.get("/_cat/shards/{index}")
async def cat_shards(request: Request, coord: Coord, index: str | None = None) -> Response:
    params = _params(request)
    names = set(await coord.call("resolve", index)) if index is not None else None
    infos = await coord.call("shard_infos")
    # one row per copy (p: acting primary, r: replica)
    rows = [{"index": i["index"], "shard": i["shard"], "prirep": i.get("prirep", "p"),
             "state": i["state"], "docs": i.get("docs"), "store": _store(i),
             "dataset": _store(i), "node": i.get("node_name") or i.get("node_id"),
             "ip": i.get("node_ip"), "id": i.get("node_id"),
             "unassigned.reason": i.get("reason"), "pid": i.get("pid"), "copy": i.get("copy"),
             "storage.failures": _failures(i.get("storage_failures"))} for i in infos
            if names is None or i["index"] in names]
    return render(rows, SHARDS, params)


def _store(info: dict[str, Any]) -> int | None:
    if info.get("state") != "STARTED":
        return None
    if info.get("store_bytes") is not None:
        return int(info["store_bytes"])
    return sum(int(s.get("bytes") or 0) for s in info.get("segment_list") or [])


@router.get("/_cat/segments")
@router.get("/_cat/segments/{index}")
async def cat_segments(request: Request, coord: Coord, index: str | None = None) -> Response:
    params = _params(request)
    if index is not None:
        await coord.call("resolve", index, allow_no_indices=False)
    return render(await coord.call("cat_segments", index), SEGMENTS, params)


@router.get("/_cat/aliases")
@router.get("/_cat/aliases/{alias}")
async def cat_aliases(request: Request, coord: Coord, alias: str | None = None) -> Response:
    params = _params(request)
    return render(await coord.call("cat_aliases", alias), ALIASES, params)


def _clock() -> dict[str, Any]:
    now = time.time()
    return {"epoch": int(now), "timestamp": time.strftime("%H:%M:%S", time.gmtime(now))}


@router.get("/_cat/count")
@router.post("/_cat/count")
@router.get("/_cat/count/{index}")
@router.post("/_cat/count/{index}")
async def cat_count(request: Request, coord: Coord, index: str | None = None) -> Response:
    """The documents a ``query`` in the body (all by default) matches."""
    params = _params(request)
    body = await json_body(request) or {}
    if not isinstance(body, dict) or any(k != "query" for k in body):
        bad = next((k for k in body), "body") if isinstance(body, dict) else "body"
        raise IllegalArgument(f"request body or source parameter is required, [{bad}] is not "
                              "a _cat/count key", es_type="parsing_exception")
    query = parse_query(body["query"]) if "query" in body else MatchAll()
    indices = tuple(p for p in (index or "_all").split(",") if p)
    out = await coord.call("count", indices, query)
    return render([{**_clock(), "count": out["count"]}], COUNT, params)


@router.get("/_cat/health")
async def cat_health(request: Request, coord: Coord) -> Response:
    params = _params(request, {"ts"})
    h = await coord.call("health")
    row = {**_clock(), "cluster": h["cluster_name"], "status": h["status"],
           "node.total": h["number_of_nodes"], "node.data": h["number_of_data_nodes"],
           "shards": h["active_shards"], "pri": h["active_primary_shards"],
           "relo": h["relocating_shards"], "init": h["initializing_shards"],
           "unassign": h["unassigned_shards"], "pending_tasks": h["number_of_pending_tasks"],
           "max_task_wait_time": "-",
           "active_shards_percent": f"{h['active_shards_percent_as_number']:.1f}%"}
    if params.get("ts") in ("false", "0"):
        params = {**params, "h": params.get("h") or ",".join(
            c.name for c in HEALTH if c.name not in ("epoch", "timestamp"))}
    return render([row], HEALTH, params)


@router.get("/_cat/nodes")
async def cat_nodes(request: Request, coord: Coord) -> Response:
    """The nodes, their processes measured where they run (this front end measures itself:
    ``cluster/indices/node_metrics.py``)."""
    params = _params(request, {"full_id"})
    full = bool_param(params, "full_id")
    rows = await coord.call("cat_nodes", node_sample(), node_id())
    if not full:   # Elasticsearch shows the first 4 characters of a node id unless full_id
        rows = [{**r, "id": (r.get("id") or "")[:4]} for r in rows]
    return render(rows, NODES, params)
