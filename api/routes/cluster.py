"""``/``, ``/_cluster/health``, ``/_cat/indices``, ``/_cat/shards``, ``/_cat/segments``."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, Response

from ..deps import Coord
from ..json import JSONResponse
from ..params import query_params

router = APIRouter()


@router.get("/")
async def root(coord: Coord) -> JSONResponse:
    return JSONResponse(await coord.call("info"))


@router.head("/")
async def root_head() -> Response:
    return Response(status_code=200)


@router.get("/_cluster/health")
@router.get("/_cluster/health/{index}")
async def health(coord: Coord, index: str | None = None) -> JSONResponse:
    if index is not None:
        await coord.call("resolve", index, allow_no_indices=False)
    return JSONResponse(await coord.call("health"))


def _cat(rows: list[dict], params: dict[str, str], default_cols: list[str]) -> Response:
    if params.get("format") == "json":
        cols = params["h"].split(",") if "h" in params else None
        if cols:
            rows = [{c: r.get(c) for c in cols} for r in rows]
        return JSONResponse(rows)
    cols = params["h"].split(",") if "h" in params else default_cols
    table = [[("" if r.get(c) is None else str(r.get(c))) for c in cols] for r in rows]
    verbose = params.get("v", "false") in ("", "true")
    if verbose:
        table.insert(0, cols)
    widths = [max([len(row[i]) for row in table] + [0]) for i in range(len(cols))]
    lines = [" ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in table]
    return PlainTextResponse("\n".join(lines) + ("\n" if lines else ""))


@router.get("/_cat/indices")
@router.get("/_cat/indices/{index}")
async def cat_indices(request: Request, coord: Coord, index: str | None = None) -> Response:
    rows = await coord.call("cat_indices", index)
    return _cat(rows, query_params(request), ["health", "status", "index", "uuid", "pri", "rep",
                                              "docs.count", "docs.deleted", "store.size",
                                              "pri.store.size"])


def _failures(f: dict[str, Any] | None) -> str | None:
    """A copy's failed flushes, syncs and writes (our column), e.g. ``flush=2,sync=0,write=1``."""
    if not f:
        return None
    return ",".join(f"{k}={f.get(k, 0)}" for k in ("flush", "sync", "write"))


@router.get("/_cat/shards")
@router.get("/_cat/shards/{index}")
async def cat_shards(request: Request, coord: Coord, index: str | None = None) -> Response:
    infos = await coord.call("shard_infos")
    # one row per copy (p: acting primary, r: replica); ``pid`` and ``copy`` are ours
    rows = [{"index": i["index"], "shard": str(i["shard"]), "prirep": i.get("prirep", "p"),
             "state": i["state"], "docs": i.get("docs"),
             "node": i.get("node_name") or i.get("node_id"), "ip": i.get("node_ip"),
             "id": i.get("node_id"), "unassigned.reason": i.get("reason"),
             "pid": i.get("pid"), "copy": i.get("copy"),
             "storage.failures": _failures(i.get("storage_failures"))} for i in infos
            if index is None or i["index"] == index]
    return _cat(rows, query_params(request), ["index", "shard", "prirep", "state", "docs",
                                              "node"])


_SEGMENT_COLS = ["index", "shard", "prirep", "ip", "segment", "generation", "docs.count",
                 "docs.deleted", "size", "size.memory", "committed", "searchable", "version",
                 "compound"]


@router.get("/_cat/segments")
@router.get("/_cat/segments/{index}")
async def cat_segments(request: Request, coord: Coord, index: str | None = None) -> Response:
    if index is not None:
        await coord.call("resolve", index, allow_no_indices=False)
    return _cat(await coord.call("cat_segments", index), query_params(request), _SEGMENT_COLS)
