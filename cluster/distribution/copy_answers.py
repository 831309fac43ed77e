"""How a shard copy keeps its last answer and sends answers that must cross as JSON.

A copy keeps the last command's answer so that a retry of that command gets it again; kept as
one bytes object it costs no memory layout around the write buffer (see :func:`pack`).
"""
from __future__ import annotations

from typing import Any

import orjson


class Packed(bytes):
    """An ``apply`` answer kept as JSON (see :func:`pack`)."""


def pack(value: Any) -> Any:
    """``apply``'s answer ``(results, generation)`` as one bytes object.

    Kept until the next command, a batch's results are thousands of small dicts; the next
    command is often the refresh, which frees the write buffer and lays out what stays in the
    memory it leaves — around them, keeping those pages (~10 MiB per 60,000 documents).
    """
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], list)):
        return value
    try:
        return Packed(orjson.dumps(value))
    except TypeError:
        return value


def unpack(value: Any) -> Any:
    if isinstance(value, Packed):
        results, gen = orjson.loads(memoryview(value))
        return results, gen
    return value


def json_safe(value: Any) -> Any:
    try:
        return {"json": orjson.loads(orjson.dumps(value))}
    except TypeError:
        return None


def from_json_safe(value: Any) -> Any:
    if isinstance(value, dict) and "json" in value:
        v = value["json"]
        # ``apply`` answers (results, generation): JSON made the tuple a list
        if isinstance(v, list) and len(v) == 2 and isinstance(v[0], list):
            return v[0], v[1]
        return v
    return None
