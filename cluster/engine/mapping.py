"""Field types, dynamic mapping, and turning a JSON document into typed field values.

The coordinator owns each index's mapping. A document that may change it is parsed by the
coordinator first, in write order: new fields are added the way Elasticsearch's dynamic mapping
adds them (string -> ``text`` with a ``.keyword`` sub-field, or ``date`` when it looks like an
ISO date; integer -> ``long``; other number -> ``float``; boolean -> ``boolean``; objects
flatten to dotted paths; arrays hold several values), and values that do not fit their field
fail *that document* with ``mapper_parsing_exception``. The shard parses every document again
under the mapping the coordinator sent with it (``dynamic=False``), so it never guesses;
documents whose shape the mapping already takes without fail (``Mapping.accepts``) skip the
coordinator's parse.
"""
from __future__ import annotations

import copy
import functools
import datetime as _dt
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import MapperParsing
from .limits import MAX_TERM_BYTES, check_immense_terms

NUMERIC_TYPES = {"long", "integer", "short", "byte", "double", "float", "half_float",
                 "scaled_float", "unsigned_long"}
INTEGER_TYPES = {"long", "integer", "short", "byte", "unsigned_long"}
_INT_RANGES = {"long": (-(2**63), 2**63 - 1), "integer": (-(2**31), 2**31 - 1),
               "short": (-(2**15), 2**15 - 1), "byte": (-128, 127),
               "unsigned_long": (0, 2**64 - 1)}
_LONG_MIN, _LONG_MAX = _INT_RANGES["long"]
DATE_TYPES = {"date", "date_nanos"}
KEYWORD_TYPES = {"keyword", "constant_keyword", "wildcard", "ip", "version"}
TEXT_TYPES = {"text", "match_only_text"}
OBJECT_TYPES = {"object", "nested", "flattened"}
SUPPORTED_TYPES = (NUMERIC_TYPES | DATE_TYPES | KEYWORD_TYPES | TEXT_TYPES | OBJECT_TYPES
                   | {"boolean", "dense_vector", "sparse_vector", "rank_features", "binary",
                      "geo_point", "alias"})


@dataclass(frozen=True)
class FieldType:
    """One indexed field (a leaf, or a multi-field like ``title.keyword``)."""

    path: str
    type: str
    analyzer: str = "standard"
    search_analyzer: str | None = None
    ignore_above: int | None = None
    index: bool = True
    doc_values: bool = True
    format: str | None = None
    null_value: Any = None

    @functools.cached_property
    def kind(self) -> str:
        """How the engine stores it: ``text``, ``keyword``, ``numeric``, ``date``, ``boolean``.
        (Cached: read once per value of every document parsed.)"""
        if self.type in TEXT_TYPES:
            return "text"
        if self.type in KEYWORD_TYPES:
            return "keyword"
        if self.type in NUMERIC_TYPES:
            return "numeric"
        if self.type in DATE_TYPES:
            return "date"
        if self.type == "boolean":
            return "boolean"
        return "other"

    @property
    def is_integer(self) -> bool:
        return self.type in INTEGER_TYPES or self.type in DATE_TYPES


@dataclass
class Mapping:
    """An index's mapping: the Elasticsearch-shaped ``properties`` tree and its flat view."""

    properties: dict[str, Any] = field(default_factory=dict)
    dynamic: Any = True
    version: int = 0

    def __post_init__(self) -> None:
        self._flat: dict[str, FieldType] | None = None
        self._objects: set[str] | None = None
        self._multi: dict[str, list[str]] | None = None
        self._accepts: dict[Shape, bool] = {}
        self._plan: dict[str, str] | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any] | None) -> Mapping:
        """Build from the ``mappings`` object of an index-creation body (validated)."""
        body = body or {}
        if not isinstance(body, dict):
            raise MapperParsing("Failed to parse mapping: mappings must be an object")
        if "_doc" in body and isinstance(body["_doc"], dict) and len(body) == 1:
            body = body["_doc"]
        props = body.get("properties", {}) or {}
        if not isinstance(props, dict):
            raise MapperParsing("Failed to parse mapping: [properties] must be an object")
        _validate_properties(props, "")
        return cls(properties=copy.deepcopy(props), dynamic=body.get("dynamic", True))

    def to_body(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.dynamic is not True:
            out["dynamic"] = self.dynamic
        if self.properties:
            out["properties"] = self.properties
        return out

    def merge(self, body: dict[str, Any]) -> None:
        """Add fields from a ``PUT _mapping`` body; changing an existing field's type fails."""
        other = Mapping.from_body(body)
        _merge_properties(self.properties, other.properties, "")
        if "dynamic" in body:
            self.dynamic = body["dynamic"]
        self._invalidate()

    def _invalidate(self) -> None:
        self._flat = None
        self._objects = None
        self._multi = None
        self._accepts = {}
        self._plan = None
        self._plan = None
        self.version += 1

    @property
    def fields(self) -> dict[str, FieldType]:
        if self._flat is None:
            flat: dict[str, FieldType] = {}
            objects: set[str] = set()
            multi: dict[str, list[str]] = {}
            _flatten(self.properties, "", flat, objects, multi)
            self._flat, self._objects, self._multi = flat, objects, multi
        return self._flat

    @property
    def multi(self) -> dict[str, list[str]]:
        """Multi-fields of each field (``title`` -> ``["title.keyword"]``)."""
        self.fields  # noqa: B018 - builds the cache
        assert self._multi is not None
        return self._multi

    @property
    def objects(self) -> set[str]:
        self.fields  # noqa: B018 - builds the cache
        assert self._objects is not None
        return self._objects

    def get(self, path: str) -> FieldType | None:
        return self.fields.get(path)

    @property
    def flat_plan(self) -> dict[str, str]:
        """Top-level fields a flat document's values go to as they are: ``s`` (text or
        keyword, no multi-fields) or ``l`` (long). ``parse_document``'s fastest case."""
        if self._plan is None:
            plan: dict[str, str] = {}
            multi = self.multi
            for path, ft in self.fields.items():
                if "." in path or path in multi or path in _METADATA_FIELDS:
                    continue
                if ft.kind in ("text", "keyword"):
                    plan[path] = "s"
                elif ft.type == "long":
                    plan[path] = "l"
            self._plan = plan
        return self._plan

    def accepts(self, shape: Shape | None) -> bool:
        """Documents of ``shape`` (``doc_shape``) parse into this mapping without fail and
        without adding a field. Cached per shape until the mapping changes."""
        if shape is None:
            return False
        ok = self._accepts.get(shape)
        if ok is None:
            if len(self._accepts) > 4096:
                self._accepts.clear()
            ok = self._accepts[shape] = _shape_fits(shape, self)
        return ok

    def __getstate__(self) -> dict[str, Any]:
        return {"properties": self.properties, "dynamic": self.dynamic, "version": self.version}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.properties = state["properties"]
        self.dynamic = state["dynamic"]
        self.version = state["version"]
        self._flat = None
        self._objects = None
        self._multi = None
        self._accepts = {}
        self._plan = None


def _validate_properties(props: dict[str, Any], prefix: str) -> None:
    for name, spec in props.items():
        path = prefix + name
        if path.count(".") + 2 > MAX_DEPTH and isinstance(spec, dict) and "properties" in spec:
            raise MapperParsing(f"Limit of mapping depth [{MAX_DEPTH}] has been exceeded due to "
                                f"object field [{path}]", es_type="illegal_argument_exception")
        if not isinstance(spec, dict):
            raise MapperParsing(f"Expected map for property [fields] on field [{path}] but got a "
                                f"class {type(spec).__name__}")
        ftype = spec.get("type", "object" if "properties" in spec else None)
        if ftype is None:
            ftype = "object"
        if ftype not in SUPPORTED_TYPES:
            raise MapperParsing(f"No handler for type [{ftype}] declared on field [{name}]")
        if "properties" in spec:
            if not isinstance(spec["properties"], dict):
                raise MapperParsing(f"Failed to parse mapping: [properties] of [{path}] must be "
                                    "an object")
            _validate_properties(spec["properties"], path + ".")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            _validate_properties({sub: sub_spec}, path + ".")


def _merge_properties(into: dict[str, Any], new: dict[str, Any], prefix: str) -> None:
    for name, spec in new.items():
        path = prefix + name
        if name not in into:
            into[name] = copy.deepcopy(spec)
            continue
        old = into[name]
        old_type = old.get("type", "object")
        new_type = spec.get("type", "object" if "properties" in spec else old_type)
        if old_type != new_type:
            raise MapperParsing(f"mapper [{path}] cannot be changed from type [{old_type}] to "
                                f"[{new_type}]", es_type="illegal_argument_exception")
        if "properties" in spec:
            old.setdefault("properties", {})
            _merge_properties(old["properties"], spec["properties"], path + ".")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            old.setdefault("fields", {})
            if sub not in old["fields"]:
                old["fields"][sub] = copy.deepcopy(sub_spec)


def _flatten(props: dict[str, Any], prefix: str, flat: dict[str, FieldType],
             objects: set[str], multi: dict[str, list[str]]) -> None:
    for name, spec in props.items():
        path = prefix + name
        ftype = spec.get("type", "object" if "properties" in spec or "type" not in spec else None)
        if ftype in OBJECT_TYPES:
            objects.add(path)
            _flatten(spec.get("properties", {}) or {}, path + ".", flat, objects, multi)
            continue
        flat[path] = _field_type(path, ftype, spec)
        for sub, sub_spec in (spec.get("fields") or {}).items():
            sub_type = sub_spec.get("type", "keyword")
            flat[f"{path}.{sub}"] = _field_type(f"{path}.{sub}", sub_type, sub_spec)
            multi.setdefault(path, []).append(f"{path}.{sub}")


def _field_type(path: str, ftype: str, spec: dict[str, Any]) -> FieldType:
    return FieldType(path=path, type=ftype, analyzer=spec.get("analyzer", "standard"),
                     search_analyzer=spec.get("search_analyzer"),
                     ignore_above=spec.get("ignore_above"), index=spec.get("index", True),
                     doc_values=spec.get("doc_values", True), format=spec.get("format"),
                     null_value=spec.get("null_value"))


# --- dates -----------------------------------------------------------------------------------

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


_NAMED_PATTERNS = {
    "strict_date": "yyyy-MM-dd", "date": "yyyy-MM-dd",
    "basic_date": "yyyyMMdd", "strict_basic_date": "yyyyMMdd",
    "strict_date_hour_minute_second": "yyyy-MM-dd'T'HH:mm:ss",
    "date_hour_minute_second": "yyyy-MM-dd'T'HH:mm:ss",
    "strict_date_hour_minute": "yyyy-MM-dd'T'HH:mm", "date_hour_minute": "yyyy-MM-dd'T'HH:mm",
    "strict_year_month": "yyyy-MM", "year_month": "yyyy-MM",
    "strict_year": "yyyy", "year": "yyyy",
    "strict_year_month_day": "yyyy-MM-dd", "year_month_day": "yyyy-MM-dd",
    "basic_date_time_no_millis": "yyyyMMdd'T'HHmmssZ",
}
_ISO_NAMES = {"strict_date_optional_time", "date_optional_time", "strict_date_optional_time_nanos",
              "iso8601", "strict_date_time", "date_time", "strict_date_time_no_millis",
              "date_time_no_millis"}
_JAVA_TOKEN_RE = re.compile(r"'([^']*)'|(y+|u+|M+|d+|H+|m+|s+|S+|X+|x+|Z+)|(.)")
_JAVA_GROUPS = {"y": "y", "u": "y", "M": "m", "d": "d", "H": "H", "m": "M", "s": "S", "S": "f",
                "X": "tz", "x": "tz", "Z": "tz"}


@lru_cache(maxsize=128)
def _java_pattern(pattern: str) -> re.Pattern[str]:
    """A Java ``DateTimeFormatter`` pattern (numeric fields only) as a regex with the same
    group names as ``_ISO_RE``."""
    out = []
    for m in _JAVA_TOKEN_RE.finditer(pattern):
        literal, letters, other = m.groups()
        if literal is not None:
            out.append(re.escape(literal))
        elif other is not None:
            out.append(re.escape(other))
        else:
            group = _JAVA_GROUPS[letters[0]]
            n = len(letters)
            if group == "tz":
                body = r"Z|[+-]\d{2}(?::?\d{2})?"
            elif group == "f":
                body = r"\d{1,9}"
            elif group == "y":
                body = r"[+-]?\d{4,9}" if n >= 4 else r"\d{2}" if n == 2 else r"\d{1,9}"
            else:
                body = r"\d{2}" if n == 2 else r"\d{1,2}"
            out.append(f"(?P<{group}>{body})")
    return re.compile("^" + "".join(out) + "$")


def _date_components(s: str, fmt: str | None) -> dict[str, str | None] | None:
    """Calendar fields of ``s`` under ``fmt`` (``||``-separated alternatives), or None."""
    alternatives = [f.strip() for f in fmt.split("||")] if fmt else ["strict_date_optional_time"]
    for f in alternatives:
        if f in ("epoch_millis", "epoch_second"):
            continue
        if f in _ISO_NAMES or f not in _NAMED_PATTERNS and not re.search(r"[yuMdHms]", f):
            m = _ISO_RE.match(s)
        else:
            m = _java_pattern(_NAMED_PATTERNS.get(f, f)).match(s)
        if m:
            return {k: m.groupdict().get(k) for k in ("y", "m", "d", "H", "M", "S", "f", "tz")}
    return None


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
    """Nanoseconds since the epoch (UTC) of a date string (ISO ``strict_date_optional_time`` or
    the ``format`` given, ``||`` alternatives allowed) or an epoch-millis number.

    With ``round_up`` missing time fields take their maximum (``2020-01-01`` is its last
    nanosecond), as Elasticsearch reads ``gt`` and ``lte`` bounds.
    """
    if isinstance(value, bool):
        raise ValueError("boolean is not a date")
    if isinstance(value, (int, float)):
        if fmt and "epoch_second" in fmt and "epoch_millis" not in fmt:
            return int(round(value * 1_000_000_000))
        return int(round(value * 1_000_000))
    if not isinstance(value, str):
        raise ValueError("not a date")
    s = value.strip()
    if fmt and ("epoch_millis" in fmt or "epoch_second" in fmt) \
            and re.fullmatch(r"-?\d+(\.\d+)?", s):
        num = float(s)
        if "epoch_millis" in fmt:
            return int(round(num * 1_000_000))
        return int(round(num * 1_000_000_000))
    comps = _date_components(s, fmt)
    if comps is None and fmt:
        comps = _date_components(s, None)
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


def parse_date(value: Any, ftype: FieldType | None = None) -> int:
    """The stored integer for a date: millis for ``date``, nanos for ``date_nanos``."""
    nanos = parse_date_nanos(value, ftype.format if ftype else None)
    if ftype is not None and ftype.type == "date_nanos":
        return nanos
    return nanos // 1_000_000


def format_date(stored: int, ftype: FieldType | None, fmt: str | None = None) -> str | int:
    """Render a stored date as Elasticsearch does in ``sort`` values with a ``format``."""
    is_nanos = ftype is not None and ftype.type == "date_nanos"
    nanos = stored if is_nanos else stored * 1_000_000
    if fmt in ("epoch_millis",):
        return str(nanos // 1_000_000)
    secs, rem = divmod(nanos, 1_000_000_000)
    dt = _EPOCH + _dt.timedelta(seconds=secs)
    first = fmt.split("||")[0].strip() if fmt else None
    if first and first not in _ISO_NAMES and (first in _NAMED_PATTERNS
                                              or re.search(r"[yuMdHms]", first)):
        return _java_format(dt, rem, _NAMED_PATTERNS.get(first, first))
    if first and "nanos" in first:
        # Java prints the nano-of-second with 3 to 9 digits (trailing zeros dropped)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rem:09d}".rstrip("0").ljust(3, "0") + "Z"
    if fmt in ("strict_date_optional_time", "date_optional_time", "strict_date_time",
               "date_time", None) or fmt:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rem // 1_000_000:03d}Z"
    return stored


def _java_format(dt: _dt.datetime, nanos: int, pattern: str) -> str:
    """Print a UTC instant with a Java ``DateTimeFormatter`` pattern (numeric fields only)."""
    out = []
    for m in _JAVA_TOKEN_RE.finditer(pattern):
        literal, letters, other = m.groups()
        if literal is not None:
            out.append(literal)
        elif other is not None:
            out.append(other)
        else:
            c, n = letters[0], len(letters)
            if c in "yu":
                out.append(f"{dt.year % 100:02d}" if n == 2 else f"{dt.year:0{max(n, 4)}d}")
            elif c == "S":
                out.append(f"{nanos:09d}"[:n].ljust(n, "0"))
            elif c in "XxZ":
                out.append("Z" if c == "X" else "+0000")
            else:
                v = {"M": dt.month, "d": dt.day, "H": dt.hour, "m": dt.minute, "s": dt.second}[c]
                out.append(f"{v:0{n}d}")
    return "".join(out)


# --- parsing documents -----------------------------------------------------------------------

ParsedDoc = dict[str, list[Any]]


def _preview(value: Any) -> str:
    s = value if isinstance(value, str) else repr(value)
    return s[:20]


def _coerce(value: Any, ft: FieldType, doc_id: str | None) -> Any:
    """A JSON value as the field's stored type, or ``MapperParsing``."""
    def fail(detail: str = "") -> MapperParsing:
        tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
        return MapperParsing(
            f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
            f"Preview of field's value: '{_preview(value)}'",
            caused_by={"type": "illegal_argument_exception",
                       "reason": detail or f"For input string: \"{value}\""})

    kind = ft.kind
    if type(value) is str and (kind == "text" or kind == "keyword"):
        return value   # the common case, as below (str(value) is value)
    if isinstance(value, (dict, list)):
        raise fail("field value is an object or array")
    if kind in ("text", "keyword"):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return repr(value)
        return str(value)
    if kind == "numeric":
        if isinstance(value, bool):
            raise fail("boolean is not a number")
        if isinstance(value, str):
            try:
                num: Any = float(value.strip())
            except ValueError:
                raise fail() from None
        else:
            num = value
        if isinstance(num, float) and (math.isnan(num) or math.isinf(num)):
            raise fail("[" + ft.type + "] supports only finite values")
        if ft.type in INTEGER_TYPES:
            if isinstance(num, float):
                if not num.is_integer():
                    num = int(num)  # ES truncates decimals for integer types (coerce)
                num = int(num)
            lo, hi = _INT_RANGES[ft.type]
            if not lo <= num <= hi:
                raise fail(f"Value [{num}] is out of range for a {ft.type}")
            return int(num)
        if ft.type in ("float", "half_float"):
            import numpy as np
            return float(np.float32(num))
        return float(num)
    if kind == "date":
        try:
            return parse_date(value, ft)
        except (ValueError, OverflowError):
            raise fail(f"failed to parse date field [{value}]") from None
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        if value == "":
            return False
        raise fail(f"Failed to parse value [{value}] as only [true] or [false] are allowed.")
    return value


def _dynamic_spec(value: Any) -> dict[str, Any] | None:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "long"}
    if isinstance(value, float):
        return {"type": "float"}
    if isinstance(value, str):
        if looks_like_date(value):
            return {"type": "date"}
        return {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}
    return None


def parse_document(source: dict[str, Any], mapping: Mapping, doc_id: str | None = None,
                   dynamic: bool = True) -> tuple[ParsedDoc, bool]:
    """Typed values of every mapped field of ``source``; adds dynamic fields to ``mapping``.

    Returns ``(parsed, mapping_changed)``. The mapping is changed only when the whole document
    parses, so a failing document adds nothing. O(size of the document).
    """
    if not isinstance(source, dict):
        raise MapperParsing("failed to parse, document is empty" if source is None else
                            "failed to parse: root of a document must be an object")
    if _FAST_PATHS:
        flat = _parse_flat(source, mapping.flat_plan)
        if flat is not None:
            check_immense_terms(flat, lambda p: mapping.fields[p].kind)
            return flat, False
    new_props: dict[str, Any] = {}
    parsed: ParsedDoc = {}
    allow_dynamic = dynamic and mapping.dynamic not in (False, "false", "strict")
    strict = mapping.dynamic in ("strict",)
    fields = mapping.fields
    objects = mapping.objects
    multi = mapping.multi
    pending: dict[str, FieldType] = {}
    pending_multi: dict[str, list[str]] = {}

    def leaf(path: str, value: Any) -> None:
        if value is None:
            ft0 = fields.get(path) or pending.get(path)
            if ft0 is not None and ft0.null_value is not None:
                value = ft0.null_value
            else:
                return
        ft = fields.get(path) or pending.get(path)
        if ft is None:
            if path in objects:
                raise MapperParsing(f"object mapping for [{path}] tried to parse field [{path}] "
                                    "as object, but found a concrete value")
            if strict:
                raise MapperParsing(f"[{path}] dynamic mapping is set to strict, but dynamic "
                                    f"introduction of [{path}] within [_doc] is not allowed",
                                    es_type="strict_dynamic_mapping_exception")
            if not allow_dynamic:
                return
            spec = _dynamic_spec(value)
            if spec is None:
                return
            _set_path(new_props, path, spec)
            ft = _field_type(path, spec["type"], spec)
            pending[path] = ft
            for sub, sub_spec in (spec.get("fields") or {}).items():
                pending[f"{path}.{sub}"] = _field_type(f"{path}.{sub}", sub_spec["type"], sub_spec)
                pending_multi.setdefault(path, []).append(f"{path}.{sub}")
        if ft.kind == "other":
            return
        stored = _coerce(value, ft, doc_id)
        parsed.setdefault(path, []).append(stored)
        for sub_path in multi.get(path) or pending_multi.get(path, ()):
            sub_ft = fields.get(sub_path) or pending[sub_path]
            if sub_ft.kind == "other":
                continue
            sv = _coerce(value, sub_ft, doc_id)
            if sub_ft.kind == "keyword" and sub_ft.ignore_above is not None \
                    and len(sv) > sub_ft.ignore_above:
                continue
            parsed.setdefault(sub_path, []).append(sv)

    def walk(obj: Any, prefix: str, level: int = 1) -> None:
        if level > MAX_DEPTH:
            raise MapperParsing(f"failed to parse: Limit of mapping depth [{MAX_DEPTH}] has been "
                                f"exceeded due to object field [{prefix[:-1]}]")
        if isinstance(obj, dict):
            ft = fields.get(prefix[:-1]) if prefix else None
            if ft is not None and ft.kind != "other":
                raise _coerce_error_object(ft, obj, doc_id)
            for key, val in obj.items():
                if not isinstance(key, str) or key == "" or key.isspace():
                    raise MapperParsing("field name cannot be an empty string")
                if prefix == "" and key.startswith("_") and key in _METADATA_FIELDS:
                    raise MapperParsing(f"Field [{key}] is a metadata field and cannot be added "
                                        "inside a document. Use the index API request "
                                        "parameters.", es_type="document_parsing_exception")
                path = prefix + key
                # the common cases first, with the result ``leaf`` would give: strings into a
                # text or keyword field, integers into a long (no multi-fields)
                ft = fields.get(path) if _FAST_PATHS else None
                if ft is not None and path not in multi:
                    t = type(val)
                    if t is str or t is list and all(type(x) is str for x in val):
                        if ft.kind == "text" or ft.kind == "keyword":
                            if val:
                                got = parsed.get(path)
                                if got is None:
                                    parsed[path] = [val] if t is str else list(val)
                                elif t is str:
                                    got.append(val)
                                else:
                                    got.extend(val)
                            elif t is str:
                                parsed.setdefault(path, []).append(val)
                            continue
                    elif t is int and ft.type == "long" and _LONG_MIN <= val <= _LONG_MAX:
                        parsed.setdefault(path, []).append(val)
                        continue
                if isinstance(val, dict):
                    if path in fields and fields[path].kind != "other":
                        raise _coerce_error_object(fields[path], val, doc_id)
                    if fields.get(path) is not None:
                        continue
                    if path not in objects and allow_dynamic and path not in pending:
                        _set_path(new_props, path, {"type": "object"}, obj_only=True)
                    walk(val, path + ".", level + 1)
                elif isinstance(val, list):
                    for item in _flatten_list(val, path):
                        if isinstance(item, dict):
                            walk(item, path + ".", level + 1)
                        else:
                            leaf(path, item)
                else:
                    leaf(path, val)

    try:
        walk(source, "")
    finally:
        del walk   # it refers to itself: without this every call leaves a cycle for the GC
    check_immense_terms(parsed, lambda p: (fields.get(p) or pending[p]).kind)
    changed = False
    if new_props:
        added = len(pending) + _count_objects(new_props)
        total = len(fields) + len(objects) + added
        if total > MAX_TOTAL_FIELDS:
            raise MapperParsing(f"Limit of total fields [{MAX_TOTAL_FIELDS}] has been exceeded "
                                f"while adding new fields [{added}]",
                                es_type="illegal_argument_exception")
        _merge_properties(mapping.properties, _strip_object_markers(new_props), "")
        mapping._invalidate()
        changed = True
    return parsed, changed


def _parse_flat(source: dict[str, Any], plan: dict[str, str]) -> ParsedDoc | None:
    """``parse_document`` of a flat document whose every key is in ``plan`` with a value of
    the planned kind (strings, lists of strings, longs); None for any other document."""
    parsed: ParsedDoc = {}
    for key, val in source.items():
        k = plan.get(key)
        if k is None:
            return None
        t = type(val)
        if k == "s":
            if t is str:
                parsed[key] = [val]
                continue
            if t is list:
                for x in val:
                    if type(x) is not str:
                        return None
                if val:
                    parsed[key] = list(val)
                continue
            return None
        if t is int and _LONG_MIN <= val <= _LONG_MAX:
            parsed[key] = [val]
            continue
        return None
    return parsed


_METADATA_FIELDS = {"_id", "_index", "_source", "_routing", "_version", "_seq_no",
                    "_primary_term", "_field_names", "_ignored", "_tier", "_doc_count"}


def _coerce_error_object(ft: FieldType, value: Any, doc_id: str | None) -> MapperParsing:
    tail = f" in document with id '{doc_id}'" if doc_id is not None else ""
    return MapperParsing(f"failed to parse field [{ft.path}] of type [{ft.type}]{tail}. "
                         f"Preview of field's value: '{_preview(value)}'")


MAX_DEPTH = 20                 # index.mapping.depth.limit
_FAST_PATHS = True             # parse_document's shortcuts (tests compare them with the plain path)
MAX_TOTAL_FIELDS = 1000        # index.mapping.total_fields.limit
MAX_ARRAY_NESTING = 100        # arrays in arrays (kept well below what we can serialise)


def _count_objects(props: dict[str, Any]) -> int:
    n = 0
    for spec in props.values():
        if spec.get("type") == "object":
            n += 1 + _count_objects(spec.get("properties", {}))
    return n


def _flatten_list(values: list[Any], path: str = "") -> list[Any]:
    """Arrays of arrays are one array of values (iteratively: nesting depth is untrusted)."""
    out: list[Any] = []
    stack: list[tuple[list[Any], int]] = [(values, 0)]
    while stack:
        cur, start = stack.pop()
        for i in range(start, len(cur)):
            v = cur[i]
            if isinstance(v, list):
                if len(stack) + 1 >= MAX_ARRAY_NESTING:
                    raise MapperParsing(f"failed to parse field [{path}]: arrays nested more "
                                        f"than [{MAX_ARRAY_NESTING}] levels deep")
                stack.append((cur, i + 1))
                stack.append((v, 0))
                break
            out.append(v)
    return out


def _set_path(props: dict[str, Any], path: str, spec: dict[str, Any],
              obj_only: bool = False) -> None:
    parts = path.split(".")
    cur = props
    for part in parts[:-1]:
        node = cur.setdefault(part, {"type": "object", "properties": {}})
        node.setdefault("properties", {})
        cur = node["properties"]
    if obj_only:
        node = cur.setdefault(parts[-1], {"type": "object", "properties": {}})
        node.setdefault("properties", {})
    else:
        cur[parts[-1]] = spec


def _strip_object_markers(props: dict[str, Any]) -> dict[str, Any]:
    """Dynamic objects are shown as ``{"properties": ...}`` (no ``type``), as ES does."""
    out: dict[str, Any] = {}
    for name, spec in props.items():
        if spec.get("type") == "object":
            inner = _strip_object_markers(spec.get("properties", {}))
            out[name] = {"properties": inner}
        else:
            out[name] = spec
    return out


# --- which documents the shard can parse alone ----------------------------------------------------
#
# A bulk load sends thousands of documents of a few shapes. When every value of a document is
# of a kind its (already mapped) field takes without fail, parsing it adds no field and cannot
# fail: the coordinator then leaves the parsing to the shard (``parse_document(..., dynamic=False)``
# gives the same fields there) and only documents that may grow the mapping or fail are parsed
# by the coordinator, in order. A shape is the set of ``(path, kind)`` of a document's values.

Shape = tuple[tuple[str, str], ...]
_SHAPE_DEPTH = 8
_MAY_BE_IMMENSE = MAX_TERM_BYTES // 4   # longer strings may be immense terms: coordinator parses
_SMALL_INT = 2 ** 31
# value kind -> field types it always parses into (text and keyword kinds take them all)
_SAFE_TYPES = {
    "i": {"long", "integer", "double", "float", "half_float", "scaled_float"},
    "f": {"double", "float", "half_float"},
    "b": {"boolean"},
}


def doc_shape(source: Any) -> Shape | None:
    """The ``(path, kind)`` pairs of a document's values (kind: ``s`` string, ``i`` integer
    under 2**31, ``I`` other integer, ``f`` float, ``b`` boolean, ``o`` object), or None for
    documents this summary does not describe (arrays in arrays, metadata or blank keys, deep
    nesting): those are always parsed by the coordinator. O(size of the document)."""
    out: dict[tuple[str, str], None] = {}
    if not isinstance(source, dict) or not _shape_into(source, "", out, 1):
        return None
    return tuple(out)


def _value_kind(v: Any) -> str | None:
    t = type(v)
    if t is str:
        return "s"
    if t is int:
        return "i" if -_SMALL_INT <= v < _SMALL_INT else "I"
    if t is float:
        return "f"
    if t is bool:
        return "b"
    return None


def _shape_into(obj: dict[str, Any], prefix: str, out: dict[tuple[str, str], None],
                level: int) -> bool:
    if level > _SHAPE_DEPTH:
        return False
    for key, val in obj.items():
        if not key or key.isspace() or (not prefix and key in _METADATA_FIELDS):
            return False
        path = prefix + key
        t = type(val)
        if t is str:
            if len(val) > _MAY_BE_IMMENSE:
                return False
            out[(path, "s")] = None
        elif t is list:
            kinds = set(map(type, val))
            if len(kinds) == 1 and str in kinds:
                if max(map(len, val)) > _MAY_BE_IMMENSE:
                    return False
                out[(path, "s")] = None
                continue
            for x in val:
                tx = type(x)
                if tx is str:
                    if len(x) > _MAY_BE_IMMENSE:
                        return False
                    out[(path, "s")] = None
                elif tx is dict:
                    out[(path, "o")] = None
                    if not _shape_into(x, path + ".", out, level + 1):
                        return False
                elif x is not None:
                    k = _value_kind(x)
                    if k is None:
                        return False
                    out[(path, k)] = None
        elif t is dict:
            out[(path, "o")] = None
            if not _shape_into(val, path + ".", out, level + 1):
                return False
        elif val is not None:
            k = _value_kind(val)
            if k is None:
                return False
            out[(path, k)] = None
    return True


def _kind_fits(kind: str, ft: FieldType) -> bool:
    """A value of this kind always parses into ``ft`` (same rules as ``_coerce``)."""
    fk = ft.kind
    if fk == "text" or fk == "keyword" or fk == "other":
        return True
    return ft.type in _SAFE_TYPES.get(kind, ())


def _shape_fits(shape: Shape, mapping: Mapping) -> bool:
    fields, objects, multi = mapping.fields, mapping.objects, mapping.multi
    for path, kind in shape:
        if kind == "o":
            if path not in objects or path in fields:
                return False
            continue
        ft = fields.get(path)
        if ft is None or not _kind_fits(kind, ft):
            return False
        if ft.kind == "other":
            continue
        for sub in multi.get(path, ()):
            if not _kind_fits(kind, fields[sub]):
                return False
    return True
