"""``GET /_data_stream``: this server has no data streams (every name is an index), so a named
stream is Elasticsearch's 404 and a pattern lists none. Clients ask before writing:
``elasticsearch.helpers.reindex`` checks whether its target is a data stream."""
from __future__ import annotations

from fastapi import APIRouter, Request

from ...cluster.errors import IndexNotFound
from ...cluster.search.request import check_params
from ..json import JSONResponse
from ..params import COMMON, query_params

router = APIRouter()


@router.get("/_data_stream")
@router.get("/_data_stream/{name}")
async def get_data_stream(request: Request, name: str = "*") -> JSONResponse:
    check_params(query_params(request), COMMON | {"expand_wildcards", "include_defaults",
                                                  "master_timeout", "verbose"},
                 request.url.path)
    concrete = [n for n in name.split(",") if n and "*" not in n and n != "_all"]
    if concrete:
        raise IndexNotFound(concrete[0])
    return JSONResponse({"data_streams": []})
