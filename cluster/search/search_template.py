"""Search templates (``_search/template``, ``_render/template``, ``_msearch/template``): a
template request parsed as Elasticsearch's ``SearchTemplateRequest``, its mustache source found
(inline, or a stored script by id) and rendered (``engine/script/mustache.py``) into the search
body that then takes the ordinary search path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..engine.script.mustache import render_text
from ..errors import ActionRequestValidation, IllegalArgument, XContentParseError
from ..indices.stored_scripts import not_found

_REQUEST_KEYS = frozenset({"source", "inline", "id", "params", "explain", "profile"})


def render_body(source: str, params: dict[str, Any]) -> dict[str, Any]:
    """The rendered template as a search body (JSON text that does not parse is Elasticsearch's
    ``x_content_parse_exception``)."""
    text = render_text(source, params)
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        pos = e.pos or 0
        line = text[:pos].count("\n") + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        raise XContentParseError(f"[{line}:{col}] the rendered search template is not valid "
                                 f"JSON: {e.msg}") from None
    if not isinstance(body, dict):
        raise XContentParseError("[1:1] the rendered search template must be a JSON object")
    return body


@dataclass(frozen=True)
class TemplateRequest:
    """A ``_search/template`` body: an inline ``source`` or a stored ``script_id``."""

    source: str | None
    script_id: str | None
    params: dict[str, Any]
    explain: bool = False
    profile: bool = False


def parse_template_request(body: Any) -> TemplateRequest:
    """Elasticsearch's ``SearchTemplateRequest`` fields, each checked (an object ``source`` is
    the JSON text of that object, as Elasticsearch reads it)."""
    if not isinstance(body, dict):
        raise ActionRequestValidation("Validation Failed: 1: template is missing;")
    for key in body:
        if key not in _REQUEST_KEYS:
            raise XContentParseError(f"[1:2] [search_template] unknown field [{key}]")
    source = body.get("source", body.get("inline"))
    if isinstance(source, (dict, list)):
        source = orjson.dumps(source).decode()
    script_id = body.get("id")
    if source is None and script_id is None:
        raise ActionRequestValidation("Validation Failed: 1: template is missing;")
    if source is not None and not isinstance(source, str):
        raise XContentParseError("[search_template] [source] must be a string or an object")
    params = body.get("params") or {}
    if not isinstance(params, dict):
        raise XContentParseError("[search_template] [params] must be an object")
    for flag in ("explain", "profile"):
        if not isinstance(body.get(flag, False), bool):
            raise XContentParseError(f"[search_template] [{flag}] must be a boolean")
    return TemplateRequest(source, None if script_id is None else str(script_id), params,
                           bool(body.get("explain", False)), bool(body.get("profile", False)))


def template_source(req: TemplateRequest, stored: dict[str, dict[str, str]]) -> str:
    """The mustache text of ``req``: inline, or the stored template its id names."""
    if req.source is not None:
        return req.source
    assert req.script_id is not None
    record = stored.get(req.script_id)
    if record is None:
        raise not_found(req.script_id)
    if record["lang"] != "mustache":
        raise IllegalArgument(f"stored script [{req.script_id}] is a [{record['lang']}] "
                              "script, not a [mustache] search template")
    return record["source"]


def search_body(req: TemplateRequest, stored: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The search body a template request renders, with its ``explain``/``profile`` flags."""
    body = render_body(template_source(req, stored), req.params)
    if req.explain:
        body["explain"] = True
    if req.profile:
        body["profile"] = True
    return body
