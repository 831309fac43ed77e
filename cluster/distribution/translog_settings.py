"""A shard copy's ``index.translog.*`` settings: durability, sync interval, flush threshold."""
from __future__ import annotations

from typing import Any

from ..engine.storage import parse_byte_size
from ..errors import SearchError
from ..values import parse_time_ms

DEFAULT_FLUSH_THRESHOLD = 64 << 20


def translog_settings(settings: dict[str, Any]) -> tuple[str, float, int]:
    """(durability, sync interval in seconds, snapshot threshold in bytes) of index settings."""
    durability = str(settings.get("translog.durability", "request")).lower()
    if durability not in ("request", "async"):
        durability = "request"
    try:
        interval = parse_time_ms(settings.get("translog.sync_interval", "5s"),
                                 "index.translog.sync_interval") / 1000.0
    except SearchError:
        interval = 5.0
    threshold = parse_byte_size(settings.get("translog.flush_threshold_size"),
                                DEFAULT_FLUSH_THRESHOLD)
    return durability, max(0.05, interval), max(1, threshold)
