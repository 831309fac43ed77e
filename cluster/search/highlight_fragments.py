"""Highlight fragments of one field: which tokens to mark, and the text around them.

``unified`` cuts a value into sentences and keeps those holding a mark, a sentence being
extended by the next ones while the fragment stays within ``fragment_size`` (a long sentence
is cut at the word boundary past ``fragment_size``); ``plain`` cuts it into runs of tokens of
about ``fragment_size`` characters. ``number_of_fragments: 0`` marks whole values. Fragments
come in text order, or best first (most distinct terms marked) with ``order: score``. All of
it is linear in the value's length; values are the page's hits only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..engine.analysis import term_spans
from ..engine.query.fuzzy import FuzzySpec, within
from ..engine.query.patterns import LinearPattern

Span = tuple[str, int, int]
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                       "'": "&#x27;", "/": "&#x2F;"})


@dataclass
class FieldMatcher:
    """What the query marks in one field."""

    terms: set[str] = field(default_factory=set)
    phrases: list[tuple[tuple[str, ...], int, bool]] = field(default_factory=list)
    prefixes: list[tuple[str, bool]] = field(default_factory=list)
    wildcards: list[tuple[str, bool]] = field(default_factory=list)
    fuzzy: list[FuzzySpec] = field(default_factory=list)

    def marked(self, spans: list[Span]) -> list[int]:
        """Indices of the tokens to mark, in order."""
        rxs = [LinearPattern(_wildcard_source(p), ci) for p, ci in self.wildcards]
        out = set()
        for i, (tok, _, _) in enumerate(spans):
            if tok in self.terms or any(
                    (tok.lower() if ci else tok).startswith(p.lower() if ci else p)
                    for p, ci in self.prefixes) or any(rx.fullmatch(tok) for rx in rxs) \
                    or any(within(spec, tok) for spec in self.fuzzy):
                out.add(i)
        for terms, slop, prefix in self.phrases:
            out.update(_phrase_marks([s[0] for s in spans], terms, slop, prefix))
        return sorted(out)


def _wildcard_source(pattern: str) -> str:
    return "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)


def _phrase_marks(tokens: list[str], terms: tuple[str, ...], slop: int, prefix: bool
                  ) -> list[int]:
    """Positions of the phrase's tokens where the phrase occurs (in order, with at most
    ``slop`` extra positions; the last term as a prefix for ``match_phrase_prefix``)."""
    n = len(terms)
    out: list[int] = []

    def same(tok: str, j: int) -> bool:
        return tok.startswith(terms[j]) if prefix and j == n - 1 else tok == terms[j]
    for start, tok in enumerate(tokens):
        if not same(tok, 0):
            continue
        got = [start]
        last = min(len(tokens) - 1, start + n - 1 + slop)
        for j in range(1, n):
            nxt = next((p for p in range(got[-1] + 1, last + 1) if same(tokens[p], j)), None)
            if nxt is None:
                break
            got.append(nxt)
        if len(got) == n:
            out.extend(got)
    return out


def _analyzer(ft: Any) -> str:
    return "keyword" if ft is not None and ft.kind == "keyword" else \
        (ft.analyzer if ft is not None else "standard")


def field_fragments(values: list[str], ft: Any, matcher: FieldMatcher, opts: Any,
                    matched: list[tuple[Any, FieldMatcher]] | None = None) -> list[str]:
    """The fragments of one field's values, as the hit's ``highlight`` shows them;
    ``matched``: the ``matched_fields`` (type and matcher) whose marks are added."""
    scored: list[tuple[int, int, int, str]] = []   # (-score, value, position, text)
    for vi, text in enumerate(values):
        spans, marks = _marked_spans(text, ft, matcher, matched or [])
        if not marks:
            continue
        if opts.number_of_fragments == 0:
            scored.append((0, vi, 0, _render(text, 0, len(text), spans, marks, opts)))
            continue
        cut = _plain_cuts if opts.type == "plain" else _sentence_cuts
        for start, end in cut(text, spans, marks, opts.fragment_size):
            inside = [i for i in marks if spans[i][1] >= start and spans[i][2] <= end]
            score = len({spans[i][0] for i in inside})
            scored.append((-score if opts.order == "score" else 0, vi, start,
                           _render(text, start, end, spans, inside, opts)))
    if not scored:
        return _no_match(values, opts)
    scored.sort(key=lambda t: t[:3])
    frags = [t[3] for t in scored]
    return frags if opts.number_of_fragments == 0 else frags[:opts.number_of_fragments]


def _marked_spans(text: str, ft: Any, matcher: FieldMatcher,
                  matched: list[tuple[Any, FieldMatcher]]) -> tuple[list[Span], list[int]]:
    """The field's tokens with the marked ones, plus the tokens other analyzers of the same
    text (``matched_fields``) mark where the field's own tokens are not marked."""
    spans = term_spans(_analyzer(ft), text)
    marks = matcher.marked(spans)
    if not matched:
        return spans, marks
    marked = {(spans[i][1], spans[i][2]): spans[i] for i in marks}
    for mft, m in matched:
        other = term_spans(_analyzer(mft), text)
        for i in m.marked(other):
            marked.setdefault((other[i][1], other[i][2]), other[i])
    plain = [s for s in spans if (s[1], s[2]) not in marked]
    merged = sorted(plain + list(marked.values()), key=lambda s: (s[1], s[2]))
    keys = set(marked)
    return merged, [i for i, s in enumerate(merged) if (s[1], s[2]) in keys]


def _render(text: str, start: int, end: int, spans: list[Span], marks: list[int],
            opts: Any) -> str:
    enc = (lambda s: s.translate(_HTML)) if opts.encoder == "html" else (lambda s: s)
    pre, post = opts.pre_tags[0], opts.post_tags[0]
    out = []
    pos = start
    for i in marks:
        _, s, e = spans[i]
        if s < pos:
            continue
        out.append(enc(text[pos:s]) + pre + enc(text[s:e]) + post)
        pos = e
    out.append(enc(text[pos:end]))
    return "".join(out).strip()


def _sentences(text: str) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        bounds.append((start, m.end()))
        start = m.end()
    if start < len(text):
        bounds.append((start, len(text)))
    return bounds


def _sentence_cuts(text: str, spans: list[Span], marks: list[int], size: int
                   ) -> list[tuple[int, int]]:
    """Unified: the sentences holding marks, each extended by the following sentences while
    the fragment stays within ``size``; a longer one cut past ``size`` at a word boundary."""
    sentences = _sentences(text)
    cuts: list[tuple[int, int]] = []
    for i in marks:
        s, e = spans[i][1], spans[i][2]
        if cuts and s < cuts[-1][1]:
            continue
        k = next(j for j, (_, b) in enumerate(sentences) if b > s)
        start, end = sentences[k]
        if start < s - size:   # a very long sentence: start a few words before the mark
            start = next(t[1] for t in spans if t[1] >= s - size // 2)
        while k + 1 < len(sentences) and sentences[k + 1][1] - start <= size:
            k += 1
            end = sentences[k][1]
        if end - start > size:
            past = next((t[2] for t in spans if t[2] >= start + size and t[2] >= e), end)
            end = min(end, past)
        cuts.append((start, end))
    return cuts


def _plain_cuts(text: str, spans: list[Span], marks: list[int], size: int
                ) -> list[tuple[int, int]]:
    """Plain: runs of tokens of about ``size`` characters (Lucene's simple fragmenter), the
    ones holding a mark."""
    groups: dict[int, list[int]] = {}
    for i, (_, s, e) in enumerate(spans):
        groups.setdefault(e // max(size, 1), []).append(i)
    wanted = {e // max(size, 1) for i in marks for e in (spans[i][2],)}
    return [(spans[g[0]][1], spans[g[-1]][2]) for b, g in sorted(groups.items())
            if b in wanted]


def _no_match(values: list[str], opts: Any) -> list[str]:
    """``no_match_size``: the start of the first value, up to a word boundary."""
    if opts.no_match_size <= 0 or not values:
        return []
    text = values[0]
    if len(text) <= opts.no_match_size:
        end = len(text)
    else:
        cut = text.rfind(" ", 0, opts.no_match_size + 1)
        end = cut if cut > 0 else opts.no_match_size
    return [_render(text, 0, end, [], [], opts)]
