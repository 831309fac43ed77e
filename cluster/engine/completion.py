"""The ``completion`` field: its document values, its analysed inputs, and one shard's lookup.

Elasticsearch indexes each input of a completion field into an FST of analysed forms (tokens of
the field's ``analyzer`` joined by a separator, ``\\x1f``, unless ``preserve_separators`` is
false), each with its weight. Here a segment's completion column is built on first use from the
stored documents (segments are immutable, so it is cached for the segment's life): the analysed
forms sorted, with their weights, surface forms and rows. A prefix is a ``bisect`` range of that
sorted list; a regular expression is matched (as a prefix, as Lucene's ``RegexCompletionQuery``)
over the bounded set of forms. Each document is suggested once, by its best input, and only
while it is visible in the searched snapshot (a deleted document never is). Category contexts
are ``completion_contexts.py``.
"""
from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from .analysis import get_analyzer
from .completion_contexts import Context, QueryContext, check_context_mappings, context_boost, \
    input_contexts
from ..errors import IllegalArgument, MapperParsing

SEP = "\x1f"                 # Lucene's ConcatenateGraphFilter separator label
MAX_WEIGHT = 2**31 - 1
MAX_SIZE = 10_000            # ours: options one completion suggester may ask for
MAX_CANDIDATES = 100_000     # ours: analysed forms one regex may be tried on per segment
COMPLETION_KEYS = ("type", "analyzer", "search_analyzer", "preserve_separators",
                   "preserve_position_increments", "max_input_length", "contexts")
NO_CONTEXT = (-1, "")         # the order key of an input of a field without contexts


@dataclass(frozen=True)
class CompletionSpec:
    """How a completion field analyses its inputs (its mapping)."""

    analyzer: str = "simple"
    search_analyzer: str | None = None
    preserve_separators: bool = True
    max_input_length: int = 50
    contexts: tuple[str, ...] = ()      # category context names, in mapping order

    @classmethod
    def from_mapping(cls, spec: dict[str, Any], field: str = "") -> CompletionSpec:
        return cls(analyzer=spec.get("analyzer", "simple"),
                   search_analyzer=spec.get("search_analyzer"),
                   preserve_separators=spec.get("preserve_separators", True) in (True, "true"),
                   max_input_length=int(spec.get("max_input_length", 50)),
                   contexts=check_context_mappings(field, spec["contexts"])
                   if "contexts" in spec else ())


def check_completion_mapping(name: str, spec: dict[str, Any]) -> None:
    """The parameters built here, with valid values (``completion_contexts.py`` checks the
    contexts)."""
    if "contexts" in spec:
        check_context_mappings(name, spec["contexts"])
    extra = [k for k in spec if k not in COMPLETION_KEYS]
    if extra:
        raise MapperParsing(f"Failed to parse mapping: unknown parameter [{extra[0]}] on mapper "
                            f"[{name}] of type [completion]")
    for key in ("preserve_separators", "preserve_position_increments"):
        if key in spec and spec[key] not in (True, False, "true", "false"):
            raise MapperParsing(f"Failed to parse mapping: Failed to parse value [{spec[key]}] "
                                "as only [true] or [false] are allowed.")
    if spec.get("preserve_position_increments", True) in (False, "false") \
            and spec.get("analyzer", "simple") == "stop":
        # removed words would close up; Lucene keeps no gap then — the only analyzer here
        # that removes words is ``stop``, whose gaps we do not track
        raise MapperParsing("Failed to parse mapping: [preserve_position_increments: false] "
                            "with the [stop] analyzer is not supported by this server")
    mil = spec.get("max_input_length", 50)
    if isinstance(mil, bool) or not isinstance(mil, int) or mil <= 0:
        raise MapperParsing(f"Failed to parse mapping: [max_input_length] must be > 0 but was "
                            f"[{mil}]")


Entry = tuple[str, int, list[Context]]     # (input, weight, contexts)


def refuse_queries_on_completion(query: Any, mapping: Any) -> None:
    """A query (any node naming a ``field``, query strings expanded) on a completion field
    is refused by name: only the suggester reads these fields here. O(nodes)."""
    stack = [query]
    while stack:
        node = stack.pop()
        if isinstance(node, (tuple, list)):
            stack.extend(node)
            continue
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            continue
        field = getattr(node, "field", None)
        ft = mapping.get(field) if isinstance(field, str) else None
        if ft is not None and ft.type == "completion":
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", type(node).__name__).lower()
            raise IllegalArgument(f"[{name}] queries on the completion field [{field}] are not "
                                  "supported by this server (only its suggester reads it)")
        stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))


def document_inputs(value: Any, contexts: tuple[str, ...] = (), field: str = ""
                    ) -> list[Entry]:
    """``(input, weight, contexts)`` of a document's value: a string, a list of strings, an
    object ``{"input": str | [str], "weight": n, "contexts": {...}}`` or a list of such
    objects; Elasticsearch's errors for anything else (as ``mapper_parsing_exception``
    "failed to parse" causes). ``contexts``: the field's context names."""
    out: list[Entry] = []
    for item in value if isinstance(value, list) else [value]:
        if item is None:
            continue
        if isinstance(item, str):
            out.append((item, 1, input_contexts(None, contexts, field)))
        elif isinstance(item, dict):
            out.extend(_object_inputs(item, contexts, field))
        else:
            raise _failed(f"failed to parse [completion]: expected text or object, but got "
                          f"{_token(item)}", "parsing_exception")
    return out


def _object_inputs(item: dict[str, Any], contexts: tuple[str, ...], field: str
                   ) -> list[Entry]:
    for key in item:
        if key not in ("input", "weight", "contexts"):
            raise _failed(f"unknown field name [{key}], must be one of [input, weight, "
                          "contexts]")
    ctx = input_contexts(item.get("contexts"), contexts, field)
    weight = _weight(item.get("weight", 1))
    inputs = item.get("input")
    inputs = inputs if isinstance(inputs, list) else [inputs]
    if not inputs or not all(isinstance(i, str) for i in inputs):
        raise _failed("input array must have string values")
    return [(i, weight, ctx) for i in inputs]


def _weight(w: Any) -> int:
    if isinstance(w, str):
        try:
            w = int(w)
        except ValueError:
            raise _failed(f"weight must be an integer, but was [{w}]") from None
    if isinstance(w, bool) or not isinstance(w, (int, float)):
        raise _failed(f"weight must be an integer, but was [{w}]")
    if isinstance(w, float) and not w.is_integer():
        raise _failed(f"weight must be an integer, but was [{w}]")
    if not 0 <= w <= MAX_WEIGHT:
        raise _failed(f"weight must be in the interval [0..{MAX_WEIGHT}], but was [{int(w)}]")
    return int(w)


def _failed(reason: str, cause: str = "illegal_argument_exception") -> MapperParsing:
    return MapperParsing("failed to parse", caused_by={"type": cause, "reason": reason})


def _token(v: Any) -> str:
    return "VALUE_BOOLEAN" if isinstance(v, bool) else (
        "VALUE_NUMBER" if isinstance(v, (int, float)) else "START_ARRAY")


def analysed(text: str, spec: CompletionSpec, search: bool = False) -> str:
    """The analysed form of an input (or, with ``search``, of a prefix): the analyzer's
    tokens joined by ``SEP`` (or by nothing without ``preserve_separators``)."""
    name = (spec.search_analyzer or spec.analyzer) if search else spec.analyzer
    joiner = SEP if spec.preserve_separators else ""
    return joiner.join(get_analyzer(name)(text))


def surface(text: str, spec: CompletionSpec) -> str:
    """An input cut to ``max_input_length`` characters (``CompletionFieldMapper``)."""
    return text[:spec.max_input_length]


@dataclass
class CompletionColumn:
    """One segment's completion entries, sorted by analysed form."""

    keys: list[str]           # analysed forms, ascending
    weights: np.ndarray       # int64, aligned with keys
    texts: list[str]          # surface forms
    rows: np.ndarray          # int64: the segment row of each entry
    contexts: list[Context]   # the entry's context (NO_CONTEXT for a field without)


def build_column(entries: list[tuple[str, int, str, int, Context]]) -> CompletionColumn:
    """``(analysed, weight, surface, row, context)`` entries into a sorted column (one per
    input and context). O(n log n)."""
    entries.sort(key=lambda e: (e[0], -e[1], e[2], e[3], e[4]))
    return CompletionColumn([e[0] for e in entries],
                            np.array([e[1] for e in entries], dtype=np.int64),
                            [e[2] for e in entries],
                            np.array([e[3] for e in entries], dtype=np.int64),
                            [e[4] for e in entries])


def segment_column(sources: list[bytes], field: str, spec: CompletionSpec) -> CompletionColumn:
    """A segment's column from its stored documents (row order)."""
    parts = field.split(".")
    entries: list[tuple[str, int, str, int, Context]] = []
    for row, raw in enumerate(sources):
        for value in _values_at(orjson.loads(raw or b"{}"), parts):
            _add_inputs(entries, value, row, field, spec)
    return build_column(entries)


def _values_at(node: Any, parts: list[str]) -> list[Any]:
    """The values at a dotted path of a source, through arrays of objects."""
    nodes = [node]
    for p in parts:
        nxt: list[Any] = []
        for n in nodes:
            for item in n if isinstance(n, list) else [n]:
                if isinstance(item, dict) and p in item:
                    nxt.append(item[p])
        nodes = nxt
    return [n for n in nodes if n is not None]


def _add_inputs(entries: list[tuple[str, int, str, int, Context]], value: Any, row: int,
                field: str, spec: CompletionSpec) -> None:
    """The entries of one document value: one per input and context."""
    for text, weight, ctxs in document_inputs(value, spec.contexts, field):
        cut = surface(text, spec)
        form = analysed(cut, spec)
        entries.extend((form, weight, cut, row, c) for c in ctxs or [NO_CONTEXT])


def matching(col: CompletionColumn, prefix: str | None, regex: Any) -> np.ndarray:
    """Indexes of the column's entries whose analysed form starts with ``prefix`` (a bisect
    range) or that ``regex`` (a whole-form pattern ending in ``.*``, linear time) matches; a
    regex is tried on at most ``MAX_CANDIDATES`` forms."""
    if prefix is not None:
        lo = bisect.bisect_left(col.keys, prefix)
        hi = bisect.bisect_left(col.keys, prefix + "\U0010ffff")
        return np.arange(lo, hi, dtype=np.int64)
    assert regex is not None
    if len(col.keys) > MAX_CANDIDATES:
        raise IllegalArgument(f"[regex] would be tried on more than [{MAX_CANDIDATES}] "
                              "completion inputs of one segment; narrow it with a prefix")
    return np.array([i for i, k in enumerate(col.keys) if regex.fullmatch(k)], dtype=np.int64)


def best_per_document(col: CompletionColumn, hits: np.ndarray, visible: np.ndarray,
                      wanted: dict[int, list[QueryContext]] | None = None
                      ) -> list[tuple[tuple[float, str, str, Context], int, dict[int, set[str]]]]:
    """``(order key, row, matched contexts)``: each visible document once, by its best
    matching input (``order_key``); with ``wanted`` contexts, only inputs of a queried
    context count, their weights times its boost, and every matched context is reported."""
    best: dict[int, tuple[float, str, str, Context]] = {}
    matched: dict[int, dict[int, set[str]]] = {}
    for i in hits.tolist():
        row = int(col.rows[i])
        if not visible[row]:
            continue
        ctx = col.contexts[i]
        boost = context_boost(None if ctx == NO_CONTEXT else ctx, wanted or {})
        if boost is None:
            continue
        if ctx != NO_CONTEXT:
            matched.setdefault(row, {}).setdefault(ctx[0], set()).add(ctx[1])
        cand = order_key(float(np.float32(int(col.weights[i]) * boost)), ctx, col.keys[i],
                         col.texts[i])
        cur = best.get(row)
        if cur is None or cand < cur:
            best[row] = cand
    return [(key, row, matched.get(row, {})) for row, key in best.items()]


def order_key(score: float, ctx: Context, key: str, text: str
              ) -> tuple[float, str, str, Context]:
    """The order of options: score (the weight, times a context boost) descending, then the
    analysed form (the order in which a Lucene shard's suggester walks its FST past the
    context prefix), then the text and the context; the caller adds the document's place in
    the global order."""
    return (-score, key, text, ctx)


__all__ = ["refuse_queries_on_completion", "CompletionColumn", "CompletionSpec", "MAX_SIZE", "analysed", "best_per_document",
           "build_column", "check_completion_mapping", "document_inputs", "matching",
           "order_key", "segment_column", "surface"]
