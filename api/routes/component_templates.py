"""Component templates (``_component_template``) and the template simulation APIs
(``_index_template/_simulate_index/{index}``, ``_index_template/_simulate[/{name}]``).

Rules and shapes live in ``cluster/indices/component_templates.py`` and
``template_simulation.py``. ``master_timeout`` / ``cluster_manager_timeout`` are checked as
times: the one coordinator applies a change when it is saved, so no wait can run out.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from ...cluster.errors import SearchError
from ...cluster.search.request import check_params
from ...cluster.values import parse_time_ms
from ..body import json_body
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params

router = APIRouter()

_TIMEOUTS = {"master_timeout", "cluster_manager_timeout"}
_PUT = COMMON | _TIMEOUTS | {"timeout", "create"}
_GET = COMMON | _TIMEOUTS | {"local", "flat_settings", "include_defaults"}


def _params(request: Request, allowed: set[str]) -> dict[str, str]:
    params = query_params(request)
    check_params(params, allowed, request.url.path)
    for key in _TIMEOUTS | {"timeout"}:
        if key in params:
            parse_time_ms(params[key], key)
    for key in ("local", "create"):
        if key in params:
            bool_param(params, key)
    for key in ("flat_settings", "include_defaults"):   # only their default is served
        if bool_param(params, key):
            raise SearchError(f"[{key}=true] is not supported by this server's component "
                              "templates", es_type="illegal_argument_exception", status=400)
    return params


@router.put("/_component_template/{name}")
@router.post("/_component_template/{name}")
async def put_component_template(name: str, request: Request, coord: Coord) -> JSONResponse:
    params = _params(request, _PUT)
    body = await json_body(request)
    return JSONResponse(await coord.call("put_component_template", name, body,
                                         bool_param(params, "create")))


@router.get("/_component_template")
@router.get("/_component_template/{name}")
async def get_component_template(request: Request, coord: Coord,
                                 name: str | None = None) -> JSONResponse:
    _params(request, _GET)
    return JSONResponse(await coord.call("get_component_template", name))


@router.head("/_component_template/{name}")
async def component_template_exists(name: str, request: Request, coord: Coord) -> Response:
    _params(request, _GET)
    try:
        await coord.call("get_component_template", name)
    except SearchError as e:
        if e.status == 404:
            return Response(status_code=404)
        raise
    return Response(status_code=200)


@router.delete("/_component_template/{name}")
async def delete_component_template(name: str, request: Request, coord: Coord
                                    ) -> JSONResponse:
    _params(request, COMMON | _TIMEOUTS | {"timeout"})
    return JSONResponse(await coord.call("delete_component_template", name))


@router.post("/_index_template/_simulate_index/{index}")
async def simulate_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    _params(request, COMMON | _TIMEOUTS | {"include_defaults"})
    body: Any = await json_body(request)   # an index template, as if it were stored
    return JSONResponse(await coord.call("simulate_index", index, body))


@router.post("/_index_template/_simulate")
@router.post("/_index_template/_simulate/{name}")
async def simulate_template(request: Request, coord: Coord,
                            name: str | None = None) -> JSONResponse:
    params = _params(request, COMMON | _TIMEOUTS | {"create", "include_defaults"})
    body: Any = await json_body(request)
    return JSONResponse(await coord.call("simulate_template", name, body,
                                         bool_param(params, "create")))
