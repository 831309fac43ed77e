"""The script step of an update (``_update`` and ``_bulk`` update items with a ``script``):
what the script asks for, as Elasticsearch's ``UpdateHelper`` decides it. The read, the
conditional write and the retries are ``update.py``'s, shared with ``doc`` updates.

``ctx`` holds ``_source``, ``op``, ``_id``, ``_index``, ``_version``, ``_routing``, ``_now``;
``ctx.op`` may become ``noop`` or ``none`` (nothing written) or ``delete``; an unknown op does
nothing (Elasticsearch logs it and does nothing too).
"""
from __future__ import annotations

import time
from typing import Any

from ..engine.script import UPDATE_CONTEXT, Compiled, compile_script, json_value
from ..errors import IllegalArgument, SearchError


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
    if op == "delete" and not creating:   # the source the script left: the ``get`` section
        return "delete", new_source if isinstance(new_source, dict) else None
    return "noop", None


def plan_scripted(script: Any, scripted_upsert: bool, upsert: dict[str, Any] | None,
                  current: dict[str, Any] | None, meta: dict[str, Any]
                  ) -> tuple[str, dict[str, Any] | None]:
    """``(action, source)`` of a scripted update, as ``UpdateHelper`` decides: over an existing
    document the script runs (``index``, ``delete`` or ``noop``); over a missing one ``upsert``
    is created as it is, or run through the script first with ``scripted_upsert``. ``meta``
    holds ``_id``, ``_index``, ``_routing`` and ``_version`` (0: missing). Pure but the clock.
    The script compiles only when it runs, and a compile error fails like a run error."""
    if current is not None:
        return _run(script, current, meta, False)
    if upsert is None:
        raise SearchError(f"[{meta['_id']}]: document missing",
                          es_type="document_missing_exception", status=404,
                          index=meta["_index"], shard="0", index_uuid="_na_")
    if not scripted_upsert:
        return "create", upsert
    return _run(script, upsert, meta, True)


def _run(script: Any, source: dict[str, Any] | None, meta: dict[str, Any],
         creating: bool) -> tuple[str, dict[str, Any] | None]:
    try:
        return apply_update_script(source, compile_script(script, UPDATE_CONTEXT), meta,
                                   creating)
    except SearchError as e:
        if e.es_type != "script_exception":
            raise
        raise IllegalArgument("failed to execute script", caused_by=e.to_cause()) from None


def noop_result(index: str, doc_id: str, version: int, seq_no: int) -> dict[str, Any]:
    return {"_index": index, "_id": doc_id, "_version": version, "result": "noop",
            "_shards": {"total": 0, "successful": 0, "failed": 0}, "_seq_no": seq_no,
            "_primary_term": 1, "status": 200}

