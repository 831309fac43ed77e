"""Aliases (``_alias``, ``_aliases``), open/close, ``_stats``; the legacy ``_template`` and
``_data_stream`` answer 404 as Elasticsearch does for a missing resource (neither is built)."""
from __future__ import annotations

import fnmatch

from fastapi import APIRouter, Request
from starlette.responses import Response

from ...cluster.errors import IllegalArgument, SearchError
from ...cluster.indices.stats import parse_metrics
from ..body import json_body
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, admin_params, bool_param

router = APIRouter()

# ``timeout`` / ``master_timeout`` bound the wait for the cluster's acknowledgement; the
# coordinator acknowledges a change once it is saved, so they are checked and cannot change it
_ACK = COMMON | {"timeout", "master_timeout"}
_GET = COMMON | {"ignore_unavailable", "local"}   # one coordinator: every answer is local


# --- aliases ---------------------------------------------------------------------------------

@router.post("/_aliases")
async def update_aliases(request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _ACK)
    body = await json_body(request)
    if not isinstance(body, dict) or "actions" not in body:
        raise IllegalArgument("[actions] is required", es_type="action_request_validation_exception")
    extra = [k for k in body if k != "actions"]
    if extra:
        raise IllegalArgument(f"[aliases] unknown field [{extra[0]}]",
                              es_type="x_content_parse_exception")
    return JSONResponse(await coord.call("update_aliases", body["actions"]))


async def _put_alias(index: str | None, name: str | None, request: Request,
                     coord: Coord) -> JSONResponse:
    admin_params(request, _ACK)
    body = await json_body(request)
    if body is not None and not isinstance(body, dict):
        raise IllegalArgument("request body must be an object", es_type="parse_exception")
    return JSONResponse(await coord.call("put_alias", index, name, body))


@router.put("/{index}/_alias/{name}")
@router.post("/{index}/_alias/{name}")
@router.put("/{index}/_aliases/{name}")
@router.post("/{index}/_aliases/{name}")
async def put_alias(index: str, name: str, request: Request, coord: Coord) -> JSONResponse:
    return await _put_alias(index, name, request, coord)


@router.put("/_alias/{name}")
@router.post("/_alias/{name}")
async def put_alias_named(name: str, request: Request, coord: Coord) -> JSONResponse:
    return await _put_alias(None, name, request, coord)


@router.put("/{index}/_alias")
@router.post("/{index}/_alias")
async def put_alias_on(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _put_alias(index, None, request, coord)


@router.put("/_alias")
@router.post("/_alias")
async def put_alias_body(request: Request, coord: Coord) -> JSONResponse:
    return await _put_alias(None, None, request, coord)


@router.delete("/{index}/_alias/{name}")
@router.delete("/{index}/_aliases/{name}")
async def delete_alias(index: str, name: str, request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _ACK)
    return JSONResponse(await coord.call("delete_alias", index, name))


async def _get_alias(index: str | None, name: str | None, request: Request,
                     coord: Coord) -> JSONResponse:
    params = admin_params(request, _GET)
    try:
        return JSONResponse(await coord.call(
            "get_alias", index, name, ignore_unavailable=bool_param(params, "ignore_unavailable")))
    except SearchError as e:
        if e.es_type != "aliases_not_found_exception":
            raise
        # Elasticsearch answers 404 with what it found and an ``error`` line
        named = [p for p in name.split(",") if p] if name else []
        found = await coord.call("get_alias", index, "*")
        found = {n: {"aliases": {a: s for a, s in v["aliases"].items()
                                 if any(fnmatch.fnmatchcase(a, p) for p in named)}}
                 for n, v in found.items()}
        found = {n: v for n, v in found.items() if v["aliases"]}
        missing = str(e.extra.get("resource.id", ""))
        word = "aliases" if "," in missing else "alias"
        return JSONResponse({"error": f"{word} [{missing}] missing", "status": 404, **found},
                            status_code=404)


@router.get("/_alias")
async def get_all_aliases(request: Request, coord: Coord) -> JSONResponse:
    return await _get_alias(None, None, request, coord)


@router.get("/_alias/{name}")
async def get_alias_named(name: str, request: Request, coord: Coord) -> JSONResponse:
    return await _get_alias(None, name, request, coord)


@router.get("/{index}/_alias")
async def get_alias_of(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _get_alias(index, None, request, coord)


@router.get("/{index}/_alias/{name}")
async def get_alias(index: str, name: str, request: Request, coord: Coord) -> JSONResponse:
    return await _get_alias(index, name, request, coord)


@router.head("/_alias/{name}")
@router.head("/{index}/_alias/{name}")
async def alias_exists(name: str, request: Request, coord: Coord,
                       index: str | None = None) -> Response:
    params = admin_params(request, _GET)
    found = await coord.call("alias_exists", index, name,
                             ignore_unavailable=bool_param(params, "ignore_unavailable"))
    return Response(status_code=200 if found else 404)


# --- open and close --------------------------------------------------------------------------

_STATE = _ACK


@router.post("/{index}/_close")
async def close_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _STATE)
    return JSONResponse(await coord.call("close_index", index))


@router.post("/{index}/_open")
async def open_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _STATE)
    return JSONResponse(await coord.call("open_index", index))


# --- _stats ----------------------------------------------------------------------------------

_STATS = COMMON | {"level"}


async def _stats(index: str | None, metric: str | None, request: Request,
                 coord: Coord) -> JSONResponse:
    params = admin_params(request, _STATS)
    metrics = parse_metrics(metric, request.url.path)
    if index is not None:
        await coord.call("resolve", index, refuse_closed=True)
    return JSONResponse(await coord.call("stats", index, metrics,
                                         params.get("level", "indices")))


@router.get("/_stats")
async def stats_all(request: Request, coord: Coord) -> JSONResponse:
    return await _stats(None, None, request, coord)


@router.get("/_stats/{metric}")
async def stats_metric(metric: str, request: Request, coord: Coord) -> JSONResponse:
    return await _stats(None, metric, request, coord)


@router.get("/{index}/_stats")
async def stats_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _stats(index, None, request, coord)


@router.get("/{index}/_stats/{metric}")
async def stats_index_metric(index: str, metric: str, request: Request,
                             coord: Coord) -> JSONResponse:
    return await _stats(index, metric, request, coord)


# --- data streams and legacy templates: none exist (clients probe for them) ------------------------------------------------------------

_LEGACY_GET = COMMON | {"master_timeout", "local"}


@router.get("/_template")
async def legacy_templates(request: Request) -> JSONResponse:
    """No legacy template exists here: ``{}`` (``flat_settings`` has nothing to flatten)."""
    bool_param(admin_params(request, _LEGACY_GET | {"flat_settings"}), "flat_settings")
    return JSONResponse({})


@router.get("/_template/{name}")
async def legacy_template(name: str, request: Request) -> JSONResponse:
    """No legacy template exists here; Elasticsearch answers a missing one with a bare 404
    (clients' ``helpers.reindex`` and es-pandas rely on it)."""
    admin_params(request, _LEGACY_GET)
    return JSONResponse({}, status_code=404)


@router.head("/_template/{name}")
async def legacy_template_exists(name: str, request: Request) -> Response:
    admin_params(request, _LEGACY_GET)
    return Response(status_code=404)


# --- composable index templates --------------------------------------------------------------

@router.put("/_index_template/{name}")
@router.post("/_index_template/{name}")
async def put_index_template(name: str, request: Request, coord: Coord) -> JSONResponse:
    params = admin_params(request, _ACK | {"create"})
    body = await json_body(request)
    return JSONResponse(await coord.call("put_index_template", name, body,
                                         bool_param(params, "create")))


@router.get("/_index_template")
@router.get("/_index_template/{name}")
async def get_index_template(request: Request, coord: Coord,
                             name: str | None = None) -> JSONResponse:
    admin_params(request, COMMON | {"local", "master_timeout"})
    return JSONResponse(await coord.call("get_index_template", name))


@router.head("/_index_template/{name}")
async def index_template_exists(name: str, request: Request, coord: Coord) -> Response:
    admin_params(request, COMMON | {"local", "master_timeout"})
    try:
        await coord.call("get_index_template", name)
    except SearchError as e:
        if e.status == 404:
            return Response(status_code=404)
        raise
    return Response(status_code=200)


@router.delete("/_index_template/{name}")
async def delete_index_template(name: str, request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _ACK)
    return JSONResponse(await coord.call("delete_index_template", name))
