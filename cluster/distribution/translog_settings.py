"""A shard copy's ``index.translog.*`` settings: durability, sync interval, flush threshold."""
from __future__ import annotations

from typing import Any

from ..engine.storage import parse_byte_size
from ..errors import SearchError
from ..values import parse_time_ms

DEFAULT_FLUSH_THRESHOLD = 64 << 20
# The default threshold grows with the last snapshot, up to Elasticsearch 7's default
# ``flush_threshold_size``: it bounds the log's disk and the replay after a crash.
MAX_DEFAULT_FLUSH_THRESHOLD = 512 << 20
CATCH_UP_LOG_BYTES = 64 << 20


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


def flush_due(settings: dict[str, Any], log_bytes: int, snapshot_bytes: int) -> bool:
    """Whether a log of ``log_bytes`` since the last snapshot calls for a new one.

    Snapshots are incremental (``snapshot_store.py``): each writes what its parts do not hold
    yet, so their total work is about the data once whatever the threshold. By default the log
    may also grow to the size of the last snapshot (``snapshot_bytes``: what loading it reads),
    up to 512mb: fewer flushes (each syncs files), while recovery replays a log no larger than
    the snapshot it starts from, and never more than 512mb. An explicit
    ``index.translog.flush_threshold_size`` is obeyed as set.
    """
    threshold = translog_settings(settings)[2]
    if "translog.flush_threshold_size" not in settings:
        threshold = max(threshold, min(snapshot_bytes, MAX_DEFAULT_FLUSH_THRESHOLD))
    return log_bytes >= threshold


def catch_up_by_records(log_bytes: int) -> bool:
    """Whether a copy catching up gets the log's records (else a snapshot): one reply stays as
    bounded as when the log never outgrew the fixed default."""
    return log_bytes <= CATCH_UP_LOG_BYTES
