"""Point in time (Elasticsearch's and OpenSearch's APIs) and scroll.

Registered before the ``/{index}`` routes so that ``/_pit`` and ``/_search/...`` are never taken
for index names. Searching *with* a PIT or opening a scroll goes through ``_search`` as usual
(``search.py``); these routes open, continue and close cursors
(``cluster/search/cursor_phase.py``).
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ...cluster.errors import ActionRequestValidation, IllegalArgument
from ...cluster.search.request import check_params, expands_open_indices
from ...cluster.values import flatten
from ..body import json_body
from ..deps import Coord
from ..disconnect import unless_disconnected
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params
from .search import search_response

router = APIRouter()

_PIT_PARAMS = COMMON | {"keep_alive", "ignore_unavailable", "allow_no_indices",
                        "expand_wildcards", "preference", "routing",
                        "allow_partial_search_results", "max_concurrent_shard_requests",
                        "allow_partial_pit_creation"}
_SCROLL_PARAMS = COMMON | {"scroll", "scroll_id", "rest_total_hits_as_int"}
_CLEAR_PARAMS = COMMON | {"scroll_id"}


def _object_body(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise IllegalArgument("request body must be a JSON object")
    return body


def _id_list(value: Any, name: str) -> list[str]:
    """A string (comma-separated) or an array of strings."""
    if isinstance(value, str):
        return [v for v in (p.strip() for p in value.split(",")) if v]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise IllegalArgument(f"[{name}] must be a string or an array of strings")


# --- Elasticsearch: point in time -----------------------------------------------------------

async def _open_pit(request: Request, coord: Coord, index: str | None,
                    flavor: str) -> JSONResponse:
    params = query_params(request)
    check_params(params, _PIT_PARAMS, request.url.path)
    _check_pit_options(params, _object_body(await json_body(request)))
    if index is None:
        msgs = ["[index] is not specified"]
        if "keep_alive" not in params:
            msgs.append("[keep_alive] is not specified")
        raise ActionRequestValidation("Validation Failed: " +
                                      "".join(f"{i}: {m};" for i, m in enumerate(msgs, 1)))
    resp = await coord.call("open_pit", index, params.get("keep_alive"),
                            ignore_unavailable=bool_param(params, "ignore_unavailable"),
                            allow_no_indices=bool_param(params, "allow_no_indices", True),
                            flavor=flavor)
    return JSONResponse(resp)


def _check_pit_options(params: dict[str, str], body: dict[str, Any]) -> None:
    """What would narrow a point in time that this server does not narrow, refused by name:
    ``routing`` and ``preference=_shards:`` (Elasticsearch opens it on those shards only),
    ``index_filter`` (it drops the indices the filter cannot match), and patterns that reach
    no open index (``expand_wildcards``). Other preferences choose copies, which all answer
    the same."""
    unknown = [k for k in body if k != "index_filter"]
    if unknown:
        raise IllegalArgument(f"[open_point_in_time] unknown field [{unknown[0]}]",
                              es_type="x_content_parse_exception")
    if "index_filter" in body:
        raise IllegalArgument("[index_filter] is not supported by this server's point in time")
    if "routing" in params:
        raise IllegalArgument("[routing] is not supported by this server's point in time")
    if params.get("preference", "").startswith("_shards"):
        raise IllegalArgument("[preference=_shards] is not supported by this server's point in "
                              "time")
    if not expands_open_indices(params.get("expand_wildcards", "open")):
        raise IllegalArgument(f"[expand_wildcards={params['expand_wildcards']}] is not "
                              "supported by this server's point in time (only open indices)")


@router.post("/_pit")
async def open_pit_without_index(request: Request, coord: Coord) -> JSONResponse:
    return await _open_pit(request, coord, None, "elasticsearch")


@router.post("/{index}/_pit")
async def open_pit(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _open_pit(request, coord, index, "elasticsearch")


@router.delete("/_pit")
async def close_pit(request: Request, coord: Coord) -> JSONResponse:
    """``{"id": ...}`` -> ``{"succeeded": true, "num_freed": shards}`` (200 even when the PIT
    was already gone, as Elasticsearch answers)."""
    params = query_params(request)
    check_params(params, COMMON, request.url.path)
    body = _object_body(await json_body(request))
    pit_id = body.get("id")
    if not isinstance(pit_id, str) or not pit_id:
        raise ActionRequestValidation("Validation Failed: 1: id is empty;")
    results = await coord.call("close_pits", [pit_id])
    return JSONResponse({"succeeded": True, "num_freed": sum(n for _, _, n in results)})


# --- OpenSearch: point in time ----------------------------------------------------------------

@router.post("/{index}/_search/point_in_time")
async def create_pit(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _open_pit(request, coord, index, "opensearch")


@router.get("/_search/point_in_time/_all")
async def get_all_pits(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON, request.url.path)
    return JSONResponse({"pits": await coord.call("list_pits")})


def _pits_out(results: list[tuple[str, bool, int]]) -> dict[str, Any]:
    return {"pits": [{"successful": found, "pit_id": pit_id} for pit_id, found, _ in results]}


@router.delete("/_search/point_in_time/_all")
async def delete_all_pits(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON, request.url.path)
    return JSONResponse(_pits_out(await coord.call("close_pits", None)))


@router.delete("/_search/point_in_time")
async def delete_pits(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON, request.url.path)
    body = _object_body(await json_body(request))
    if "pit_id" not in body:
        raise ActionRequestValidation("Validation Failed: 1: no pit ids specified;")
    ids = _id_list(body["pit_id"], "pit_id")
    if not ids:
        raise ActionRequestValidation("Validation Failed: 1: no pit ids specified;")
    return JSONResponse(_pits_out(await coord.call("close_pits", ids)))


# --- scroll -----------------------------------------------------------------------------------------

async def _scroll(request: Request, coord: Coord, path_id: str | None) -> JSONResponse:
    """The body's ``scroll_id``/``scroll`` win over the URL's, as in Elasticsearch."""
    params = query_params(request)
    check_params(params, _SCROLL_PARAMS, request.url.path)
    body = _object_body(await json_body(request))
    for key, value in body.items():
        if key not in ("scroll_id", "scroll") or not isinstance(value, str):
            raise IllegalArgument(f"Unknown parameter [{key}] in request body or parameter is of "
                                  "the wrong type[" + ("VALUE_STRING" if isinstance(value, str)
                                                       else "START_OBJECT" if isinstance(value, dict)
                                                       else "START_ARRAY" if isinstance(value, list)
                                                       else "VALUE_NUMBER") + "] ")
    scroll_id = body.get("scroll_id", params.get("scroll_id", path_id))
    keep_alive = body.get("scroll", params.get("scroll"))
    resp = await unless_disconnected(request, coord.call(
        "scroll", scroll_id or "", keep_alive, bool_param(params, "rest_total_hits_as_int")))
    return search_response(resp, params)


@router.get("/_search/scroll")
@router.post("/_search/scroll")
async def scroll(request: Request, coord: Coord) -> JSONResponse:
    return await _scroll(request, coord, None)


@router.get("/_search/scroll/{scroll_id}")
@router.post("/_search/scroll/{scroll_id}")
async def scroll_with_id(scroll_id: str, request: Request, coord: Coord) -> JSONResponse:
    return await _scroll(request, coord, scroll_id)


async def _clear_scroll(request: Request, coord: Coord, path_ids: str | None) -> JSONResponse:
    params = query_params(request)
    check_params(params, _CLEAR_PARAMS, request.url.path)
    body = _object_body(await json_body(request))
    ids = _id_list(params.get("scroll_id", path_ids or ""), "scroll_id")
    if "scroll_id" in body:
        ids = _id_list(body["scroll_id"], "scroll_id")
    resp = await coord.call("clear_scroll", ids)
    return JSONResponse(resp, status_code=200 if resp["num_freed"] else 404)


@router.delete("/_search/scroll")
async def clear_scroll(request: Request, coord: Coord) -> JSONResponse:
    return await _clear_scroll(request, coord, None)


@router.delete("/_search/scroll/{scroll_id}")
async def clear_scroll_with_id(scroll_id: str, request: Request, coord: Coord) -> JSONResponse:
    return await _clear_scroll(request, coord, scroll_id)


# --- search.* cluster settings (the keep-alive limits cursors obey) ----------------------------------

@router.put("/_cluster/settings")
async def put_cluster_settings(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON | {"flat_settings", "master_timeout", "timeout"},
                 request.url.path)
    body = _object_body(await json_body(request))
    return JSONResponse(_flat_settings(await coord.call("put_cluster_settings", body), params))


@router.get("/_cluster/settings")
async def get_cluster_settings(request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, COMMON | {"flat_settings", "master_timeout", "timeout",
                                   "include_defaults", "local"}, request.url.path)
    out = await coord.call("get_cluster_settings", bool_param(params, "include_defaults"))
    return JSONResponse(_flat_settings(out, params))


def _flat_settings(out: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
    """``flat_settings=true``: ``persistent`` and ``transient`` as dotted names."""
    if bool_param(params, "flat_settings"):
        for scope in ("persistent", "transient", "defaults"):
            if isinstance(out.get(scope), dict):
                out[scope] = flatten(out[scope])
    return out
