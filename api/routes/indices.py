"""Index management: create, get, exists, delete, mappings, settings, refresh, forcemerge, segments."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from ...cluster.engine.gcpause import release_free_memory
from ...cluster.errors import IllegalArgument, SearchError
from ...cluster.values import flatten
from ..body import json_body
from ..active_shards import needs_waiting, requested_count, wait_for_copies
from ..deps import Coord
from ..json import JSONResponse
from ..params import (COMMON, admin_params, bool_param, index_options,
                      query_params)
from ...cluster.indices.field_caps import parse_fields, parse_filters
from ...cluster.search.request import check_params

router = APIRouter()

_CREATE_PARAMS = COMMON | {"wait_for_active_shards", "timeout", "master_timeout",
                           "include_type_name"}
_RESOLVE = {"ignore_unavailable", "allow_no_indices", "expand_wildcards"}
_GET_INDEX_PARAMS = COMMON | _RESOLVE | {"master_timeout", "local", "include_defaults",
                                         "flat_settings", "features"}
_DELETE_INDEX_PARAMS = COMMON | _RESOLVE | {"timeout", "master_timeout"}
_GET_PARAMS = COMMON | {"master_timeout", "local"}     # _mapping, _settings
_ACK_PARAMS = COMMON | {"timeout", "master_timeout"}   # PUT _mapping, PUT _settings
_GET_MAPPING_PARAMS = _GET_PARAMS | _RESOLVE
_GET_ALL_SETTINGS_PARAMS = _GET_PARAMS | {"flat_settings", "include_defaults"}
_GET_SETTINGS_PARAMS = _GET_ALL_SETTINGS_PARAMS | _RESOLVE
_FEATURES = ("aliases", "mappings", "settings")


async def _targets(coord: Coord, index: str, params: dict[str, str]) -> str | None:
    """The concrete indices ``index`` names under the request's index options, comma-joined,
    or None when the options let it match none (the answer is then empty)."""
    names = await coord.call("resolve", index, **index_options(params, allow_no_indices=False))
    return ",".join(names) if names else None


@router.post("/_refresh")
@router.get("/_refresh")
async def refresh_all(request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, COMMON)
    out = await coord.call("refresh", None)
    release_free_memory()   # a refresh usually ends a bulk load: its bodies' freed heap
    return JSONResponse(out)


@router.post("/{index}/_refresh")
@router.get("/{index}/_refresh")
async def refresh(index: str, request: Request, coord: Coord) -> JSONResponse:
    params = admin_params(request, COMMON | _RESOLVE)
    names = await coord.call("resolve", index, **index_options(params))
    if not names:
        return JSONResponse({"_shards": {"total": 0, "successful": 0, "failed": 0}})
    out = await coord.call("refresh", ",".join(names))
    release_free_memory()   # a refresh usually ends a bulk load: its bodies' freed heap
    return JSONResponse(out)


@router.get("/_mapping")
async def get_all_mappings(request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _GET_PARAMS)
    return JSONResponse(await coord.call("get_mapping", None))


@router.get("/{index}/_mapping")
async def get_mapping(index: str, request: Request, coord: Coord) -> JSONResponse:
    targets = await _targets(coord, index, admin_params(request, _GET_MAPPING_PARAMS))
    return JSONResponse({} if targets is None else await coord.call("get_mapping", targets))


@router.get("/_mapping/field/{fields}")
async def get_all_field_mappings(fields: str, request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), COMMON, f"/_mapping/field/{fields}")
    return JSONResponse(await coord.call("get_field_mapping", None, fields.split(",")))


@router.get("/{index}/_mapping/field/{fields}")
async def get_field_mappings(index: str, fields: str, request: Request,
                             coord: Coord) -> JSONResponse:
    """The mapping of single fields (``cluster/indices/field_mapping.py``); parameters such as
    ``include_defaults`` are refused as unrecognized."""
    check_params(query_params(request), COMMON, f"/{index}/_mapping/field/{fields}")
    await coord.call("resolve", index, allow_no_indices=False)
    return JSONResponse(await coord.call("get_field_mapping", index, fields.split(",")))


@router.put("/{index}/_mapping")
@router.post("/{index}/_mapping")
async def put_mapping(index: str, request: Request, coord: Coord) -> JSONResponse:
    """``write_index_only=true``: an alias named in ``index`` stands for its write index only
    (Elasticsearch's option for rolled-over indices); a concrete index stays itself."""
    params = admin_params(request, _ACK_PARAMS | {"write_index_only"})
    body = await json_body(request)
    if not isinstance(body, dict):
        raise IllegalArgument("request body is required", es_type="action_request_validation_exception")
    if bool_param(params, "write_index_only"):
        index = ",".join([await _write_index_of(coord, part) for part in index.split(",")])
    return JSONResponse(await coord.call("put_mapping", index, body))


async def _write_index_of(coord: Coord, part: str) -> str:
    """The write index of an alias ``part`` (a pattern or an index stays as it is); an alias
    without one is refused, as Elasticsearch's ``concreteWriteIndex`` refuses it."""
    if "*" in part:
        return part
    return str(await coord.call("write_index_name", part))


@router.get("/_settings")
async def get_all_settings(request: Request, coord: Coord) -> JSONResponse:
    params = admin_params(request, _GET_ALL_SETTINGS_PARAMS)
    out = await coord.call("get_settings", None, bool_param(params, "include_defaults"))
    return JSONResponse(_flat_if_asked(out, params))


@router.get("/{index}/_settings")
async def get_settings(index: str, request: Request, coord: Coord) -> JSONResponse:
    params = admin_params(request, _GET_SETTINGS_PARAMS)
    targets = await _targets(coord, index, params)
    if targets is None:
        return JSONResponse({})
    out = await coord.call("get_settings", targets, bool_param(params, "include_defaults"))
    return JSONResponse(_flat_if_asked(out, params))


@router.put("/_settings")
async def put_all_settings(request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _ACK_PARAMS)
    body = await json_body(request)
    return JSONResponse(await coord.call("put_settings", None, body or {}))


@router.put("/{index}/_settings")
async def put_settings(index: str, request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, _ACK_PARAMS)
    body = await json_body(request)
    if not isinstance(body, dict):
        raise IllegalArgument("request body is required")
    return JSONResponse(await coord.call("put_settings", index, body))


_FIELD_CAPS_PARAMS = COMMON | {"fields", "include_unmapped", "ignore_unavailable",
                               "allow_no_indices", "expand_wildcards", "types", "filters",
                               "include_empty_fields"}
_FIELD_CAPS_BODY = {"fields", "index_filter", "runtime_mappings"}


@router.get("/_field_caps")
@router.post("/_field_caps")
async def field_caps_all(request: Request, coord: Coord) -> JSONResponse:
    return JSONResponse(await _field_caps(None, request, coord))


@router.get("/{index}/_field_caps")
@router.post("/{index}/_field_caps")
async def field_caps(index: str, request: Request, coord: Coord) -> JSONResponse:
    return JSONResponse(await _field_caps(index, request, coord))


async def _field_caps(index: str | None, request: Request, coord: Coord) -> dict:
    """``fields`` from the URL or the body (the URL wins); what is not served is refused."""
    params = query_params(request)
    check_params(params, _FIELD_CAPS_PARAMS, f"/{index}/_field_caps" if index else "/_field_caps")
    body = await json_body(request) or {}
    if not isinstance(body, dict):
        raise IllegalArgument("request body must be an object", es_type="parse_exception")
    for key in body:
        if key not in _FIELD_CAPS_BODY:
            raise IllegalArgument(f"[field_caps_request] unknown field [{key}]",
                                  es_type="x_content_parse_exception")
    for key in ("index_filter", "runtime_mappings"):
        if key in body:
            raise IllegalArgument(f"[{key}] is not supported by _field_caps here",
                                  es_type="illegal_argument_exception")
    if not bool_param(params, "include_empty_fields", True):
        raise IllegalArgument("[include_empty_fields=false] is not supported by _field_caps here")
    wildcards = {w.strip() for w in params.get("expand_wildcards", "open").split(",")}
    if not wildcards & {"open", "all"}:
        raise IllegalArgument(f"[expand_wildcards={params['expand_wildcards']}] is not "
                              "supported by _field_caps here (only open indices exist)")
    fields = parse_fields(params["fields"] if "fields" in params else body.get("fields"))
    types = [t.strip() for t in params.get("types", "").split(",") if t.strip()]
    return await coord.call(
        "field_caps", index, fields,
        include_unmapped=bool_param(params, "include_unmapped"),
        ignore_unavailable=bool_param(params, "ignore_unavailable"),
        allow_no_indices=bool_param(params, "allow_no_indices", True),
        types=types or None, filters=parse_filters(params.get("filters")))


@router.get("/_analyze")
@router.post("/_analyze")
async def analyze_text(request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), COMMON, "/_analyze")
    return JSONResponse(await coord.call("analyze", None, await json_body(request)))


@router.get("/{index}/_analyze")
@router.post("/{index}/_analyze")
async def analyze_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    check_params(query_params(request), COMMON, f"/{index}/_analyze")
    return JSONResponse(await coord.call("analyze", index, await json_body(request)))


@router.get("/_segments")
async def segments_all(request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, COMMON)
    return JSONResponse(await coord.call("segments", None))


@router.put("/{index}")
async def create_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    """Create the index, then wait (bounded by ``timeout``) for ``wait_for_active_shards``
    copies of each shard: when they do not start in time the index stays and the answer says
    ``shards_acknowledged: false``, as Elasticsearch's."""
    params = admin_params(request, _CREATE_PARAMS)
    count = requested_count(params)
    body = await json_body(request)
    out = await coord.call("create_index", index, body, count)
    if needs_waiting(count):
        assert count is not None
        short = await wait_for_copies(coord, [out["index"]], count,
                                      params.get("timeout", "30s"))
        out["shards_acknowledged"] = short is None
    return JSONResponse(out)


@router.get("/{index}")
async def get_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    """The named indices; ``features`` keeps some of their parts, ``flat_settings`` flattens
    their settings; ``include_defaults=true`` adds the defaults each index runs with."""
    params = admin_params(request, _GET_INDEX_PARAMS)
    features = _features(params.get("features"))
    out = await coord.call("get_index", index,
                           **index_options(params, allow_no_indices=False),
                           include_defaults=bool_param(params, "include_defaults"))
    for body in out.values():
        for feature in _FEATURES:
            if feature not in features:
                body.pop(feature, None)
        if "settings" not in features:
            body.pop("defaults", None)
    return JSONResponse(_flat_if_asked(out, params))


def _features(value: str | None) -> set[str]:
    """``features=mappings,settings``: the parts of each index to show (all by default)."""
    if value is None:
        return set(_FEATURES)
    names = {v.strip() for v in value.split(",") if v.strip()}
    for name in sorted(names):
        if name not in _FEATURES:
            raise IllegalArgument(f"No feature for name [{name}]")
    return names


def _flat_if_asked(out: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
    """``flat_settings=true``: each index's settings as dotted keys (``index.number_of_shards``)."""
    if bool_param(params, "flat_settings"):
        for body in out.values():
            for key in ("settings", "defaults"):
                if key in body:
                    body[key] = flatten(body[key])
    return out


@router.head("/{index}")
async def index_exists(index: str, request: Request, coord: Coord) -> Response:
    """200 when ``index`` names at least one index under the request's index options."""
    params = admin_params(request, COMMON | _RESOLVE | {"local", "include_defaults",
                                                         "flat_settings"})
    bool_param(params, "include_defaults")   # what a GET would show: no effect on existence
    bool_param(params, "flat_settings")
    options = index_options(params, allow_no_indices=False)
    try:
        exists = bool(await coord.call("resolve", index, **options))
    except SearchError as e:
        if e.status != 404:
            raise
        exists = False
    return Response(status_code=200 if exists else 404)


@router.delete("/{index}")
async def delete_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    params = admin_params(request, _DELETE_INDEX_PARAMS)
    # Elasticsearch 8 (action.destructive_requires_name defaults to true there): a delete
    # names its indices, so any pattern or _all is refused with its text; the index options
    # then keep DeleteIndexRequest's defaults (allow_no_indices=true: names all skipped by
    # ignore_unavailable are acknowledged; a missing name without it is a 404)
    if any(part == "_all" or "*" in part for part in index.split(",")):
        raise IllegalArgument("Wildcard expressions or all indices are not allowed")
    return JSONResponse(await coord.call("delete_index", index, **index_options(params)))


# --- merges ------------------------------------------------------------------------------------

_MERGE_PARAMS = COMMON | {"max_num_segments", "only_expunge_deletes", "flush",
                          "ignore_unavailable", "allow_no_indices", "expand_wildcards"}


async def _force_merge(index: str | None, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, _MERGE_PARAMS, "/{index}/_forcemerge")
    raw = params.get("max_num_segments")
    try:
        max_num = int(raw) if raw is not None else None
    except ValueError:
        raise IllegalArgument(f"Failed to parse int parameter [max_num_segments] with value "
                              f"[{raw}]") from None
    if index is not None and not bool_param(params, "ignore_unavailable"):
        await coord.call("resolve", index, allow_no_indices=False)
    return JSONResponse(await coord.call(
        "force_merge", index, max_num, bool_param(params, "only_expunge_deletes"),
        bool_param(params, "flush", True)))


@router.post("/_forcemerge")
async def force_merge_all(request: Request, coord: Coord) -> JSONResponse:
    return await _force_merge(None, request, coord)


@router.post("/{index}/_forcemerge")
async def force_merge(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _force_merge(index, request, coord)


@router.get("/{index}/_segments")
async def segments(index: str, request: Request, coord: Coord) -> JSONResponse:
    admin_params(request, COMMON)
    await coord.call("resolve", index, allow_no_indices=False)
    return JSONResponse(await coord.call("segments", index))
