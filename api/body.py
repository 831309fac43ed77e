"""Reading request bodies: a size cap (``http.max_content_length``), JSON and NDJSON."""
from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request

from ..cluster.errors import ContentTooLong, XContentParseError
from ..cluster.engine.limits import check_json_depth

MAX_CONTENT_LENGTH = 100 * 1024 * 1024


def _too_long(n: int) -> ContentTooLong:
    return ContentTooLong(f"Request body is too large: more than [{MAX_CONTENT_LENGTH}] bytes "
                          f"(http.max_content_length), got at least [{n}]")


async def read_body(request: Request, limit: int = MAX_CONTENT_LENGTH) -> bytes:
    """The raw body, refusing (413) anything over ``limit`` before it is all in memory."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_long(int(declared))
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_long(size)
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(raw: bytes) -> Any:
    """Parse a JSON body; empty means no body. Errors as Elasticsearch words them."""
    if not raw or not raw.strip():
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        line = raw[: e.pos].count(b"\n") + 1 if e.pos is not None else 1
        col = (e.pos - raw.rfind(b"\n", 0, e.pos)) if e.pos is not None else 1
        raise XContentParseError(f"[{line}:{col}] Unexpected character in JSON: {e.msg}") \
            from None
    check_json_depth(value)
    return value


async def json_body(request: Request) -> Any:
    return parse_json(await read_body(request))
