"""The ``_cat`` APIs' tables: columns, ``h=``, ``s=``, ``v``, ``help``, ``bytes=``, ``time=``
and ``format=json``, as Elasticsearch's ``RestTable`` renders them (pure rendering).

Each ``_cat`` endpoint declares its columns (name, aliases, description, shown by default,
kind); rows are dicts keyed by column name with raw values (bytes as integers). ``h`` picks
columns by name, alias or wildcard (an unknown one is refused by name); ``s`` sorts by columns
(``:desc``/``:asc``), numbers as numbers, missing values last; ``bytes`` prints byte columns as
whole units (``b``, ``kb``, ``mb``...), otherwise Elasticsearch's human sizes (``4.2kb``);
``time`` prints time columns (raw values in milliseconds) as whole units (``d``, ``h``, ``m``,
``s``, ``ms``, ``micros``, ``nanos``; truncated, as ``TimeValue`` converts), otherwise
Elasticsearch's human times (``1.2s``, ``3.5h``); ``help`` lists the columns; ``v`` adds the
header line. Numbers are right-aligned.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any

from starlette.responses import PlainTextResponse, Response

from ..cluster.errors import IllegalArgument
from .json import JSONResponse
from .params import bool_param

CAT_PARAMS = {"format", "h", "s", "v", "help", "bytes", "time", "pretty", "human",
              "error_trace", "filter_path", "local", "master_timeout"}
_BYTES = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}
#: nanoseconds per unit, largest first (the order ``TimeValue.toString`` picks a unit in)
_TIMES = {"d": 86_400 * 10**9, "h": 3_600 * 10**9, "m": 60 * 10**9, "s": 10**9, "ms": 10**6,
          "micros": 10**3, "nanos": 1}


@dataclass(frozen=True)
class Column:
    """One column of a ``_cat`` table."""

    name: str
    aliases: tuple[str, ...] = ()
    desc: str = ""
    default: bool = True
    kind: str = "text"      # text | number | bytes | time (milliseconds)


def human_bytes(n: int) -> str:
    """Elasticsearch's ``ByteSizeValue`` text: the largest unit with a value >= 1, one decimal
    place at most (``225b``, ``4.5kb``, ``1gb``)."""
    for unit in ("pb", "tb", "gb", "mb", "kb"):
        size = _BYTES[unit]
        if n >= size:
            v = round(n / size, 1)
            return f"{v:g}{unit}"
    return f"{n}b"


def human_time(ms: float) -> str:
    """Elasticsearch's ``TimeValue.toString``: the largest unit with a value >= 1, one decimal
    place at most, truncated (``500ms``, ``1.2s``, ``2d``); ``0s`` for zero; a negative value
    as its plain number (``-1``)."""
    nanos = int(ms * 10**6)
    if nanos < 0:
        return str(int(ms))
    if nanos == 0:
        return "0s"
    for unit, size in _TIMES.items():
        if nanos >= size or unit == "nanos":
            v = (Decimal(nanos) / size).quantize(Decimal("0.1"), rounding=ROUND_DOWN)
            return f"{v.normalize():f}{unit}"
    raise AssertionError("unreachable: nanos is the last unit")


def time_in(ms: float, unit: str) -> str:
    """A time column under ``time=unit``: whole units, truncated toward zero."""
    return str(int(int(ms * 10**6) / _TIMES[unit]))


def _pick(columns: list[Column], h: str | None) -> list[Column]:
    if not h:
        return [c for c in columns if c.default]
    out: list[Column] = []
    for want in (p.strip() for p in h.split(",") if p.strip()):
        hit = [c for c in columns if want == c.name or want in c.aliases] or \
            [c for c in columns if ("*" in want and fnmatch.fnmatchcase(c.name, want))]
        if not hit:
            raise IllegalArgument(f"unknown header [{want}] for this _cat API")
        out.extend(c for c in hit if c not in out)
    return out


def _sort(rows: list[dict[str, Any]], columns: list[Column], s: str | None
          ) -> list[dict[str, Any]]:
    if not s:
        return rows
    for spec in reversed([p.strip() for p in s.split(",") if p.strip()]):
        name, _, order = spec.partition(":")
        col = next((c for c in columns if name == c.name or name in c.aliases), None)
        if col is None:
            raise IllegalArgument(f"Unable to sort by unknown sort key `{name}`")
        if order not in ("", "asc", "desc"):
            raise IllegalArgument(f"invalid sort order [{order}] for [{name}]")
        present = [r for r in rows if r.get(col.name) not in (None, "")]
        missing = [r for r in rows if r.get(col.name) in (None, "")]
        numeric = col.kind in ("number", "bytes", "time")
        present.sort(key=lambda r: _num(r[col.name]) if numeric else str(r[col.name]),
                     reverse=order == "desc")
        rows = present + missing
    return rows


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("-inf")


def _text(v: Any, col: Column, bytes_unit: str | None, time_unit: str | None = None) -> str:
    if v is None:
        return ""
    if col.kind == "bytes" and isinstance(v, int):
        return str(v // _BYTES[bytes_unit]) if bytes_unit else human_bytes(v)
    if col.kind == "time" and isinstance(v, (int, float)) and not isinstance(v, bool):
        return time_in(v, time_unit) if time_unit else human_time(v)
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _help(columns: list[Column]) -> Response:
    w1 = max(len(c.name) for c in columns)
    w2 = max(len(",".join(c.aliases)) for c in columns)
    lines = [f"{c.name.ljust(w1)} | {','.join(c.aliases).ljust(w2)} | {c.desc}"
             for c in columns]
    return PlainTextResponse("\n".join(lines) + "\n")


def render(rows: list[dict[str, Any]], columns: list[Column], params: dict[str, str]
           ) -> Response:
    """The ``_cat`` answer for ``rows`` under the request's ``params``."""
    unit = params.get("bytes")
    if unit is not None and unit not in _BYTES:
        raise IllegalArgument(f"failed to parse [bytes] with value [{unit}]: unknown unit")
    if params.get("time") is not None and params["time"] not in _TIMES:
        raise IllegalArgument(f"failed to parse [time] with value [{params['time']}]")
    fmt = params.get("format", "text")
    if fmt not in ("text", "json", "txt"):
        raise IllegalArgument(f"[format={fmt}] is not supported by this server "
                              "(text and json only)")
    if bool_param(params, "help"):
        return _help(columns)
    cols = _pick(columns, params.get("h"))
    rows = _sort(rows, columns, params.get("s"))
    tunit = params.get("time")
    if fmt == "json":
        return JSONResponse([{c.name: (None if r.get(c.name) is None else _text(
            r.get(c.name), c, unit, tunit)) for c in cols} for r in rows])
    table = [[_text(r.get(c.name), c, unit, tunit) for c in cols] for r in rows]
    header = bool_param(params, "v")
    if header:
        table.insert(0, [c.name for c in cols])
    widths = [max([len(row[i]) for row in table] + [0]) for i in range(len(cols))]
    lines = []
    for i, row in enumerate(table):
        cells = [v.ljust(w) if c.kind == "text" or header and i == 0 else v.rjust(w)
                 for v, w, c in zip(row, widths, cols)]
        lines.append(" ".join(cells).rstrip() + "\n")
    return PlainTextResponse("".join(lines))
