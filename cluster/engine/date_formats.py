"""Java ``DateTimeFormatter`` patterns and Elasticsearch's named date formats, compiled once.

Why: a mapping, a range query, a sort or an aggregation may name a ``format`` — a built-in
name (``basic_date_time``, ``week_date``, ...) or a Java pattern (``uuuu-MM-dd'T'HH:mm[:ss]``),
``||``-separated alternatives. A pattern compiles into a linear-time RE2 expression for parsing
and a token list for printing; both are cached (``compile_format``, bounded). Bad patterns fail
with Elasticsearch's text: ``Invalid format: [b]: Unknown pattern letter: b``.

Week fields (``Y``, ``w``, ``e``, the ``week_date`` family) follow ISO-8601 rules (weeks start
on Monday, week 1 holds January 4th), as Elasticsearch's ``Locale.ROOT`` calendar does.
"""
from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

from ..errors import IllegalArgument

MAX_FORMAT_LENGTH = 512        # a format string longer than this is refused (bounded compile)
# java.time's Locale.ROOT (CLDR root) has one spelling for short and full names: "Jan", "Thu"
_MONTHS = [calendar.month_abbr[i] for i in range(1, 13)]
_MONTHS_FULL = _MONTHS
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_DAYS_FULL = _DAYS
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

# letters java.time knows; the ones we do not implement are refused by name
_JAVA_LETTERS = set("GuyDMLdQqYwWEecFahKkHmsSAnNVvzOXxZpB")
_SUPPORTED = set("uyDMLdYwEeahKkHmsSnXxZV")
_MAX_COUNT = {"M": 5, "L": 5, "d": 2, "D": 3, "H": 2, "h": 2, "K": 2, "k": 2, "m": 2, "s": 2,
              "S": 9, "a": 1, "E": 5, "e": 5, "w": 2, "X": 5, "x": 5, "Z": 5, "n": 19}

# Elasticsearch's built-in names as patterns (the ``strict_`` prefix names the same pattern;
# the non-strict variants accept fewer digits than the pattern's width, see ``_lenient``)
_BUILT_IN = {
    "basic_date": "yyyyMMdd", "basic_date_time": "yyyyMMdd'T'HHmmss.SSSXX",
    "basic_date_time_no_millis": "yyyyMMdd'T'HHmmssXX", "basic_ordinal_date": "yyyyDDD",
    "basic_ordinal_date_time": "yyyyDDD'T'HHmmss.SSSXX",
    "basic_ordinal_date_time_no_millis": "yyyyDDD'T'HHmmssXX", "basic_time": "HHmmss.SSSXX",
    "basic_time_no_millis": "HHmmssXX", "basic_t_time": "'T'HHmmss.SSSXX",
    "basic_t_time_no_millis": "'T'HHmmssXX", "basic_week_date": "YYYY'W'wwe",
    "basic_week_date_time": "YYYY'W'wwe'T'HHmmss.SSSXX",
    "basic_week_date_time_no_millis": "YYYY'W'wwe'T'HHmmssXX",
    "date": "yyyy-MM-dd", "date_hour": "yyyy-MM-dd'T'HH",
    "date_hour_minute": "yyyy-MM-dd'T'HH:mm", "date_hour_minute_second": "yyyy-MM-dd'T'HH:mm:ss",
    "date_hour_minute_second_fraction": "yyyy-MM-dd'T'HH:mm:ss.SSS",
    "date_hour_minute_second_millis": "yyyy-MM-dd'T'HH:mm:ss.SSS",
    "date_time_no_millis": "yyyy-MM-dd'T'HH:mm:ssXXX",
    "hour": "HH", "hour_minute": "HH:mm", "hour_minute_second": "HH:mm:ss",
    "hour_minute_second_fraction": "HH:mm:ss.SSS", "hour_minute_second_millis": "HH:mm:ss.SSS",
    "ordinal_date": "yyyy-DDD", "ordinal_date_time": "yyyy-DDD'T'HH:mm:ss.SSSXXX",
    "ordinal_date_time_no_millis": "yyyy-DDD'T'HH:mm:ssXXX",
    "time": "HH:mm:ss.SSSXXX", "time_no_millis": "HH:mm:ssXXX",
    "t_time": "'T'HH:mm:ss.SSSXXX", "t_time_no_millis": "'T'HH:mm:ssXXX",
    "week_date": "YYYY-'W'ww-e", "week_date_time": "YYYY-'W'ww-e'T'HH:mm:ss.SSSXXX",
    "week_date_time_no_millis": "YYYY-'W'ww-e'T'HH:mm:ssXXX",
    "weekyear": "YYYY", "weekyear_week": "YYYY-'W'ww", "weekyear_week_day": "YYYY-'W'ww-e",
    "year": "yyyy", "year_month": "yyyy-MM", "year_month_day": "yyyy-MM-dd",
}
# parsed by the ISO reader of ``dates.py`` (fraction of 1 to 9 digits, optional parts)
ISO_NAMES = {"strict_date_optional_time", "date_optional_time", "strict_date_optional_time_nanos",
             "iso8601", "strict_date_time", "date_time"}
EPOCH_NAMES = {"epoch_millis", "epoch_second"}


class InvalidFormat(IllegalArgument, ValueError):
    """A format Elasticsearch would refuse (its text: ``Invalid format: [x]: reason``): a 400
    wherever it surfaces (a sort's, an aggregation's or a ``docvalue_fields`` format)."""


@dataclass(frozen=True)
class Token:
    """A pattern element: a literal, a field (``letter`` x ``count``) or an optional section."""

    literal: str | None = None
    letter: str = ""
    count: int = 0
    optional: tuple[Token, ...] | None = None


@dataclass(frozen=True)
class Pattern:
    """One compiled alternative: tokens to print with, a regex to parse with, group fields."""

    source: str
    tokens: tuple[Token, ...]
    regex: Any
    groups: tuple[tuple[str, str, int], ...]     # (group name, letter, count)


def builtin_pattern(name: str) -> str | None:
    """The Java pattern of a built-in name (``strict_`` variants included), or None."""
    return _BUILT_IN.get(name[7:] if name.startswith("strict_") else name)


def is_lenient(name: str) -> bool:
    """Non-strict built-ins accept 1-digit months, days and hours (``date``: ``2020-1-2``)."""
    return name in _BUILT_IN and "basic" not in name and not name.startswith("strict_")


def split_format(fmt: str) -> list[str]:
    """The ``||`` alternatives of a format, checked (length, empty parts)."""
    if len(fmt) > MAX_FORMAT_LENGTH:
        raise InvalidFormat(f"Invalid format: [{fmt[:50]}...]: longer than "
                            f"[{MAX_FORMAT_LENGTH}] characters")
    parts = [p.strip() for p in fmt.split("||")]
    for p in parts:
        if not p:
            raise InvalidFormat("No date pattern provided")
    return parts


def validate_format(fmt: str) -> None:
    """Raise ``InvalidFormat`` (Elasticsearch's text) unless every alternative compiles."""
    for part in split_format(fmt):
        if part not in ISO_NAMES and part not in EPOCH_NAMES:
            compile_pattern(builtin_pattern(part) or part, is_lenient(part), part)


def tokenize(pattern: str, shown: str) -> tuple[Token, ...]:
    """Java's ``appendPattern`` grammar: letters, ``'quoted'`` text, ``[optional]`` sections."""
    stack: list[list[Token]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c.isascii() and c.isalpha():
            j = i
            while j < n and pattern[j] == c:
                j += 1
            stack[-1].append(_field(c, j - i, shown))
            i = j
        elif c == "'":
            j = i + 1
            text = []
            while True:
                if j >= n:
                    raise InvalidFormat(f"Invalid format: [{shown}]: Pattern ends with an "
                                        f"incomplete string literal: {pattern}")
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            stack[-1].append(Token(literal="".join(text) if j > i + 1 else "'"))
            i = j + 1
        elif c == "[":
            stack.append([])
            i += 1
        elif c == "]":
            if len(stack) == 1:
                raise InvalidFormat(f"Invalid format: [{shown}]: Pattern invalid as it "
                                    "contains ] without previous [")
            inner = stack.pop()
            stack[-1].append(Token(optional=tuple(inner)))
            i += 1
        elif c in "{}#":
            raise InvalidFormat(f"Invalid format: [{shown}]: Pattern includes reserved "
                                f"character: '{c}'")
        else:
            stack[-1].append(Token(literal=c))
            i += 1
    while len(stack) > 1:      # Java closes sections left open at the end
        inner = stack.pop()
        stack[-1].append(Token(optional=tuple(inner)))
    return tuple(stack[0])


def _field(c: str, count: int, shown: str) -> Token:
    if c not in _JAVA_LETTERS:
        raise InvalidFormat(f"Invalid format: [{shown}]: Unknown pattern letter: {c}")
    if count > _MAX_COUNT.get(c, 19):
        raise InvalidFormat(f"Invalid format: [{shown}]: Too many pattern letters: {c}")
    if c == "V" and count != 2:
        raise InvalidFormat(f"Invalid format: [{shown}]: Pattern letter count must be 2: V")
    if c not in _SUPPORTED:
        raise InvalidFormat(f"Invalid format: [{shown}]: pattern letter [{c}] is not "
                            "supported by this server")
    return Token(letter=c, count=count)


def _field_regex(t: Token, lenient: bool) -> str:
    c, n = t.letter, t.count
    if c in "yuY":
        if n == 2:
            return r"\d{2}"
        return r"[+-]?\d{4,9}" if n >= 4 and not lenient else r"[+-]?\d{1,9}"
    if c in "ML" and n == 3:
        return "|".join(_MONTHS)
    if c in "ML" and n >= 4:
        return "|".join(_MONTHS_FULL)
    if c in "Ee" and n >= 3 or c == "E":
        return "|".join(_DAYS_FULL if n >= 4 else _DAYS)
    if c == "a":
        return "AM|PM"
    if c == "S":
        return rf"\d{{{n}}}"
    if c == "n":
        return r"\d{1,9}"
    if c in "XxZ":
        return _offset_regex(c, n)
    if c == "V":
        return r"[A-Za-z][A-Za-z0-9_+\-/]{0,40}"
    if n == 1 or lenient:
        return r"\d{1,%d}" % max(n, 3 if c == "D" else 2)
    return rf"\d{{{n}}}"


def _offset_regex(c: str, n: int) -> str:
    z = "Z|" if c == "X" or (c == "Z" and n == 5) else ""
    if c == "Z":
        return z + (r"[+-]\d{2}:\d{2}" if n == 5 else r"[+-]\d{4}")
    body = {1: r"[+-]\d{2}(?:\d{2})?", 2: r"[+-]\d{4}", 3: r"[+-]\d{2}:\d{2}",
            4: r"[+-]\d{4}(?:\d{2})?", 5: r"[+-]\d{2}:\d{2}(?::\d{2})?"}[n]
    return z + body


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, lenient: bool = False, shown: str | None = None) -> Pattern:
    """A Java pattern as tokens and an anchored RE2 regex (linear-time parsing)."""
    tokens = tokenize(pattern, shown or pattern)
    groups: list[tuple[str, str, int]] = []
    regex = re2.compile("^" + _emit(tokens, lenient, groups) + "$")
    return Pattern(pattern, tokens, regex, tuple(groups))


def _emit(ts: tuple[Token, ...], lenient: bool, groups: list[tuple[str, str, int]]) -> str:
    """The regex of ``ts``; each field's group is appended to ``groups``."""
    out = []
    for t in ts:
        if t.optional is not None:
            out.append("(?:" + _emit(t.optional, lenient, groups) + ")?")
        elif t.literal is not None:
            out.append(re.escape(t.literal))
        else:
            name = f"g{len(groups)}"
            groups.append((name, t.letter, t.count))
            out.append(f"(?P<{name}>{_field_regex(t, lenient)})")
    return "".join(out)


def parse_stop(pattern: str, lenient: bool, shown: str, text: str) -> tuple[int, bool]:
    """Where java.time's parser stops in ``text``: the index of the first element it cannot
    parse (False), or the end of the parsed text when every element parsed (True). Grows the
    pattern one element at a time: O(elements x len(text)), only on a failure's path."""
    tokens = tokenize(pattern, shown)
    end = 0
    for k in range(1, len(tokens) + 1):
        m = re2.compile("^" + _emit(tokens[:k], lenient, [])).match(text)
        if m is None:
            return end, False
        end = m.end()
    return end, True


def parse_fields(p: Pattern, s: str) -> dict[str, Any] | None:
    """The calendar fields ``s`` spells under ``p`` (ints, zone as offset seconds), or None."""
    m = p.regex.match(s)
    if m is None:
        return None
    got: dict[str, Any] = {}
    for name, letter, count in p.groups:
        text = m.group(name)
        if text is not None:
            got[letter] = _field_value(letter, count, text)
    return got


def _field_value(letter: str, count: int, text: str) -> Any:
    if letter in "ML" and count >= 3:
        return (_MONTHS if count == 3 else _MONTHS_FULL).index(text) + 1
    if letter in "Ee" and (count >= 3 or letter == "E"):
        return (_DAYS_FULL if count >= 4 else _DAYS).index(text) + 1
    if letter == "a":
        return text
    if letter in "XxZ":
        return offset_seconds(text)
    if letter == "V":
        return text
    if letter == "S":
        return int(text.ljust(9, "0"))
    if letter in "yuY" and count == 2:
        return 2000 + int(text)
    return int(text)


def offset_seconds(text: str) -> int:
    """``Z``, ``+01``, ``+0100``, ``+01:00``, ``-01:30:15`` as seconds east of UTC."""
    if text in ("Z", "z"):
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    h, mi, se = int(digits[0:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if h > 18 or mi > 59 or se > 59:
        raise ValueError(f"invalid offset [{text}]")
    return sign * (h * 3600 + mi * 60 + se)


def resolve(f: dict[str, Any], round_up: bool, zone_offset: Any) -> int:
    """Epoch nanos of parsed fields, Java's STRICT resolver's checks included.

    Missing date fields are the first of their unit; missing time fields are 0, or with
    ``round_up`` their maximum (Elasticsearch's rule for ``gt``/``lte`` bounds).
    ``zone_offset(local_seconds)`` gives the offset when the text carries none.
    """
    date = _resolve_date(f)
    hour = _resolve_hour(f, round_up)
    minute = f.get("m", 59 if round_up else 0)
    second = f.get("s", 59 if round_up else 0)
    nanos = f.get("S", f.get("n", 999_999_999 if round_up else 0))
    if not (0 <= minute <= 59 and 0 <= second <= 59):
        raise ValueError("time field out of range")
    local = (date - _dt.date(1970, 1, 1)).days * 86400 + hour * 3600 + minute * 60 + second
    if "X" in f or "x" in f or "Z" in f:
        off = f.get("X", f.get("x", f.get("Z")))
    elif "V" in f:
        off = _zone_id_offset(f["V"], local)
    else:
        off = zone_offset(local)
    return (local - off) * 1_000_000_000 + nanos


def _resolve_date(f: dict[str, Any]) -> _dt.date:
    if "Y" in f or "w" in f:
        year = f.get("Y", f.get("y", f.get("u", 1970)))
        d = _dt.date.fromisocalendar(year, f.get("w", 1), f.get("e", f.get("E", 1)))
        return d
    year = f.get("u", f.get("y", 1970))
    if "D" in f:
        d = _dt.date(year, 1, 1) + _dt.timedelta(days=f["D"] - 1)
        if d.year != year or ("M" in f and d.month != f["M"]) or ("d" in f and d.day != f["d"]):
            raise ValueError("day of year out of range")
    else:
        d = _dt.date(year, f.get("M", f.get("L", 1)), f.get("d", 1))
    return d           # a day of week that disagrees is not checked (as Elasticsearch)


def _resolve_hour(f: dict[str, Any], round_up: bool) -> int:
    if "H" in f:
        h = f["H"]
    elif "k" in f:
        h = 0 if f["k"] == 24 else f["k"]
        if not 1 <= f["k"] <= 24:
            raise ValueError("clock hour out of range")
    elif "h" in f or "K" in f:
        h12 = f["h"] % 12 if "h" in f else f["K"]
        if ("h" in f and not 1 <= f["h"] <= 12) or h12 > 11:
            raise ValueError("hour of am/pm out of range")
        h = h12 + (12 if f.get("a") == "PM" else 0)
    else:
        return 23 if round_up else 0
    if not 0 <= h <= 23:
        raise ValueError("hour out of range")
    return h


def _zone_id_offset(zone: str, local_seconds: int) -> int:
    if zone in ("Z", "UTC", "GMT"):
        return 0
    try:
        from zoneinfo import ZoneInfo
        zi = ZoneInfo(zone)
    except Exception:  # noqa: BLE001 - an unknown zone id is a parse failure
        raise ValueError(f"unknown time zone [{zone}]") from None
    wall = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=local_seconds)
    delta = zi.utcoffset(wall)
    return int(delta.total_seconds()) if delta is not None else 0


def print_pattern(p: Pattern, nanos: int) -> str:
    """``nanos`` since the epoch printed with ``p`` in UTC (optional sections are printed)."""
    secs, rem = divmod(nanos, 1_000_000_000)
    when = _EPOCH + _dt.timedelta(seconds=secs)
    return _print_tokens(p.tokens, when, rem)


def _print_tokens(tokens: tuple[Token, ...], when: _dt.datetime, rem: int) -> str:
    out = []
    for t in tokens:
        if t.optional is not None:
            out.append(_print_tokens(t.optional, when, rem))
        elif t.literal is not None:
            out.append(t.literal)
        else:
            out.append(_print_field(t.letter, t.count, when, rem))
    return "".join(out)


def _print_field(c: str, n: int, when: _dt.datetime, rem: int) -> str:
    if c in "yuY":
        year = when.isocalendar()[0] if c == "Y" else when.year
        if n == 2:
            return f"{year % 100:02d}"
        text = f"{year:0{n}d}"
        return "+" + text if n >= 4 and year > 9999 else text
    if c in "ML":
        return (_MONTHS[when.month - 1] if n == 3 else _MONTHS_FULL[when.month - 1] if n >= 4
                else f"{when.month:0{n}d}")
    if c in "Ee" and (n >= 3 or c == "E"):
        return (_DAYS_FULL if n >= 4 else _DAYS)[when.weekday()]
    if c == "a":
        return "AM" if when.hour < 12 else "PM"
    if c == "S":
        return f"{rem:09d}"[:n]
    if c == "n":
        return str(rem)
    if c in "XZ" and (c == "X" or n == 5):
        return "Z"
    if c == "Z":
        return "+0000"
    if c == "x":
        return {1: "+00", 2: "+0000", 3: "+00:00", 4: "+0000", 5: "+00:00"}[n]
    if c == "V":
        return "Z"
    value = {"d": when.day, "D": when.timetuple().tm_yday, "H": when.hour,
             "h": (when.hour % 12) or 12, "K": when.hour % 12, "k": when.hour or 24,
             "m": when.minute, "s": when.second, "w": when.isocalendar()[1],
             "e": when.isoweekday()}[c]
    return f"{value:0{n}d}"
