"""``_search`` and ``_count``: Elasticsearch's parameters and body onto the coordinator."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.convertors import Convertor, register_url_convertor

from ...cluster.errors import IllegalArgument, ParsingError
from ...cluster.engine.query.dsl import parse_query
from ...cluster.engine.query.nodes import MatchAll, QueryString
from ...cluster.search.request import check_params, parse_search
from ...cluster.indices.preference import parse_preference
from ..deps import Coord, coordinator_of
from ..disconnect import unless_disconnected
from ..json import JSONResponse
from ..params import COMMON, bool_param, index_options, query_params
from ..stored_scripts import body_with_stored_scripts

router = APIRouter()


class _PlainIndex(Convertor):
    """An index expression that does not start with ``_``: no other route's path has such a
    first part followed by ``/_search`` (``tests/test_hot_path.py`` holds it), so
    :data:`hot_router` may be matched before every other router."""

    regex = "[^_/][^/]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("plain_index", _PlainIndex())

hot_router = APIRouter()
"""``/{index}/_search``, included first by the app: FastAPI tries routes one by one, and the
search routes came after ~110 others (~0.15 ms of the front end's CPU per search). Names that
start with ``_`` (``_all``, ``/_scripts/_search`` as a script id) go the usual way."""

_COUNT_PARAMS = COMMON | {"q", "df", "default_operator", "analyzer", "analyze_wildcard",
                          "lenient", "terminate_after", "min_score", "routing", "preference",
                          "ignore_unavailable", "allow_no_indices", "expand_wildcards",
                          "ignore_throttled"}


def _indices(index: str | None) -> tuple[str, ...]:
    return tuple(p for p in (index or "_all").split(",") if p) or ("_all",)


PAGE_TOKEN_HEADER = "X-Shardsearch-Page-Token"


def search_response(resp: dict[str, Any], params: dict[str, str]) -> JSONResponse:
    """The search body without internal keys; the page token goes in a header (our extension,
    see README "Consistent pages")."""
    resp.pop("_snapshot", None)
    resp.pop("_after", None)
    token = resp.pop("_page_token", None)
    headers = {PAGE_TOKEN_HEADER: token} if token else None
    return JSONResponse(resp, headers=headers)


async def _search(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    params = query_params(request)
    body = await body_with_stored_scripts(request, coord)
    req = parse_search(_indices(index), params, body, path=request.url.path)
    resp = await unless_disconnected(request, coord.call("search", req))
    return search_response(resp, params)


@router.get("/_search")
@router.post("/_search")
async def search_all(request: Request, coord: Coord) -> JSONResponse:
    return await _search(request, coord, None)


@router.get("/{index}/_search")
@router.post("/{index}/_search")
async def search(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _search(request, coord, index)


@hot_router.get("/{index:plain_index}/_search")
@hot_router.post("/{index:plain_index}/_search")
async def search_plain(request: Request) -> JSONResponse:
    """:func:`search` without FastAPI's dependency solving (the coordinator read directly,
    the index from the path's parameters): the same answer, ~0.05 ms less per search."""
    return await _search(request, coordinator_of(request), request.path_params["index"])


async def _count(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    params = query_params(request)
    check_params(params, _COUNT_PARAMS, request.url.path)
    body = await body_with_stored_scripts(request, coord)
    query: Any = MatchAll()
    if body is not None:
        if not isinstance(body, dict):
            raise ParsingError("request body must be an object")
        for key in body:
            if key not in ("query",):
                raise ParsingError(f"request does not support [{key}]")
        if body.get("query"):
            query = parse_query(body["query"])
    if "q" in params:
        df = params.get("df")
        query = QueryString(query=params["q"], fields=((df, 1.0),) if df else (),
                            default_operator=params.get("default_operator", "or").lower(),
                            lenient=bool_param(params, "lenient") if "lenient" in params
                            else None,   # as _search: lenient over every field by default
                            analyzer=params.get("analyzer"))
    min_score = None
    if "min_score" in params:
        try:
            min_score = float(params["min_score"])
        except ValueError:
            raise ParsingError("[min_score] must be a number") from None
    parse_preference(params.get("preference"))   # Elasticsearch's errors before any fan-out
    terminate_after = None
    if "terminate_after" in params:
        try:
            terminate_after = int(params["terminate_after"])
        except ValueError:
            raise IllegalArgument("Failed to parse int parameter [terminate_after] with value "
                                  f"[{params['terminate_after']}]") from None
        if terminate_after < 0:
            raise IllegalArgument("terminateAfter must be > 0")
        terminate_after = terminate_after or None
    resp = await unless_disconnected(request, coord.call(
        "count", _indices(index), query, terminate_after, min_score, params.get("routing"),
        params.get("preference"), **index_options(params)))
    return JSONResponse(resp)


@router.get("/_count")
@router.post("/_count")
async def count_all(request: Request, coord: Coord) -> JSONResponse:
    return await _count(request, coord, None)


@router.get("/{index}/_count")
@router.post("/{index}/_count")
async def count(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _count(request, coord, index)
