"""``suggest``: the ``term`` suggester (Lucene's ``DirectSpellChecker`` rules), exact across
shards.

The text is analyzed with the field's search analyzer at the coordinator; each shard sends,
with its query-phase answer, the terms near each token and their frequencies
(``engine/suggest_terms.py``); here they are summed, filtered by ``suggest_mode``,
``min_doc_freq`` and ``max_term_freq``, scored (``1 - edits / min(length)``, Lucene's
``internal`` distance) and ranked. The ``phrase`` suggester is ``suggest_phrase.py``, the
``completion`` suggester ``suggest_completion.py``.
"""
from __future__ import annotations

import math

import numpy as np
from dataclasses import dataclass
from typing import Any

from ..engine.analysis import term_spans
from ..engine.query.parse_helpers import token_name
from ..errors import IllegalArgument, ParsingError
from .suggest_completion import CompletionSuggestion, parse_completion, reduce_completion
from .suggest_phrase import phrase_plan, reduce_phrase
from .suggest_phrase_parse import PhraseSuggestion, parse_phrase

TERM_OPTIONS = ("field", "text", "size", "suggest_mode", "max_edits", "prefix_length",
                "min_word_length", "sort", "string_distance", "analyzer", "min_doc_freq",
                "max_term_freq")
MODES = ("missing", "popular", "always")
MAX_TOKENS = 256   # ours: tokens of one suggester's text (bounds the shards' comparisons)
Plan = tuple[tuple[str, str, tuple[str, ...], int, int], ...]


@dataclass(frozen=True)
class TermSuggestion:
    """One ``term`` suggester of the request."""

    name: str
    text: str
    field: str
    size: int = 5
    suggest_mode: str = "missing"
    max_edits: int = 2
    prefix_length: int = 1
    min_word_length: int = 4
    sort: str = "score"
    analyzer: str | None = None
    min_doc_freq: float = 0.0
    max_term_freq: float = 0.01


Suggestion = TermSuggestion | PhraseSuggestion | CompletionSuggestion


def parse_suggest(value: Any) -> tuple[Suggestion, ...]:
    """The body's ``suggest`` object: a global ``text`` and named suggesters."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ParsingError(f"suggest doesn't support values of type: {token_name(value)}")
    global_text = value.get("text")
    out = []
    for name, spec in value.items():
        if name == "text":
            continue
        if not isinstance(spec, dict):
            raise ParsingError(f"[suggest] suggestion [{name}] must be an object")
        out.append(_parse_one(name, spec, global_text))
    return tuple(out)


def _parse_one(name: str, spec: dict[str, Any], global_text: Any) -> Suggestion:
    text = spec.get("text", global_text)
    kinds = [k for k in spec if k not in ("text", "prefix", "regex")]
    if len(kinds) != 1:
        raise IllegalArgument(f"suggestion [{name}] must have exactly one suggester type")
    kind = kinds[0]
    if kind == "completion":
        return parse_completion(name, spec, global_text)
    if kind not in ("term", "phrase"):
        raise IllegalArgument(f"Unable to parse suggester of type [{kind}]")
    if "prefix" in spec or "regex" in spec:
        raise IllegalArgument("[prefix] and [regex] belong to the completion suggester")
    if kind == "phrase":
        return parse_phrase(name, spec["phrase"], text)
    opts = spec["term"]
    if not isinstance(opts, dict):
        raise ParsingError(f"[term] suggester [{name}] must be an object")
    for k in opts:
        if k not in TERM_OPTIONS:
            raise IllegalArgument(f"suggester[term] doesn't support field [{k}]")
    if not isinstance(opts.get("field"), str) or not opts["field"]:
        raise IllegalArgument("The required field option [field] is missing")
    if not isinstance(text, str):
        raise IllegalArgument("The required text option is missing")
    mode = opts.get("suggest_mode", "missing")
    if mode not in MODES:
        raise IllegalArgument(f"Illegal suggest mode {mode}")
    if opts.get("string_distance", "internal") != "internal":
        raise IllegalArgument(f"[string_distance] [{opts['string_distance']}] is not supported "
                              "by this server (only [internal])")
    sort = opts.get("sort", "score")
    if sort not in ("score", "frequency"):
        raise IllegalArgument(f"Illegal suggest sort {sort}")
    max_edits = _int(opts, "max_edits", 2)
    if not 1 <= max_edits <= 2:
        raise IllegalArgument("Illegal max_edits value " + str(max_edits))
    return TermSuggestion(name, text, opts["field"], size=_int(opts, "size", 5),
                          suggest_mode=mode, max_edits=max_edits,
                          prefix_length=_int(opts, "prefix_length", 1),
                          min_word_length=_int(opts, "min_word_length", 4), sort=sort,
                          analyzer=opts.get("analyzer"),
                          min_doc_freq=_number(opts, "min_doc_freq", 0.0),
                          max_term_freq=_number(opts, "max_term_freq", 0.01))


def _number(opts: dict[str, Any], key: str, default: float) -> float:
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise IllegalArgument(f"[{key}] must be a non-negative number, found [{v}]")
    return float(v)


def _int(opts: dict[str, Any], key: str, default: int) -> int:
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise IllegalArgument(f"[{key}] must be a non-negative integer, found [{v}]")
    return v


def suggest_tokens(s: Suggestion, mapping: Any) -> list[tuple[str, int, int]]:
    """The suggestion's tokens with their offsets, by the field's search analyzer."""
    ft = mapping.get(s.field)
    if s.analyzer:
        name = s.analyzer
    elif ft is None or ft.kind != "text":
        name = "keyword"
    else:
        name = ft.search_analyzer or ft.analyzer
    return term_spans(name, s.text)


def shard_plan(suggestions: tuple[Suggestion, ...], mapping: Any) -> tuple[Plan, Plan]:
    """What each shard looks up for the term suggesters (``ShardQuery.suggest``) and for the
    phrase suggesters' generators (``ShardQuery.phrase_suggest``)."""
    terms: list[Any] = []
    phrases: list[Any] = []
    for s in suggestions:
        if isinstance(s, CompletionSuggestion):
            continue
        tokens = tuple(t for t, _, _ in suggest_tokens(s, mapping))
        if len(tokens) > MAX_TOKENS:
            raise IllegalArgument(f"[suggest] the text of [{s.name}] has [{len(tokens)}] tokens; "
                                  f"at most [{MAX_TOKENS}] are accepted by this server")
        if isinstance(s, PhraseSuggestion):
            if mapping.get(s.field) is None:
                raise IllegalArgument(f"no mapping found for field [{s.field}]")
            phrases.extend(phrase_plan(s, tokens))
        else:
            terms.append((s.name, s.field, tokens, s.max_edits, s.prefix_length))
    return tuple(terms), tuple(phrases)


def reduce_suggest(suggestions: tuple[Suggestion, ...], partials: list[dict[str, Any]],
                   mappings: dict[str, Any], typed_keys: bool, source: Any = None
                   ) -> dict[str, Any]:
    """The response's ``suggest`` section from the shards' partials; ``mappings``: the one
    each suggester's text is read with, by suggester name (``suggest_indices.py``)."""
    out: dict[str, Any] = {}
    for s in suggestions:
        mapping = mappings[s.name]
        if isinstance(s, CompletionSuggestion):
            out[f"completion#{s.name}" if typed_keys else s.name] = reduce_completion(
                s, [p[s.name] for p in partials if s.name in p], source, mapping)
            continue
        if isinstance(s, PhraseSuggestion):
            tokens = [t for t, _, _ in suggest_tokens(s, mapping)]
            out[f"phrase#{s.name}" if typed_keys else s.name] = reduce_phrase(s, tokens,
                                                                              partials)
            continue
        docs = sum(p[s.name]["docs"] for p in partials)
        entries = []
        for i, (tok, start, end) in enumerate(suggest_tokens(s, mapping)):
            own = sum(p[s.name]["tokens"][i][0] for p in partials)
            cands: dict[str, list[int]] = {}
            for p in partials:
                for term, (freq, edits) in p[s.name]["tokens"][i][1].items():
                    cands.setdefault(term, [0, edits])[0] += freq
            entries.append({"text": tok, "offset": start, "length": end - start,
                            "options": _options(s, tok, own, cands, docs)})
        out[f"term#{s.name}" if typed_keys else s.name] = entries
    return out


def _options(s: TermSuggestion, tok: str, own: int, cands: dict[str, list[int]],
             docs: int) -> list[dict[str, Any]]:
    if len(tok) < s.min_word_length or (s.suggest_mode == "missing" and own > 0):
        return []
    max_freq = s.max_term_freq if s.max_term_freq >= 1 else math.ceil(s.max_term_freq * docs)
    if own > max_freq:
        return []
    min_freq = s.min_doc_freq if s.min_doc_freq >= 1 else math.ceil(s.min_doc_freq * docs)
    found = []
    for term, (freq, edits) in cands.items():
        if freq < min_freq or (s.suggest_mode == "popular" and freq <= own):
            continue
        if len(term) < s.min_word_length:
            continue
        score = float(np.float32(1.0 - edits / min(len(term), len(tok))))   # a Java float
        found.append({"text": term, "score": score, "freq": freq})
    if s.sort == "score":
        found.sort(key=lambda o: (-o["score"], -o["freq"], o["text"]))
    else:
        found.sort(key=lambda o: (-o["freq"], -o["score"], o["text"]))
    return found[:s.size]
