"""Category contexts of a completion field: mapped, given with each input, filtered and boosted.

Elasticsearch indexes an input once per context value, its form prefixed by the context (and
the context mapping's place in the list), so equal weights come in context order; a field with
contexts needs them on every input and on every query. A query names contexts per mapping
(``"ctx"``, ``{"context", "boost", "prefix"}``, or a list); an input matches when one of its
contexts equals (or, with ``prefix``, starts with) a queried one, and its score is the weight
times the largest boost that matched. Geo contexts and ``path`` are refused by name.
"""
from __future__ import annotations

from typing import Any

from ..errors import IllegalArgument, MapperParsing

Context = tuple[int, str]          # (the mapping's place in the list, the value)
QueryContext = tuple[str, float, bool]   # (value, boost, prefix)


def check_context_mappings(field: str, spec: Any) -> tuple[str, ...]:
    """The names of a field's ``contexts`` mapping (category contexts, no ``path``)."""
    if not isinstance(spec, list):
        spec = [spec]
    names = []
    for c in spec:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise MapperParsing(f"Failed to parse mapping: a context of [{field}] needs a "
                                "[name]")
        kind = c.get("type")
        if kind == "geo":
            raise MapperParsing("Failed to parse mapping: [geo] contexts of completion fields "
                                "are not supported by this server")
        if kind != "category":
            raise MapperParsing(f"Failed to parse mapping: unknown context type[{kind}]")
        extra = [k for k in c if k not in ("name", "type")]
        if extra:
            raise MapperParsing(f"Failed to parse mapping: [{extra[0]}] of a completion context "
                                "is not supported by this server")
        names.append(c["name"])
    return tuple(names)


def input_contexts(given: Any, names: tuple[str, ...], field: str) -> list[Context]:
    """The contexts of one input: ``{name: value | [values]}`` checked against the mapping;
    an input of a context field must have some (Elasticsearch's texts)."""
    out: list[Context] = []
    if given is not None:
        if not isinstance(given, dict):
            raise _failed("contexts must be an object")
        for name, values in given.items():
            if name not in names:
                raise _failed(f"Unknown context name [{name}], must be one of "
                              f"[{', '.join(sorted(names))}]")
            for v in values if isinstance(values, list) else [values]:
                out.append((names.index(name), _text(v)))
    if names and not out:
        raise IllegalArgument(f"Contexts are mandatory in context enabled completion field "
                              f"[{field}]")
    return out


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, int, float)):
        return str(v)
    raise _failed(f"context values must be strings, numbers or booleans, got [{v}]")


def _failed(reason: str) -> MapperParsing:
    return MapperParsing("failed to parse", caused_by={"type": "illegal_argument_exception",
                                                       "reason": reason})


def query_contexts(spec: Any, names: tuple[str, ...]) -> dict[int, list[QueryContext]]:
    """A suggester's ``contexts``: per mapping place, the values with boost and prefix."""
    if not names:
        if spec is not None:
            raise IllegalArgument("[contexts] applies to a completion field with contexts")
        return {}
    if not spec:
        raise IllegalArgument("Missing mandatory contexts in context query")
    if not isinstance(spec, dict):
        raise IllegalArgument("[contexts] must be an object")
    out: dict[int, list[QueryContext]] = {}
    for name, values in spec.items():
        if name not in names:
            raise IllegalArgument(f"Unknown context name [{name}], must be one of "
                                  f"[{', '.join(sorted(names))}]")
        out[names.index(name)] = [_query_value(v)
                                  for v in (values if isinstance(values, list) else [values])]
    return out


def _query_value(v: Any) -> QueryContext:
    if not isinstance(v, dict):
        return (_text(v), 1.0, False)
    for k in v:
        if k not in ("context", "boost", "prefix"):
            raise IllegalArgument(f"[category] unknown field [{k}]")
    boost = v.get("boost", 1)
    if isinstance(boost, bool) or not isinstance(boost, (int, float)) or boost <= 0:
        raise IllegalArgument(f"[boost] must be greater than 0, got [{boost}]")
    prefix = v.get("prefix", False)
    if prefix not in (True, False):
        raise IllegalArgument(f"[prefix] must be a boolean, got [{prefix}]")
    return (_text(v.get("context")), float(boost), prefix)


def context_boost(ctx: Context | None, wanted: dict[int, list[QueryContext]]) -> float | None:
    """The boost an input with context ``ctx`` gets from the query (None: it does not match;
    1.0 for any input when the field has no contexts)."""
    if not wanted:
        return 1.0
    if ctx is None:
        return None
    best = None
    for value, boost, prefix in wanted.get(ctx[0], ()):
        if ctx[1] == value or prefix and ctx[1].startswith(value):
            best = boost if best is None else max(best, boost)
    return best


def java_set_order(values: set[str]) -> list[str]:
    """A small Java ``HashSet<String>``'s iteration order (bucket of the spread hash, then
    insertion — here the values' sorted order), as Elasticsearch prints an option's contexts."""
    cap = 16
    while len(values) > cap * 0.75:
        cap *= 2
    return sorted(sorted(values), key=lambda s: _spread(_java_hash(s)) & (cap - 1))


def _java_hash(s: str) -> int:
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    return h ^ (h >> 16)


__all__ = ["Context", "QueryContext", "check_context_mappings", "context_boost",
           "input_contexts", "java_set_order", "query_contexts"]
