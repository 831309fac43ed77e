"""``POST /{index}/_update/{id}`` and the ``update`` items of ``_bulk``: a partial update.

The path of one update, as Elasticsearch's ``UpdateHelper`` runs it on the primary:

1. **read** the current document (real-time get) with its ``_seq_no``;
2. **plan** the new source (:func:`plan_update`, pure): ``doc`` deep-merged into it, or
   ``upsert`` / ``doc`` (``doc_as_upsert``) when it is missing; ``noop`` when the merge changes
   nothing and ``detect_noop`` (default true) is on. A ``script`` instead runs over ``ctx``
   (``update_script.py``) and may also ask for ``delete``;
3. **write** it conditionally: ``index`` with ``if_seq_no`` = the seq read in 1 (``create``
   when the document was missing), so a write that came in between makes this one a 409;
4. **retry** from 1 on that 409, at most ``retry_on_conflict`` times (default 0). A caller's own
   ``if_seq_no`` is checked against the read in 1 and never retried (Elasticsearch refuses
   ``retry_on_conflict`` with it).

The response is Elasticsearch's, with a ``get`` section when ``_source`` was asked for.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ..engine.script import parse_script_object
from ..engine.shard_calls import ShardCalls
from ..engine.shard_messages import FetchedDoc
from ..engine.source_filter import SourceFilter, filter_source, parse_source
from ..engine.writes import deep_merge
from ..errors import (ActionRequestValidation, IllegalArgument, IndexNotFound, SearchError,
                      XContentParseError)
from ..indices.aliases import aliased
from ..indices.routing import shard_for
from .bulk import WriteTarget, bulk
from .update_script import noop_result, plan_scripted

#: Keys of an update body (Elasticsearch's ``UpdateRequest`` parser).
BODY_KEYS = {"doc", "upsert", "doc_as_upsert", "detect_noop", "_source", "script",
             "scripted_upsert"}
MAX_RETRIES = 100


@dataclass
class UpdateRequest:
    """One update, checked: what to merge or insert, its conditions and what to return."""

    index: str
    id: str
    doc: dict[str, Any] | None = None
    upsert: dict[str, Any] | None = None
    doc_as_upsert: bool = False
    detect_noop: bool = True
    routing: str | None = None
    if_seq_no: int | None = None
    if_primary_term: int | None = None
    retry_on_conflict: int = 0
    source: SourceFilter | None = None     # None: no ``get`` section in the response
    refresh: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    require_alias: bool = False            # ``index`` must be an alias (its write index)
    script: Any = None                     # the script object, compiled when it runs
    scripted_upsert: bool = False


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key, default)
    if not isinstance(value, bool):
        raise XContentParseError(f"[UpdateRequest] failed to parse field [{key}]")
    return value


def parse_update(index: str, doc_id: str, body: Any, *, routing: str | None = None,
                 if_seq_no: int | None = None, if_primary_term: int | None = None,
                 retry_on_conflict: int = 0, source: SourceFilter | None = None,
                 refresh: bool = False, require_alias: bool = False) -> UpdateRequest:
    """An :class:`UpdateRequest` from a body, with Elasticsearch's refusals and texts."""
    if not isinstance(body, dict):
        raise ActionRequestValidation("Validation Failed: 1: script or doc is missing;")
    for key in body:
        if key not in BODY_KEYS:
            raise XContentParseError(f"[UpdateRequest] unknown field [{key}]")
    doc, upsert, script = body.get("doc"), body.get("upsert"), body.get("script")
    for key, value in (("doc", doc), ("upsert", upsert)):
        if value is not None and not isinstance(value, dict):
            raise XContentParseError(f"[UpdateRequest] failed to parse field [{key}]")
    errors = []
    if doc is None and script is None:
        errors.append("script or doc is missing")
    if doc is not None and script is not None:
        errors.append("can't provide both script and doc")
    if doc is None and body.get("doc_as_upsert") is True:
        errors.append("doc must be specified if doc_as_upsert is enabled")
    if if_seq_no is not None and retry_on_conflict > 0:
        errors.append("compare and write operations can not be retried")
    if if_seq_no is not None and upsert is not None:
        errors.append("upsert requests don't support `if_seq_no` and `if_primary_term`")
    if errors:
        raise ActionRequestValidation("Validation Failed: " + "".join(
            f"{n}: {e};" for n, e in enumerate(errors, 1)))
    if not 0 <= retry_on_conflict <= MAX_RETRIES:
        raise IllegalArgument(f"[retry_on_conflict] must be between 0 and {MAX_RETRIES}, got "
                              f"[{retry_on_conflict}]")
    if "_source" in body:
        source = parse_source(body["_source"])
    return UpdateRequest(index, doc_id, doc, upsert, _flag(body, "doc_as_upsert", False),
                         _flag(body, "detect_noop", True), routing, if_seq_no,
                         if_primary_term, retry_on_conflict, source, refresh,
                         require_alias=require_alias,
                         script=None if script is None else _checked_script(script),
                         scripted_upsert=_flag(body, "scripted_upsert", False))


def _checked_script(script: Any) -> Any:
    """The script object, its shape checked now (as Elasticsearch parses it with the request);
    its source is compiled only when it runs, so an upsert that never runs it never fails."""
    parse_script_object(script)
    return script


@dataclass(frozen=True)
class UpdatePlan:
    """What step 2 decided: ``noop``, ``index`` (over the read version) or ``create``."""

    action: str
    source: dict[str, Any] | None


def plan_update(req: UpdateRequest, current: dict[str, Any] | None,
                version: int = 0) -> UpdatePlan:
    """The new source of the document (``current`` None: it is missing; ``version`` its
    version, for a script's ``ctx._version``). Pure but a script's clock."""
    if req.script is not None:
        meta = {"_id": req.id, "_index": req.index, "_routing": req.routing,
                "_version": version}
        return UpdatePlan(*plan_scripted(req.script, req.scripted_upsert, req.upsert, current,
                                         meta))
    if current is None:
        if req.upsert is not None:
            return UpdatePlan("create", req.upsert)
        if req.doc_as_upsert and req.doc is not None:
            return UpdatePlan("create", req.doc)
        raise SearchError(f"[{req.id}]: document missing", es_type="document_missing_exception",
                          status=404, index=req.index, index_uuid="_na_")
    merged = deep_merge(current, req.doc or {})
    if req.detect_noop and merged == current:
        return UpdatePlan("noop", current)
    return UpdatePlan("index", merged)


async def _read(c: WriteTarget, req: UpdateRequest) -> tuple[FetchedDoc | None, int]:
    meta = c.auto_create(req.index)   # as Elasticsearch, an update creates its index
    sid = shard_for(req.routing if req.routing is not None else req.id, meta.number_of_shards)
    return await ShardCalls(c.backend).get(meta.shards[sid], req.id), sid


def _conflict_with_caller(req: UpdateRequest, doc: FetchedDoc, sid: int) -> SearchError | None:
    """The caller's own ``if_seq_no`` / ``if_primary_term`` against the version read."""
    term = 1 if req.if_primary_term is None else req.if_primary_term
    if req.if_seq_no is None or (doc.seq == req.if_seq_no and term == 1):
        return None
    return SearchError(f"[{req.id}]: version conflict, required seqNo [{req.if_seq_no}], "
                       f"primary term [{term}]. current document has seqNo [{doc.seq}] and "
                       "primary term [1]", es_type="version_conflict_engine_exception",
                       status=409, index=req.index, shard=str(sid), index_uuid="_na_")


def write_target(c: WriteTarget, req: UpdateRequest) -> UpdateRequest:
    """The update aimed at the index it writes to: an alias's write index (with its index
    routing), or the name itself; with ``require_alias``, a name that is no alias is
    Elasticsearch's 404 (nothing is auto-created)."""
    if req.require_alias and not aliased(c.indices, req.index):
        raise IndexNotFound(req.index, reason_suffix=req.index)
    index, routing = c.write_index(req.index, req.routing)   # aliases, date math
    return replace(req, index=index, routing=routing)


async def update(c: WriteTarget, req: UpdateRequest) -> dict[str, Any]:
    """One update, the steps of the module docstring; the answer is a bulk item's
    (``status`` plus Elasticsearch's fields, or ``error``)."""
    try:
        req = write_target(c, req)
    except SearchError as e:
        return {"_index": req.index, "_id": req.id, "status": e.status, "error": e.to_cause()}
    for attempt in range(req.retry_on_conflict + 1):
        try:
            doc, sid = await _read(c, req)
            if doc is not None and not c.indices[req.index].mapping.source_enabled:
                raise SearchError(f"[{req.id}]: document source missing", status=400,
                                  es_type="document_source_missing_exception",
                                  index=req.index, shard=str(sid), index_uuid="_na_")
            if doc is not None and (err := _conflict_with_caller(req, doc, sid)) is not None:
                raise err
            current = orjson.loads(doc.source) if doc is not None else None
            plan = plan_update(req, current, 0 if doc is None else doc.version)
        except SearchError as e:
            return {"_index": req.index, "_id": req.id, "status": e.status,
                    "error": e.to_cause()}
        if plan.action == "noop":
            return _noop(req, doc)
        item = {"action": plan.action, "index": req.index, "id": req.id,
                "source": plan.source, "routing": req.routing}
        if doc is not None:
            item.update(if_seq_no=doc.seq, if_primary_term=1)
        out = (await bulk(c, [item], req.refresh))["items"][0][plan.action]
        if out.get("status") == 409 and attempt < req.retry_on_conflict:
            continue
        if "error" not in out and _wants_get(req) and plan.source is not None:
            out["get"] = _get_section(out, plan.source, req.source)
        return out
    raise AssertionError("unreachable: the last attempt returns")


def _noop(req: UpdateRequest, doc: FetchedDoc | None) -> dict[str, Any]:
    """A ``noop``; over a missing document (a scripted upsert's script said so) there is no
    version: Elasticsearch's unassigned ``_seq_no`` and ``_version`` 0."""
    if doc is None:
        return noop_result(req.index, req.id, 0, -2)
    out = {"_index": req.index, "_id": req.id, "_version": doc.version, "result": "noop",
           "_shards": {"total": 0, "successful": 0, "failed": 0}, "_seq_no": doc.seq,
           "_primary_term": 1, "status": 200}
    if _wants_get(req):
        out["get"] = _get_section(out, orjson.loads(doc.source), req.source)
    return out


def _wants_get(req: UpdateRequest) -> bool:
    """A ``get`` section only when a source is asked for: ``_source: false`` gives none, as
    Elasticsearch's ``UpdateHelper.extractGetResult`` answers null."""
    return req.source is not None and req.source.enabled


def _get_section(out: dict[str, Any], source: dict[str, Any], wanted: SourceFilter
                 ) -> dict[str, Any]:
    """The ``get`` of an update's response: the document as written, filtered."""
    get: dict[str, Any] = {"_seq_no": out["_seq_no"], "_primary_term": 1, "found": True}
    if wanted.enabled:
        get["_source"] = source if wanted.is_identity else filter_source(
            source, wanted.includes, wanted.excludes)
    return get

