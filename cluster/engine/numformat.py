"""Java ``DecimalFormat`` patterns (``#.0``, ``0.00``, ``#,##0.###``) for numeric doc values.

Why: ``docvalue_fields: [{field: count, format: "#.0"}]`` returns strings formatted as Java's
``DecimalFormat`` (root locale, HALF_EVEN rounding) would, which is what Elasticsearch does. This
covers the pattern subset users write — digits, grouping, fraction, literal prefix/suffix and
``%`` — not scientific notation.
"""
from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal

from ..errors import IllegalArgument

_SPECIAL = set("0#,.")


def _split_affixes(pattern: str) -> tuple[str, str, str]:
    """``'$'#,##0.00' USD'`` -> (prefix, number part, suffix); quotes make literals."""
    prefix: list[str] = []
    number: list[str] = []
    suffix: list[str] = []
    quoted = False
    target = prefix
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            if i + 1 < len(pattern) and pattern[i + 1] == "'":
                target.append("'")
                i += 2
                continue
            quoted = not quoted
        elif not quoted and ch in _SPECIAL and target is not suffix:
            target = number
            number.append(ch)
        else:
            if target is number:
                target = suffix
            target.append(ch)
        i += 1
    return "".join(prefix), "".join(number), "".join(suffix)


def decimal_format(value: float | int, pattern: str) -> str:
    """``value`` formatted by a ``DecimalFormat`` pattern (positive subpattern only)."""
    positive = pattern.split(";")[0]
    prefix, number, suffix = _split_affixes(positive)
    if not number or suffix.startswith("E0"):
        raise IllegalArgument(f"Malformed pattern \"{pattern}\"")
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        text = "NaN" if math.isnan(value) else "∞"
        return ("-" if value < 0 else "") + prefix + text + suffix
    int_part, _, frac_part = number.partition(".")
    show_point = number.endswith(".")
    min_int = int_part.count("0")
    group = len(int_part) - int_part.rfind(",") - 1 if "," in int_part else 0
    min_frac = frac_part.count("0")
    max_frac = min_frac + frac_part.count("#")
    d = Decimal(repr(value)) if isinstance(value, float) else Decimal(int(value))
    if "%" in prefix + number + suffix:
        d *= 100
    negative = d < 0
    d = abs(d).quantize(Decimal(1).scaleb(-max_frac), rounding=ROUND_HALF_EVEN)
    digits = f"{d:f}"
    whole, _, frac = digits.partition(".")
    frac = frac.rstrip("0")
    frac = frac + "0" * (min_frac - len(frac))
    whole = whole.lstrip("0")
    whole = "0" * (min_int - len(whole)) + whole
    if not whole and not frac:
        whole = "0"
    if group and len(whole) > group:
        head = len(whole) % group or group
        parts = [whole[:head]] + [whole[i:i + group] for i in range(head, len(whole), group)]
        whole = ",".join(parts)
    out = whole + ("." + frac if frac or show_point else "")
    return ("-" if negative else "") + prefix + out + suffix


def java_double(x: float) -> str:
    """Java's ``Double.toString``: ``100.0``, ``0.001``, ``1.0E7``."""
    x = float(x)
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    sign, digits, exp = Decimal(repr(x)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    e = len(ds) - 1 + int(exp)
    return ("-" if sign else "") + ds[0] + "." + (ds[1:] or "0") + f"E{e}"
