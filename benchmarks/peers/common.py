"""What every benchmark peer shares: the subset of the Elasticsearch API the benchmark sends,
parsed once (:class:`Search`), and the responses in Elasticsearch's shape."""
from __future__ import annotations

import time
from typing import Any

import orjson
from starlette.responses import Response


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(obj), status_code=status, media_type="application/json")


def error_response(reason: str, status: int = 400) -> Response:
    return json_response({"error": {"type": "illegal_argument_exception", "reason": reason},
                  "status": status}, status)


def parse_bulk(raw: bytes) -> list[tuple[str, bytes, dict[str, Any]]]:
    """``(id, source bytes, source)`` of each ``index`` action of an NDJSON bulk body."""
    lines = [ln for ln in raw.split(b"\n") if ln.strip()]
    out = []
    for i in range(0, len(lines) - 1, 2):
        meta = orjson.loads(lines[i])
        action = next(iter(meta.values()))
        src = lines[i + 1]
        doc = orjson.loads(src)
        out.append((str(action.get("_id", doc.get("id", i // 2))), src, doc))
    return out


def text_of(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return "" if value is None else str(value)


def sort_of(value: Any) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)


class Search:
    """The part of a search body the peers understand."""

    def __init__(self, body: dict[str, Any]) -> None:
        q = body.get("query") or {"match_all": {}}
        self.term: str | None = None
        self.field: str | None = None
        if "match" in q:
            self.field, spec = next(iter(q["match"].items()))
            self.term = spec["query"] if isinstance(spec, dict) else str(spec)
        elif "match_all" not in q:
            raise ValueError("only match_all and match are supported")
        self.sort_field: str | None = None
        self.sort_desc = False
        for s in body.get("sort") or []:
            name, opts = (s, {}) if isinstance(s, str) else next(iter(s.items()))
            if name in ("_score", "_doc"):
                continue
            self.sort_field = name
            order = opts if isinstance(opts, str) else opts.get("order", "asc")
            self.sort_desc = order == "desc"
            break
        if body.get("search_after") is not None:
            raise ValueError("search_after is not supported by this peer")
        self.from_ = int(body.get("from", 0))
        self.size = int(body.get("size", 10))


def search_response(t0: float, total: int, hits: list[dict[str, Any]],
              max_score: float | None) -> Response:
    body = {"took": int((time.perf_counter() - t0) * 1000), "timed_out": False,
            "hits": {"total": {"value": total, "relation": "eq"}, "max_score": max_score,
                     "hits": hits}}
    return Response(orjson.dumps(body), media_type="application/json")
