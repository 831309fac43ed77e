"""The ``completion`` suggester: parsed, planned for the shards, and reduced.

The prefix is analysed at the coordinator with the field's search analyzer; a ``regex`` is
translated from Lucene's syntax to a linear-time pattern. Each shard answers its best ``size``
options (``engine/suggest_completion.py``); here they are merged in one order — weight
descending, then the text (Elasticsearch's ``Suggestion.COMPARATOR``), then the document's
place in the global order (index name, sequence number) — so the answer is the same for 1 and
N shards. ``skip_duplicates`` drops options whose text was already given.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..engine.completion import MAX_SIZE, CompletionSpec, analysed
from ..engine.query.pattern_syntax import lucene_regex
from ..engine.source_filter import filter_source
from ..engine.suggest_completion import CompletionPlan
from ..errors import IllegalArgument, ParsingError

OPTIONS = ("field", "size", "skip_duplicates")
REFUSED = ("fuzzy", "contexts", "regex", "analyzer", "shard_size")
MAX_REGEX = 1000        # as index.max_regex_length's default


@dataclass(frozen=True)
class CompletionSuggestion:
    """One ``completion`` suggester of the request."""

    name: str
    field: str
    text: str              # the prefix, regex or text as given (the entry's ``text``)
    is_regex: bool
    size: int = 5
    skip_duplicates: bool = False


def parse_completion(name: str, spec: dict[str, Any], global_text: Any) -> CompletionSuggestion:
    """``{"prefix"|"regex"|"text": ..., "completion": {field, size, skip_duplicates}}``;
    ``fuzzy``, ``contexts`` and regex options are refused by name."""
    opts = spec["completion"]
    if not isinstance(opts, dict):
        raise ParsingError(f"[completion] suggester [{name}] must be an object")
    for k in opts:
        if k in REFUSED:
            raise IllegalArgument(f"[{k}] of the completion suggester is not supported by "
                                  "this server")
        if k not in OPTIONS:
            raise IllegalArgument(f"[completion] unknown field [{k}]")
    if not isinstance(opts.get("field"), str) or not opts["field"]:
        raise IllegalArgument("The required field option [field] is missing")
    given = [k for k in ("prefix", "regex", "text") if k in spec]
    if len(given) > 1:
        raise IllegalArgument("only one of [text, prefix, regex] can be set")
    text = spec[given[0]] if given else global_text
    if not isinstance(text, str):
        raise IllegalArgument("The required text option is missing")
    size = opts.get("size", 5)
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise IllegalArgument(f"size must be positive, got {size}")
    if size > MAX_SIZE:
        raise IllegalArgument(f"[size] of a completion suggester must be at most [{MAX_SIZE}] "
                              f"on this server, got [{size}]")
    skip = opts.get("skip_duplicates", False)
    if skip not in (True, False, "true", "false"):
        raise IllegalArgument(f"Failed to parse value [{skip}] as only [true] or [false] are "
                              "allowed.")
    return CompletionSuggestion(name, opts["field"], text, given == ["regex"], size,
                                skip in (True, "true"))


def completion_plan(s: CompletionSuggestion, mapping: Any) -> CompletionPlan:
    """What the shards look up: the analysed prefix (or the regex) on the concrete field."""
    field = mapping.resolve(s.field)
    spec = _field_spec(mapping.properties, field)
    if spec is None or spec.get("type") != "completion":
        ft = mapping.get(field)
        raise IllegalArgument(f"Field [{s.field}] is not a completion suggest field"
                              if ft is not None else f"no mapping found for field [{s.field}]")
    cspec = CompletionSpec.from_mapping(spec)
    if s.is_regex:
        if len(s.text) > MAX_REGEX:
            raise IllegalArgument(f"The length of regex [{len(s.text)}] used in the completion "
                                  f"suggester exceeds the allowed maximum of [{MAX_REGEX}].")
        return CompletionPlan(s.name, field, cspec, None, lucene_regex(s.text).pattern,
                              s.size, s.skip_duplicates)
    return CompletionPlan(s.name, field, cspec, analysed(s.text, cspec, search=True), None,
                          s.size, s.skip_duplicates)


def _field_spec(props: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: Any = {"properties": props}
    for part in path.split("."):
        node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def reduce_completion(s: CompletionSuggestion, partials: list[list[tuple[Any, ...]]],
                      source: Any) -> list[dict[str, Any]]:
    """The suggester's one entry: the shards' options merged in the global order, cut to
    ``size`` (after ``skip_duplicates``), rendered as Elasticsearch renders them."""
    merged = sorted((o for p in partials for o in p), key=lambda o: (-o[0], o[1], o[2], o[3]))
    options, seen = [], set()
    for weight, text, index, _seq, doc_id, raw in merged:
        if s.skip_duplicates:
            if text in seen:
                continue
            seen.add(text)
        option: dict[str, Any] = {"text": text, "_index": index, "_id": doc_id,
                                  "_score": float(weight)}
        if source is None or source.enabled:
            doc = orjson.loads(raw or b"{}")
            if source is not None and not source.is_identity:
                doc = filter_source(doc, source.includes, source.excludes)
            option["_source"] = doc
        options.append(option)
        if len(options) >= s.size:
            break
    return [{"text": s.text, "offset": 0, "length": len(s.text), "options": options}]


__all__ = ["CompletionSuggestion", "completion_plan", "parse_completion", "reduce_completion"]
