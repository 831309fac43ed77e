"""Elasticsearch's score-script helpers (``ScoreScriptUtils``), callable by bare name in the
scoring contexts only (``script_score`` and its function, ``_script`` sorts): ``saturation``,
``sigmoid`` and the numeric decays. Each takes doubles and returns a double, with the same
formulas as ``function_score``'s decays (``query/score_functions.py``). The date decays
(``decayDateGauss`` ...) need ``ZonedDateTime`` values, which the subset does not model.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import ScriptFault
from .javavalues import is_number, type_name


def _d(v: Any) -> float:
    if not is_number(v):
        if v is None:
            raise ScriptFault("null_pointer_exception", "a null number", 0, 0)
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(v)} to double", 0, 0)
    return float(v)


def _distance(origin: Any, offset: Any, value: Any) -> float:
    return max(0.0, abs(_d(value) - _d(origin)) - _d(offset))


def saturation(value: Any, pivot: Any) -> float:
    v = _d(value)
    return v / (v + _d(pivot))


def sigmoid(value: Any, k: Any, a: Any) -> float:
    v, kk, aa = _d(value), _d(k), _d(a)
    try:
        top = math.pow(v, aa)
        return top / (math.pow(kk, aa) + top)
    except (ValueError, OverflowError, ZeroDivisionError):
        return math.nan


def decay_linear(origin: Any, scale: Any, offset: Any, decay: Any, value: Any) -> float:
    scaling = _d(scale) / (1.0 - _d(decay))
    return max(0.0, (scaling - _distance(origin, offset, value)) / scaling)


def decay_exp(origin: Any, scale: Any, offset: Any, decay: Any, value: Any) -> float:
    return math.exp(math.log(_d(decay)) / _d(scale) * _distance(origin, offset, value))


def decay_gauss(origin: Any, scale: Any, offset: Any, decay: Any, value: Any) -> float:
    scaling = 0.5 * _d(scale) ** 2 / math.log(_d(decay))
    return math.exp(0.5 * _distance(origin, offset, value) ** 2 / scaling)


def _guarded(fn: Callable[..., float]) -> Callable[..., float]:
    """A helper whose math errors (``log`` of a bad decay, a zero scale) are a runtime error
    instead of a Python exception."""
    def run(*args: Any) -> float:
        try:
            return fn(*args)
        except (ValueError, ZeroDivisionError, OverflowError):
            raise ScriptFault("illegal_argument_exception", "invalid arguments to a score "
                              "helper (decay must be in (0, 1), scale non-zero)", 0, 0) from None
    return run


#: name -> (number of arguments, function)
HELPERS: dict[str, tuple[int, Callable[..., float]]] = {
    "saturation": (2, _guarded(saturation)),
    "sigmoid": (3, sigmoid),
    "decayNumericLinear": (5, _guarded(decay_linear)),
    "decayNumericExp": (5, _guarded(decay_exp)),
    "decayNumericGauss": (5, _guarded(decay_gauss)),
}
