"""Stored scripts (``_scripts``) and search templates (``_search/template``,
``_render/template``, ``_msearch/template``): a template is rendered here
(``cluster/search/search_template.py``) and the search body it gives takes the path of
``_search`` / ``_msearch``."""
from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request

from ...cluster.errors import SearchError
from ...cluster.indices.script_contexts import script_contexts, script_languages
from ...cluster.indices.stored_scripts import referenced_ids, substitute
from ...cluster.search.msearch import (max_concurrent, ndjson_pairs, parse_msearch,
                                       run_msearch)
from ...cluster.search.request import SearchRequest, check_params, parse_search
from ...cluster.search.search_template import (TemplateRequest, parse_template_request,
                                               render_body, search_body, template_source)
from ...cluster.values import parse_time_ms
from ..body import json_body, read_body
from ..deps import Coord
from ..disconnect import unless_disconnected
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params
from ..stored_scripts import fetch_scripts, with_stored_scripts
from .multi import msearch_item
from .search import search_response

router = APIRouter()

_PUT_PARAMS = COMMON | {"timeout", "master_timeout", "context"}
_GET_PARAMS = COMMON | {"master_timeout"}
#: ``_search/template``'s URL parameters (Elasticsearch's ``RestSearchTemplateAction``).
TEMPLATE_PARAMS = COMMON | {
    "ignore_unavailable", "allow_no_indices", "expand_wildcards", "ignore_throttled",
    "preference", "routing", "scroll", "search_type", "rest_total_hits_as_int", "typed_keys",
    "ccs_minimize_roundtrips", "explain", "profile",
}


def _params(request: Request, allowed: set[str]) -> dict[str, str]:
    """Checked URL parameters; ``timeout``/``master_timeout`` are checked as times (a script
    is stored and saved before the answer, so no wait can be cut short)."""
    params = query_params(request)
    check_params(params, allowed, request.url.path)
    for key in ("timeout", "master_timeout"):
        if key in params:
            parse_time_ms(params[key], key)
    return params


# --- stored scripts ----------------------------------------------------------------------------

async def _put_script(request: Request, coord: Coord, script_id: str,
                      context: str | None) -> JSONResponse:
    params = _params(request, _PUT_PARAMS)
    body = await json_body(request)
    return JSONResponse(await coord.call("put_script", script_id, body,
                                         context or params.get("context")))


@router.put("/_scripts/{script_id}")
@router.post("/_scripts/{script_id}")
async def put_script(script_id: str, request: Request, coord: Coord) -> JSONResponse:
    return await _put_script(request, coord, script_id, None)


@router.put("/_scripts/{script_id}/{context}")
@router.post("/_scripts/{script_id}/{context}")
async def put_script_context(script_id: str, context: str, request: Request,
                             coord: Coord) -> JSONResponse:
    return await _put_script(request, coord, script_id, context)


@router.get("/_scripts/{script_id}")
async def get_script(script_id: str, request: Request, coord: Coord) -> JSONResponse:
    _params(request, _GET_PARAMS)
    status, body = await coord.call("get_script", script_id)
    return JSONResponse(body, status_code=status)


@router.delete("/_scripts/{script_id}")
async def delete_script(script_id: str, request: Request, coord: Coord) -> JSONResponse:
    _params(request, _PUT_PARAMS - {"context"})
    return JSONResponse(await coord.call("delete_script", script_id))


@router.get("/_script_context")
async def get_script_context(request: Request) -> JSONResponse:
    _params(request, COMMON)
    return JSONResponse(script_contexts())


@router.get("/_script_language")
async def get_script_language(request: Request) -> JSONResponse:
    _params(request, COMMON)
    return JSONResponse(script_languages())


# --- search templates --------------------------------------------------------------------------

async def _template_scripts(coord: Coord, req: TemplateRequest) -> dict[str, dict[str, str]]:
    return await fetch_scripts(coord, [req.script_id] if req.script_id is not None else [])


def _indices(index: str | None) -> tuple[str, ...]:
    return tuple(p for p in (index or "_all").split(",") if p) or ("_all",)


async def _search_template(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    params = _params(request, TEMPLATE_PARAMS)
    req = parse_template_request(await json_body(request))
    body = search_body(req, await _template_scripts(coord, req))
    for flag in ("explain", "profile"):
        if bool_param(params, flag):
            body[flag] = True
    params = {k: v for k, v in params.items() if k not in ("explain", "profile")}
    body = await with_stored_scripts(coord, body)
    search = parse_search(_indices(index), params, body, path=request.url.path)
    resp = await unless_disconnected(request, coord.call("search", search))
    return search_response(resp, params)


@router.get("/_search/template")
@router.post("/_search/template")
async def search_template_all(request: Request, coord: Coord) -> JSONResponse:
    return await _search_template(request, coord, None)


@router.get("/{index}/_search/template")
@router.post("/{index}/_search/template")
async def search_template(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _search_template(request, coord, index)


async def _render(request: Request, coord: Coord, script_id: str | None) -> JSONResponse:
    _params(request, set(COMMON))
    body = await json_body(request)
    if script_id is not None and (body is None or isinstance(body, dict)):
        # the path's id wins over the body's template, as in Elasticsearch
        body = {k: v for k, v in (body or {}).items() if k not in ("source", "inline")}
        body["id"] = script_id
    req = parse_template_request(body)
    source = template_source(req, await _template_scripts(coord, req))
    return JSONResponse({"template_output": render_body(source, req.params)})


@router.get("/_render/template")
@router.post("/_render/template")
async def render_template(request: Request, coord: Coord) -> JSONResponse:
    return await _render(request, coord, None)


@router.get("/_render/template/{script_id}")
@router.post("/_render/template/{script_id}")
async def render_template_id(script_id: str, request: Request, coord: Coord) -> JSONResponse:
    return await _render(request, coord, script_id)


async def _msearch_scripts(coord: Coord, raw: bytes) -> dict[str, dict[str, str]]:
    """Every stored script the items need: the templates they name, then the scripts their
    renderings name (an item that fails to render fails later, in its place)."""
    requests: list[TemplateRequest] = []
    for _, body, _ in ndjson_pairs(raw):
        try:
            requests.append(parse_template_request(body))
        except SearchError:
            continue
    scripts = await fetch_scripts(coord, sorted({r.script_id for r in requests
                                                 if r.script_id is not None}))
    needed: set[str] = set()
    for r in requests:
        try:
            needed.update(referenced_ids(search_body(r, scripts)))
        except SearchError:
            continue
    scripts.update(await fetch_scripts(coord, sorted(needed - set(scripts))))
    return scripts


async def _msearch_template(request: Request, coord: Coord, index: str | None
                            ) -> JSONResponse:
    t0 = time.perf_counter()
    params = query_params(request)
    raw = await read_body(request)
    scripts = await _msearch_scripts(coord, raw)

    def prepare(body: dict[str, Any]) -> dict[str, Any]:
        return substitute(search_body(parse_template_request(body), scripts), scripts)
    requests = parse_msearch(raw, _indices(index), params, request.url.path, prepare,
                             item_errors=True)

    async def one(req: SearchRequest) -> dict[str, Any]:
        return await coord.call("search", req)
    results = await unless_disconnected(
        request, run_msearch(requests, one, max_concurrent(params)))
    return JSONResponse({"took": int((time.perf_counter() - t0) * 1000),
                         "responses": [msearch_item(r) for r in results]})


@router.get("/_msearch/template")
@router.post("/_msearch/template")
async def msearch_template_all(request: Request, coord: Coord) -> JSONResponse:
    return await _msearch_template(request, coord, None)


@router.get("/{index}/_msearch/template")
@router.post("/{index}/_msearch/template")
async def msearch_template(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _msearch_template(request, coord, index)
