"""``/`` and ``/_cluster/health`` (the ``_cat`` tables are in ``cat.py``)."""
from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter, Request
from starlette.responses import Response

from ...cluster.errors import IllegalArgument
from ...cluster.indices.cluster_state import parse_metrics as parse_state_metrics
from ...cluster.indices.health import RANK, health_reached
from ...cluster.search.request import check_params
from ...cluster.values import parse_time_ms
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, bool_param, query_params

router = APIRouter()


@router.get("/")
async def root(request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), COMMON, request.url.path)
    return JSONResponse(await coord.call("info"))


@router.head("/")
async def root_head(request: Request) -> Response:
    check_params(query_params(request), COMMON, request.url.path)
    return Response(status_code=200)


_HEALTH = COMMON | {"level", "local", "timeout", "master_timeout", "wait_for_status",
                    "wait_for_no_initializing_shards", "wait_for_no_relocating_shards",
                    "wait_for_active_shards", "expand_wildcards"}
MAX_WAIT_S = 60.0


@router.get("/_cluster/health")
@router.get("/_cluster/health/{index}")
async def health(request: Request, coord: Coord, index: str | None = None) -> JSONResponse:
    """Health, waiting (bounded by ``timeout``, 30s by default, at most a minute) for the
    ``wait_for_*`` conditions; a wait that times out answers 408 with ``timed_out: true``."""
    params = query_params(request)
    check_params(params, _HEALTH, request.url.path)
    level = params.get("level", "cluster")
    if level not in ("cluster", "indices", "shards"):
        raise IllegalArgument(f"No enum constant for [level]: [{level}]")
    want = params.get("wait_for_status")
    if want is not None and want not in RANK:
        raise IllegalArgument(f"No enum constant for [wait_for_status]: [{want}]")
    active = params.get("wait_for_active_shards")
    if active is not None and active != "all" and not active.isdigit():
        raise IllegalArgument(f"Illegal value for [wait_for_active_shards]: [{active}]")
    no_init = bool_param(params, "wait_for_no_initializing_shards")
    bool_param(params, "wait_for_no_relocating_shards")   # nothing relocates here
    bool_param(params, "local")                           # one coordinator: always local
    timeout_s = min(parse_time_ms(params.get("timeout", "30s"), "timeout") / 1000, MAX_WAIT_S)
    if index is not None:
        await coord.call("resolve", index, allow_no_indices=False)
    deadline = time.monotonic() + timeout_s
    while True:
        body = await coord.call("health", index, level)
        if health_reached(body, want, no_init, active):
            return JSONResponse(body)
        if time.monotonic() >= deadline:
            return JSONResponse({**body, "timed_out": True}, status_code=408)
        await asyncio.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


@router.get("/_cluster/state")
@router.get("/_cluster/state/{metric}")
@router.get("/_cluster/state/{metric}/{index}")
async def cluster_state(request: Request, coord: Coord, metric: str | None = None,
                        index: str | None = None) -> JSONResponse:
    """The metadata subset and the routing table (``cluster/indices/cluster_state.py``)."""
    params = query_params(request)
    check_params(params, COMMON | {"local", "master_timeout"}, request.url.path)
    bool_param(params, "local")   # one coordinator: always local
    if "master_timeout" in params:
        parse_time_ms(params["master_timeout"], "master_timeout")
    metrics = parse_state_metrics(metric)
    if index is not None:
        await coord.call("resolve", index, allow_no_indices=False, include_closed=True)
    return JSONResponse(await coord.call("cluster_state", metrics, index))
