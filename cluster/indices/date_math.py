"""Date-math index names: ``<logs-{now/d}>`` -> ``logs-2026.11.27`` (Elasticsearch's rules).

A name in angle brackets is static text with ``{math{format}}`` blocks: the math is
Elasticsearch's date math from ``now`` (``now-1d/d``, ``now/M``), the optional format a Java
date pattern (default ``uuuu.MM.dd``), printed in UTC. ``\\{`` and ``\\}`` escape braces. A time
zone in the block (``{now/d{yyyy.MM.dd|+12:00}}``) is refused by name: not implemented here.
"""
from __future__ import annotations

from ..engine.dates import format_date, parse_date_math
from ..errors import IllegalArgument

DEFAULT_FORMAT = "uuuu.MM.dd"
MAX_NAME = 1024


def _bad(expr: str, why: str) -> IllegalArgument:
    return IllegalArgument(f"invalid dynamic name expression [{expr}]. {why}",
                           es_type="illegal_argument_exception")


def resolve_date_math(expr: str, now_ms: int | None = None) -> str:
    """The concrete name of ``<...>`` (``expr`` with its brackets); other names unchanged."""
    if not (expr.startswith("<") and expr.endswith(">")):
        return expr
    if len(expr) > MAX_NAME:
        raise _bad(expr[:64] + "...", "too long")
    body, out, i = expr[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        elif c == "{":
            end = _block_end(body, i, expr)
            out.append(_evaluate(body[i + 1:end], expr, now_ms))
            i = end + 1
        elif c == "}":
            raise _bad(expr, f"invalid character in placeholder at position [{i}]")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _block_end(body: str, start: int, expr: str) -> int:
    depth = 0
    for j in range(start, len(body)):
        if body[j] == "{":
            depth += 1
        elif body[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise _bad(expr, "date math placeholder is open ended")


def _evaluate(block: str, expr: str, now_ms: int | None) -> str:
    math, fmt = block, DEFAULT_FORMAT
    if "{" in block:
        math, _, rest = block.partition("{")
        if not rest.endswith("}"):
            raise _bad(expr, "missing closing `}` for date math format")
        fmt = rest[:-1]
        if "|" in fmt:
            raise IllegalArgument(f"[time_zone] in the date math index name [{expr}] is not "
                                  "supported by this server")
        if not fmt:
            raise _bad(expr, "missing date format")
    if not math.startswith("now"):
        raise _bad(expr, f"the date math [{math}] must start with [now]")
    try:
        ms = parse_date_math(math, now_ms=now_ms)
    except ValueError as e:
        raise _bad(expr, str(e)) from None
    return str(format_date(ms, None, fmt))
