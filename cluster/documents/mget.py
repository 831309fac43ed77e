"""``_mget``: many gets in one request, each answered (or failed) in its place.

The body names documents as ``docs`` (objects with ``_index``, ``_id``, ``routing``,
``_source``, ``stored_fields``, ``version``, ``version_type``) or, with an index in the URL, as
``ids``. URL parameters are each item's defaults. A document of a missing index or with a
conflicting version is an ``error`` item; a body that names no document, or a document without
an id or an index, fails the request (``action_request_validation_exception``), as in
Elasticsearch.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..engine.query.parse_helpers import token_name
from ..errors import ActionRequestValidation, ParsingError, SearchError
from ..values import check_format
from ..indices.catalog import IndexMeta
from .get import get_doc, get_options

#: Keys of one ``docs`` entry (Elasticsearch's ``MultiGetRequest``), by what they set.
DOC_KEYS = {"_index", "_id", "routing", "_routing", "_source", "stored_fields", "version",
            "_version", "version_type", "_version_type"}
BODY_KEYS = {"docs", "ids"}
#: URL parameters of ``_mget`` (the get's, applied to every document).
MGET_PARAMS = {"routing", "realtime", "refresh", "preference", "_source", "_source_includes",
               "_source_excludes", "stored_fields", "pretty", "human", "error_trace",
               "filter_path", "format"}
MAX_DOCS = 10_000


def _item_params(doc: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """An item's get parameters: the URL's, overridden by the entry's own keys."""
    params = {k: v for k, v in defaults.items() if k in ("routing", "_source",
              "_source_includes", "_source_excludes", "stored_fields")}
    for key, value in doc.items():
        if key not in DOC_KEYS:
            raise ParsingError(f"Unknown key for a {token_name(value)} in [{key}].")
        if key in ("routing", "_routing"):
            params["routing"] = str(value)
        elif key in ("version", "_version", "version_type", "_version_type"):
            params[key.lstrip("_")] = value
        elif key == "_source":
            for k in ("_source", "_source_includes", "_source_excludes"):
                params.pop(k, None)
            params.update(_source_params(value))
        elif key == "stored_fields":
            params["stored_fields"] = value
    return params


def _source_params(value: Any) -> dict[str, str]:
    """An entry's ``_source`` (bool, path, list, or includes/excludes) as URL parameters."""
    if isinstance(value, bool):
        return {"_source": "true" if value else "false"}
    if isinstance(value, str):
        return {"_source": value}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"_source": ",".join(value)} if value else {"_source": "true"}
    if isinstance(value, dict):
        out = {}
        for key in ("includes", "excludes", "include", "exclude"):
            v = value.get(key)
            if v is not None:
                name = "_source_" + (key if key.endswith("s") else key + "s")
                out[name] = v if isinstance(v, str) else ",".join(str(x) for x in v)
        return out
    raise ParsingError(f"Unknown key for a {token_name(value)} in [_source].")


def parse_mget(body: Any, index: str | None, params: dict[str, str]
               ) -> list[tuple[str, str, dict[str, Any]]]:
    """``(index, id, get parameters)`` per document, in the body's order."""
    check_format(params)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ParsingError("request body must be an object")
    for key in body:
        if key not in BODY_KEYS:
            raise ParsingError(f"Unknown key for a {token_name(body[key])} in [{key}].")
    entries: list[Any] = list(body.get("docs") or [])
    ids = body.get("ids")
    if ids is not None:
        if not isinstance(ids, list):
            raise ParsingError("ids must be an array")
        entries += [{"_id": i} for i in ids]
    if not entries:
        raise ActionRequestValidation("Validation Failed: 1: no documents to get;")
    if len(entries) > MAX_DOCS:
        raise ActionRequestValidation(f"Validation Failed: 1: too many documents to get, at "
                                      f"most [{MAX_DOCS}];")
    out = []
    errors = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ParsingError("docs array element should include an object")
        idx = entry.get("_index", index)
        if idx is None:
            errors.append(f"index is missing for doc {i}")
        if entry.get("_id") is None:
            errors.append(f"id is missing for doc {i}")
        out.append((str(idx), str(entry.get("_id")), _item_params(entry, params)))
    if errors:
        raise ActionRequestValidation("Validation Failed: " + "".join(
            f"{n}: {e};" for n, e in enumerate(errors, 1)))
    return out


Resolve = Callable[[str, Any], tuple[str, Any]]


async def mget(indices: dict[str, IndexMeta], backend: Any,
               items: list[tuple[str, str, dict[str, Any]]],
               resolve: Resolve | None = None) -> dict[str, Any]:
    """Every document at once; a failing one is an ``error`` entry in its place. ``resolve``
    maps a name (an alias of one index, date math) and routing to the index read and its
    routing (``IndexAdmin.read_index``)."""
    async def one(index: str, doc_id: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            if resolve is not None:
                index, routing = resolve(index, params.get("routing"))
                params = {**params, "routing": routing} if routing is not None else params
            return await get_doc(indices, backend, index, doc_id, options=get_options(params))
        except SearchError as e:
            return {"_index": index, "_id": doc_id, "error": _error(e)}
    return {"docs": list(await asyncio.gather(*(one(*it) for it in items)))}


def _error(e: SearchError) -> dict[str, Any]:
    cause = e.to_cause()
    return {"root_cause": [dict(cause)], **cause}
