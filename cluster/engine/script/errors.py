"""Script errors as Elasticsearch reports them: a ``script_exception`` carrying the script, its
``script_stack`` (the source around the position, a caret under it), ``lang``, ``position``
and the Java exception that caused it (``caused_by``).

Compile errors (a token out of place, an unknown variable or method) have the reason
``compile error``; errors while running (a null dereference, a bad cast, the loop budget) have
``runtime error``. Both are 400s: a client sent the script.
"""
from __future__ import annotations

from typing import Any

from ...errors import SearchError

STACK_CONTEXT = 25   # characters of source shown on each side of the position


class ScriptError(SearchError):
    """``script_exception``, 400; ``extra`` holds ES's fields (see the module docstring)."""

    es_type = "script_exception"
    status = 400


class ScriptFault(Exception):
    """Raised inside the parser or evaluator; :func:`script_error` adds the source around it.

    ``java_type`` is the Elasticsearch name of the Java exception (``null_pointer_exception``,
    ``class_cast_exception``, ``illegal_argument_exception``, ``painless_error`` ...)."""

    def __init__(self, java_type: str, reason: str, start: int, end: int) -> None:
        super().__init__(reason)
        self.java_type, self.reason, self.start, self.end = java_type, reason, start, end


def script_stack(source: str, start: int, end: int) -> list[str]:
    """The source around ``start`` and a ``^---- HERE`` marker under it, as Painless prints."""
    lo = max(0, start - STACK_CONTEXT)
    hi = min(len(source), max(end, start + 1) + STACK_CONTEXT)
    snippet = source[lo:hi].replace("\n", " ")
    prefix = "... " if lo > 0 else ""
    suffix = " ..." if hi < len(source) else ""
    return [prefix + snippet + suffix, " " * (len(prefix) + start - lo) + "^---- HERE"]


def script_error(source: str, fault: ScriptFault, compile_time: bool) -> ScriptError:
    """The ``script_exception`` for ``fault`` raised while compiling or running ``source``."""
    start = min(max(fault.start, 0), len(source))
    end = min(max(fault.end, start), len(source))
    extra: dict[str, Any] = {
        "script_stack": script_stack(source, start, end),
        "script": source, "lang": "painless",
        "position": {"offset": start, "start": start, "end": end},
        "caused_by": {"type": fault.java_type, "reason": fault.reason},
    }
    return ScriptError("compile error" if compile_time else "runtime error", **extra)
