"""What may be stored: only values that come back from disk as they went in.

Over HTTP every document and body is JSON already. The Python API (``Cluster``) and in-process
callers hand over Python objects, and two encoders would change them silently: ``orjson``
writes ``NaN`` and infinities as ``null`` (a document acknowledged with ``NaN`` would read
back ``null``), and the log pickles what JSON cannot hold, which recovery's plain unpickler
then refuses (a ``Decimal``, a NumPy scalar, any class: ``storage.loads_plain``). Such values
are refused here, before anything is written, with :class:`UnstorableValue` naming the type.
"""
from __future__ import annotations

import math
from typing import Any

import orjson

from ..errors import IllegalArgument


class UnstorableValue(IllegalArgument):
    """A value the storage could not give back exactly: the write is refused, nothing of it
    written (a 400 ``illegal_argument_exception``, or the item's error in a bulk)."""


def refusal(what: str, detail: str) -> UnstorableValue:
    return UnstorableValue(f"{what} holds a value that cannot be stored exactly ({detail}); "
                           "only JSON values can be stored: str, int, float (finite), bool, "
                           "None, list, dict with str keys")


def exact_json(value: Any, what: str = "the document") -> bytes:
    """``value`` as JSON bytes, or :class:`UnstorableValue` when JSON cannot carry it as it is
    (a type ``orjson`` refuses, or a float that is not finite). O(size); the walk for
    non-finite floats runs only when the text holds a ``null``."""
    try:
        out = orjson.dumps(value)
    except TypeError as e:
        raise refusal(what, str(e)) from None
    if b"null" in out and non_finite(value):
        raise refusal(what, "a float that is NaN or infinite")
    return out


def non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False
