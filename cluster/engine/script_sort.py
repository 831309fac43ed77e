"""``_script`` sorts: a key computed by a script for every match of a shard.

``{"_script": {"type": "number"|"string", "script": {...}, "order": "asc"|"desc"}}``. The
values join the one total order as any other key (``sorting.py``): numbers as a ``float``
column, strings as a ``keyword`` column, then the tie-break — so ``search_after``, deep pages
and every shard count agree. The script runs once per match within its budget and under
``MAX_SCRIPT_DOCS`` matches per segment (``query/function_score.py``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import IllegalArgument, ParsingError
from .cancellation import Cancellation
from .mapping import Mapping
from .query.function_score import MAX_SCRIPT_DOCS
from .query.script_docs import SegmentDocs
from .script import SCORE_CONTEXT, compile_script, json_value
from .script.javavalues import to_string

_KEYS = {"script", "type", "order", "mode", "nested"}


def parse_script_sort(opts: Any) -> dict[str, Any]:
    """``SortField`` arguments of one ``_script`` sort (its script compiled now)."""
    if not isinstance(opts, dict):
        raise ParsingError("[_script] malformed, expected an object")
    unknown = sorted(set(opts) - _KEYS)
    if unknown:
        raise ParsingError(f"[_script] unknown field [{unknown[0]}]",
                           es_type="x_content_parse_exception")
    for key in ("mode", "nested"):
        if key in opts:
            raise IllegalArgument(f"[_script] sort option [{key}] is not supported by this "
                                  "server")
    if "script" not in opts or "type" not in opts:
        raise IllegalArgument("Required [script, type]")
    kind = str(opts["type"]).lower()
    if kind not in ("number", "string"):
        raise IllegalArgument(f"Unknown ScriptSortType [{opts['type']}]")
    order = str(opts.get("order", "asc")).lower()
    if order not in ("asc", "desc"):
        raise ParsingError("[_script] failed to parse field [order]",
                           caused_by={"type": "illegal_argument_exception",
                                      "reason": f"Unknown SortOrder [{opts.get('order')}]"})
    return {"field": "_script", "order": order, "script": compile_script(opts["script"],
                                                                         SCORE_CONTEXT),
            "script_type": kind}


def script_sort_column(sf: Any, parts: list[Any], scores: np.ndarray, mapping: Mapping,
                       cancel: Cancellation) -> tuple[np.ndarray, np.ndarray | None]:
    """``(values, missing)``: the script's value for every match, in the order of ``parts``
    (float64 for ``number``, Strings as objects for ``string``)."""
    out: list[Any] = []
    at = 0
    score_list = scores.tolist()
    for seg, docs, _ in parts:
        if len(docs) > MAX_SCRIPT_DOCS:
            raise IllegalArgument(f"[_script] sort would run its script on [{len(docs)}] "
                                  f"documents of one segment, more than this server's limit of "
                                  f"[{MAX_SCRIPT_DOCS}]; narrow its query")
        lookup = SegmentDocs(seg, mapping)
        for d in docs.tolist():
            cancel.tick()
            value = sf.script.run({"doc": lookup.doc(d), "_score": score_list[at]}, cancel)
            out.append(_key(sf, value))
            at += 1
    if sf.script_type == "number":
        return np.asarray(out, dtype=np.float64), None
    col = np.empty(len(out), dtype=object)
    col[:] = out
    return col, np.zeros(len(out), dtype=bool)


def _key(sf: Any, value: Any) -> Any:
    if sf.script_type == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise IllegalArgument("[_script] sort of type [number] needs a number from its "
                                  f"script, got [{to_string(json_value(sf.script.source, value))}]")
        return float(value)
    if value is None:
        raise IllegalArgument("[_script] sort of type [string] got null from its script")
    return value if isinstance(value, str) else to_string(json_value(sf.script.source, value))
