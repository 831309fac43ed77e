"""Date-math index names in URL paths (``/%3Clogs-%7Bnow%2Fd%7D%3E/_search``).

Clients percent-encode ``<logs-{now/d}>``, slash included; the server decodes the path before
routing, so the ``/`` of ``now/d`` would split the segment. Here, before routing, each path
segment that decodes to ``<...>`` (or a comma list holding some) is replaced by the concrete
name it resolves to now (``cluster/indices/date_math.py``), as Elasticsearch resolves them at
request time.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from ..cluster.indices.date_math import resolve_date_math


def resolve_path(scope: dict[str, Any]) -> dict[str, Any]:
    """``scope`` with date-math segments of its path resolved (unchanged when none)."""
    raw = (scope.get("raw_path") or b"").split(b"?", 1)[0]
    if b"%3c" not in raw.lower() and b"<" not in raw:
        return scope
    segments = []
    for seg in raw.decode("latin-1").split("/"):
        text = unquote(seg)
        if text.startswith("<") or ",<" in text:
            text = ",".join(resolve_date_math(p) for p in text.split(","))
        segments.append(text)
    return {**scope, "path": "/".join(segments)}
