"""Multi-document and multi-search APIs: ``_mget`` and ``_msearch`` (GET and POST, with and
without an index in the path); ``_msearch/template`` is in ``scripts.py``."""
from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request

from ...cluster.documents.mget import MGET_PARAMS, parse_mget
from ...cluster.errors import IllegalArgument, SearchError
from ...cluster.indices.stored_scripts import referenced_ids, substitute
from ...cluster.search.msearch import max_concurrent, ndjson_pairs, parse_msearch, run_msearch
from ...cluster.search.request import SearchRequest, check_params
from ..body import json_body, read_body
from ..deps import Coord
from ..disconnect import unless_disconnected
from ..errors import envelope
from ..json import JSONResponse
from ..params import bool_param, query_params
from ..stored_scripts import fetch_scripts

router = APIRouter()


async def _mget(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    params = query_params(request)
    check_params(params, MGET_PARAMS, request.url.path)
    if "realtime" in params and not bool_param(params, "realtime", True):
        raise IllegalArgument("[realtime=false] is not supported by this server: every get "
                              "reads the latest acknowledged version")
    items = parse_mget(await json_body(request), index, params)
    if bool_param(params, "refresh"):
        await coord.call("refresh", ",".join(sorted({i for i, _, _ in items})))
    return JSONResponse(await coord.call("mget", items))


@router.get("/_mget")
@router.post("/_mget")
async def mget_all(request: Request, coord: Coord) -> JSONResponse:
    return await _mget(request, coord, None)


@router.get("/{index}/_mget")
@router.post("/{index}/_mget")
async def mget(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _mget(request, coord, index)


def msearch_item(result: dict[str, Any] | SearchError) -> dict[str, Any]:
    """One response of the ``responses`` array, with its ``status`` as Elasticsearch adds it."""
    if isinstance(result, SearchError):
        return envelope(result)
    for internal in ("_snapshot", "_after", "_page_token"):
        result.pop(internal, None)
    result["status"] = 200
    return result


async def _msearch(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    t0 = time.perf_counter()
    params = query_params(request)
    default = tuple(p for p in (index or "_all").split(",") if p) or ("_all",)
    raw = await read_body(request)
    ids = sorted({i for _, body, _ in ndjson_pairs(raw) for i in referenced_ids(body)}) \
        if b'"id"' in raw else []
    scripts = await fetch_scripts(coord, ids)     # stored scripts the searches name
    requests = parse_msearch(raw, default, params, request.url.path,
                             (lambda body: substitute(body, scripts)) if ids else None)
    limit = max_concurrent(params)

    async def search(req: SearchRequest) -> dict[str, Any]:
        return await coord.call("search", req)
    results = await unless_disconnected(request, run_msearch(requests, search, limit))
    return JSONResponse({"took": int((time.perf_counter() - t0) * 1000),
                         "responses": [msearch_item(r) for r in results]})


@router.get("/_msearch")
@router.post("/_msearch")
async def msearch_all(request: Request, coord: Coord) -> JSONResponse:
    return await _msearch(request, coord, None)


@router.get("/{index}/_msearch")
@router.post("/{index}/_msearch")
async def msearch(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _msearch(request, coord, index)
