"""The ``completion`` suggester: parsed, planned for the shards, and reduced.

The prefix is analysed at the coordinator with the field's search analyzer; a ``regex`` is
translated from Lucene's syntax to a linear-time pattern. Each shard answers its best ``size``
options (``engine/suggest_completion.py``); here they are merged in one order — weight
descending, then the analysed form and the text (``engine/completion.order_key``), then the
document's place in the global order (index name, sequence number) — so the answer is the same for 1 and
N shards. ``skip_duplicates`` drops options whose text was already given.

Beyond Elasticsearch: ties of weight are broken by the analysed form (what one Lucene shard's
FST walk does) on every shard count, where Elasticsearch compares texts between shards; a fuzzy
boost is computed over all shards' inputs, where Lucene computes it per segment.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from ..engine.completion import MAX_SIZE, CompletionSpec, analysed
from ..engine.completion_contexts import query_contexts
from ..engine.completion_fuzzy import FuzzyOptions, boost
from ..engine.query.pattern_syntax import lucene_regex
from ..engine.source_filter import filter_source
from ..engine.suggest_completion import CompletionPlan
from ..errors import IllegalArgument, ParsingError

OPTIONS = ("field", "size", "skip_duplicates", "fuzzy", "contexts")
REFUSED = ("regex", "analyzer", "shard_size")
FUZZY_KEYS = ("fuzziness", "transpositions", "min_length", "prefix_length", "unicode_aware")
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
    fuzzy: FuzzyOptions | None = None
    contexts: Any = None   # the request's ``contexts`` (checked against the field's mapping)


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
    fuzzy = _fuzzy(opts["fuzzy"]) if "fuzzy" in opts else None
    if fuzzy is not None and given == ["regex"]:
        raise IllegalArgument("[fuzzy] applies to a [prefix], not to a [regex]")
    if fuzzy is not None and opts.get("contexts"):
        raise IllegalArgument("[fuzzy] with [contexts] is not supported by this server")
    return CompletionSuggestion(name, opts["field"], text, given == ["regex"], size,
                                skip in (True, "true"), fuzzy, opts.get("contexts"))


def _fuzzy(spec: Any) -> FuzzyOptions:
    """``fuzzy``: ``true`` or an object of Elasticsearch's options (``AUTO`` is one edit, as
    Elasticsearch's completion suggester resolves it without a term)."""
    if spec is True or spec == "true":
        return FuzzyOptions()
    if not isinstance(spec, dict):
        raise ParsingError("[fuzzy] must be an object or a boolean")
    for k in spec:
        if k not in FUZZY_KEYS:
            raise IllegalArgument(f"[fuzzy] unknown field [{k}]")
    f = spec.get("fuzziness", "AUTO")
    edits = 1 if f in ("AUTO", "auto") else f
    if isinstance(edits, str) and edits.isdigit():
        edits = int(edits)
    if isinstance(edits, bool) or not isinstance(edits, int) or not 0 <= edits <= 2:
        raise IllegalArgument(f"[fuzziness] must be AUTO, 0, 1 or 2 here, got [{f}]")
    return FuzzyOptions(edits=edits, transpositions=_flag(spec, "transpositions", True),
                        min_length=_count(spec, "min_length", 3),
                        prefix_length=_count(spec, "prefix_length", 1),
                        unicode_aware=_flag(spec, "unicode_aware", False))


def _flag(spec: dict[str, Any], key: str, default: bool) -> bool:
    v = spec.get(key, default)
    if v not in (True, False, "true", "false"):
        raise IllegalArgument(f"Failed to parse value [{v}] as only [true] or [false] are "
                              "allowed.")
    return v in (True, "true")


def _count(spec: dict[str, Any], key: str, default: int) -> int:
    v = spec.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise IllegalArgument(f"[{key}] must be a non-negative integer, got [{v}]")
    return v


def completion_plan(s: CompletionSuggestion, mapping: Any) -> CompletionPlan:
    """What the shards look up: the analysed prefix (or the regex) on the concrete field."""
    field = mapping.resolve(s.field)
    spec = _field_spec(mapping.properties, field)
    if spec is None or spec.get("type") != "completion":
        ft = mapping.get(field)
        raise IllegalArgument(f"Field [{s.field}] is not a completion suggest field"
                              if ft is not None else f"no mapping found for field [{s.field}]")
    cspec = CompletionSpec.from_mapping(spec, field)
    wanted = tuple((i, tuple(v)) for i, v in query_contexts(s.contexts, cspec.contexts).items())
    if s.is_regex:
        if len(s.text) > MAX_REGEX:
            raise IllegalArgument(f"The length of regex [{len(s.text)}] used in the completion "
                                  f"suggester exceeds the allowed maximum of [{MAX_REGEX}].")
        return CompletionPlan(s.name, field, cspec, None, lucene_regex(s.text).pattern,
                              s.size, s.skip_duplicates, None, wanted)
    return CompletionPlan(s.name, field, cspec, analysed(s.text, cspec, search=True), None,
                          s.size, s.skip_duplicates, s.fuzzy, wanted)


def _fuzzy_boost(s: CompletionSuggestion, partials: list[dict[str, Any]], mapping: Any
                 ) -> int:
    """The multiplier of the weights: 1 without ``fuzzy`` or with a boost of 0."""
    if s.fuzzy is None:
        return 1
    firsts = [p["first"] for p in partials if p.get("first") is not None]
    plan = completion_plan(dataclasses.replace(s, fuzzy=None, contexts=None), mapping)
    assert plan.prefix is not None
    return boost(s.fuzzy.units(plan.prefix), min(firsts) if firsts else None) or 1


def _field_spec(props: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: Any = {"properties": props}
    for part in path.split("."):
        node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def reduce_completion(s: CompletionSuggestion, partials: list[dict[str, Any]], source: Any,
                      mapping: Any) -> list[dict[str, Any]]:
    """The suggester's one entry: the shards' options merged in the global order, cut to
    ``size`` (after ``skip_duplicates``), rendered as Elasticsearch renders them; a fuzzy
    prefix scales every weight by one boost (``engine/completion_fuzzy.py``)."""
    merged = sorted((o for p in partials for o in p["options"]), key=lambda o: o[:3])
    scale = _fuzzy_boost(s, partials, mapping)
    options, seen = [], set()
    for key, index, _seq, doc_id, raw, contexts in merged:
        text = key[2]
        if s.skip_duplicates:
            if text in seen:
                continue
            seen.add(text)
        option: dict[str, Any] = {"text": text, "_index": index, "_id": doc_id,
                                  "_score": float(np.float32(-key[0] * scale))}
        if raw is not None and (source is None or source.enabled):
            doc = orjson.loads(raw)
            if source is not None and not source.is_identity:
                doc = filter_source(doc, source.includes, source.excludes)
            option["_source"] = doc
        if contexts:
            option["contexts"] = contexts
        options.append(option)
        if len(options) >= s.size:
            break
    return [{"text": s.text, "offset": 0, "length": len(s.text), "options": options}]


__all__ = ["CompletionSuggestion", "completion_plan", "parse_completion", "reduce_completion"]
