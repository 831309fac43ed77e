"""Document APIs: index, create, get, exists, delete, update, and ``_bulk`` (NDJSON)."""
from __future__ import annotations

import pickle
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from ...cluster.errors import IllegalArgument, IndexNotFound, SearchError
from ...cluster.engine.gcpause import gc_paused
from ...cluster.engine.doc_shape import doc_shape, shape_text
from ...cluster.search.request import check_params, source_from_params
from ...cluster.documents.get import get_options
from ...cluster.documents.update import parse_update
from ...cluster.documents.versioning import INTERNAL_VERSION, write_conditions
from ...cluster.engine.source_filter import SourceFilter
from ...cluster.values import check_format
from ..body import parse_json, read_body
from ..active_shards import before_write, requested_count
from ..deps import Coord
from ..json import JSONResponse
from ..params import (COMMON, bool_param, int_param, query_params,
                      refresh_param)
from ..stored_scripts import body_with_stored_scripts, resolve_bulk_scripts

router = APIRouter()

_WRITE_PARAMS = COMMON | {"refresh", "routing", "op_type", "if_seq_no", "if_primary_term",
                          "timeout", "wait_for_active_shards", "version", "version_type",
                          "pipeline", "require_alias", "require_data_stream"}
#: Elasticsearch's ``delete``: no ``op_type``, ingest or alias options (a delete writes no source)
_DELETE_PARAMS = COMMON | {"refresh", "routing", "if_seq_no", "if_primary_term", "timeout",
                           "wait_for_active_shards", "version", "version_type"}
_UPDATE_PARAMS = COMMON | {"refresh", "routing", "if_seq_no", "if_primary_term", "timeout",
                           "wait_for_active_shards", "retry_on_conflict", "_source",
                           "_source_includes", "_source_excludes", "lang", "require_alias",
                           "version", "version_type"}
_GET_PARAMS = COMMON | {"routing", "realtime", "refresh", "preference", "_source",
                        "_source_includes", "_source_excludes", "stored_fields", "version",
                        "version_type"}
_BULK_PARAMS = COMMON | {"refresh", "routing", "timeout", "wait_for_active_shards", "pipeline",
                         "require_alias", "_source", "_source_includes", "_source_excludes",
                         "list_executed_pipelines", "require_data_stream"}
_ACTIONS = {"index", "create", "delete", "update"}
_META_KEYS = {"_index", "_id", "routing", "_routing", "if_seq_no", "if_primary_term",
              "require_alias", "retry_on_conflict", "pipeline", "dynamic_templates", "version",
              "version_type", "op_type", "_source", "list_executed_pipelines",
              "require_data_stream"}


def _single_result(item: dict[str, Any]) -> JSONResponse:
    if "error" in item:
        err = item["error"]
        raise SearchError(err.get("reason", ""), es_type=err.get("type", "exception"),
                          status=item["status"], **{k: v for k, v in err.items()
                                                    if k not in ("type", "reason")})
    status = item.pop("status")
    if item.get("result") == "not_found":
        return JSONResponse(item, status_code=404)
    return JSONResponse(item, status_code=status)


async def _write(coord: Coord, request: Request, index: str, doc_id: str | None,
                 action: str) -> JSONResponse:
    params = query_params(request)
    check_params(params, _WRITE_PARAMS, request.url.path)
    requested_count(params)   # a bad value fails before anything
    if params.get("op_type") == "create":
        action = "create"
    elif params.get("op_type") not in (None, "index"):
        raise IllegalArgument(f"opType must be 'create' or 'index', found: [{params['op_type']}]")
    raw = await read_body(request)
    source = parse_json(raw)
    if source is None:
        raise SearchError("request body is required", es_type="action_request_validation_exception",
                          status=400)
    _refuse_ingest(params)
    item = {"action": action, "index": index, "id": doc_id, "source": source,
            "require_alias": bool_param(params, "require_alias"),
            "routing": params.get("routing"), "if_seq_no": int_param(params, "if_seq_no"),
            "if_primary_term": int_param(params, "if_primary_term"),
            "version": params.get("version"), "version_type": params.get("version_type")}
    await before_write(coord, params, [(index, not item["require_alias"])])
    resp = await coord.call("bulk", [item], refresh_param(params))
    return _single_result(resp["items"][0][action])


@router.put("/{index}/_doc/{doc_id}")
@router.post("/{index}/_doc/{doc_id}")
async def index_doc(index: str, doc_id: str, request: Request, coord: Coord) -> JSONResponse:
    return await _write(coord, request, index, doc_id, "index")


@router.post("/{index}/_doc")
async def index_doc_auto_id(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _write(coord, request, index, None, "index")


@router.put("/{index}/_create/{doc_id}")
@router.post("/{index}/_create/{doc_id}")
async def create_doc(index: str, doc_id: str, request: Request, coord: Coord) -> JSONResponse:
    return await _write(coord, request, index, doc_id, "create")


@router.post("/{index}/_update/{doc_id}")
async def update_doc(index: str, doc_id: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, _UPDATE_PARAMS, request.url.path)
    requested_count(params)   # a bad value fails before anything
    check_format(params)
    if "version" in params or "version_type" in params:
        raise SearchError(f"Validation Failed: 1: {INTERNAL_VERSION};",
                          es_type="action_request_validation_exception", status=400)
    body = await body_with_stored_scripts(request, coord, for_update=True)
    scripted = isinstance(body, dict) and "script" in body
    if not scripted and "lang" in params:
        raise IllegalArgument("[lang] is not supported by this server without a script")
    if params.get("lang", "painless") != "painless":
        raise IllegalArgument(f"script_lang not supported [{params['lang']}]")
    conditions = write_conditions({"action": "update",
                                   "if_seq_no": int_param(params, "if_seq_no"),
                                   "if_primary_term": int_param(params, "if_primary_term")})
    wants_source = any(k in params for k in ("_source", "_source_includes", "_source_excludes"))
    options = {"routing": params.get("routing"), "if_seq_no": conditions.get("if_seq_no"),
               "if_primary_term": conditions.get("if_primary_term"),
               "retry_on_conflict": int_param(params, "retry_on_conflict") or 0,
               "source": source_from_params(params, SourceFilter()) if wants_source else None,
               "refresh": refresh_param(params),
               "require_alias": bool_param(params, "require_alias")}
    await before_write(coord, params, [(index, not options["require_alias"])])
    if scripted:   # compiled and run where the document is read: the coordinator
        return _single_result(await coord.call("update_script", index, doc_id, body, options))
    req = parse_update(index, doc_id, body, **options)
    return _single_result(await coord.call("update", req))


async def _get(coord: Coord, request: Request, index: str, doc_id: str) -> dict[str, Any]:
    """The document with the URL's options (``documents/get.py``); refresh first if asked."""
    params = query_params(request)
    check_params(params, _GET_PARAMS, request.url.path)
    if "realtime" in params and not bool_param(params, "realtime", True):
        raise IllegalArgument("[realtime=false] is not supported by this server: every get "
                              "reads the latest acknowledged version")
    options = get_options(params)
    if bool_param(params, "refresh"):
        await coord.call("refresh", index)
    return await coord.call("get_doc", index, doc_id, None, options)


@router.get("/{index}/_doc/{doc_id}")
async def get_doc(index: str, doc_id: str, request: Request, coord: Coord) -> JSONResponse:
    out = await _get(coord, request, index, doc_id)
    return JSONResponse(out, status_code=200 if out.get("found") else 404)


@router.head("/{index}/_doc/{doc_id}")
async def doc_exists(index: str, doc_id: str, request: Request, coord: Coord) -> Response:
    try:
        out = await _get(coord, request, index, doc_id)
    except IndexNotFound:
        return Response(status_code=404)
    return Response(status_code=200 if out.get("found") else 404)


@router.get("/{index}/_source/{doc_id}")
async def get_source(index: str, doc_id: str, request: Request, coord: Coord) -> JSONResponse:
    out = await _get(coord, request, index, doc_id)
    if not out.get("found"):
        raise SearchError(f"Document not found [{index}]/[{doc_id}]",
                          es_type="resource_not_found_exception", status=404)
    return JSONResponse(out.get("_source", {}))


@router.delete("/{index}/_doc/{doc_id}")
async def delete_doc(index: str, doc_id: str, request: Request, coord: Coord) -> JSONResponse:
    params = query_params(request)
    check_params(params, _DELETE_PARAMS, request.url.path)
    requested_count(params)   # a bad value fails before anything
    item = {"action": "delete", "index": index, "id": doc_id, "routing": params.get("routing"),
            "if_seq_no": int_param(params, "if_seq_no"),
            "if_primary_term": int_param(params, "if_primary_term"),
            "version": params.get("version"), "version_type": params.get("version_type")}
    await before_write(coord, params, [(index, False)])
    resp = await coord.call("bulk", [item], refresh_param(params))
    return _single_result(resp["items"][0]["delete"])


def parse_bulk(raw: bytes, default_index: str | None,
               default_routing: str | None = None) -> list[dict[str, Any]]:
    """NDJSON -> bulk items. A malformed *action* line fails the request (nothing applied);
    a malformed *document* line fails only its item. Documents to index stay bytes (``raw``)
    with their ``shape``; only updates carry their parsed body (``source``)."""
    lines = raw.split(b"\n")
    items: list[dict[str, Any]] = []
    shapes: dict[Any, Any] = {}
    i = 0
    n = len(lines)
    line_no = 0
    while i < n:
        line = lines[i].strip()
        i += 1
        line_no += 1
        if not line:
            continue
        item = _action_item(line, line_no, default_index, default_routing)
        action = item["action"]
        if action != "delete":
            while i < n and not lines[i].strip():
                i += 1
            if i >= n:
                raise IllegalArgument("The bulk request must be terminated by a newline [\\n]"
                                      if action else "")
            doc_line = lines[i].strip()
            i += 1
            line_no += 1
            _add_document(item, doc_line, shapes)
        items.append(item)
    return items


def _action_item(line: bytes, line_no: int, default_index: str | None,
                 default_routing: str | None) -> dict[str, Any]:
    """The item of one action line (``{"index": {...}}``); a malformed one fails the request."""
    try:
        action_obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise IllegalArgument(f"Malformed action/metadata line [{line_no}], expected "
                              "START_OBJECT or END_OBJECT but found [VALUE_STRING]") from None
    if not isinstance(action_obj, dict) or len(action_obj) != 1:
        raise IllegalArgument(f"Malformed action/metadata line [{line_no}], expected "
                              "START_OBJECT but found [" +
                              ("START_ARRAY" if isinstance(action_obj, list) else "VALUE") + "]")
    action, meta = next(iter(action_obj.items()))
    if action not in _ACTIONS:
        raise IllegalArgument(f"Malformed action/metadata line [{line_no}], expected field "
                              f"[create], [delete], [index] or [update] but found [{action}]")
    if not isinstance(meta, dict):
        raise IllegalArgument(f"Malformed action/metadata line [{line_no}], expected "
                              "START_OBJECT but found [VALUE]")
    for key in meta:
        if key == "_type" and meta[key] == "_doc":   # the one type there is (OpenSearch's clients
            continue                                 # still send it); any other is unknown
        if key not in _META_KEYS:
            raise IllegalArgument(f"Action/metadata line [{line_no}] contains an unknown "
                                  f"parameter [{key}]")
        if isinstance(meta[key], list):
            raise IllegalArgument(f"Malformed action/metadata line [{line_no}], expected a "
                                  f"simple value for field [{key}] but found [START_ARRAY]")
    if meta.get("op_type") not in (None, "index", "create") or \
            meta.get("op_type") == "create" and action not in ("index", "create"):
        raise IllegalArgument(f"Action/metadata line [{line_no}] has an [op_type] that does "
                              f"not fit [{action}]: [{meta.get('op_type')}]")
    if meta.get("op_type") == "create":
        action = "create"
    index = meta.get("_index", default_index)
    if isinstance(index, (int, float)) and not isinstance(index, bool):
        index = str(index)   # Elasticsearch reads a number's text as the name
    elif index is not None and not isinstance(index, str):
        raise IllegalArgument(f"Malformed action/metadata line [{line_no}], [_index] must be "
                              "a string")
    doc_id = meta.get("_id")
    item: dict[str, Any] = {"action": action, "index": index,
                            "id": None if doc_id is None else str(doc_id)}
    # the rarer keys only when set: thousands of items cross to the coordinator pickled
    routing = meta.get("routing", meta.get("_routing", default_routing))
    if routing is not None:
        item["routing"] = routing
    for key in _ITEM_OPTIONS:
        if key in meta:
            item[key] = meta[key]
    if "require_alias" in meta:
        item["require_alias"] = str(meta["require_alias"]).lower() == "true"
    unbuilt = _unbuilt_ingest(meta)
    if unbuilt is not None:
        item["error"] = {"type": "illegal_argument_exception", "reason": unbuilt}
    if "_source" in meta:
        item["_source_meta"] = meta["_source"]
    if index is None:
        item["error"] = {"type": "action_request_validation_exception",
                         "reason": "Validation Failed: 1: index is missing;"}
    return item


_ITEM_OPTIONS = ("if_seq_no", "if_primary_term", "version", "version_type", "retry_on_conflict")
_INGEST_OPTIONS = frozenset({"pipeline", "require_data_stream", "list_executed_pipelines",
                             "dynamic_templates"})


def _unbuilt_ingest(options: dict[str, Any]) -> str | None:
    """What a write asks of ingest pipelines, data streams or dynamic templates (none exist
    here): Elasticsearch's answer for a missing pipeline, else a refusal naming the option."""
    if options.keys().isdisjoint(_INGEST_OPTIONS):
        return None
    pipeline = options.get("pipeline")
    if pipeline not in (None, "", "_none"):
        return f"pipeline with id [{pipeline}] does not exist"
    for key in ("require_data_stream", "list_executed_pipelines"):
        if str(options.get(key, "false")).lower() not in ("false", ""):
            return f"[{key}] is not supported by this server: it has no data streams or pipelines"
    if options.get("dynamic_templates"):
        return "[dynamic_templates] is not supported by this server: mappings have no dynamic templates"
    return None


def _refuse_ingest(params: dict[str, str]) -> None:
    reason = _unbuilt_ingest(params)
    if reason is not None:
        raise IllegalArgument(reason)


def _add_document(item: dict[str, Any], doc_line: bytes, shapes: dict[Any, Any]) -> None:
    """The document line of ``item``: a malformed one fails only this item."""
    try:
        doc = orjson.loads(doc_line)
    except orjson.JSONDecodeError as e:
        item["error"] = {"type": "document_parsing_exception",
                         "reason": f"[1:{(e.pos or 0) + 1}] failed to parse: {e.msg}"}
        return
    if not isinstance(doc, dict):
        item["error"] = {"type": "document_parsing_exception",
                         "reason": "[1:1] failed to parse: root of a document must "
                                   "be an object"}
    elif item["action"] == "update":
        item["source"] = doc
    else:   # documents go on as their bytes, with their shape (engine/doc_shape.py)
        item["raw"] = doc_line
        shape = doc_shape(doc)
        text = shapes.get(shape)
        if text is None:   # one string per shape: the item stays untracked by the collector
            text = shapes[shape] = None if shape is None else shape_text(shape)
        item["shape"] = text


async def _bulk(request: Request, coord: Coord, index: str | None) -> JSONResponse:
    params = query_params(request)
    check_params(params, _BULK_PARAMS, request.url.path)
    requested_count(params)   # a bad value fails before anything
    _refuse_ingest(params)
    raw = await read_body(request)
    if not raw.strip():
        raise SearchError("Validation Failed: 1: no requests added;",
                          es_type="action_request_validation_exception", status=400)
    with gc_paused():   # thousands of small objects that all live until the response
        items = parse_bulk(raw, index, params.get("routing"))
    await resolve_bulk_scripts(coord, raw, items)
    if any(k in params for k in ("_source", "_source_includes", "_source_excludes")):
        default = source_from_params(params, SourceFilter())   # for updates that do not say
        for item in items:
            if item["action"] == "update" and "_source_meta" not in item:
                item["_source_default"] = default
    if bool_param(params, "require_alias"):   # the default of items that do not say
        for item in items:
            item.setdefault("require_alias", True)
    good = [it for it in items if "error" not in it]
    await before_write(coord, params, sorted({
        (it["index"], it["action"] != "delete" and not it.get("require_alias"))
        for it in good if it.get("index")}))
    # one pickled blob: the coordinator reads it with its collector paused (thousands of dicts)
    resp = await coord.call("bulk", pickle.dumps(good, protocol=5), refresh_param(params),
                            True) if good else \
        {"took": 0, "errors": False, "items_json": b"[]"}
    if len(good) == len(items):   # the coordinator's items as they are: no copy, no re-encoding
        return JSONResponse({"took": resp["took"], "errors": resp["errors"],
                             "items": orjson.Fragment(resp["items_json"])})
    results = iter(orjson.loads(resp["items_json"]))
    out_items = []
    errors = resp["errors"]
    for it in items:
        if "error" in it:
            errors = True
            out_items.append({it["action"]: {"_index": it["index"], "_id": it["id"],
                                             "status": 400, "error": it["error"]}})
        else:
            out_items.append(next(results))
    return JSONResponse({"took": resp["took"], "errors": errors, "items": out_items})


@router.post("/_bulk")
@router.put("/_bulk")
async def bulk(request: Request, coord: Coord) -> JSONResponse:
    return await _bulk(request, coord, None)


@router.post("/{index}/_bulk")
@router.put("/{index}/_bulk")
async def bulk_index(index: str, request: Request, coord: Coord) -> JSONResponse:
    return await _bulk(request, coord, index)
