"""Answers for requests that never reach a route, in Elasticsearch's words.

* A body whose ``Content-Type`` is not one we parse, or is missing: 406, as Elasticsearch answers
  (``{"error": "Content-Type header [text/plain] is not supported", "status": 406}``;
  ``"Content-Type header is missing"``).
* ``format`` naming ``yaml``, ``cbor`` or ``smile`` (outside ``_cat``): a 400 naming it, since
  we write JSON only (any other name answers JSON, as in Elasticsearch).
* An unexpected exception: a 500 in the error envelope *without* dropping the keep-alive
  connection (Starlette's own 500 handler re-raises, and uvicorn then closes it).
* Malformed HTTP: uvicorn's parser answers a plain-text 400; :class:`ESHttpToolsProtocol` answers
  Elasticsearch's envelope instead (pass it as uvicorn's ``http`` setting).
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qsl

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..cluster.errors import IllegalArgument, SearchError
from ..cluster.values import format_refusal as format_refusal_of
from .date_math_paths import resolve_path
from .errors import envelope, unwrap

log = logging.getLogger("shardsearch.api")

# Media types whose bodies we parse (Elasticsearch's JSON and NDJSON, and its vendor types).
_SUPPORTED = {"application/json", "application/x-ndjson",
              "application/vnd.elasticsearch+json", "application/vnd.elasticsearch+x-ndjson"}


def content_type_supported(value: str) -> bool:
    """Whether a ``Content-Type`` header names a body format we read (parameters ignored)."""
    return value.split(";", 1)[0].strip().lower() in _SUPPORTED


def content_type_refusal(ctype: str | None) -> str | None:
    """Why a request with a body is refused for its ``Content-Type``, in Elasticsearch's words
    (its ``RestController``): a body we would have to guess the format of is never read."""
    if ctype is None:
        return "Content-Type header is missing"
    if not content_type_supported(ctype):
        return f"Content-Type header [{ctype}] is not supported"
    return None


def format_refusal(path: str, query: bytes) -> str | None:
    """Why a ``format`` URL parameter is refused (``_cat`` also writes text and checks its
    own)."""
    if b"format" not in query or path.startswith("/_cat"):
        return None
    values = [v for k, v in parse_qsl(query.decode("latin-1"), keep_blank_values=True)
              if k == "format"]
    return format_refusal_of(values[-1]) if values else None


async def _send_json(send: Any, status: int, body: dict[str, Any], head: bool) -> None:
    data = b"" if head else orjson.dumps(body)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


class RequestGuard:
    """ASGI middleware: refuses unsupported body types and contains unexpected errors."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope.get("method") == "HEAD"
        ctype = has_body = None
        for k, v in scope.get("headers") or []:
            if k == b"content-type":
                ctype = v.decode("latin-1")
            elif (k == b"content-length" and v.strip() not in (b"0", b"")) \
                    or k == b"transfer-encoding":
                has_body = True
        refusal = content_type_refusal(ctype) if has_body else None
        if refusal is not None:
            await _send_json(send, 406, {"error": refusal, "status": 406}, head)
            return
        refusal = format_refusal(scope.get("path", ""), scope.get("query_string", b""))
        if refusal is not None:
            await _send_json(send, 400, envelope(IllegalArgument(refusal)), head)
            return
        try:
            scope = resolve_path(scope)     # <logs-{now/d}> in the path
        except SearchError as e:
            await _send_json(send, e.status, envelope(e), head)
            return
        started = False

        async def tracking_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)
        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # noqa: BLE001 - answered in the envelope, connection kept
            if started:
                raise
            inner = unwrap(exc)
            if not isinstance(inner, SearchError):
                log.exception("unexpected error", exc_info=exc)
                inner = SearchError(f"{type(inner).__name__}: {inner}", es_type="exception",
                                    status=500)
            await _send_json(send, inner.status, envelope(inner), head)


class ESHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering malformed HTTP in Elasticsearch's envelope."""

    def send_400_response(self, msg: str) -> None:
        cause = {"type": "illegal_argument_exception", "reason": msg}
        body = orjson.dumps({"error": {"root_cause": [cause], **cause}, "status": 400})
        self.transport.write(b"".join([
            b"HTTP/1.1 400 Bad Request\r\n",
            b"content-type: application/json\r\n",
            b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
            b"X-Elastic-Product: Elasticsearch\r\n",
            b"connection: close\r\n\r\n", body]))
        self.transport.close()
