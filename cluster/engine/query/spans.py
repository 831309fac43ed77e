"""Span queries (``span_term``, ``span_or``, ``span_near``, ``span_first``, ``span_not``,
``span_containing``, ``span_within``): parsing, matching and Lucene's ``SpanWeight`` scoring.

A span is ``(start, end, width)`` in token positions (``end`` inclusive; ``width`` is Lucene's
``Spans.width()``, the slop a near-span used). ``span_near`` walks the clauses' spans as
Lucene's ``NearSpansOrdered`` and ``NearSpansUnordered`` do. The score is
BM25 with the sloppy frequency ``sum 1 / (1 + width)`` and, as ``SpanWeight``, the idf summed
over the distinct terms of the query (of ``include`` only for ``span_not``), from the global
statistics — so it does not depend on the shard count. ``span_multi`` and
``field_masking_span`` are refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import IllegalArgument, ParsingError
from ..scoring import bm25, idf, legacy_boost
from ..postings import positions_in
from ..segment import Segment, TextField
from .context import Context
from .nodes import Query
from .parse_helpers import (MAX_NESTED_DEPTH, ParseState, bool_option, float_option, int_option,
                            token_name)


@dataclass(frozen=True)
class Span(Query):
    """``kind`` names the span query; ``subs`` its span clauses; ``term`` for ``span_term``."""

    kind: str = "span_term"
    field: str = ""
    term: str = ""
    subs: tuple["Span", ...] = ()
    slop: int = 0
    in_order: bool = True
    end: int = 0
    pre: int = 0
    post: int = 0


SPAN_QUERIES = ("span_term", "span_or", "span_near", "span_first", "span_not",
                "span_containing", "span_within")


def parse_span(name: str, body: dict[str, Any], st: ParseState) -> Span:
    """One span query (the DSL's parser for every ``span_*`` name handled here)."""
    if name == "span_term":
        return _span_term(body)
    known = {"span_or": ("clauses",), "span_near": ("clauses", "slop", "in_order"),
             "span_first": ("match", "end"), "span_not": ("include", "exclude", "pre", "post",
                                                          "dist"),
             "span_containing": ("big", "little"), "span_within": ("big", "little")}[name]
    for k in body:
        if k not in known and k not in ("boost", "_name"):
            raise ParsingError(f"[{name}] query does not support [{k}]")
    boost = float_option(name, "boost", body.get("boost", 1.0))
    if name in ("span_or", "span_near"):
        clauses = body.get("clauses")
        if not isinstance(clauses, list) or not clauses:
            raise ParsingError(f"{name} must include [clauses]")
        subs = tuple(_clause(name, c, st) for c in clauses)
        _same_field(subs)
        if name == "span_or":
            return Span(kind=name, field=subs[0].field, subs=subs, boost=boost)
        slop = int_option(name, "slop", body.get("slop", 0))
        return Span(kind=name, field=subs[0].field, subs=subs, slop=slop, boost=boost,
                    in_order=bool_option(name, "in_order", body.get("in_order", True)))
    if name == "span_first":
        if "match" not in body or "end" not in body:
            raise ParsingError("spanFirst must have [match] span query clause" if "match"
                               not in body else "spanFirst must have [end] set for it")
        sub = _clause(name, body["match"], st)
        return Span(kind=name, field=sub.field, subs=(sub,), boost=boost,
                    end=int_option(name, "end", body["end"]))
    if name == "span_not":
        return _span_not(body, st, boost)
    for k in ("big", "little"):
        if k not in body:
            raise ParsingError(f"[{name}] must include [{k}]")
    big, little = _clause(name, body["big"], st), _clause(name, body["little"], st)
    _same_field((big, little))
    return Span(kind=name, field=big.field, subs=(big, little), boost=boost)


def _span_term(body: dict[str, Any]) -> Span:
    if len(body) != 1:
        raise ParsingError("[span_term] query doesn't support multiple fields")
    field, spec = next(iter(body.items()))
    boost = 1.0
    if isinstance(spec, dict):
        for k in spec:
            if k not in ("value", "term", "boost", "_name"):
                raise ParsingError(f"[span_term] query does not support [{k}]")
        value = spec.get("value", spec.get("term"))
        boost = float_option("span_term", "boost", spec.get("boost", 1.0))
    else:
        value = spec
    if value is None or isinstance(value, (dict, list)):
        raise ParsingError(f"[span_term] unknown token [{token_name(value)}]")
    return Span(kind="span_term", field=field, term=str(value), boost=boost)


def _span_not(body: dict[str, Any], st: ParseState, boost: float) -> Span:
    if "include" not in body:
        raise ParsingError("span_not must have [include] span query clause")
    if "exclude" not in body:
        raise ParsingError("span_not must have [exclude] span query clause")
    if "dist" in body and ("pre" in body or "post" in body):
        raise ParsingError("span_not can either use [dist] or [pre] & [post] (or none)")
    inc, exc = _clause("span_not", body["include"], st), _clause("span_not", body["exclude"], st)
    _same_field((inc, exc))
    dist = int_option("span_not", "dist", body.get("dist", 0))
    pre = int_option("span_not", "pre", body.get("pre", dist))
    post = int_option("span_not", "post", body.get("post", dist))
    if pre < 0 or post < 0:
        raise IllegalArgument("[span_not] pre and post must be non-negative")
    return Span(kind="span_not", field=inc.field, subs=(inc, exc), pre=pre, post=post,
                boost=boost)


def _clause(parent: str, value: Any, st: ParseState) -> Span:
    if not isinstance(value, dict) or len(value) != 1:
        raise ParsingError(f"[{parent}] clauses must be span queries")
    name, body = next(iter(value.items()))
    if name not in SPAN_QUERIES:
        if name in ("span_multi", "field_masking_span", "span_field_masking"):
            raise ParsingError(f"[{name}] query is not supported by this server")
        raise ParsingError(f"[{parent}] clauses must be span queries, found [{name}]")
    if not isinstance(body, dict):
        raise ParsingError(f"[{name}] query malformed, no start_object after query name")
    st.depth += 1
    if st.depth > MAX_NESTED_DEPTH:
        raise IllegalArgument("The nested depth of the query exceeds the maximum nested depth "
                              "for queries set in [indices.query.bool.max_nested_depth]")
    span = parse_span(name, body, st)
    st.depth -= 1
    return span


def _same_field(subs: tuple[Span, ...]) -> None:
    if len({s.field for s in subs}) > 1:
        raise IllegalArgument("Clauses must have same field.")


# --- matching and scoring ----------------------------------------------------------------------

def span_terms(q: Span) -> set[str]:
    """The distinct terms whose statistics weigh the query (``SpanWeight.getTermStates``)."""
    if q.kind == "span_term":
        return {q.term}
    subs = q.subs[:1] if q.kind == "span_not" else q.subs
    return set().union(*(span_terms(s) for s in subs))


def evaluate_span(q: Span, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` over ``seg``. O(candidates x spans)."""
    mask, scores = np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=np.float32)
    fd = seg.fields.get(q.field)
    ft = ctx.mapping.get(q.field)
    if not isinstance(fd, TextField) or ft is None:
        return mask, scores
    walker = _SpanWalker(fd)
    docs = walker.candidates(q)
    freq = np.zeros(len(docs), dtype=np.float32)
    for i, doc in enumerate(docs.tolist()):
        ctx.cancel.tick()
        f = np.float32(0)
        for _, _, width in walker.spans(q, doc):
            f = np.float32(float(f) + 1.0 / (1.0 + width))
        freq[i] = f
    hit = freq > 0
    docs, freq = docs[hit], freq[hit]
    mask[docs] = True
    if ctx.stats is None:
        scores[docs] = q.boost
        return mask, scores
    scores[docs] = bm25(freq, fd.norms[docs], span_weight(q, ctx), ctx.stats.avgdl(q.field))
    return mask, scores


def span_weight(q: Span, ctx: Context) -> float:
    """``boost * sum of idf`` over the query's distinct terms (summed as Lucene: floats in a
    double, then rounded)."""
    assert ctx.stats is not None
    dc = ctx.stats.doc_count.get(q.field, 0)
    total = sum(idf(ctx.stats.doc_freq.get((q.field, t), 0), dc) for t in sorted(span_terms(q)))
    return float(legacy_boost(q.boost) * np.float32(total))


class _SpanWalker:
    def __init__(self, fd: TextField) -> None:
        self.fd = fd
        self._pos: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _positions(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        if term not in self._pos:
            got = self.fd.postings.positions_of(term)
            self._pos[term] = got if got is not None else (np.zeros(0, np.int32),) * 2
        return self._pos[term]

    def candidates(self, q: Span) -> np.ndarray:
        if q.kind == "span_term":
            return np.unique(self._positions(q.term)[0])
        docs = [self.candidates(s) for s in q.subs]
        if q.kind == "span_or":
            return np.unique(np.concatenate(docs))
        if q.kind in ("span_first", "span_not"):
            return docs[0]
        out = docs[0]
        for d in docs[1:]:
            out = np.intersect1d(out, d)
        return out

    def spans(self, q: Span, doc: int) -> list[tuple[int, int, int]]:
        if q.kind == "span_term":
            return [(x, x, 0) for x in positions_in(*self._positions(q.term), doc)]
        subs = [self.spans(s, doc) for s in q.subs]
        if q.kind == "span_or":
            return sorted(x for s in subs for x in s)
        if q.kind == "span_near":
            return (near_ordered if q.in_order else near_unordered)(subs, q.slop)
        if q.kind == "span_first":
            return [x for x in subs[0] if x[1] + 1 <= q.end]
        if q.kind == "span_not":
            return [x for x in subs[0] if not any(
                e[1] + 1 > x[0] - q.pre and e[0] < x[1] + 1 + q.post for e in subs[1])]
        big, little = subs
        if q.kind == "span_containing":
            return [b for b in big if any(b[0] <= s[0] and s[1] <= b[1] for s in little)]
        return [s for s in little if any(b[0] <= s[0] and s[1] <= b[1] for b in big)]


def near_ordered(subs: list[list[tuple[int, int, int]]], slop: int) -> list[tuple[int, int, int]]:
    """Lucene's ``NearSpansOrdered``: for each span of the first clause, every later clause
    moves forward (never back) to its first span after the previous one; a match when the
    summed gaps are at most ``slop``."""
    if any(not s for s in subs):
        return []
    idx = [0] * len(subs)
    out = []
    for first in subs[0]:
        prev_end, width = first[1] + 1, 0
        for i in range(1, len(subs)):
            while idx[i] < len(subs[i]) and subs[i][idx[i]][0] < prev_end:
                idx[i] += 1
            if idx[i] == len(subs[i]):
                return out
            cur = subs[i][idx[i]]
            width += cur[0] - prev_end
            prev_end = cur[1] + 1
        if width <= slop:
            out.append((first[0], prev_end - 1, width))
    return out


def near_unordered(subs: list[list[tuple[int, int, int]]], slop: int
                   ) -> list[tuple[int, int, int]]:
    """Lucene's ``NearSpansUnordered``: the clause whose span starts first moves on; a match
    whenever the window minus the clauses' lengths is at most ``slop``. Its ``width()`` is the
    whole window (end exclusive minus start), as OpenSearch's frequencies show."""
    if any(not s for s in subs):
        return []
    idx = [0] * len(subs)
    out = []
    while True:
        cur = [subs[i][idx[i]] for i in range(len(subs))]
        low = min(range(len(subs)), key=lambda i: (cur[i][0], cur[i][1]))
        start, end = cur[low][0], max(c[1] for c in cur) + 1
        if end - start - sum(c[1] + 1 - c[0] for c in cur) <= slop:
            out.append((start, end - 1, end - start))
        idx[low] += 1
        if idx[low] == len(subs[low]):
            return out
