"""Index management: create, get, exists, delete, mappings, settings, refresh."""
from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from ...cluster.errors import IllegalArgument, IndexNotFound
from ..body import json_body
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params
from ...cluster.search.request import check_params

router = APIRouter()

_CREATE_PARAMS = COMMON | {"wait_for_active_shards", "timeout", "master_timeout",
                           "include_type_name"}
_INDEX_PARAMS = COMMON | {"ignore_unavailable", "allow_no_indices", "expand_wildcards",
                          "timeout", "master_timeout", "local", "include_defaults",
                          "flat_settings", "features", "wait_for_active_shards"}


@router.post("/_refresh")
@router.get("/_refresh")
async def refresh_all(coord: Coord) -> JSONResponse:
    return JSONResponse(await coord.call("refresh", None))


@router.post("/{index}/_refresh")
@router.get("/{index}/_refresh")
async def refresh(index: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    if not bool_param(params, "ignore_unavailable"):
        await coord.call("resolve", index)
    return JSONResponse(await coord.call("refresh", index))


@router.get("/_mapping")
async def get_all_mappings(coord: Coord) -> JSONResponse:
    return JSONResponse(await coord.call("get_mapping", None))


@router.get("/{index}/_mapping")
async def get_mapping(index: str, coord: Coord) -> JSONResponse:
    await coord.call("resolve", index, allow_no_indices=False)
    return JSONResponse(await coord.call("get_mapping", index))


@router.put("/{index}/_mapping")
@router.post("/{index}/_mapping")
async def put_mapping(index: str, request: Request, coord: Coord) -> JSONResponse:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise IllegalArgument("request body is required", es_type="action_request_validation_exception")
    return JSONResponse(await coord.call("put_mapping", index, body))


@router.get("/_settings")
async def get_all_settings(coord: Coord) -> JSONResponse:
    return JSONResponse(await coord.call("get_settings", None))


@router.get("/{index}/_settings")
async def get_settings(index: str, coord: Coord) -> JSONResponse:
    await coord.call("resolve", index, allow_no_indices=False)
    return JSONResponse(await coord.call("get_settings", index))


@router.put("/_settings")
async def put_all_settings(request: Request, coord: Coord) -> JSONResponse:
    body = await json_body(request)
    return JSONResponse(await coord.call("put_settings", None, body or {}))


@router.put("/{index}/_settings")
async def put_settings(index: str, request: Request, coord: Coord) -> JSONResponse:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise IllegalArgument("request body is required")
    return JSONResponse(await coord.call("put_settings", index, body))


@router.put("/{index}")
async def create_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), _CREATE_PARAMS, f"/{index}")
    body = await json_body(request)
    return JSONResponse(await coord.call("create_index", index, body))


@router.get("/{index}")
async def get_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), _INDEX_PARAMS, f"/{index}")
    return JSONResponse(await coord.call("get_index", index))


@router.head("/{index}")
async def index_exists(index: str, coord: Coord) -> Response:
    exists = await coord.call("index_exists", index)
    return Response(status_code=200 if exists else 404)


@router.delete("/{index}")
async def delete_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, _INDEX_PARAMS, f"/{index}")
    if index in ("_all", "*"):
        raise IllegalArgument("Wildcard expressions or all indices are not allowed")
    try:
        return JSONResponse(await coord.call("delete_index", index))
    except IndexNotFound:
        if bool_param(params, "ignore_unavailable"):
            return JSONResponse({"acknowledged": True})
        raise
