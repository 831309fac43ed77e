"""A ``_bulk`` that holds ``update`` items: the writes between updates go as bulks, each
update through ``update.py`` (read, merge, conditional write), in the request's order.

An update must see the writes before it in the same request, as Elasticsearch's shard applies a
bulk's items one after another. So the items are cut into runs: a run of plain writes is one
:func:`~.bulk.bulk`; a run of updates to distinct documents runs at once (none can see
another). A bulk without updates is one :func:`~.bulk.bulk`, unchanged.
"""
from __future__ import annotations

import asyncio
import pickle
import time
from typing import Any

import orjson

from ..engine.gcpause import gc_paused
from ..engine.source_filter import parse_source
from ..errors import SearchError
from .bulk import WriteTarget, bulk
from .update import parse_update, update
from .versioning import write_conditions


def _runs(items: list[dict[str, Any]]) -> list[tuple[bool, list[int]]]:
    """``(is_update_run, positions)`` in order; an update run never touches one id twice."""
    runs: list[tuple[bool, list[int]]] = []
    seen: set[tuple[Any, Any]] = set()
    for pos, item in enumerate(items):
        is_update = item["action"] == "update"
        key = (item.get("index"), item.get("id"))
        if runs and runs[-1][0] == is_update and not (is_update and key in seen):
            runs[-1][1].append(pos)
        else:
            runs.append((is_update, [pos]))
            seen = set()
        if is_update:
            seen.add(key)
    return runs


async def _one_update(c: WriteTarget, item: dict[str, Any], refresh: bool) -> dict[str, Any]:
    """One bulk ``update`` item: its metadata and body checked, then ``update``."""
    try:
        if not item.get("index"):
            raise SearchError("Validation Failed: 1: index is missing;",
                              es_type="action_request_validation_exception", status=400)
        cond = write_conditions(item)
        meta_source = item.get("_source_meta")
        req = parse_update(item["index"], str(item.get("id")), item.get("source"),
                           routing=item.get("routing"), if_seq_no=cond.get("if_seq_no"),
                           if_primary_term=cond.get("if_primary_term"),
                           retry_on_conflict=int(item.get("retry_on_conflict") or 0),
                           source=item.get("_source_default") if meta_source is None
                           else parse_source(meta_source),
                           refresh=refresh, require_alias=bool(item.get("require_alias")))
        if item.get("id") is None:
            raise SearchError("Validation Failed: 1: id is missing;",
                              es_type="action_request_validation_exception", status=400)
    except (SearchError, TypeError, ValueError) as e:
        err = e if isinstance(e, SearchError) else SearchError(
            str(e), es_type="illegal_argument_exception", status=400)
        return {"_index": item.get("index"), "_id": item.get("id"), "status": err.status,
                "error": err.to_cause()}
    return await update(c, req)


async def bulk_with_updates(c: WriteTarget, items: list[dict[str, Any]] | bytes,
                            refresh: bool = False, as_json: bool = False) -> dict[str, Any]:
    """``bulk`` for any items; the runs of the module docstring when some are updates."""
    if isinstance(items, bytes):
        with gc_paused():
            items = pickle.loads(items)
    if not any(it["action"] == "update" for it in items):
        return await bulk(c, items, refresh, as_json)
    t0 = time.perf_counter()
    results: list[dict[str, Any]] = [{}] * len(items)
    for is_update, positions in _runs(items):
        if is_update:
            outs = await asyncio.gather(*(_one_update(c, items[p], refresh) for p in positions))
        else:
            resp = await bulk(c, [items[p] for p in positions], refresh)
            outs = [next(iter(r.values())) for r in resp["items"]]
        for p, out in zip(positions, outs):
            results[p] = out
    out_items = [{item["action"]: r} for item, r in zip(items, results)]
    errors = any("error" in r for r in results)
    took = int((time.perf_counter() - t0) * 1000)
    if as_json:
        return {"took": took, "errors": errors, "items_json": orjson.dumps(out_items)}
    return {"took": took, "errors": errors, "items": out_items}
