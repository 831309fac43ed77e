"""``_delete_by_query``, ``_update_by_query``, ``_reindex`` and the ``_tasks`` API that follows
them (``cluster/documents/by_query.py``, ``cluster/documents/tasks.py``)."""
from __future__ import annotations

from fastapi import APIRouter, Request

from ...cluster.documents.by_query_request import (BY_QUERY_PARAMS, REINDEX_PARAMS,
                                                   parse_by_query, parse_rps)
from ...cluster.engine.query.nodes import QueryString
from ...cluster.errors import IllegalArgument
from ...cluster.search.request import check_params
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params
from ..stored_scripts import body_with_stored_scripts

router = APIRouter()

_LIST_PARAMS = COMMON | {"actions", "detailed", "group_by"}


def _indices(index: str) -> tuple[str, ...]:
    return tuple(p for p in index.split(",") if p) or ("_all",)


async def _by_query(request: Request, coord: Coord, action: str, index: str | None
                    ) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON | (REINDEX_PARAMS if action == "reindex" else BY_QUERY_PARAMS),
                 request.url.path)
    from_params = None
    if "q" in params:
        df = params.get("df")
        from_params = QueryString(query=params["q"], fields=((df, 1.0),) if df else (),
                                  default_operator=params.get("default_operator", "or").lower())
    body = await body_with_stored_scripts(request, coord)
    job = parse_by_query(action, _indices(index or ""), params, body, from_params)
    code, resp = await coord.call("by_query", job)
    return JSONResponse(resp, status_code=code)


@router.post("/{index}/_delete_by_query")
async def delete_by_query(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _by_query(request, coord, "delete", index)


@router.post("/{index}/_update_by_query")
async def update_by_query(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _by_query(request, coord, "update", index)


@router.post("/_reindex")
async def reindex(request: Request, coord: Coord) -> JSONResponse:
    return await _by_query(request, coord, "reindex", None)


@router.get("/_tasks")
async def list_tasks(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, _LIST_PARAMS, request.url.path)
    if params.get("group_by", "nodes") != "nodes":
        raise IllegalArgument(f"[group_by] [{params['group_by']}] is not supported by this "
                              "server; tasks are grouped by [nodes]")
    return JSONResponse(await coord.call("list_tasks", params.get("actions"),
                                         bool_param(params, "detailed")))


@router.get("/_tasks/{task_id}")
async def get_task(task_id: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON, request.url.path)
    return JSONResponse(await coord.call("get_task", task_id))


@router.post("/_tasks/_cancel")
async def cancel_tasks(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON | {"actions"}, request.url.path)
    return JSONResponse(await coord.call("cancel_tasks", None, params.get("actions")))


@router.post("/_tasks/{task_id}/_cancel")
async def cancel_task(task_id: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON, request.url.path)
    return JSONResponse(await coord.call("cancel_tasks", task_id, None))



@router.post("/_delete_by_query/{task_id}/_rethrottle")
@router.post("/_update_by_query/{task_id}/_rethrottle")
@router.post("/_reindex/{task_id}/_rethrottle")
async def rethrottle(task_id: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON | {"requests_per_second"}, request.url.path)
    if "requests_per_second" not in params:
        raise IllegalArgument("requests_per_second is a required parameter")
    return JSONResponse(await coord.call("rethrottle", task_id,
                                         parse_rps(params["requests_per_second"])))
