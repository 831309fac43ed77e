"""Java's value rules for the evaluator: ``int`` and ``long`` arithmetic that wraps (a plain
Python ``int`` is a Java ``int`` when it fits in 32 bits, :class:`Long` otherwise), integer
division and remainder that truncate toward zero, ``double`` for anything with a fraction,
``String`` concatenation with Java's spellings (``true``, ``null``, ``1.0``), ``equals`` for
``==`` and the type names errors print. Pure functions; a misuse raises :class:`ScriptFault`
(the evaluator fills in the position)."""
from __future__ import annotations

import math
from typing import Any

from .errors import ScriptFault
from .lexer import Float, Long

INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1
LONG_MIN, LONG_MAX = -2 ** 63, 2 ** 63 - 1


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_long(v: Any) -> bool:
    return isinstance(v, Long) or (isinstance(v, int) and not INT_MIN <= v <= INT_MAX)


def wrap(value: int, as_long: bool) -> int:
    """``value`` wrapped to Java's ``int`` or ``long`` (two's complement overflow)."""
    if as_long:
        value = (value - LONG_MIN) % 2 ** 64 + LONG_MIN
        return Long(value)
    return (value - INT_MIN) % 2 ** 32 + INT_MIN


def type_name(v: Any) -> str:
    """The Java class a value has in Painless (for error texts)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "java.lang.Boolean"
    if isinstance(v, Float):
        return "java.lang.Float"
    if isinstance(v, float):
        return "java.lang.Double"
    if isinstance(v, int):
        return "java.lang.Long" if is_long(v) else "java.lang.Integer"
    if isinstance(v, str):
        return "java.lang.String"
    if isinstance(v, list):
        return "java.util.ArrayList"
    if isinstance(v, dict):
        return "java.util.HashMap"
    return getattr(v, "JAVA_TYPE", "java.lang.Object")


def to_string(v: Any) -> str:
    """``String.valueOf(v)`` as Java prints it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _double_string(v)
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "[" + ", ".join(to_string(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{to_string(k)}={to_string(x)}" for k, x in v.items()) + "}"
    return str(v)


def _double_string(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == int(v) and abs(v) < 1e7:
        return f"{int(v)}.0" if not (v == 0 and math.copysign(1, v) < 0) else "-0.0"
    if 1e-3 <= abs(v) < 1e7:
        return repr(v)
    mantissa, exp = f"{v:.17e}".split("e")
    digits = repr(float(mantissa)).rstrip("0")
    digits = digits + "0" if digits.endswith(".") else digits
    return f"{digits}E{int(exp)}"


def _cannot(op: str, a: Any, b: Any) -> ScriptFault:
    return ScriptFault("class_cast_exception",
                       f"Cannot apply [{op}] operation to types [{type_name(a)}] and "
                       f"[{type_name(b)}].", 0, 0)


def arithmetic(op: str, a: Any, b: Any) -> Any:
    """``a op b`` for ``+ - * / %`` (``+`` concatenates when either side is a String)."""
    if op == "+" and (isinstance(a, str) or isinstance(b, str)):
        return to_string(a) + to_string(b)
    if a is None or b is None:
        raise ScriptFault("null_pointer_exception",
                          f"cannot apply [{op}] to a null value", 0, 0)
    if not (is_number(a) and is_number(b)):
        raise _cannot(op, a, b)
    if isinstance(a, float) or isinstance(b, float):
        return _double_op(op, float(a), float(b))
    as_long = is_long(a) or is_long(b)
    if op in ("/", "%"):
        if b == 0:
            raise ScriptFault("arithmetic_exception", "/ by zero", 0, 0)
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return wrap(q if op == "/" else a - q * b, as_long)
    return wrap({"+": a + b, "-": a - b, "*": a * b}[op], as_long)


def _double_op(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        if op == "%" or a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b if op == "/" else math.fmod(a, b)


def bitwise(op: str, a: Any, b: Any) -> Any:
    """``& | ^`` on integers or booleans, and the shifts on integers."""
    if isinstance(a, bool) and isinstance(b, bool) and op in ("&", "|", "^"):
        return {"&": a and b, "|": a or b, "^": a != b}[op]
    if not (isinstance(a, int) and isinstance(b, int)) or isinstance(a, bool) \
            or isinstance(b, bool):
        raise _cannot(op, a, b)
    as_long = is_long(a) or (is_long(b) and op in ("&", "|", "^"))
    bits = 64 if as_long else 32
    if op == "<<":
        return wrap(a << (b % bits), as_long)
    if op == ">>":
        return wrap(a >> (b % bits), as_long)
    if op == ">>>":
        return wrap((a % 2 ** bits) >> (b % bits), as_long)
    return wrap({"&": a & b, "|": a | b, "^": a ^ b}[op], as_long)


def equals(a: Any, b: Any) -> bool:
    """Painless ``==``: numbers by value across types, else ``equals``."""
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if type(a) in (list, dict) and type(b) in (list, dict):
        return type(a) is type(b) and _deep_equals(a, b)
    return a == b and type(a) is type(b) or (isinstance(a, str) and isinstance(b, str) and a == b)


def _deep_equals(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b))
    return a.keys() == b.keys() and all(equals(a[k], b[k]) for k in a)


def compare(op: str, a: Any, b: Any) -> bool:
    """``< <= > >=`` on numbers (Painless does not order Strings with these)."""
    if a is None or b is None:
        raise ScriptFault("null_pointer_exception", f"cannot apply [{op}] to a null value", 0, 0)
    if not (is_number(a) and is_number(b)):
        raise _cannot(op, a, b)
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def truth(v: Any) -> bool:
    """A condition must be a boolean (Java has no truthiness)."""
    if isinstance(v, bool):
        return v
    raise ScriptFault("class_cast_exception",
                      f"Cannot cast {type_name(v)} to java.lang.Boolean", 0, 0)


def cast(type_: str, v: Any) -> Any:
    """``(type) v``: numeric conversions truncate as Java's; anything else must already fit."""
    if type_ in ("int", "long", "short", "byte", "Integer", "Long") and is_number(v):
        if isinstance(v, float) and not math.isfinite(v):   # Java clamps, NaN is 0
            n = 0 if math.isnan(v) else (2 ** 63 if v > 0 else -2 ** 63 - 1)
        else:
            n = math.trunc(v)
        bits = {"int": 32, "Integer": 32, "long": 64, "Long": 64, "short": 16, "byte": 8}[type_]
        if isinstance(v, float):
            n = max(-2 ** (bits - 1), min(2 ** (bits - 1) - 1, n)) if bits >= 32 else \
                wrap(max(INT_MIN, min(INT_MAX, n)), False)
        if bits < 32:
            return (n + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)
        return wrap(n, bits == 64)
    if type_ in ("double", "float", "Double", "Float") and is_number(v):
        return float(v)
    if v is None and type_ not in ("int", "long", "short", "byte", "double", "float",
                                   "boolean", "char"):
        return None
    if instance_of(v, type_):
        return v
    raise ScriptFault("class_cast_exception",
                      f"Cannot cast {type_name(v)} to {type_}", 0, 0)


def instance_of(v: Any, type_: str) -> bool:
    """``v instanceof type`` for the subset's types."""
    checks = {
        "def": lambda x: True, "Object": lambda x: x is not None,
        "String": lambda x: isinstance(x, str), "Map": lambda x: isinstance(x, dict),
        "HashMap": lambda x: isinstance(x, dict), "LinkedHashMap": lambda x: isinstance(x, dict),
        "List": lambda x: isinstance(x, list), "ArrayList": lambda x: isinstance(x, list),
        "Collection": lambda x: isinstance(x, list), "Number": is_number,
        "boolean": lambda x: isinstance(x, bool), "Boolean": lambda x: isinstance(x, bool),
        "double": lambda x: isinstance(x, float), "Double": lambda x: isinstance(x, float)
        and not isinstance(x, Float), "float": lambda x: isinstance(x, Float),
        "Float": lambda x: isinstance(x, Float),
        "int": lambda x: is_number(x) and isinstance(x, int) and not is_long(x),
        "Integer": lambda x: is_number(x) and isinstance(x, int) and not is_long(x),
        "long": lambda x: is_number(x) and isinstance(x, int) and is_long(x),
        "Long": lambda x: is_number(x) and isinstance(x, int) and is_long(x),
    }
    check = checks.get(type_)
    return bool(check(v)) if check is not None else False


def declare(type_: str, v: Any) -> Any:
    """The value stored in a variable declared with ``type_`` (Java's implicit widening)."""
    if type_ == "def":
        return v
    if type_ in ("long", "Long") and isinstance(v, int) and not isinstance(v, bool):
        return Long(v)
    if type_ in ("double", "Double", "float", "Float") and is_number(v):
        return float(v)
    if type_ in ("int", "long", "double", "float", "boolean", "short", "byte") and v is None:
        raise ScriptFault("class_cast_exception", f"Cannot cast null to a primitive {type_}",
                          0, 0)
    if type_ in ("int", "short", "byte", "Integer") and isinstance(v, float):
        raise ScriptFault("class_cast_exception", f"Cannot cast from [double] to [{type_}].",
                          0, 0)
    return cast(type_, v) if v is not None else None
