"""Dates: Elasticsearch's date formats, date math (``now-1d/d``) and formatting back.

Dates are stored as epoch nanoseconds; ``format`` (a named format or a Java pattern,
``||``-separated) decides what parses and how a value prints.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from .date_formats import (EPOCH_NAMES, ISO_NAMES, InvalidFormat, builtin_pattern,
                           compile_pattern, is_lenient, parse_fields, parse_stop, print_pattern,
                           resolve, split_format)
from .field_types import FieldType

_ISO_RE = re.compile(
    r"^(?P<y>[+-]?\d{4,9})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[T ](?P<H>\d{2})(?::(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d{1,9}))?)?)?"
    r"(?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$"
)
_SLASH_RE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?(?: ?([+-]\d{4}|Z))?$")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def looks_like_date(value: str) -> bool:
    """Dynamic date detection (``strict_date_optional_time`` and ``yyyy/MM/dd``)."""
    if len(value) < 8 or not value[:4].isdigit():
        return False
    m = _ISO_RE.match(value)
    if m and m.group("m") and m.group("d"):
        try:
            parse_date_nanos(value)
            return True
        except ValueError:
            return False
    return bool(_SLASH_RE.match(value))


def date_components(s: str, fmt: str | None) -> dict[str, str | None] | None:
    """ISO calendar fields of ``s`` (``strict_date_optional_time``), or None."""
    m = _ISO_RE.match(s)
    if m is None:
        return None
    return {k: m.groupdict().get(k) for k in ("y", "m", "d", "H", "M", "S", "f", "tz")}


def parses_with(value: str, fmt: str) -> bool:
    """Whether ``value`` parses under ``fmt`` exactly (no fallback to the default format)."""
    try:
        parse_date_nanos(value, fmt)
        return True
    except ValueError:
        return False


def _tz_seconds(tz: str | None) -> int | None:
    """Offset in seconds of ``Z``, ``+01:00``, ``-0530``, ``UTC`` (None when not given)."""
    if tz is None:
        return None
    t = tz.strip()
    if t in ("Z", "UTC", "GMT", "z"):
        return 0
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", t)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return sign * (int(m.group(2)) * 3600 + int(m.group(3) or 0) * 60)
    raise ValueError(f"unknown time zone [{tz}]")


def _zone(tz: str | None, at_utc_seconds: int = 0) -> int:
    """Offset in seconds of a named or fixed time zone at a UTC instant (0 when None)."""
    if tz is None:
        return 0
    try:
        off = _tz_seconds(tz)
        return off or 0
    except ValueError:
        pass
    try:
        from zoneinfo import ZoneInfo
        zi = ZoneInfo(tz)
    except Exception:  # noqa: BLE001 - unknown zone names are the caller's error
        raise ValueError(f"unknown time zone [{tz}]") from None
    when = _EPOCH + _dt.timedelta(seconds=at_utc_seconds)
    delta = zi.utcoffset(when.replace(tzinfo=None))
    return int(delta.total_seconds()) if delta is not None else 0


def _components_to_nanos(c: dict[str, str | None], round_up: bool,
                         time_zone: str | None) -> int:
    """Epoch nanos of parsed calendar fields. Missing month/day are 1; missing time fields are
    0, or their maximum when ``round_up`` (Elasticsearch's rule for ``gt``/``lte`` bounds)."""
    y = int(c["y"] or 1970)
    mo = int(c["m"] or 1)
    d = int(c["d"] or 1)
    hh = c["H"]
    mi = c["M"]
    ss = c["S"]
    frac = c["f"]
    top = round_up
    h_v = int(hh) if hh is not None else (23 if top else 0)
    m_v = int(mi) if mi is not None else (59 if top else 0)
    s_v = int(ss) if ss is not None else (59 if top else 0)
    if frac is not None:
        n_v = int(frac.ljust(9, "0"))
    else:
        n_v = 999_999_999 if top else 0
    dt = _dt.datetime(y, mo, d, h_v, m_v, s_v, tzinfo=_dt.timezone.utc)
    secs = (dt - _EPOCH) // _dt.timedelta(seconds=1)
    explicit = _tz_seconds(c["tz"])
    if explicit is not None:
        secs -= explicit
    elif time_zone is not None:
        secs -= _zone(time_zone, secs)
    return secs * 1_000_000_000 + n_v


def parse_date_nanos(value: Any, fmt: str | None = None, *, round_up: bool = False,
                     time_zone: str | None = None) -> int:
    """Nanoseconds since the epoch (UTC) of a date under ``format`` (``||`` alternatives, tried
    in order, as Elasticsearch does; a number is read as its text), or with no format under
    ``strict_date_optional_time``, ``yyyy/MM/dd`` or epoch millis.

    With ``round_up`` missing time fields take their maximum (``2020-01-01`` is its last
    nanosecond), as Elasticsearch reads ``gt`` and ``lte`` bounds. Raises ``ValueError``
    (``InvalidFormat`` for a bad format).
    """
    if isinstance(value, bool):
        raise ValueError("boolean is not a date")
    if fmt:
        text = _java_text(value)
        for part in split_format(fmt):
            got = _parse_one(part, text, round_up, time_zone)
            if got is not None:
                return got
        raise ValueError(f"failed to parse date field [{value}] with format [{fmt}]")
    if isinstance(value, (int, float)) and not _FOUR_DIGITS.fullmatch(_java_text(value)):
        return int(round(value * 1_000_000))
    s = _java_text(value).strip()
    if re.fullmatch(r"-?\d+", s) and not _FOUR_DIGITS.fullmatch(s):
        return int(s) * 1_000_000     # epoch_millis (a four-digit number is a year, as in ES)
    comps = date_components(s, None)
    if comps is not None:
        try:
            return _components_to_nanos(comps, round_up, time_zone)
        except (ValueError, OverflowError):
            raise ValueError(f"failed to parse date field [{value}]") from None
    m2 = _SLASH_RE.match(s)
    if m2:
        y, mo, d = int(m2.group(1)), int(m2.group(2)), int(m2.group(3))
        hh, mi, ss = (int(m2.group(i) or 0) for i in (4, 5, 6))
        dt = _dt.datetime(y, mo, d, hh, mi, ss, tzinfo=_dt.timezone.utc)
        secs = (dt - _EPOCH) // _dt.timedelta(seconds=1)
        tz = m2.group(7)
        if tz and tz != "Z":
            sign = -1 if tz[0] == "-" else 1
            secs -= sign * (int(tz[1:3]) * 3600 + int(tz[3:5]) * 60)
        return secs * 1_000_000_000
    if re.fullmatch(r"-?\d+", s):
        return int(s) * 1_000_000
    raise ValueError(f"failed to parse date field [{value}]")


def _java_text(value: Any) -> str:
    """The text Elasticsearch parses a date from (a JSON number's own spelling)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return format(value, "f") if "e" in text else text
    raise ValueError("not a date")


# the default format, strict_date_optional_time||epoch_millis, reads 2020 as a year
_FOUR_DIGITS = re.compile(r"\d{4}")


_EPOCH_RE = {"epoch_millis": re.compile(r"(-?)(\d{1,19})(?:\.(\d{1,6}))?"),
             "epoch_second": re.compile(r"(-?)(\d{1,19})(?:\.(\d{1,9}))?")}


def _parse_one(part: str, text: str, round_up: bool, time_zone: str | None) -> int | None:
    """``text`` under one alternative of a format (nanos), or None when it does not match."""
    if part in _EPOCH_RE:
        m = _EPOCH_RE[part].fullmatch(text)
        if m is None:
            return None
        unit = 1_000_000 if part == "epoch_millis" else 1_000_000_000
        frac = int((m.group(3) or "").ljust(9, "0")[:9]) * unit // 1_000_000_000
        n = int(m.group(2)) * unit + frac
        return -n if m.group(1) else n
    try:
        if part in ISO_NAMES:
            comps = date_components(text, None)
            if comps is None or " " in text:
                return None
            return _components_to_nanos(comps, round_up, time_zone)
        pattern = compile_pattern(builtin_pattern(part) or part, is_lenient(part), part)
        fields = parse_fields(pattern, text)
        if fields is None:
            return None
        return resolve(fields, round_up, lambda local: _zone(time_zone, local))
    except InvalidFormat:
        raise
    except (ValueError, OverflowError, KeyError):
        return None


# the ISO names as java.time patterns, only to find where a parse stops (``parse_failure``)
_OPTIONAL_TIME = "yyyy[-MM[-dd]]['T'][HH[:mm[:ss[.n]]]][XXX]"
_ISO_SHAPES = {"strict_date_optional_time_nanos": "yyyy[-MM[-dd['T'HH[:mm[:ss[.n]]][XXX]]]]"}
_ALL_ENCLOSED = "Failed to parse with all enclosed parsers"


def parse_failure(value: Any, fmt: str) -> str | None:
    """java.time's ``DateTimeParseException`` text for ``value`` that ``fmt`` failed to parse,
    the innermost cause Elasticsearch reports: a format of several parsers (``a||b``, and
    each epoch name) fails as a whole; one pattern names where its parse stopped. None when
    every element parsed and the date itself is invalid (java.time says that differently)."""
    parts = split_format(fmt)
    if len(parts) > 1 or _several_parsers(parts[0]):
        return _ALL_ENCLOSED
    part, text = parts[0], _java_text(value)
    pattern = _ISO_SHAPES.get(part, _OPTIONAL_TIME) if part in ISO_NAMES else \
        builtin_pattern(part) or part
    end, parsed_all = parse_stop(pattern, is_lenient(part) or part == "date_optional_time",
                                 part, text)
    if not parsed_all:
        return f"Text '{text}' could not be parsed at index {end}"
    if end < len(text):
        return f"Text '{text}' could not be parsed, unparsed text found at index {end}"
    return None


def _several_parsers(name: str) -> bool:
    """Built-ins Elasticsearch composes of several parsers: the epoch names, ``date_time``,
    and every built-in with a zone offset (one parser for ``Z``, one for ``+01:00``)."""
    if name in EPOCH_NAMES or name in ("date_time", "strict_date_time"):
        return True
    pattern = builtin_pattern(name)
    return pattern is not None and "X" in pattern


_MATH_OP_RE = re.compile(r"([+-])(\d+)([yMwdhHms])|/([yMwdhHms])")
_UNIT_SECONDS = {"w": 7 * 86400, "d": 86400, "h": 3600, "H": 3600, "m": 60, "s": 1}


def _add_months(dt: _dt.datetime, months: int) -> _dt.datetime:
    total = dt.year * 12 + (dt.month - 1) + months
    y, mo = divmod(total, 12)
    import calendar
    day = min(dt.day, calendar.monthrange(y, mo + 1)[1])
    return dt.replace(year=y, month=mo + 1, day=day)


def _round_down(dt: _dt.datetime, unit: str) -> _dt.datetime:
    if unit == "y":
        return dt.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "M":
        return dt.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "w":
        start = dt - _dt.timedelta(days=dt.weekday())
        return start.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "d":
        return dt.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit in ("h", "H"):
        return dt.replace(minute=0, second=0, microsecond=0)
    if unit == "m":
        return dt.replace(second=0, microsecond=0)
    return dt.replace(microsecond=0)


def _plus(dt: _dt.datetime, amount: int, unit: str) -> _dt.datetime:
    if unit == "y":
        return _add_months(dt, 12 * amount)
    if unit == "M":
        return _add_months(dt, amount)
    return dt + _dt.timedelta(seconds=amount * _UNIT_SECONDS[unit])


def parse_date_math(value: Any, ftype: FieldType | None = None, *, round_up: bool = False,
                    fmt: str | None = None, time_zone: str | None = None,
                    now_ms: int | None = None) -> int:
    """A range bound or term as the stored integer (millis, or nanos for ``date_nanos``).

    Understands Elasticsearch's date math: ``now``, ``<date>||``, then ``+1d``/``-2M``/...
    and ``/d`` rounding (down to the unit's first instant, or with ``round_up`` to its last,
    for ``gt`` and ``lte``). Raises ``ValueError`` on anything else.
    """
    nanos_field = ftype is not None and ftype.type == "date_nanos"
    fmt = fmt or (ftype.format if ftype is not None else None)
    s = value.strip() if isinstance(value, str) else None
    if s is None or (not s.startswith("now") and "||" not in s):
        n = parse_date_nanos(value, fmt, round_up=round_up, time_zone=time_zone)
        return n if nanos_field else n // 1_000_000
    if s.startswith("now"):
        if now_ms is None:
            import time
            now_ms = int(time.time() * 1000)
        base_ns = now_ms * 1_000_000
        ops = s[3:]
    else:
        anchor, _, ops = s.partition("||")
        base_ns = parse_date_nanos(anchor, fmt, time_zone=time_zone)
    pos = 0
    steps = []
    while pos < len(ops):
        m = _MATH_OP_RE.match(ops, pos)
        if m is None:
            raise ValueError(f"operation [{ops}] not supported in date math [{value}]")
        steps.append(m)
        pos = m.end()
    if not steps:
        return base_ns if nanos_field else base_ns // 1_000_000
    secs, rem = divmod(base_ns, 1_000_000_000)
    off = _zone(time_zone, secs)
    local = _EPOCH.replace(tzinfo=None) + _dt.timedelta(seconds=secs + off,
                                                        microseconds=rem // 1000)
    extra_ns = rem % 1000
    rounded_up = False
    for m in steps:
        if m.group(4):
            unit = m.group(4)
            start = _round_down(local, unit)
            extra_ns = 0
            if round_up:
                local = _plus(start, 1, unit)
                rounded_up = True
            else:
                local = start
        else:
            amount = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
            local = _plus(local, amount, m.group(3))
    delta = local - _EPOCH.replace(tzinfo=None)
    total_ns = (delta.days * 86400 + delta.seconds - off) * 1_000_000_000 \
        + delta.microseconds * 1000 + extra_ns
    if rounded_up:
        total_ns -= 1
    return total_ns if nanos_field else total_ns // 1_000_000


class NanosOutOfRange(ValueError):
    """A ``date_nanos`` value outside 1970 .. 2262-04-11T23:47:16.854775807 (Elasticsearch's
    texts: the instant is printed as Java's ``Instant.toString``)."""


_MAX_NANOS = 2**63 - 1


def parse_date(value: Any, ftype: FieldType | None = None) -> int:
    """The stored integer for a date: millis for ``date``, nanos for ``date_nanos``."""
    nanos = parse_date_nanos(value, ftype.format if ftype else None)
    if ftype is not None and ftype.type == "date_nanos":
        return nanos_in_range(nanos)
    return nanos // 1_000_000


def nanos_in_range(nanos: int) -> int:
    """``nanos`` if a ``date_nanos`` field can hold it, else ``NanosOutOfRange``."""
    if nanos < 0:
        raise NanosOutOfRange(f"date[{instant_text(nanos)}] is before the epoch in 1970 and "
                              "cannot be stored in nanosecond resolution")
    if nanos > _MAX_NANOS:
        raise NanosOutOfRange(f"date[{instant_text(nanos)}] is after "
                              "2262-04-11T23:47:16.854775807 and cannot be stored in "
                              "nanosecond resolution")
    return nanos


def instant_text(nanos: int) -> str:
    """Java's ``Instant.toString``: the fraction in groups of three digits, none when zero."""
    secs, rem = divmod(nanos, 1_000_000_000)
    try:
        dt = _EPOCH + _dt.timedelta(seconds=secs)
    except OverflowError:
        return f"{secs}s"
    frac = "" if rem == 0 else (f".{rem // 1_000_000:03d}" if rem % 1_000_000 == 0 else
                                f".{rem // 1000:06d}" if rem % 1000 == 0 else f".{rem:09d}")
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def format_date(stored: int, ftype: FieldType | None, fmt: str | None = None) -> str | int:
    """Render a stored date as Elasticsearch prints it with a ``format`` (its first
    alternative): ``sort`` values, ``docvalue_fields``, aggregation keys."""
    is_nanos = ftype is not None and ftype.type == "date_nanos"
    nanos = stored if is_nanos else stored * 1_000_000
    first = split_format(fmt)[0] if fmt else None
    if first == "epoch_millis":
        ms, rem = divmod(nanos, 1_000_000)
        return str(ms) + (f".{rem:06d}".rstrip("0") if rem else "")
    if first == "epoch_second":
        secs, rem = divmod(nanos, 1_000_000_000)
        return str(secs) + (f".{rem:09d}".rstrip("0") if rem else "")
    secs, rem = divmod(nanos, 1_000_000_000)
    if first is not None and first not in ISO_NAMES:
        pattern = compile_pattern(builtin_pattern(first) or first, is_lenient(first), first)
        return print_pattern(pattern, nanos)
    dt = _EPOCH + _dt.timedelta(seconds=secs)
    if first and "nanos" in first:
        # Java prints the nano-of-second with 3 to 9 digits (trailing zeros dropped)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rem:09d}".rstrip("0").ljust(3, "0") + "Z"
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rem // 1_000_000:03d}Z"
