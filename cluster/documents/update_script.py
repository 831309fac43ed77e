"""``_update`` with a ``script``: read the document, run the script over ``ctx``, write the
result only if nobody wrote the document meanwhile (``if_seq_no``), else read and try again
(``retry_on_conflict`` times), as Elasticsearch's ``UpdateHelper`` does.

:func:`apply_update_script` is the pure part (what the script asks for); :func:`update_with_script`
the read-run-write loop over the coordinator's get and bulk. ``ctx`` holds ``_source``, ``op``,
``_id``, ``_index``, ``_version``, ``_routing``, ``_now``; ``ctx.op`` may become ``noop`` or
``none`` (nothing written) or ``delete``; an unknown op does nothing (Elasticsearch logs it and
does nothing too).
"""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from ..engine.script import UPDATE_CONTEXT, Compiled, compile_script, json_value
from ..errors import IllegalArgument, SearchError

MAX_RETRY_ON_CONFLICT = 100
_UPDATE_KEYS = {"script", "upsert", "scripted_upsert", "doc", "doc_as_upsert", "detect_noop",
                "_source", "lang", "params"}


def apply_update_script(source: dict[str, Any] | None, script: Compiled,
                        meta: dict[str, Any], creating: bool = False
                        ) -> tuple[str, dict[str, Any] | None]:
    """``(op, new_source)`` after running ``script`` over ``ctx`` built from ``source`` and
    ``meta`` (``_id``, ``_index``, ``_version``, ``_routing``). ``op`` is ``index`` (or
    ``create`` for a scripted upsert), ``delete`` or ``noop``."""
    ctx: dict[str, Any] = {"_source": source if source is not None else {},
                           "op": "create" if creating else "index",
                           "_now": int(time.time() * 1000), **meta}
    script.run({"ctx": ctx})
    op = ctx.get("op")
    new_source = json_value(script.source, ctx.get("_source"))
    if op in ("index", "create") and op == ("create" if creating else "index"):
        if not isinstance(new_source, dict):
            raise IllegalArgument("failed to execute script",
                                  caused_by={"type": "illegal_argument_exception",
                                             "reason": "ctx._source must be a map"})
        return op, new_source
    if op == "delete" and not creating:
        return "delete", None
    return "noop", None


def compile_update_script(body: dict[str, Any]) -> Compiled:
    """The body's ``script`` compiled; a script error is Elasticsearch's
    ``failed to execute script`` wrapping the ``script_exception``."""
    unknown = sorted(set(body) - _UPDATE_KEYS)
    if unknown:
        raise SearchError(f"[UpdateRequest] unknown field [{unknown[0]}]",
                          es_type="x_content_parse_exception", status=400)
    if "doc" in body:
        raise SearchError("Validation Failed: 1: can't provide both script and doc;",
                          es_type="action_request_validation_exception", status=400)
    return compile_script(body["script"], UPDATE_CONTEXT)


def _run(script: Compiled, source: dict[str, Any] | None, meta: dict[str, Any],
         creating: bool) -> tuple[str, dict[str, Any] | None]:
    try:
        return apply_update_script(source, script, meta, creating)
    except SearchError as e:
        if e.es_type != "script_exception":
            raise
        raise IllegalArgument("failed to execute script", caused_by=e.to_cause()) from None


async def update_with_script(get: Callable[..., Awaitable[dict[str, Any]]],
                             write: Callable[..., Awaitable[dict[str, Any]]],
                             index: str, doc_id: str, body: dict[str, Any],
                             routing: str | None, refresh: bool,
                             retry_on_conflict: int = 0) -> dict[str, Any]:
    """One scripted update: the bulk item result (``status`` included) Elasticsearch would
    give. ``get(index, id, routing)`` and ``write(items, refresh)`` are the coordinator's."""
    script = compile_update_script(body)
    if not 0 <= retry_on_conflict <= MAX_RETRY_ON_CONFLICT:
        raise IllegalArgument(f"[retry_on_conflict] must be between 0 and "
                              f"{MAX_RETRY_ON_CONFLICT}")
    for attempt in range(retry_on_conflict + 1):
        result = await _attempt(get, write, index, doc_id, body, script, routing, refresh)
        if result.get("status") != 409 or attempt == retry_on_conflict:
            return result
    raise AssertionError("unreachable")


async def _attempt(get: Callable[..., Awaitable[dict[str, Any]]],
                   write: Callable[..., Awaitable[dict[str, Any]]], index: str, doc_id: str,
                   body: dict[str, Any], script: Compiled, routing: str | None,
                   refresh: bool) -> dict[str, Any]:
    doc = await get(index, doc_id, routing)
    meta = {"_id": doc_id, "_index": index, "_routing": routing}
    item: dict[str, Any] = {"index": index, "id": doc_id, "routing": routing}
    if not doc.get("found"):
        upsert = body.get("upsert")
        if not isinstance(upsert, dict):
            return {"_index": index, "_id": doc_id, "status": 404, "error": {
                "type": "document_missing_exception", "reason": f"[{doc_id}]: document missing",
                "index": index, "shard": "0", "index_uuid": "_na_"}}
        op, source = "create", upsert
        if body.get("scripted_upsert"):
            op, source = _run(script, upsert, {**meta, "_version": 0}, creating=True)
        if op == "noop":
            return _noop(index, doc_id, 0, -2)
        item.update(action="create", source=source)
    else:
        if "_source" not in doc:   # the mapping's _source is disabled
            return _source_missing(index, doc_id)
        current = doc["_source"]
        current = orjson.loads(current) if isinstance(current, (bytes, str)) else current
        op, source = _run(script, current, {**meta, "_version": doc["_version"]}, False)
        if op == "noop":
            return _noop(index, doc_id, doc["_version"], doc["_seq_no"])
        item.update(action="delete" if op == "delete" else "index", source=source,
                    if_seq_no=doc["_seq_no"], if_primary_term=doc.get("_primary_term", 1))
    resp = await write([item], refresh)
    out = dict(next(iter(resp["items"][0].values())))
    if out.get("result") in ("created", "updated", "deleted") and op != "create":
        out["result"] = "deleted" if op == "delete" else "updated"
    return out


def _noop(index: str, doc_id: str, version: int, seq_no: int) -> dict[str, Any]:
    return {"_index": index, "_id": doc_id, "_version": version, "result": "noop",
            "_shards": {"total": 0, "successful": 0, "failed": 0}, "_seq_no": seq_no,
            "_primary_term": 1, "status": 200}


def _source_missing(index: str, doc_id: str) -> dict[str, Any]:
    """Elasticsearch's answer to an update of a document whose ``_source`` is not kept."""
    return {"_index": index, "_id": doc_id, "status": 400, "error": {
        "type": "document_source_missing_exception",
        "reason": f"[{doc_id}]: document source missing", "index": index, "shard": "0",
        "index_uuid": "_na_"}}
