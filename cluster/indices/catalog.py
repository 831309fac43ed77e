"""The catalog of indices: what the coordinator knows of each index, and the rules for names
and settings.

An :class:`IndexMeta` per index (shards, mapping, settings, the next sequence number); index
names checked as Elasticsearch checks them; settings bodies flattened to ``index.``-less keys.
The coordinator holds the catalog; durability writes it to disk and reads it back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.mapping import Mapping
from ..errors import IllegalArgument, InvalidIndexName, SearchError
from ..values import flatten, parse_time_ms

_INVALID_CHARS = set('\\/*?"<>| ,#:')
DEFAULT_MAX_RESULT_WINDOW = 10_000


@dataclass
class IndexMeta:
    """What the coordinator knows of one index."""

    name: str
    uuid: str
    created_ms: int
    number_of_shards: int
    number_of_replicas: int
    settings: dict[str, Any]
    mapping: Mapping
    shards: list[Any] = field(default_factory=list)
    next_seq: int = 0
    # alias name -> the alias as ``GET /_alias`` shows it (``aliases.py``)
    aliases: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: str = "open"   # or "close" (``POST /{index}/_close``)

    @property
    def max_result_window(self) -> int:
        return int(self.settings.get("max_result_window", DEFAULT_MAX_RESULT_WINDOW))


_VALID_NAMES: set[str] = set()   # names that passed (bounded): a bulk repeats one per item


def validate_index_name(name: str) -> None:
    """Elasticsearch's index-name rules, with its messages."""
    if name in _VALID_NAMES:
        return
    _check_index_name(name)
    if len(_VALID_NAMES) < 4096:
        _VALID_NAMES.add(name)


def _check_index_name(name: str) -> None:
    if not name:
        raise InvalidIndexName(f"Invalid index name [{name}], must not be empty", index=name)
    if name != name.lower():
        raise InvalidIndexName(f"Invalid index name [{name}], must be lowercase", index=name)
    bad = [c for c in name if c in _INVALID_CHARS]
    if bad:
        raise InvalidIndexName(f"Invalid index name [{name}], must not contain the following "
                               'characters [ , ", *, \\, <, |, ,, >, /, ?]', index=name)
    if name[0] in "-_+":
        raise InvalidIndexName(f"Invalid index name [{name}], must not start with '_', '-', "
                               "or '+'", index=name)
    if name in (".", ".."):
        raise InvalidIndexName(f"Invalid index name [{name}], must not be '.' or '..'",
                               index=name)
    if len(name.encode()) > 255:
        raise InvalidIndexName(f"Invalid index name [{name}], index name is too long, "
                               f"({len(name.encode())} > 255)", index=name)


def flat_settings(body: dict[str, Any]) -> dict[str, Any]:
    """``{"index": {"number_of_shards": 2}}`` / ``{"index.number_of_shards": 2}`` -> flat."""
    out = flatten(body or {})
    return {(k[len("index."):] if k.startswith("index.") else k): v for k, v in out.items()}


def int_setting(settings: dict[str, Any], key: str, default: int, minimum: int = 0) -> int:
    raw = settings.get(key, default)
    try:
        val = int(str(raw))
    except ValueError:
        raise IllegalArgument(f"Failed to parse value [{raw}] for setting [index.{key}]") \
            from None
    if val < minimum:
        raise IllegalArgument(f"Failed to parse value [{val}] for setting [index.{key}] must be "
                              f">= {minimum}")
    return val


def refresh_interval_s(settings: dict[str, Any]) -> float | None:
    """``index.refresh_interval`` in seconds (default 1s); None when disabled (``-1``)."""
    raw = settings.get("refresh_interval", "1s")
    try:
        ms = parse_time_ms(raw, "index.refresh_interval")
    except SearchError:
        return 1.0
    return None if ms < 0 else ms / 1000.0
