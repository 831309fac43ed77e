"""``filter_path``: Elasticsearch's response filtering, applied to every JSON response.

``filter_path=hits.hits._id,-hits.hits._source.secret`` keeps only the named paths (an include)
and then drops the paths that start with ``-`` (an exclude). A path is dot-separated; a part may
hold ``*`` wildcards (``hits.hits._s*``) and ``**`` matches any number of levels
(``**._id``). Arrays are transparent: a path goes through every element. Objects and arrays left
empty by filtering disappear, so a filter that matches nothing gives ``{}`` (as in Elasticsearch).

The filter is pure (:func:`filter_response`); :class:`FilterPathMiddleware` applies it at the
edge, buffering only responses whose request carries ``filter_path`` or ``pretty`` (the hot path
pays nothing); ``pretty`` indents every JSON answer, errors included.
"""
from __future__ import annotations

import fnmatch
from typing import Any
from urllib.parse import parse_qsl

import orjson

Pattern = tuple[str, ...]
_DROP = object()


def parse_filter_path(spec: str) -> tuple[list[Pattern], list[Pattern]]:
    """Split ``a.b,-c.d`` into include and exclude patterns (lists of path parts)."""
    includes: list[Pattern] = []
    excludes: list[Pattern] = []
    for raw in spec.split(","):
        raw = raw.strip()
        if not raw:
            continue
        target = excludes if raw.startswith("-") else includes
        parts = tuple(p for p in raw.lstrip("-").split(".") if p)
        if parts:
            target.append(parts)
    return includes, excludes


def _step(patterns: list[Pattern], key: str) -> list[Pattern]:
    """The patterns left after matching one object key (``**`` may match it or nothing)."""
    out: list[Pattern] = []
    for p in patterns:
        if not p:
            continue
        if p[0] == "**":
            out.append(p)                    # ** swallows this key and stays
            out.extend(_step([p[1:]], key) if len(p) > 1 else [()])
        elif p[0] == key or fnmatch.fnmatchcase(key, p[0]):
            out.append(p[1:])
    return out


def _keep(node: Any, patterns: list[Pattern]) -> Any:
    """``node`` with only what ``patterns`` include, or ``_DROP`` when nothing is left."""
    if any(not p or p == ("**",) for p in patterns):
        return node
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            nxt = _step(patterns, str(k))
            if nxt:
                kept = _keep(v, nxt)
                if kept is not _DROP:
                    out[k] = kept
        return out if out else _DROP
    if isinstance(node, list):
        items = [x for x in (_keep(v, patterns) for v in node) if x is not _DROP]
        return items if items else _DROP
    return _DROP


def _remove(node: Any, patterns: list[Pattern]) -> Any:
    """``node`` without what ``patterns`` exclude, or ``_DROP`` when it is excluded whole."""
    if any(not p for p in patterns):
        return _DROP
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            nxt = _step(patterns, str(k))
            kept = _remove(v, nxt) if nxt else v
            if kept is not _DROP:
                out[k] = kept
        return out if out or not node else _DROP
    if isinstance(node, list):
        return [x for x in (_remove(v, patterns) for v in node) if x is not _DROP]
    return node


def filter_response(body: Any, spec: str) -> Any:
    """Apply a ``filter_path`` value to a decoded JSON response body."""
    includes, excludes = parse_filter_path(spec)
    out = body
    if includes:
        out = _keep(out, includes)
    if excludes and out is not _DROP:
        out = _remove(out, excludes)
    return {} if out is _DROP else out


def _filter_path_of(scope: dict[str, Any]) -> str | None:
    query = scope.get("query_string", b"").decode("latin-1")
    if "filter_path" not in query:
        return None
    values = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == "filter_path"]
    return ",".join(values) if values else None


def _pretty_of(scope: dict[str, Any]) -> bool:
    """``pretty`` (bare or any value but ``false``), as Elasticsearch reads it."""
    query = scope.get("query_string", b"").decode("latin-1")
    if "pretty" not in query:
        return False
    values = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == "pretty"]
    return bool(values) and values[-1].lower() != "false"


class FilterPathMiddleware:
    """Plain ASGI: responses to requests with ``filter_path`` are buffered and filtered, and
    those with ``pretty`` indented, whichever route answered them.

    Error responses (status >= 400) pass unfiltered, so a client always sees why a request
    failed (Elasticsearch filters them too, which hides the error; we do not copy that).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        http = scope["type"] == "http"
        spec = _filter_path_of(scope) if http else None
        pretty = _pretty_of(scope) if http else False
        if spec is None and not pretty:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def buffered(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                await _send_filtered(send, start, b"".join(chunks), spec, pretty)

        await self.app(scope, receive, buffered)


async def _send_filtered(send: Any, start: dict[str, Any], body: bytes, spec: str | None,
                         pretty: bool) -> None:
    headers = list(start.get("headers") or [])
    ctype = next((v for k, v in headers if k.lower() == b"content-type"), b"")
    filtered = spec is not None and start.get("status", 200) < 400
    if (filtered or pretty) and b"json" in ctype and body:
        try:
            decoded = orjson.loads(body)
        except orjson.JSONDecodeError:
            decoded = _DROP
        if decoded is not _DROP:
            out = filter_response(decoded, spec) if filtered and spec is not None else decoded
            body = orjson.dumps(out, option=orjson.OPT_INDENT_2 if pretty else 0)
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": body})
