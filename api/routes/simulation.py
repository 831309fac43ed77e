"""``/_sim``: simulated trouble for experiments (not an Elasticsearch API).

* ``POST /_sim/shards`` with ``{"index": "books", "shard": 0, "latency_ms": 50, "jitter_ms": 10,
  "slowdown": 2, "fail_rate": 0.1, "seed": 7}`` gives those shard actors that trouble
  (``"hold_merges": true``: their background merges wait half-way until it is cleared)
  (``index`` omitted: every index; ``shard`` omitted: every shard of it; a list: several);
* ``GET /_sim`` shows what is on; ``DELETE /_sim`` turns everything off.

Off by default; while on, ``GET /_cluster/health`` carries a ``simulation`` object. What each knob
does is described in ``cluster/simulation.py``. Registered before the ``/{index}`` routes so
``_sim`` is never taken for an index name.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ...cluster.errors import ParsingError
from ...cluster.search.request import check_params
from ..body import json_body
from ..deps import Coord
from ..json import JSONResponse
from ..params import COMMON, query_params

router = APIRouter()

_KEYS = {"index", "shard", "latency_ms", "jitter_ms", "slowdown", "fail_rate", "seed",
         "hold_merges"}


@router.post("/_sim/shards")
@router.put("/_sim/shards")
async def simulate(request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), COMMON, request.url.path)
    body: Any = await json_body(request)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ParsingError("request body must be a JSON object")
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise ParsingError(f"unknown field [{unknown[0]}] for [_sim/shards], expected one of "
                           f"{sorted(_KEYS)}")
    return JSONResponse(await coord.call("simulate", **body))


@router.get("/_sim")
async def status(coord: Coord) -> JSONResponse:
    return JSONResponse({"simulation": await coord.call("simulation")})


@router.delete("/_sim")
async def clear(coord: Coord) -> JSONResponse:
    return JSONResponse(await coord.call("simulate_clear"))
