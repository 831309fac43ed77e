"""Elasticsearch's spellings of plain values: times, booleans, nested settings.

One parser each, used by every layer (a search's ``timeout``, a cursor's ``keep_alive``,
``index.refresh_interval``, ``index.translog.sync_interval``, URL flags), so they accept and
refuse the same spellings with Elasticsearch's messages.
"""
from __future__ import annotations

from typing import Any

from .errors import IllegalArgument

# longest suffixes first where one ends another ("ms" before "s")
TIME_UNITS_MS = (("nanos", 1e-6), ("micros", 1e-3), ("ms", 1.0), ("s", 1000.0),
                 ("m", 60_000.0), ("h", 3_600_000.0), ("d", 86_400_000.0))


def parse_time_ms(value: Any, name: str = "timeout", *, negative: bool = True) -> float:
    """An Elasticsearch time value (``1m``, ``30s``, ``500ms``, ``0``, ``-1``) in milliseconds.

    ``negative=False`` refuses negative durations (``-1`` included), as keep-alives do."""
    s = str(value).strip()
    ms: float | None = float(s) if s in ("-1", "0") else None
    if ms is None:
        for unit, mult in TIME_UNITS_MS:
            if s.endswith(unit):
                try:
                    ms = float(s[: -len(unit)]) * mult
                except ValueError:
                    pass
                break
    if ms is None:
        raise IllegalArgument(f"failed to parse setting [{name}] with value [{value}] as a time "
                              "value: unit is missing or unrecognized")
    if ms < 0 and not negative:
        raise IllegalArgument(f"failed to parse setting [{name}] with value [{value}] as a time "
                              "value: negative durations are not supported")
    return ms


def parse_bool(value: Any, name: str) -> bool:
    """Elasticsearch's strict booleans: ``true``, ``false`` or empty (a bare flag)."""
    if isinstance(value, bool):
        return value
    s = str(value).lower()
    if s in ("true", ""):
        return True
    if s == "false":
        return False
    raise IllegalArgument(f"Failed to parse value [{value}] as only [true] or [false] are "
                          "allowed.")


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings to dotted keys: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """Dotted keys back to nested objects (keys in sorted order)."""
    out: dict[str, Any] = {}
    for key, value in sorted(flat.items()):
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


# The formats Elasticsearch writes besides JSON (``XContentType.fromFormat``); we write none.
OTHER_FORMATS = frozenset({"yaml", "cbor", "smile"})


def format_refusal(value: str) -> str | None:
    """Why ``format=value`` is refused: Elasticsearch's ``fromFormat`` compares names without
    case and answers JSON for a name it does not know, so only its other formats are refused."""
    if value.lower() in OTHER_FORMATS:
        return f"[format={value}] is not supported by this server (JSON only)"
    return None


def check_format(params: dict[str, str]) -> None:
    """Refuse a ``format`` URL parameter naming an output we do not write."""
    refusal = format_refusal(params.get("format", "json"))
    if refusal is not None:
        raise IllegalArgument(refusal)
