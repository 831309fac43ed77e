"""Evaluate an expanded query against one segment: a match mask and BM25 scores, as arrays.

Every function here is vectorised over the segment's documents: a query node returns
``(mask: bool[n], scores: float32[n])``. ``bool`` sums the scores of its scoring clauses (as
Elasticsearch does, in double precision, rounded to float per node like Lucene's scorers);
filters and ``must_not`` only narrow the mask. Field semantics come from the index mapping
passed in the context; the statistics come from the coordinator (global). Compound queries
check the context's cancellation before each clause, and pattern expansions every thousand
terms, so a search past its deadline stops inside one segment too.

Rewriting for a mapping is in ``rewrite.py``, refusals in ``validation.py``, explanations in
``explain.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import nodes as Q
from .slicing import slice_mask
from .dsl import minimum_should_match
from ...errors import IllegalArgument, ParsingError
from ..field_types import FieldType
from .context import Context
from .index_field import index_matches
from .phrase_freq import phrase_freq_column
from .ip_match import ip_query_mask, pattern_dictionary, range_span, term_spans
from .range_match import query_span, range_query_mask
from . import function_score
from .field_values import numeric_bounds, numeric_value
from .nested_query import evaluate_nested
from .intervals import evaluate_intervals
from .intervals_dsl import Intervals
from .spans import Span, evaluate_span
from .combined_fields import CombinedFields
from .combined_scoring import evaluate_combined
from .cross_fields import CrossFieldsGroup, evaluate_cross_fields
from .more_like_this import MoreLikeThis
from .mlt_terms import mlt_query
from .fuzzy_query import evaluate_fuzzy
from .geo_match import EVALUATORS as GEO_EVALUATORS
from .pattern_syntax import lucene_regex, wildcard_regex
from .patterns import LinearPattern
from .rewrite import analyze_for, query_text
from ..scoring import PrefixTerms, Stats, bm25, idf, legacy_boost
from ..segment import KeywordField, NumericField, Segment, TextField

_SCORE = np.float32


# --- evaluation -------------------------------------------------------------------------------

def evaluate(q: Q.Query, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` of an *expanded* query over all documents of ``seg``.

    Every node checks the context's cancellation first: each clause of a compound query is a
    point where a search past its deadline (or cancelled) stops."""
    ctx.cancel.check()
    if getattr(q, "field", None) == "_index":   # one value per shard (index_field.py)
        hit = index_matches(q, ctx.index_name)
        if hit is not None:
            return constant(np.full(seg.n, hit, dtype=bool), q.boost)
    fn = _EVAL.get(type(q))
    if fn is None:
        raise ParsingError(f"unsupported query [{type(q).__name__}]")
    return fn(q, seg, ctx)


def no_match(seg: Segment) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=_SCORE)


def constant(mask: np.ndarray, boost: float) -> tuple[np.ndarray, np.ndarray]:
    return mask, np.where(mask, _SCORE(boost), _SCORE(0)).astype(_SCORE)


def _e_match_all(q: Q.MatchAll, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return np.ones(seg.n, dtype=bool), np.full(seg.n, q.boost, dtype=_SCORE)


def _e_match_none(q: Q.Query, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return no_match(seg)


def term_weight(fname: str, term: str, ctx: Context, boost: float) -> tuple[float, float, int,
                                                                            int]:
    """(weight = boost * idf, idf, df, doc_count) from the global statistics."""
    stats = ctx.stats
    assert stats is not None
    doc_count = stats.doc_count.get(fname, 0)
    df = stats.doc_freq.get((fname, term), 0)
    term_idf = idf(df, doc_count)
    return float(legacy_boost(boost) * np.float32(term_idf)), term_idf, df, doc_count


def term_scores(fname: str, term: str, seg: Segment, ctx: Context,
                 boost: float) -> tuple[np.ndarray, np.ndarray]:
    mask, scores = no_match(seg)
    docs, hit_scores = _term_hits(fname, term, seg, ctx, boost)
    mask[docs] = True
    scores[docs] = hit_scores
    return mask, scores


def _term_hits(fname: str, term: str, seg: Segment, ctx: Context,
               boost: float) -> tuple[np.ndarray, np.ndarray]:
    """``(docs, scores)`` of one term: its postings (as intp, which NumPy indexes ~3x faster
    than int32) and their BM25 scores."""
    fd = seg.fields.get(fname)
    got = fd.postings.get(term) if isinstance(fd, (TextField, KeywordField)) else None
    if got is None:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=_SCORE)
    docs, freqs = got
    docs = docs.astype(np.intp, copy=False)
    if ctx.stats is None:
        return docs, np.full(len(docs), boost, dtype=_SCORE)
    weight = term_weight(fname, term, ctx, boost)[0]
    if isinstance(fd, TextField):
        return docs, bm25(freqs, fd.norms[docs], weight, ctx.stats.avgdl(fname))
    return docs, bm25(np.ones(len(docs), dtype=np.int32), None, weight, ctx.stats.avgdl(fname))


def evaluate_sparse(q: Q.Query, seg: Segment, ctx: Context
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(docs, scores)`` of a ``match`` that analyses to one term — most ranked searches —
    straight from the postings, without the dense mask and score arrays :func:`evaluate`
    builds and the caller then turns back into rows (~0.2 ms per 56k matches). The same
    answer as ``evaluate`` (the same branch of ``_e_match``); None for any other query."""
    if type(q) is not Q.Match:
        return None
    ft = ctx.mapping.get(q.field)
    if ft is None or ft.kind in ("numeric", "date", "boolean", "range") or ft.type == "ip":
        return None
    terms = match_terms(q, ft)
    if len(terms) != 1:
        return None
    return _term_hits(q.field, terms[0], seg, ctx, q.boost)


def _e_term(q: Q.Term, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field == "_id":
        return _e_ids(Q.Ids(values=(str(q.value),), boost=q.boost), seg, ctx)
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return no_match(seg)
    if ft.type == "ip":
        return constant(ip_query_mask(seg, q.field, term_spans([q.value])), q.boost)
    if ft.kind == "range":          # the ranges holding the value (a date: all it names)
        span = query_span(Q.Range(field=q.field, gte=q.value, lte=q.value), ft, ctx)
        return constant(range_query_mask(seg, q.field, span, "intersects"), q.boost)
    if ft.kind in ("text", "keyword"):
        if q.case_insensitive:
            fd = seg.fields.get(q.field)
            if not isinstance(fd, (TextField, KeywordField)):
                return no_match(seg)
            want = query_text(q.value).lower()
            ids = fd.postings.ids_where(_ticking(lambda t: t.lower() == want, ctx))
            return constant(fd.postings.union(ids, seg.n), q.boost)
        return term_scores(q.field, query_text(q.value), seg, ctx, q.boost)
    if ft.kind == "date":
        # a date term is the range of instants its text covers (``2020-01-01`` is a whole day)
        return _e_range(Q.Range(field=q.field, gte=q.value, lte=q.value, boost=q.boost),
                        seg, ctx)
    return constant(_numeric_in(q.field, ft, [q.value], seg), q.boost)


def _numeric_in(fname: str, ft: FieldType, values: list[Any], seg: Segment) -> np.ndarray:
    wanted = [v for v in (numeric_value(ft, x) for x in values) if v is not None]
    fd = seg.fields.get(fname)
    if not isinstance(fd, NumericField):
        return np.zeros(seg.n, dtype=bool)
    hit = np.isin(fd.values, np.asarray(wanted, dtype=fd.values.dtype))
    mask = np.zeros(seg.n, dtype=bool)
    mask[fd.value_docs[hit]] = True
    return mask


def _union_terms(fd: TextField | KeywordField, terms: list[str], n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for t in terms:
        got = fd.postings.get(t)
        if got is not None:
            mask[got[0].astype(np.intp, copy=False)] = True
    return mask


def _e_terms(q: Q.Terms, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field == "_id":
        return _e_ids(Q.Ids(values=tuple(str(v) for v in q.values), boost=q.boost), seg, ctx)
    ft = ctx.mapping.get(q.field)
    if ft is None or not q.values:
        return no_match(seg)
    if ft.type == "ip":
        return constant(ip_query_mask(seg, q.field, term_spans(list(q.values))), q.boost)
    if ft.kind == "range":
        mask = np.zeros(seg.n, dtype=bool)
        for v in q.values:
            mask |= _e_term(Q.Term(field=q.field, value=v), seg, ctx)[0]
        return constant(mask, q.boost)
    if ft.kind in ("text", "keyword"):
        fd = seg.fields.get(q.field)
        if not isinstance(fd, (TextField, KeywordField)):
            return no_match(seg)
        return constant(_union_terms(fd, [query_text(v) for v in q.values], seg.n), q.boost)
    if ft.kind == "date":
        mask = np.zeros(seg.n, dtype=bool)
        for v in q.values:
            mask |= _e_range(Q.Range(field=q.field, gte=v, lte=v), seg, ctx)[0]
        return constant(mask, q.boost)
    return constant(_numeric_in(q.field, ft, list(q.values), seg), q.boost)


def match_terms(q: Q.Match, ft: FieldType) -> list[str]:
    return analyze_for(ft, q.text, q.analyzer)


def _match_need(q: Q.Match, n_terms: int) -> int:
    """How many of the match's terms a document needs (operator / minimum_should_match)."""
    if q.operator == "and":
        return n_terms
    return max(1, minimum_should_match(q.minimum_should_match, n_terms))


def _e_match(q: Q.Match, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return no_match(seg)
    if ft.kind in ("numeric", "date", "boolean", "range") or ft.type == "ip":
        try:
            return _e_term(Q.Term(field=q.field, value=q.text, boost=q.boost), seg, ctx)
        except IllegalArgument:
            if q.lenient:
                return no_match(seg)
            raise
    terms = match_terms(q, ft)
    if not terms:
        if q.zero_terms_query == "all":
            return _e_match_all(Q.MatchAll(), seg, ctx)
        return no_match(seg)
    if len(terms) == 1:
        return term_scores(q.field, terms[0], seg, ctx, q.boost)
    clauses = [term_scores(q.field, t, seg, ctx, q.boost) for t in terms]
    return _combine_should(clauses, _match_need(q, len(terms)), seg.n)


def _combine_should(clauses: list[tuple[np.ndarray, np.ndarray]], need: int,
                    n: int) -> tuple[np.ndarray, np.ndarray]:
    count = np.zeros(n, dtype=np.int32)
    total = np.zeros(n, dtype=np.float64)
    for m, s in clauses:
        count += m
        total += np.where(m, s, _SCORE(0))
    mask = count >= need
    return mask, np.where(mask, total, 0.0).astype(_SCORE)


# --- phrases ----------------------------------------------------------------------------------

def phrase_terms(q: Q.MatchPhrase, ft: FieldType, fd: TextField,
                 stats: Stats | None = None) -> list[list[str]]:
    """The alternatives at each phrase position. A phrase prefix's last term expands to the
    first ``max_expansions`` terms with that prefix over every shard (gathered in the
    statistics round); without statistics, to those of this segment."""
    terms = analyze_for(ft, q.text, q.analyzer)
    out = [[t] for t in terms]
    if q.prefix and out:
        if stats is not None and prefix_request(q, terms) in stats.expansions:
            out[-1] = [t for t, _ in stats.expansion(prefix_request(q, terms))] or [terms[-1]]
        else:
            out[-1] = fd.postings.terms_with_prefix(terms[-1])[:q.max_expansions] \
                or [terms[-1]]
    return out


def prefix_request(q: Q.MatchPhrase, terms: list[str]) -> PrefixTerms:
    return PrefixTerms(q.field, terms[-1], q.max_expansions)


def _e_phrase(q: Q.MatchPhrase, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return no_match(seg)
    terms = analyze_for(ft, q.text, q.analyzer)
    if not terms:
        if q.zero_terms_query == "all":
            return constant(np.ones(seg.n, dtype=bool), q.boost)
        return no_match(seg)
    if ft.kind != "text" or len(terms) == 1 and not q.prefix:
        return _e_match(Q.Match(field=q.field, text=q.text, boost=q.boost, analyzer=q.analyzer),
                        seg, ctx)
    fd = seg.fields.get(q.field)
    if not isinstance(fd, TextField):
        return no_match(seg)
    freq = phrase_freq_column(phrase_terms(q, ft, fd, ctx.stats), fd, q.slop, seg.n)
    mask = freq > 0
    scores = np.zeros(seg.n, dtype=_SCORE)
    if ctx.stats is not None and mask.any():
        w = phrase_weight(q, terms, ctx)[0]
        docs = np.flatnonzero(mask)
        scores[docs] = bm25(freq[docs], fd.norms[docs], w, ctx.stats.avgdl(q.field))
    else:
        scores[mask] = q.boost
    return mask, scores


def phrase_weight(q: Q.MatchPhrase, terms: list[str],
                   ctx: Context) -> tuple[float, float, list[tuple[str, float, int, int]]]:
    """(boost * sum of idf, sum of idf, per term (term, idf, df, N)), as Lucene's
    ``idfExplain`` for several terms (summed in double, rounded to float). A phrase prefix is
    Lucene's ``MultiPhraseQuery``: every expansion of its last term adds its own idf."""
    assert ctx.stats is not None
    dc = ctx.stats.doc_count.get(q.field, 0)
    parts = []
    for t in terms[:-1] if q.prefix else terms:
        df = ctx.stats.doc_freq.get((q.field, t), 0)
        parts.append((t, idf(df, dc), df, dc))
    if q.prefix:
        parts += [(t, idf(df, dc), df, dc)
                  for t, df in ctx.stats.expansion(prefix_request(q, terms))]
    total = float(np.float32(sum(p[1] for p in parts)))
    return float(legacy_boost(q.boost) * np.float32(total)), total, parts


def _e_range(q: Q.Range, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return no_match(seg)
    if ft.type == "ip":
        return constant(ip_query_mask(seg, q.field, [range_span(q)]), q.boost)
    if ft.kind == "range":
        return constant(range_query_mask(seg, q.field, query_span(q, ft, ctx), q.relation),
                        q.boost)
    if ft.kind in ("numeric", "date", "boolean"):
        bounds = numeric_bounds(q, ft, ctx)   # parsed even when the segment lacks the field
        fd = seg.fields.get(q.field)
        if not isinstance(fd, NumericField):
            return no_match(seg)
        vals = fd.values
        cond = np.ones(len(vals), dtype=bool)
        for op, b in bounds:
            cond &= {"gt": vals > b, "gte": vals >= b, "lt": vals < b, "lte": vals <= b}[op]
        mask = np.zeros(seg.n, dtype=bool)
        mask[fd.value_docs[cond]] = True
        return constant(mask, q.boost)
    fd = seg.fields.get(q.field)
    if isinstance(fd, (KeywordField, TextField)):
        bounds = [None if b is None else query_text(b) for b in (q.gt, q.gte, q.lt, q.lte)]
        ids = fd.postings.ids_in_range(*bounds)
        return constant(fd.postings.union(ids, seg.n), q.boost)
    return no_match(seg)


#: Metadata fields every document has: ``exists`` on them matches all (as in Elasticsearch).
_ALWAYS_PRESENT = frozenset({"_id", "_index", "_seq_no", "_version", "_primary_term"})


def _e_exists(q: Q.Exists, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field in _ALWAYS_PRESENT:
        return constant(np.ones(seg.n, dtype=bool), q.boost)
    if q.field == "_routing":
        mask = np.fromiter((r is not None for r in seg.routing), dtype=bool, count=seg.n)
        return constant(mask, q.boost)
    fd = seg.fields.get(q.field)
    if fd is not None:
        return constant(fd.present.copy(), q.boost)
    prefix = q.field + "."
    mask = np.zeros(seg.n, dtype=bool)
    for name, sub in seg.fields.items():
        if name.startswith(prefix):
            mask |= sub.present
    return constant(mask, q.boost)


def _e_ids(q: Q.Ids, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return constant(seg.ids.mask_of(list(q.values)), q.boost)


def _e_prefix(q: Q.Prefix, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field == "_id":
        return constant(np.array([_tick(ctx) or i.startswith(q.value) for i in seg.ids],
                                 dtype=bool), q.boost)
    fd = pattern_dictionary(seg, q.field, ctx.mapping.get(q.field))
    if fd is None:
        return no_match(seg)
    if q.case_insensitive:
        low = q.value.lower()
        ids = fd.postings.ids_where(_ticking(lambda t: t.lower().startswith(low), ctx))
    else:
        ids = fd.postings.ids_with_prefix(q.value)
    return constant(fd.postings.union(ids, seg.n), q.boost)


def _tick(ctx: Context) -> bool:
    """One step of a term (or id) expansion: the cancellation is checked every thousand.
    Always False, so it can lead an ``or``."""
    ctx.cancel.tick()
    return False


def _ticking(keep: Any, ctx: Context) -> Any:
    """``keep`` (a predicate on terms) that ticks the cancellation at each term it tries."""
    return lambda t: _tick(ctx) or keep(t)


class _TickingPattern:
    """A pattern whose every match attempt ticks the cancellation (the surface of
    ``re.Pattern`` that the term dictionary's expansion reads)."""

    __slots__ = ("pattern", "flags", "_rx", "_ctx")

    def __init__(self, rx: LinearPattern, ctx: Context) -> None:
        self.pattern, self.flags, self._rx, self._ctx = rx.pattern, rx.flags, rx, ctx

    def fullmatch(self, text: str) -> Any:
        self._ctx.cancel.tick()
        return self._rx.fullmatch(text)


def _terms_matching(field: str, pattern: LinearPattern, boost: float, seg: Segment,
                    ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """Constant-score match of every term (or ``_id``) the pattern matches in full. O(terms
    tried); the dictionary is walked with the cancellation ticking."""
    rx = _TickingPattern(pattern, ctx)
    if field == "_id":
        return constant(np.array([bool(rx.fullmatch(i)) for i in seg.ids], dtype=bool), boost)
    fd = pattern_dictionary(seg, field, ctx.mapping.get(field))
    if fd is None:
        return no_match(seg)
    return constant(fd.postings.union(fd.postings.ids_matching(rx), seg.n), boost)



def _e_regexp(q: Q.Regexp, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return _terms_matching(q.field, lucene_regex(q.value, q.flags, q.case_insensitive),
                           q.boost, seg, ctx)


def _e_wildcard(q: Q.Wildcard, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return _terms_matching(q.field, wildcard_regex(q.pattern, q.case_insensitive), q.boost,
                           seg, ctx)


# --- compound queries -------------------------------------------------------------------------

def _bool_need(q: Q.Bool) -> int:
    """Should clauses a document must match: ``minimum_should_match`` (not clamped: asking
    for more than there are matches nothing), and at least one when nothing else is
    required (a pure disjunction)."""
    need = minimum_should_match(q.minimum_should_match, len(q.should)) \
        if q.minimum_should_match is not None else 0
    if not q.must and not q.filter and q.should:
        need = max(need, 1)
    return need


def _e_bool(q: Q.Bool, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    n = seg.n
    if not (q.must or q.should or q.filter or q.must_not):
        return constant(np.ones(n, dtype=bool), q.boost)   # rewritten to match_all
    mask = np.ones(n, dtype=bool)
    score = np.zeros(n, dtype=np.float64)
    for sub in q.must:
        m, s = evaluate(sub, seg, ctx)
        mask &= m
        score += np.where(m, s, _SCORE(0))
    for sub in q.filter:
        mask &= evaluate(sub, seg, ctx)[0]
    for sub in q.must_not:
        mask &= ~evaluate(sub, seg, ctx)[0]
    if q.should:
        count = np.zeros(n, dtype=np.int32)
        for sub in q.should:
            m, s = evaluate(sub, seg, ctx)
            count += m
            score += np.where(m, s, _SCORE(0))
        need = _bool_need(q)
        if need > 0:
            mask &= count >= need
    out = score.astype(_SCORE)
    if q.boost != 1.0:
        out = (out * _SCORE(q.boost)).astype(_SCORE)
    return mask, np.where(mask, out, _SCORE(0)).astype(_SCORE)


def _e_constant(q: Q.ConstantScore, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    m, _ = evaluate(q.filter, seg, ctx)
    return constant(m, q.boost)


def _e_dismax(q: Q.DisMax, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    n = seg.n
    mask = np.zeros(n, dtype=bool)
    best = np.zeros(n, dtype=_SCORE)
    total = np.zeros(n, dtype=np.float64)
    for sub in q.queries:
        m, s = evaluate(sub, seg, ctx)
        s = np.where(m, s, _SCORE(0)).astype(_SCORE)
        mask |= m
        best = np.maximum(best, s)
        total += s
    score = (best + (total - best) * np.float32(q.tie_breaker)).astype(_SCORE)
    if q.boost != 1.0:
        score = (score * _SCORE(q.boost)).astype(_SCORE)
    return mask, np.where(mask, score, _SCORE(0)).astype(_SCORE)


_EVAL: dict[type, Any] = {
    Q.MatchAll: _e_match_all,
    Q.MatchNone: _e_match_none,
    Q.Term: _e_term,
    Q.Terms: _e_terms,
    Q.Match: _e_match,
    Q.MatchPhrase: _e_phrase,
    Q.Range: _e_range,
    Q.Exists: _e_exists,
    Q.Ids: _e_ids,
    Q.Prefix: _e_prefix,
    Q.Wildcard: _e_wildcard,
    Q.Regexp: _e_regexp,
    Q.Fuzzy: evaluate_fuzzy,
    Q.Bool: _e_bool,
    Q.ConstantScore: _e_constant,
    Q.DisMax: _e_dismax,
    Q.Slice: lambda q, seg, ctx: constant(slice_mask(q, seg), q.boost),
    Q.Nested: lambda q, seg, ctx: evaluate_nested(q, seg, ctx, evaluate),
    Intervals: evaluate_intervals,
    Span: evaluate_span,
    CombinedFields: evaluate_combined,
    CrossFieldsGroup: evaluate_cross_fields,
    MoreLikeThis: lambda q, seg, ctx: evaluate(mlt_query(q, ctx.mapping, ctx.stats), seg, ctx),
    **function_score.evaluators(evaluate),
    **GEO_EVALUATORS,
}
