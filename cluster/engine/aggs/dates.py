"""Date rounding for ``date_histogram``: calendar and fixed intervals, time zones, offsets.

Vectorised over int64 epoch millis. Calendar units round in local time (the ``time_zone``), as
Elasticsearch's ``Rounding`` does; a zone with daylight saving time is resolved once per
distinct hour of the values, not per document.
"""
from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from ...errors import IllegalArgument

DAY = 86_400_000
UNIT_MS = {"second": 1000, "minute": 60_000, "hour": 3_600_000, "day": DAY, "week": 7 * DAY,
           "month": 31 * DAY, "quarter": 92 * DAY, "year": 366 * DAY}


@lru_cache(maxsize=64)
def zone(tz: str | None) -> _dt.tzinfo:
    """``time_zone``: ``UTC``, ``Z``, ``+01:00`` / ``-0530`` offsets or an IANA name."""
    if tz is None or tz in ("UTC", "Z", "utc", "GMT"):
        return _dt.timezone.utc
    m = re.fullmatch(r"([+-])(\d{1,2}):?(\d{2})?", tz)
    if m:
        mins = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return _dt.timezone((-1 if m.group(1) == "-" else 1) * _dt.timedelta(minutes=mins))
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise IllegalArgument(f"Unknown time-zone ID: {tz}") from None


def offsets_ms(utc_ms: np.ndarray, tz: _dt.tzinfo) -> np.ndarray:
    """The zone's UTC offset (ms) at each instant."""
    if isinstance(tz, _dt.timezone):
        off = tz.utcoffset(None)
        return np.full(len(utc_ms), int(off.total_seconds() * 1000), dtype=np.int64)
    hours, inv = np.unique(np.floor_divide(utc_ms, 3_600_000), return_inverse=True)
    offs = np.array([int(_dt.datetime.fromtimestamp(int(h) * 3600, _dt.timezone.utc)
                         .astimezone(tz).utcoffset().total_seconds() * 1000)
                     for h in hours.tolist()], dtype=np.int64)
    return offs[inv.reshape(-1)] if len(offs) else np.zeros(0, dtype=np.int64)


def _floor_local(local: np.ndarray, unit: str | None, fixed: int | None) -> np.ndarray:
    if fixed is not None:
        return np.floor_divide(local, fixed) * fixed
    assert unit is not None
    if unit in ("second", "minute", "hour", "day"):
        step = UNIT_MS[unit]
        return np.floor_divide(local, step) * step
    if unit == "week":   # weeks start on Monday; 1970-01-01 was a Thursday
        days = np.floor_divide(local, DAY)
        return (days - np.mod(days + 3, 7)) * DAY
    days = np.floor_divide(local, DAY)   # months, quarters and years start at midnight
    if not len(days):
        return days
    lo, hi = int(days.min()), int(days.max())
    if hi - lo < max(len(days), 4096):   # each distinct day's first day, looked up
        return _first_days(np.arange(lo, hi + 1, dtype=np.int64), unit)[days - lo] * DAY
    return _first_days(days, unit) * DAY


def _first_days(days: np.ndarray, unit: str) -> np.ndarray:
    """The first day (since the epoch) of each day's month, quarter or year."""
    months = days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
    if unit == "quarter":
        months = months - np.mod(months, 3)
    elif unit == "year":
        months = months - np.mod(months, 12)
    return months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)


def round_down(utc_ms: np.ndarray, unit: str | None, fixed: int | None, tz: _dt.tzinfo,
               offset: int = 0) -> np.ndarray:
    """The bucket key (UTC millis) of each value: round ``value - offset`` down in local
    time, back to UTC, plus ``offset``."""
    v = utc_ms.astype(np.int64) - offset
    off = offsets_ms(v, tz)
    local_key = _floor_local(v + off, unit, fixed)
    back = offsets_ms(local_key - off, tz)
    return local_key - back + offset


def next_key(key: int, unit: str | None, fixed: int | None, tz: _dt.tzinfo, offset: int = 0
             ) -> int:
    """The key of the bucket after the one at ``key`` (for empty buckets)."""
    if fixed is not None and isinstance(tz, _dt.timezone):
        return key + fixed
    step = fixed if fixed is not None else UNIT_MS.get(unit or "day", DAY)
    probe = key + step if unit not in ("month", "quarter", "year", "week", "day") else key
    if unit in ("month", "quarter", "year"):
        probe = key + {"month": 32, "quarter": 93, "year": 367}[unit] * DAY
    elif unit in ("week", "day"):
        probe = key + step + 2 * 3_600_000   # past a daylight saving shift
    nxt = int(round_down(np.array([probe]), unit, fixed, tz, offset)[0])
    return nxt if nxt > key else key + step


def parse_offset(value: object) -> int:
    """``offset``: ``+6h``, ``-1d``, ``30m`` or a number of millis."""
    if value is None:
        return 0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    m = re.fullmatch(r"([+-]?)(\d+)(ms|s|m|h|d)", str(value).strip())
    if not m:
        raise IllegalArgument(f"failed to parse setting [date_histogram.offset] with value "
                              f"[{value}] as a time value: unit is missing or unrecognized")
    mult = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": DAY}[m.group(3)]
    return (-1 if m.group(1) == "-" else 1) * int(m.group(2)) * mult


@lru_cache(maxsize=1 << 16)
def iso(ms: int, tz: _dt.tzinfo) -> str:
    """Elasticsearch's default ``strict_date_optional_time`` rendering in a zone (cached:
    histogram keys repeat from search to search)."""
    dt = _dt.datetime.fromtimestamp(ms // 1000, _dt.timezone.utc).astimezone(tz)
    off = dt.utcoffset() or _dt.timedelta(0)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}"
    if off == _dt.timedelta(0):
        return text + "Z"
    total = int(off.total_seconds()) // 60
    sign = "-" if total < 0 else "+"
    return text + f"{sign}{abs(total) // 60:02d}:{abs(total) % 60:02d}"
