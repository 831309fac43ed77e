"""Stored-script references in request bodies, resolved before the body is parsed.

A body that names no stored script costs one byte search (no ``"id"`` key, no walk); one that
does costs one call to the coordinator for exactly the ids it names
(``cluster/indices/stored_scripts.py``).
"""
from __future__ import annotations

from typing import Any

from ..cluster.errors import IllegalArgument, SearchError
from ..cluster.indices.stored_scripts import referenced_ids, substitute
from fastapi import Request

from .body import parse_json, read_body
from .deps import CoordinatorClient


async def fetch_scripts(coord: CoordinatorClient, ids: list[str]) -> dict[str, dict[str, str]]:
    """The stored scripts of ``ids`` that exist (none asked: no call)."""
    return await coord.call("stored_scripts", ids) if ids else {}


async def body_with_stored_scripts(request: Request, coord: CoordinatorClient,
                                   for_update: bool = False) -> Any:
    """The request's JSON body with its stored scripts in place (a body whose bytes hold no
    ``"id"`` key is not walked; an escaped spelling stays a reference, which the script
    parser refuses by name)."""
    raw = await read_body(request)
    body = parse_json(raw)
    if b'"id"' not in raw:
        return body
    return await with_stored_scripts(coord, body, for_update)


async def with_stored_scripts(coord: CoordinatorClient, body: Any,
                              for_update: bool = False) -> Any:
    """``body`` with every ``{"id": ...}`` script replaced by the stored script's source; for
    an update a missing script is Elasticsearch's ``failed to execute script``."""
    ids = referenced_ids(body)
    if not ids:
        return body
    scripts = await fetch_scripts(coord, ids)
    try:
        return substitute(body, scripts)
    except SearchError as e:
        raise _update_failure(e) if for_update else e from None


def _update_failure(e: SearchError) -> SearchError:
    if e.es_type != "resource_not_found_exception":
        return e
    return IllegalArgument("failed to execute script", caused_by=e.to_cause())



async def resolve_bulk_scripts(coord: CoordinatorClient, raw: bytes,
                               items: list[dict[str, Any]]) -> None:
    """The stored scripts of a ``_bulk``'s update bodies put in place, in one call for all
    their ids (bytes without an ``"id"`` key: nothing walked); a missing one fails only its
    item, as ``_update`` fails."""
    if b'"id"' not in raw:
        return
    bodies = [it for it in items if it["action"] == "update" and "error" not in it
              and isinstance(it.get("source"), dict) and "script" in it["source"]]
    ids = list(dict.fromkeys(i for it in bodies for i in referenced_ids(it["source"])))
    if not ids:
        return
    scripts = await fetch_scripts(coord, ids)
    for it in bodies:
        try:
            it["source"] = substitute(it["source"], scripts)
        except SearchError as e:
            it["error"] = _update_failure(e).to_cause()
