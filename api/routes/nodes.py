"""``_nodes`` (info and stats) and ``_search_shards``: what connectors ask
before they read. The shapes are built in ``cluster/indices/nodes.py``; here the front end adds
its own HTTP address, which only it knows."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ...cluster.errors import IllegalArgument
from ...cluster.indices.nodes import (INFO_METRICS, KNOWN_INFO_METRICS, KNOWN_STATS_METRICS,
                                      STATS_METRICS, check_metrics, split_target)
from ...cluster.search.request import check_params, expands_open_indices
from ..body import MAX_CONTENT_LENGTH
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params

router = APIRouter()

_NODES_PARAMS = COMMON | {"timeout", "flat_settings"}
_SEARCH_SHARDS_PARAMS = COMMON | {"routing", "preference", "local", "ignore_unavailable",
                                  "allow_no_indices", "expand_wildcards", "master_timeout"}
_UNSERVED = ("hot_threads", "usage", "reload_secure_settings", "shutdown")


def _http(request: Request) -> dict[str, Any]:
    host, port = (request.scope.get("server") or ("127.0.0.1", 9200))[:2]
    address = f"{host}:{port}"
    return {"bound_address": [address], "publish_address": address,
            "max_content_length_in_bytes": MAX_CONTENT_LENGTH}


def _flatten(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in settings.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


@router.get("/_nodes")
@router.get("/_nodes/{rest:path}")
async def nodes(request: Request, coord: Coord, rest: str = "") -> JSONResponse:
    params = query_params(request)
    check_params(params, _NODES_PARAMS, request.url.path)
    parts = [p for p in rest.split("/") if p]
    if any(p in _UNSERVED for p in parts):
        raise IllegalArgument(f"[{request.url.path}] is not supported by this server")
    http = _http(request)
    if "stats" in parts[:2]:
        at = parts.index("stats")
        spec = parts[0] if at == 1 else None
        metrics = tuple(parts[at + 1].split(",")) if len(parts) > at + 1 else None
        shown = check_metrics(metrics, KNOWN_STATS_METRICS, STATS_METRICS)
        host = http["publish_address"].rsplit(":", 1)[0]
        return JSONResponse(await coord.call("nodes_stats", spec, shown, host))
    if len(parts) > 2:
        raise IllegalArgument(f"no handler found for uri [{request.url.path}] and method [GET]")
    spec, metrics = split_target(parts[0] if parts else None,
                                 parts[1] if len(parts) > 1 else None, KNOWN_INFO_METRICS)
    shown = check_metrics(metrics, KNOWN_INFO_METRICS, INFO_METRICS)
    out = await coord.call("nodes_info", spec, shown, http)
    if bool_param(params, "flat_settings"):
        for n in out["nodes"].values():
            if "settings" in n:
                n["settings"] = _flatten(n["settings"])
    return JSONResponse(out)


async def _search_shards(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    params = query_params(request)
    check_params(params, _SEARCH_SHARDS_PARAMS, request.url.path)
    options = {"ignore_unavailable": bool_param(params, "ignore_unavailable"),
               "allow_no_indices": bool_param(params, "allow_no_indices", True),
               "expand_wildcards": expands_open_indices(params.get("expand_wildcards",
                                                                   "open"))}
    host = _http(request)["publish_address"].rsplit(":", 1)[0]
    return JSONResponse(await coord.call("search_shards", index, params.get("routing"),
                                         params.get("preference"), host, **options))


@router.get("/_search_shards")
@router.post("/_search_shards")
async def search_shards_all(request: Request, coord: Coord) -> JSONResponse:
    return await _search_shards(request, coord, None)


@router.get("/{index}/_search_shards")
@router.post("/{index}/_search_shards")
async def search_shards(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _search_shards(request, coord, index)
