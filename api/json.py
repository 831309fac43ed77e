"""Fast JSON responses (orjson) that splice stored ``_source`` bytes in without re-parsing."""
from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.responses import Response

PRODUCT_HEADERS = {"X-Elastic-Product": "Elasticsearch"}
_COMPAT_ACCEPT = re.compile(r"application/vnd\.elasticsearch\+json\s*;\s*compatible-with=(\d+)",
                            re.IGNORECASE)


def compat_json_type(accept: str | None) -> str | None:
    """The JSON media type to answer with when ``Accept`` asks for a compatible version.

    Elasticsearch's 8.x/9.x clients send ``application/vnd.elasticsearch+json;
    compatible-with=N``; Elasticsearch answers JSON in that vendor type, with the same version.
    """
    m = _COMPAT_ACCEPT.search(accept or "")
    return f"application/vnd.elasticsearch+json;compatible-with={m.group(1)}" if m else None


def _fragment(obj: Any) -> Any:
    """Raw JSON bytes (``_source`` from the fetch phase) written verbatim: orjson asks for
    them as it meets them, so a response is not walked in Python first (~30 µs a page)."""
    if isinstance(obj, bytes):
        return orjson.Fragment(obj)
    raise TypeError(f"Type is not JSON serializable: {type(obj).__name__}")


def dumps(content: Any) -> bytes:
    """Compact JSON; ``pretty`` is applied at the edge (``filter_path.py``) for every route."""
    return orjson.dumps(content, default=_fragment,
                        option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)


class JSONResponse(Response):
    media_type = "application/json"

    def __init__(self, content: Any, status_code: int = 200,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(content=content, status_code=status_code, headers=headers)

    def render(self, content: Any) -> bytes:
        return dumps(content)
