"""``/_data_stream``: this server has no data streams (every name is an index), so a named
stream is Elasticsearch's 404 and a pattern lists none. Clients ask before writing:
``elasticsearch.helpers.reindex`` checks whether its target is a data stream."""
from __future__ import annotations

from fastapi import APIRouter, Request

from ...cluster.errors import IllegalArgument, IndexNotFound
from ...cluster.search.request import check_params
from ..json import JSONResponse
from ..params import COMMON, admin_params, query_params

router = APIRouter()


@router.get("/_data_stream/_stats")
async def data_stream_stats() -> JSONResponse:
    return JSONResponse({"_shards": {"total": 0, "successful": 0, "failed": 0},
                         "data_stream_count": 0, "backing_indices": 0,
                         "total_store_size_bytes": 0, "data_streams": []})


@router.get("/_data_stream")
@router.get("/_data_stream/{name}")
async def get_data_stream(request: Request, name: str = "*") -> JSONResponse:
    """No data streams exist here: patterns match none, a name is Elasticsearch's 404."""
    check_params(query_params(request), COMMON | {"expand_wildcards", "include_defaults",
                                                  "master_timeout", "verbose"},
                 request.url.path)
    missing = [n for n in name.split(",") if n and "*" not in n and n != "_all"]
    if missing:
        raise IndexNotFound(missing[0])
    return JSONResponse({"data_streams": []})


@router.delete("/_data_stream/{name}")
async def delete_data_stream(name: str, request: Request) -> JSONResponse:
    admin_params(request, COMMON | {"master_timeout"})
    missing = [n for n in name.split(",") if n and "*" not in n and n != "_all"]
    if missing:
        raise IndexNotFound(missing[0])
    return JSONResponse({"acknowledged": True})


@router.put("/_data_stream/{name}")
async def create_data_stream(name: str, request: Request) -> JSONResponse:
    admin_params(request, COMMON | {"master_timeout", "timeout"})
    raise IllegalArgument(f"no matching index template found for data stream [{name}]")
