"""Stored scripts (``_scripts``): Painless scripts and mustache search templates kept in the
cluster metadata by id, and the references ``{"id": ..., "params": ...}`` that use them.

The coordinator owns :class:`StoredScripts` (persisted beside the index templates). A request
body that names a stored script is resolved *before* it is parsed: :func:`referenced_ids`
finds the ids, the front end fetches those scripts in one call, and :func:`substitute` puts
each source in place of its id — so every place that takes an inline script takes a stored
one, with no second path through the engine.
"""
from __future__ import annotations

from typing import Any

import orjson

from ..engine.script import SCORE_CONTEXT, UPDATE_CONTEXT, compile_script
from ..engine.script.mustache import check_template
from ..errors import IllegalArgument, ParsingError, SearchError

#: A stored script may be used in any context: it is parsed knowing all their variables.
ANY_CONTEXT = SCORE_CONTEXT | UPDATE_CONTEXT
JSON_MEDIA_TYPE = "application/json"
MAX_SIZE_BYTES = 65_535     # Elasticsearch's script.max_size_in_bytes
MAX_SCRIPTS = 10_000        # stored scripts a cluster keeps (ours; Elasticsearch has no cap)
LANGS = ("painless", "mustache")
#: The contexts Elasticsearch's Painless knows (``GET /_script_context``), for ``/_scripts/{id}/{context}``.
CONTEXTS = frozenset({
    "aggregation_selector", "aggs", "aggs_combine", "aggs_init", "aggs_map", "aggs_reduce",
    "analysis", "bucket_aggregation", "field", "filter", "ingest", "interval",
    "moving-function", "number_sort", "painless_test", "processor_conditional", "score",
    "script_heuristic", "search", "similarity", "similarity_weight", "string_sort", "template",
    "terms_set", "update",
})
#: Keys whose object value is a script (a script query's, an aggregation's, a sort's, ...).
SCRIPT_KEYS = frozenset({"script", "init_script", "map_script", "combine_script",
                         "reduce_script"})
#: Keys whose value is user data, never a script reference (documents, script params).
DATA_KEYS = frozenset({"doc", "upsert", "params", "_source"})
#: Keys of a script object besides its source (Elasticsearch's ``Script`` parser).
_SCRIPT_OBJECT_KEYS = frozenset({"source", "inline", "id", "lang", "params", "options"})


def not_found(script_id: str) -> SearchError:
    """Elasticsearch's error for a reference to a script that is not stored."""
    return SearchError(f"unable to find script [{script_id}] in cluster state",
                       es_type="resource_not_found_exception", status=404)


def parse_stored(script_id: str, body: Any, context: str | None = None) -> dict[str, str]:
    """The ``{"lang", "source"}`` record of ``PUT /_scripts/{id}``, with Elasticsearch's checks
    and texts; a Painless source is parsed now, so a broken one is refused at PUT."""
    if not isinstance(body, dict):
        raise ParsingError("request body is required")
    for key in body:
        if key != "script":
            raise ParsingError(f"unexpected field [{key}], expected [script]")
    script = body.get("script")
    if not isinstance(script, dict):
        raise ParsingError("unexpected field [script], expected an object")
    for key in script:
        if key not in ("lang", "source", "code", "options", "params"):
            raise ParsingError(f"[script] unknown field [{key}]")
    if script.get("params"):   # OpenSearch takes and drops them; each use sends its own
        raise IllegalArgument("[script.params] in a stored script are not supported by this "
                              "server: send [params] with each use of the script")
    if context is not None and context not in CONTEXTS:
        raise IllegalArgument(f"failed to parse/compile stored script [{script_id}]",
                              caused_by={"type": "illegal_argument_exception",
                                         "reason": f"Unknown context [{context}]"})
    lang = script.get("lang")
    if lang is None:
        raise IllegalArgument("must specify lang for stored script")
    if lang == "":
        raise IllegalArgument("lang cannot be empty")
    if lang not in LANGS:
        raise IllegalArgument(f"unable to put stored script with unsupported lang [{lang}]")
    options = _check_options(script.get("options"), lang)
    source = script.get("source", script.get("code"))
    if isinstance(source, (dict, list)):   # a template object: its JSON text, marked as JSON
        source = orjson.dumps(source).decode()
        options = {"content_type": JSON_MEDIA_TYPE}
    if source == "":
        raise IllegalArgument("source cannot be empty")
    if not isinstance(source, str):
        raise IllegalArgument("must specify source for stored script")
    size = len(source.encode())
    if size > MAX_SIZE_BYTES:
        raise IllegalArgument(f"exceeded max allowed stored script size in bytes "
                              f"[{MAX_SIZE_BYTES}] with size [{size}] for script [{script_id}]")
    if lang == "painless":
        compile_script({"source": source}, ANY_CONTEXT)
    else:
        check_template(source)
    record = {"lang": lang, "source": source}
    return {**record, "options": options} if options else record


def _check_options(options: Any, lang: str) -> dict[str, str]:
    """The compiler options Elasticsearch accepts: only a JSON ``content_type``, for
    templates."""
    if not options:
        return {}
    if lang == "mustache" and isinstance(options, dict) and set(options) <= {"content_type"}:
        if str(options["content_type"]).startswith("application/json"):
            return {"content_type": str(options["content_type"])}
        raise IllegalArgument(f"[content_type={options['content_type']}] is not supported by "
                              "this server (JSON templates only)")
    shown = ", ".join(f"{k}={v}" for k, v in options.items()) if isinstance(options, dict) \
        else options
    raise IllegalArgument(f"illegal compiler options [{{{shown}}}] specified")


class StoredScripts:
    """The cluster's stored scripts by id; ``saved`` persists them (set by durability)."""

    def __init__(self) -> None:
        self.scripts: dict[str, dict[str, Any]] = {}
        self.saved: Any = None

    def put(self, script_id: str, body: Any, context: str | None = None) -> dict[str, Any]:
        record = parse_stored(script_id, body, context)
        if script_id not in self.scripts and len(self.scripts) >= MAX_SCRIPTS:
            raise IllegalArgument(f"too many stored scripts: at most [{MAX_SCRIPTS}]")
        self.scripts[script_id] = record
        self._save()
        return {"acknowledged": True}

    def get(self, script_id: str) -> tuple[int, dict[str, Any]]:
        """``(status, body)`` of ``GET /_scripts/{id}``: 404 with ``found: false`` when
        missing, as Elasticsearch answers."""
        record = self.scripts.get(script_id)
        if record is None:
            return 404, {"_id": script_id, "found": False}
        return 200, {"_id": script_id, "found": True, "script": dict(record)}

    def delete(self, script_id: str) -> dict[str, Any]:
        if self.scripts.pop(script_id, None) is None:
            raise SearchError(f"stored script [{script_id}] does not exist and cannot be "
                              "deleted", es_type="resource_not_found_exception", status=404)
        self._save()
        return {"acknowledged": True}

    def lookup(self, ids: list[str]) -> dict[str, dict[str, str]]:
        """The records of ``ids`` that exist (the caller reports the missing ones)."""
        return {i: {"lang": self.scripts[i]["lang"], "source": self.scripts[i]["source"]}
                for i in ids if i in self.scripts}

    def _save(self) -> None:
        if self.saved is not None:
            self.saved(self.scripts)


def is_reference(value: Any) -> bool:
    """A script object that names a stored script (``id``) rather than carrying a source."""
    return isinstance(value, dict) and "id" in value and "source" not in value \
        and "inline" not in value and set(value) <= _SCRIPT_OBJECT_KEYS


def referenced_ids(body: Any) -> list[str]:
    """The stored-script ids a request body refers to, in order of first use."""
    out: list[str] = []
    _walk(body, lambda ref: out.append(str(ref["id"])) if str(ref["id"]) not in out else None)
    return out


def substitute(body: Any, scripts: dict[str, dict[str, str]]) -> Any:
    """``body`` with every stored-script reference replaced by its source (a missing id is
    Elasticsearch's ``resource_not_found_exception``)."""
    if isinstance(body, dict):
        return {k: _resolved(v, scripts) if k in SCRIPT_KEYS and is_reference(v)
                else v if k in DATA_KEYS else substitute(v, scripts) for k, v in body.items()}
    if isinstance(body, list):
        return [substitute(v, scripts) for v in body]
    return body


def _resolved(ref: dict[str, Any], scripts: dict[str, dict[str, str]]) -> dict[str, Any]:
    if "lang" in ref:
        raise IllegalArgument("illegally specified <lang> for a stored script")
    record = scripts.get(str(ref["id"]))
    if record is None:
        raise not_found(str(ref["id"]))
    out = {k: v for k, v in ref.items() if k != "id"}
    out.update(lang=record["lang"], source=record["source"])
    return out


def _walk(body: Any, found: Any) -> None:
    if isinstance(body, dict):
        for k, v in body.items():
            if k in SCRIPT_KEYS and is_reference(v):
                found(v)
            elif k not in DATA_KEYS:
                _walk(v, found)
    elif isinstance(body, list):
        for v in body:
            _walk(v, found)
