"""The methods a script may call: on Strings, Lists, Maps and ``doc['f']`` values, and the
static ones (``Math``, ``String``, ``Integer``, ``Long``, ``Double``). Anything else is
Painless's "dynamic method not found" (an ``illegal_argument_exception``). No method reaches
a Python attribute: every name is looked up in these tables."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import ScriptFault
from .score_helpers import HELPERS
from .javavalues import (LONG_MAX, LONG_MIN, INT_MAX, INT_MIN, Long, equals, is_long, is_number,
                         to_string, type_name, wrap)

MAX_STRING = 1_048_576       # characters a script may build in one String
MAX_COLLECTION = 100_000     # entries a script may hold in one List or Map


class DocField:
    """``doc['f']``: the field's values in this document, sorted as doc values are."""

    JAVA_TYPE = "org.elasticsearch.index.fielddata.ScriptDocValues"
    __slots__ = ("name", "values")

    def __init__(self, name: str, values: list[Any]) -> None:
        self.name, self.values = name, values

    def value(self) -> Any:
        if not self.values:
            raise ScriptFault("illegal_state_exception",
                              "A document doesn't have a value for a field! Use doc[<field>]"
                              ".size()==0 to check if a document is missing a field!", 0, 0)
        return self.values[0]


def _index(seq: Any, i: Any) -> int:
    if not isinstance(i, int) or isinstance(i, bool):
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(i)} to java.lang.Integer", 0, 0)
    if not 0 <= i < len(seq):
        raise ScriptFault("index_out_of_bounds_exception",
                          f"Index {i} out of bounds for length {len(seq)}", 0, 0)
    return i


def check_size(v: Any) -> Any:
    """Refuse a String or collection over the budget (a script cannot fill the memory)."""
    if isinstance(v, str) and len(v) > MAX_STRING:
        raise ScriptFault("painless_error", f"a String over [{MAX_STRING}] characters", 0, 0)
    if isinstance(v, (list, dict)) and len(v) > MAX_COLLECTION:
        raise ScriptFault("painless_error", f"a collection over [{MAX_COLLECTION}] entries",
                          0, 0)
    return v


def _substring(s: str, a: int, b: int | None = None) -> str:
    b = len(s) if b is None else b
    if not (0 <= a <= b <= len(s)):
        raise ScriptFault("string_index_out_of_bounds_exception",
                          f"begin {a}, end {b}, length {len(s)}", 0, 0)
    return s[a:b]


def _str_arg(v: Any) -> str:
    if not isinstance(v, str):
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(v)} to java.lang.String", 0, 0)
    return v


STRING_METHODS: dict[str, Callable[..., Any]] = {
    "length": len, "isEmpty": lambda s: not s, "toLowerCase": str.lower,
    "toUpperCase": str.upper, "trim": lambda s: s.strip(" \t\n\r\x0b\x0c\x00"),
    "substring": _substring,
    "indexOf": lambda s, x, start=0: s.find(_str_arg(x), start),
    "lastIndexOf": lambda s, x: s.rfind(_str_arg(x)),
    "startsWith": lambda s, x: s.startswith(_str_arg(x)),
    "endsWith": lambda s, x: s.endswith(_str_arg(x)),
    "contains": lambda s, x: _str_arg(x) in s,
    "equals": lambda s, x: isinstance(x, str) and s == x,
    "equalsIgnoreCase": lambda s, x: isinstance(x, str) and s.lower() == x.lower(),
    "replace": lambda s, a, b: s.replace(_str_arg(a), _str_arg(b)),
    "charAt": lambda s, i: s[_index(s, i)],
    "compareTo": lambda s, x: (s > _str_arg(x)) - (s < x),
    "hashCode": lambda s: _string_hash(s), "toString": lambda s: s,
}


def _string_hash(s: str) -> int:
    h = 0
    for c in s:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return h - 2 ** 32 if h >= 2 ** 31 else h


def _list_remove(xs: list[Any], i: Any) -> Any:
    return xs.pop(_index(xs, i))


def _list_add(xs: list[Any], *args: Any) -> Any:
    if len(args) == 1:
        xs.append(args[0])
        check_size(xs)
        return True
    if not isinstance(args[0], int) or not 0 <= args[0] <= len(xs):
        raise ScriptFault("index_out_of_bounds_exception",
                          f"Index: {args[0]}, Size: {len(xs)}", 0, 0)
    xs.insert(args[0], args[1])
    check_size(xs)
    return None


def _list_set(xs: list[Any], i: Any, v: Any) -> Any:
    old = xs[_index(xs, i)]
    xs[i] = v
    return old


def _index_of(xs: list[Any], v: Any) -> int:
    return next((i for i, x in enumerate(xs) if equals(x, v)), -1)


def _add_all(xs: list[Any], other: Any) -> bool:
    if not isinstance(other, list):
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(other)} to java.util.Collection", 0, 0)
    xs.extend(other)
    check_size(xs)
    return bool(other)


LIST_METHODS: dict[str, Callable[..., Any]] = {
    "size": len, "isEmpty": lambda xs: not xs, "get": lambda xs, i: xs[_index(xs, i)],
    "add": _list_add, "remove": _list_remove, "set": _list_set, "clear": list.clear,
    "contains": lambda xs, v: _index_of(xs, v) >= 0, "indexOf": _index_of,
    "addAll": _add_all, "equals": lambda xs, o: equals(xs, o),
    "length": len,
}


def _map_put(m: dict[Any, Any], k: Any, v: Any) -> Any:
    old = m.get(k)
    m[k] = v
    check_size(m)
    return old


def _put_all(m: dict[Any, Any], other: Any) -> None:
    if not isinstance(other, dict):
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(other)} to java.util.Map", 0, 0)
    m.update(other)
    check_size(m)


MAP_METHODS: dict[str, Callable[..., Any]] = {
    "size": len, "isEmpty": lambda m: not m, "get": lambda m, k: m.get(k),
    "getOrDefault": lambda m, k, d: m.get(k, d), "put": _map_put,
    "remove": lambda m, k: m.pop(k, None), "containsKey": lambda m, k: k in m,
    "containsValue": lambda m, v: any(equals(x, v) for x in m.values()),
    "keySet": lambda m: list(m), "values": lambda m: list(m.values()), "clear": dict.clear,
    "putAll": _put_all, "equals": lambda m, o: equals(m, o),
}

DOC_METHODS: dict[str, Callable[..., Any]] = {
    "size": lambda d: len(d.values), "isEmpty": lambda d: not d.values,
    "getValue": lambda d: d.value(), "get": lambda d, i: d.values[_index(d.values, i)],
    "contains": lambda d, v: _index_of(d.values, v) >= 0,
}


def call_method(target: Any, name: str, args: list[Any]) -> Any:
    """``target.name(args)``; an unknown pair is Painless's dynamic-method error."""
    table = (STRING_METHODS if isinstance(target, str) else LIST_METHODS
             if isinstance(target, list) else MAP_METHODS if isinstance(target, dict)
             else DOC_METHODS if isinstance(target, DocField) else None)
    if target is None:
        raise ScriptFault("null_pointer_exception",
                          f"cannot invoke method [{name}] on a null value", 0, 0)
    fn = table.get(name) if table is not None else None
    if fn is None:
        raise ScriptFault("illegal_argument_exception",
                          f"dynamic method [{type_name(target)}, {name}/{len(args)}] not found",
                          0, 0)
    try:
        return check_size(fn(target, *args))
    except TypeError:
        raise ScriptFault("illegal_argument_exception",
                          f"dynamic method [{type_name(target)}, {name}/{len(args)}] not found",
                          0, 0) from None


def _num(v: Any) -> Any:
    if not is_number(v):
        if v is None:
            raise ScriptFault("null_pointer_exception", "a null number", 0, 0)
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(v)} to java.lang.Number", 0, 0)
    return v


def _minmax(pick: Callable[..., Any], a: Any, b: Any) -> Any:
    a, b = _num(a), _num(b)
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.nan
        return pick(a, b)
    return Long(pick(a, b)) if is_long(a) or is_long(b) else pick(a, b)


def _round(v: Any) -> Any:
    v = _num(v)
    if isinstance(v, int):
        return v
    if math.isnan(v):
        return Long(0)
    if math.isinf(v):
        return Long(LONG_MAX if v > 0 else LONG_MIN)
    return Long(max(LONG_MIN, min(LONG_MAX, math.floor(v + 0.5))))


def _math_log(v: Any, fn: Callable[[float], float]) -> float:
    v = float(_num(v))
    if math.isnan(v) or v < 0:
        return math.nan
    return -math.inf if v == 0 else fn(v)


def _pow(a: Any, b: Any) -> float:
    try:
        return math.pow(float(_num(a)), float(_num(b)))
    except (OverflowError, ValueError):
        return math.inf if float(a) > 0 else math.nan


def _exp(v: Any) -> float:
    try:
        return math.exp(float(_num(v)))
    except OverflowError:
        return math.inf


def _abs(v: Any) -> Any:
    v = _num(v)
    return abs(v) if isinstance(v, float) else wrap(abs(v), is_long(v))


def _parse_int(s: Any, long_: bool) -> int:
    s = _str_arg(s)
    lo, hi = (LONG_MIN, LONG_MAX) if long_ else (INT_MIN, INT_MAX)
    try:
        if not s or s.strip() != s or "_" in s:
            raise ValueError
        n = int(s, 10)
    except ValueError:
        raise ScriptFault("number_format_exception", f"For input string: \"{s}\"", 0, 0)
    if not lo <= n <= hi:
        raise ScriptFault("number_format_exception", f"For input string: \"{s}\"", 0, 0)
    return Long(n) if long_ else n


def _parse_double(s: Any) -> float:
    s = _str_arg(s)
    try:
        if "_" in s:
            raise ValueError
        return float(s.strip().rstrip("dDfF"))
    except ValueError:
        raise ScriptFault("number_format_exception", f"For input string: \"{s}\"", 0, 0)


def _join(sep: Any, items: Any) -> str:
    if not isinstance(items, list):
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(items)} to java.lang.Iterable", 0, 0)
    return _str_arg(sep).join(to_string(x) for x in items)


STATIC_METHODS: dict[tuple[str, str], Callable[..., Any]] = {
    ("Math", "max"): lambda a, b: _minmax(max, a, b),
    ("Math", "min"): lambda a, b: _minmax(min, a, b),
    ("Math", "abs"): _abs,
    ("Math", "floor"): lambda v: float(math.floor(_num(v))) if math.isfinite(_num(v))
    else float(v),
    ("Math", "ceil"): lambda v: float(math.ceil(_num(v))) if math.isfinite(_num(v))
    else float(v),
    ("Math", "round"): _round,
    ("Math", "sqrt"): lambda v: math.sqrt(_num(v)) if _num(v) >= 0 else math.nan,
    ("Math", "cbrt"): lambda v: math.copysign(abs(float(_num(v))) ** (1 / 3), v),
    ("Math", "pow"): _pow, ("Math", "exp"): _exp,
    ("Math", "log"): lambda v: _math_log(v, math.log),
    ("Math", "log10"): lambda v: _math_log(v, math.log10),
    ("Math", "signum"): lambda v: math.copysign(1.0, _num(v)) if _num(v) != 0 else float(v),
    ("Math", "hypot"): lambda a, b: math.hypot(_num(a), _num(b)),
    ("String", "valueOf"): to_string, ("String", "join"): _join,
    ("Integer", "parseInt"): lambda s: _parse_int(s, False),
    ("Integer", "valueOf"): lambda s: _parse_int(s, False) if isinstance(s, str) else _num(s),
    ("Integer", "toString"): lambda v: to_string(_num(v)),
    ("Long", "parseLong"): lambda s: _parse_int(s, True),
    ("Long", "valueOf"): lambda s: _parse_int(s, True) if isinstance(s, str) else Long(_num(s)),
    ("Long", "toString"): lambda v: to_string(_num(v)),
    ("Double", "parseDouble"): _parse_double,
    ("Double", "valueOf"): lambda s: _parse_double(s) if isinstance(s, str) else float(_num(s)),
    ("Double", "toString"): lambda v: to_string(float(_num(v))),
    ("Double", "isNaN"): lambda v: math.isnan(_num(v)),
}

CONSTANT_VALUES: dict[tuple[str, str], Any] = {
    ("Math", "PI"): math.pi, ("Math", "E"): math.e, ("Integer", "MAX_VALUE"): INT_MAX,
    ("Integer", "MIN_VALUE"): INT_MIN, ("Long", "MAX_VALUE"): Long(LONG_MAX),
    ("Long", "MIN_VALUE"): Long(LONG_MIN), ("Double", "MAX_VALUE"): 1.7976931348623157e308,
    ("Double", "MIN_VALUE"): 5e-324,
}


STATIC_METHODS.update({("", name): fn for name, (_, fn) in HELPERS.items()})


def call_static(cls: str, name: str, args: list[Any]) -> Any:
    return check_size(STATIC_METHODS[(cls, name)](*args))
