"""Evaluate a parsed query against one segment: a match mask and BM25 scores, as arrays.

Every function here is vectorised over the segment's documents: a query node returns
``(mask: bool[n], scores: float32[n])``. ``bool`` sums the scores of its scoring clauses (as
Elasticsearch does, in double precision, rounded to float per node like Lucene's scorers);
filters and ``must_not`` only narrow the mask. Field semantics come from the index mapping
passed in the context; the statistics come from the coordinator (global).

``explain`` gives, for a few documents, the same scores broken down as Lucene's
``Explanation`` tree (value, description, details).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import heapq
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dsl as Q
from ..analysis import get_analyzer
from ...errors import IllegalArgument, ParsingError, TooManyClauses
from ..mapping import FieldType, Mapping, parse_date_math
from .patterns import EMPTY_LANGUAGE, LinearPattern, compile_linear, escape
from ..scoring import K1, LENGTH_TABLE, B, Stats, bm25, idf, legacy_boost, norm_inverse_cache
from ..segment import KeywordField, NumericField, Segment, TextField

_SCORE = np.float32
_SEARCHABLE = ("text", "keyword", "numeric", "date", "boolean")


@dataclass
class Context:
    """What a segment evaluation needs beyond the segment itself."""

    mapping: Mapping
    stats: Stats | None
    index_name: str = ""
    now_ms: int | None = None


# --- the terms a query scores with (for global statistics) ----------------------------------

def resolve_fields(pattern: str, mapping: Mapping, *, default_all: bool = True) -> list[str]:
    """Field names matching ``pattern`` (``*`` wildcards) that hold searchable values."""
    if "*" not in pattern and "?" not in pattern:
        return [pattern]
    return [p for p, ft in mapping.fields.items()
            if ft.kind in _SEARCHABLE and fnmatch.fnmatchcase(p, pattern)]


def analyze_for(ft: FieldType | None, text: Any, analyzer: str | None = None) -> list[str]:
    """Query text as the terms a field indexes (search analyzer for text, exact for keyword)."""
    if ft is None:
        return get_analyzer(analyzer)(str(text))
    if ft.kind == "text":
        return get_analyzer(analyzer or ft.search_analyzer or ft.analyzer)(_text(text))
    return [_text(text)]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def scoring_terms(q: Q.Query, mapping: Mapping) -> set[tuple[str, str]]:
    """Every (field, term) whose document frequency the scores of ``q`` depend on."""
    out: set[tuple[str, str]] = set()
    _collect(expand(q, mapping), mapping, out)
    return out


def _collect(q: Q.Query, mapping: Mapping, out: set[tuple[str, str]]) -> None:
    if isinstance(q, Q.Term):
        ft = mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and not q.case_insensitive:
            out.add((q.field, _text(q.value)))
    elif isinstance(q, (Q.Match, Q.MatchPhrase)):
        ft = mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword"):
            for t in analyze_for(ft, q.text, q.analyzer):
                out.add((q.field, t))
    elif isinstance(q, Q.Bool):
        for sub in q.must + q.should:
            _collect(sub, mapping, out)
    elif isinstance(q, Q.DisMax):
        for sub in q.queries:
            _collect(sub, mapping, out)


def _lenient(q: Q.Query) -> Q.Query:
    """``q`` with every ``match`` made lenient (``query_string``'s ``lenient: true``)."""
    if isinstance(q, Q.Match):
        return dataclasses.replace(q, lenient=True)
    if isinstance(q, Q.Bool):
        return dataclasses.replace(q, must=tuple(map(_lenient, q.must)),
                                   should=tuple(map(_lenient, q.should)),
                                   filter=tuple(map(_lenient, q.filter)),
                                   must_not=tuple(map(_lenient, q.must_not)))
    if isinstance(q, Q.DisMax):
        return dataclasses.replace(q, queries=tuple(map(_lenient, q.queries)))
    return q


def expand(q: Q.Query, mapping: Mapping) -> Q.Query:
    """Rewrite multi-field and string queries into single-field ones for this mapping.

    A ``*`` field list means every searchable field, leniently (a word that is not a number
    does not fail on numeric fields), as Elasticsearch's ``index.query.default_field``.
    """
    if isinstance(q, Q.MultiMatch):
        fields = []
        all_fields = any(p == "*" for p, _ in q.fields)
        lenient = q.lenient if q.lenient is not None else all_fields
        for pat, fb in q.fields:
            fields.extend((f, fb) for f in resolve_fields(pat, mapping))
        if not fields:
            return Q.MatchNone()
        if q.type in ("phrase", "phrase_prefix"):
            subs: list[Q.Query] = [Q.MatchPhrase(field=f, text=q.text, boost=fb,
                                                 analyzer=q.analyzer,
                                                 prefix=q.type == "phrase_prefix")
                                   for f, fb in fields]
        else:
            subs = [Q.Match(field=f, text=q.text, operator=q.operator,
                            minimum_should_match=q.minimum_should_match, analyzer=q.analyzer,
                            boost=fb, lenient=lenient) for f, fb in fields]
        if not subs:
            return Q.MatchNone()
        if q.type == "most_fields":
            return Q.Bool(should=tuple(subs), boost=q.boost)
        tb = q.tie_breaker if q.tie_breaker is not None else 0.0
        return Q.DisMax(queries=tuple(subs), tie_breaker=tb, boost=q.boost)
    if isinstance(q, Q.QueryString):
        from .query_string import expand_query_string
        defaults = q.fields or (("*", 1.0),)
        out = expand_query_string(q, defaults)
        if q.lenient:
            out = _lenient(out)
        return expand(out, mapping)
    if isinstance(q, Q.Match) and ("*" in q.field or "?" in q.field):
        fields = resolve_fields(q.field, mapping)
        subs = [Q.Match(field=f, text=q.text, operator=q.operator,
                        minimum_should_match=q.minimum_should_match, analyzer=q.analyzer,
                        boost=q.boost, lenient=q.lenient or q.field == "*") for f in fields]
        return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
    if isinstance(q, (Q.Prefix, Q.Wildcard, Q.Regexp, Q.MatchPhrase, Q.Range, Q.Exists)) \
            and ("*" in q.field or "?" in q.field):
        fields = resolve_fields(q.field, mapping)
        if isinstance(q, (Q.Prefix, Q.Wildcard, Q.Regexp, Q.MatchPhrase)):
            fields = [f for f in fields if mapping.fields[f].kind in ("text", "keyword")]
        if isinstance(q, Q.Exists):
            fields = [f for f in mapping.fields if fnmatch.fnmatchcase(f, q.field)]
        subs = [dataclasses.replace(q, field=f) for f in fields]
        return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
    if isinstance(q, Q.Bool):
        return Q.Bool(must=tuple(expand(s, mapping) for s in q.must),
                      should=tuple(expand(s, mapping) for s in q.should),
                      filter=tuple(expand(s, mapping) for s in q.filter),
                      must_not=tuple(expand(s, mapping) for s in q.must_not),
                      minimum_should_match=q.minimum_should_match, boost=q.boost)
    if isinstance(q, Q.DisMax):
        return Q.DisMax(queries=tuple(expand(s, mapping) for s in q.queries),
                        tie_breaker=q.tie_breaker, boost=q.boost)
    if isinstance(q, Q.ConstantScore):
        return Q.ConstantScore(filter=expand(q.filter, mapping), boost=q.boost)
    return q


# --- limits -----------------------------------------------------------------------------------

MAX_REGEX_LENGTH = 1000   # index.max_regex_length


def check_clause_limits(q: Q.Query, mapping: Mapping,
                        max_clauses: int = Q.MAX_CLAUSE_COUNT,
                        max_regex_length: int = MAX_REGEX_LENGTH) -> int:
    """Lucene's limits on the query as it runs against ``mapping`` (after expansion and
    analysis): a boolean query with more than ``max_clauses`` clauses is ``too_many_clauses``;
    more than ``max_clauses`` leaf clauses in the whole tree is ``too_many_nested_clauses``;
    a regular expression longer than ``max_regex_length`` is refused as Elasticsearch words
    it. Returns the number of leaf clauses. O(size of the query)."""
    expanded = expand(q, mapping)
    _check_regex_length(expanded, max_regex_length)
    leaves = _count_leaves(expanded, mapping, max_clauses)
    if leaves > max_clauses:
        raise TooManyClauses("Query contains too many nested clauses; maxClauseCount is set to "
                             f"{max_clauses}", es_type="too_many_nested_clauses")
    return leaves


def _check_regex_length(q: Q.Query, limit: int) -> None:
    if isinstance(q, Q.Regexp) and len(q.value) > limit:
        raise IllegalArgument(f"The length of regex [{len(q.value)}] used in the Regexp Query "
                              f"request has exceeded the allowed maximum of [{limit}]. This "
                              "maximum can be set by changing the [index.max_regex_length] "
                              "index level setting.")
    for sub in _children(q):
        _check_regex_length(sub, limit)


def _children(q: Q.Query) -> tuple[Q.Query, ...]:
    if isinstance(q, Q.Bool):
        return q.must + q.should + q.filter + q.must_not
    if isinstance(q, Q.DisMax):
        return q.queries
    if isinstance(q, Q.ConstantScore):
        return (q.filter,)
    return ()


def _flat_limit(n: int, max_clauses: int) -> None:
    if n > max_clauses:
        raise TooManyClauses(f"maxClauseCount is set to {max_clauses}")


def _count_leaves(q: Q.Query, mapping: Mapping, max_clauses: int) -> int:
    if isinstance(q, Q.Bool):
        subs = q.must + q.should + q.filter + q.must_not
        _flat_limit(len(subs), max_clauses)
        return sum(_count_leaves(s, mapping, max_clauses) for s in subs)
    if isinstance(q, Q.DisMax):
        return sum(_count_leaves(s, mapping, max_clauses) for s in q.queries)
    if isinstance(q, Q.ConstantScore):
        return _count_leaves(q.filter, mapping, max_clauses)
    if isinstance(q, Q.Match):
        ft = mapping.get(q.field)
        if ft is None or ft.kind not in ("text", "keyword"):
            return 1
        n = len(analyze_for(ft, q.text, q.analyzer))
        _flat_limit(n, max_clauses)
        return max(n, 1)
    if isinstance(q, Q.MatchPhrase):
        ft = mapping.get(q.field)
        return max(1, len(analyze_for(ft, q.text, q.analyzer))) if ft is not None else 1
    return 1


def validate(q: Q.Query, mapping: Mapping) -> None:
    """Refuse, before touching any data, what evaluating the *expanded* query ``q`` would
    refuse: values a numeric, date or boolean field cannot hold (``query_shard_exception``,
    as Elasticsearch fails to create the query on every shard, empty or not) and Lucene's
    clause limits. O(size of the query)."""
    leaves = _count_leaves(q, mapping, Q.MAX_CLAUSE_COUNT)
    if leaves > Q.MAX_CLAUSE_COUNT:
        raise TooManyClauses("Query contains too many nested clauses; maxClauseCount is set to "
                             f"{Q.MAX_CLAUSE_COUNT}", es_type="too_many_nested_clauses")
    _validate_values(q, Context(mapping=mapping, stats=None))


def _validate_values(q: Q.Query, ctx: Context) -> None:
    if isinstance(q, Q.Bool):
        for s in q.must + q.should + q.filter + q.must_not:
            _validate_values(s, ctx)
        return
    if isinstance(q, Q.DisMax):
        for s in q.queries:
            _validate_values(s, ctx)
        return
    if isinstance(q, Q.ConstantScore):
        _validate_values(q.filter, ctx)
        return
    if isinstance(q, Q.Regexp):
        lucene_regex(q.value, q.flags, q.case_insensitive)
        return
    field = getattr(q, "field", None)
    ft = ctx.mapping.get(field) if isinstance(field, str) else None
    if ft is None or ft.kind not in ("numeric", "date", "boolean"):
        return
    if isinstance(q, Q.Range):
        _numeric_bounds(q, ft, ctx)
        return
    values: tuple[Any, ...] = ()
    if isinstance(q, Q.Term):
        values = (q.value,)
    elif isinstance(q, Q.Terms):
        values = q.values
    elif isinstance(q, (Q.Match, Q.MatchPhrase)) and not getattr(q, "lenient", False):
        values = (q.text,)
    for v in values:
        if ft.kind == "date":
            _date_bound(ft, v, False, None, None, ctx)
        else:
            _numeric_value(ft, v)


# --- evaluation -------------------------------------------------------------------------------

def evaluate(q: Q.Query, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` of an *expanded* query over all documents of ``seg``."""
    fn = _EVAL.get(type(q))
    if fn is None:
        raise ParsingError(f"unsupported query [{type(q).__name__}]")
    return fn(q, seg, ctx)


def _none(seg: Segment) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=_SCORE)


def _const(mask: np.ndarray, boost: float) -> tuple[np.ndarray, np.ndarray]:
    return mask, np.where(mask, _SCORE(boost), _SCORE(0)).astype(_SCORE)


def _e_match_all(q: Q.MatchAll, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return np.ones(seg.n, dtype=bool), np.full(seg.n, q.boost, dtype=_SCORE)


def _e_match_none(q: Q.Query, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return _none(seg)


def _term_weight(fname: str, term: str, ctx: Context, boost: float) -> tuple[float, float, int,
                                                                            int]:
    """(weight = boost * idf, idf, df, doc_count) from the global statistics."""
    stats = ctx.stats
    assert stats is not None
    doc_count = stats.doc_count.get(fname, 0)
    df = stats.doc_freq.get((fname, term), 0)
    term_idf = idf(df, doc_count)
    return float(legacy_boost(boost) * np.float32(term_idf)), term_idf, df, doc_count


def _term_scores(fname: str, term: str, seg: Segment, ctx: Context,
                 boost: float) -> tuple[np.ndarray, np.ndarray]:
    mask, scores = _none(seg)
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
    weight = _term_weight(fname, term, ctx, boost)[0]
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
    if ft is None or ft.kind in ("numeric", "date", "boolean"):
        return None
    terms = _match_terms(q, ft)
    if len(terms) != 1:
        return None
    return _term_hits(q.field, terms[0], seg, ctx, q.boost)


def _bad_value(value: Any, detail: str | None = None) -> IllegalArgument:
    if detail is None:
        detail = 'For input string: "' + str(value) + '"'
    return IllegalArgument(f"failed to create query: {detail}", es_type="query_shard_exception")


def _numeric_value(ft: FieldType, value: Any) -> Any:
    """A term's value in the field's stored type; None when it cannot equal any value."""
    try:
        if ft.kind == "boolean":
            if isinstance(value, bool):
                return int(value)
            if str(value) in ("true", "false"):
                return int(str(value) == "true")
            raise _bad_value(value, f"Can't parse boolean value [{value}], expected [true] or "
                                    "[false]")
        if isinstance(value, bool):
            raise ValueError(value)
        num = float(value)
        if ft.is_integer:
            if not num.is_integer():
                return None
            return int(num) if abs(num) < 2**53 else int(str(value).split(".")[0])
        if ft.type in ("float", "half_float"):
            return float(np.float32(num))
        return num
    except (TypeError, ValueError, OverflowError):
        raise _bad_value(value) from None


def _date_bound(ft: FieldType, value: Any, round_up: bool, fmt: str | None,
                time_zone: str | None, ctx: Context) -> int:
    try:
        return parse_date_math(value, ft, round_up=round_up, fmt=fmt, time_zone=time_zone,
                               now_ms=ctx.now_ms)
    except (ValueError, OverflowError, TypeError):
        shown = fmt or ft.format or "strict_date_optional_time||epoch_millis"
        raise _bad_value(value, f"failed to parse date field [{value}] with format [{shown}]"
                         ) from None


def _e_term(q: Q.Term, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field == "_id":
        return _e_ids(Q.Ids(values=(str(q.value),), boost=q.boost), seg, ctx)
    if q.field == "_index":
        m = np.full(seg.n, str(q.value) == ctx.index_name, dtype=bool)
        return _const(m, q.boost)
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return _none(seg)
    if ft.kind in ("text", "keyword"):
        if q.case_insensitive:
            fd = seg.fields.get(q.field)
            if not isinstance(fd, (TextField, KeywordField)):
                return _none(seg)
            want = _text(q.value).lower()
            ids = fd.postings.ids_where(lambda t: t.lower() == want)
            return _const(fd.postings.union(ids, seg.n), q.boost)
        return _term_scores(q.field, _text(q.value), seg, ctx, q.boost)
    if ft.kind == "date":
        # a date term is the range of instants its text covers (``2020-01-01`` is a whole day)
        return _e_range(Q.Range(field=q.field, gte=q.value, lte=q.value, boost=q.boost),
                        seg, ctx)
    return _const(_numeric_in(q.field, ft, [q.value], seg), q.boost)


def _numeric_in(fname: str, ft: FieldType, values: list[Any], seg: Segment) -> np.ndarray:
    wanted = [v for v in (_numeric_value(ft, x) for x in values) if v is not None]
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
        return _none(seg)
    if ft.kind in ("text", "keyword"):
        fd = seg.fields.get(q.field)
        if not isinstance(fd, (TextField, KeywordField)):
            return _none(seg)
        return _const(_union_terms(fd, [_text(v) for v in q.values], seg.n), q.boost)
    if ft.kind == "date":
        mask = np.zeros(seg.n, dtype=bool)
        for v in q.values:
            mask |= _e_range(Q.Range(field=q.field, gte=v, lte=v), seg, ctx)[0]
        return _const(mask, q.boost)
    return _const(_numeric_in(q.field, ft, list(q.values), seg), q.boost)


def _match_terms(q: Q.Match, ft: FieldType) -> list[str]:
    return analyze_for(ft, q.text, q.analyzer)


def _match_need(q: Q.Match, n_terms: int) -> int:
    """How many of the match's terms a document needs (operator / minimum_should_match)."""
    if q.operator == "and":
        return n_terms
    return max(1, Q.minimum_should_match(q.minimum_should_match, n_terms))


def _e_match(q: Q.Match, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return _none(seg)
    if ft.kind in ("numeric", "date", "boolean"):
        try:
            return _e_term(Q.Term(field=q.field, value=q.text, boost=q.boost), seg, ctx)
        except IllegalArgument:
            if q.lenient:
                return _none(seg)
            raise
    terms = _match_terms(q, ft)
    if not terms:
        if q.zero_terms_query == "all":
            return _e_match_all(Q.MatchAll(), seg, ctx)
        return _none(seg)
    if len(terms) == 1:
        return _term_scores(q.field, terms[0], seg, ctx, q.boost)
    clauses = [_term_scores(q.field, t, seg, ctx, q.boost) for t in terms]
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

def _phrase_terms(q: Q.MatchPhrase, ft: FieldType, fd: TextField) -> list[list[str]]:
    """The alternatives at each phrase position (the last one expands for a phrase prefix)."""
    terms = analyze_for(ft, q.text, q.analyzer)
    out = [[t] for t in terms]
    if q.prefix and out:
        out[-1] = fd.postings.terms_with_prefix(terms[-1])[:50] or [terms[-1]]
    return out


def _e_phrase(q: Q.MatchPhrase, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return _none(seg)
    terms = analyze_for(ft, q.text, q.analyzer)
    if not terms:
        return _none(seg)
    if ft.kind != "text" or len(terms) == 1 and not q.prefix:
        return _e_match(Q.Match(field=q.field, text=q.text, boost=q.boost, analyzer=q.analyzer),
                        seg, ctx)
    fd = seg.fields.get(q.field)
    if not isinstance(fd, TextField):
        return _none(seg)
    freq = _phrase_freq_column(_phrase_terms(q, ft, fd), fd, q.slop, seg.n)
    mask = freq > 0
    scores = np.zeros(seg.n, dtype=_SCORE)
    if ctx.stats is not None and mask.any():
        w = _phrase_weight(q, terms, ctx)[0]
        docs = np.flatnonzero(mask)
        scores[docs] = bm25(freq[docs], fd.norms[docs], w, ctx.stats.avgdl(q.field))
    else:
        scores[mask] = q.boost
    return mask, scores


def _phrase_weight(q: Q.MatchPhrase, terms: list[str],
                   ctx: Context) -> tuple[float, float, list[tuple[str, float, int, int]]]:
    """(boost * sum of idf, sum of idf, per term (term, idf, df, N)), as Lucene's
    ``idfExplain`` for several terms (summed in double, rounded to float)."""
    assert ctx.stats is not None
    dc = ctx.stats.doc_count.get(q.field, 0)
    parts = []
    for t in terms[:-1] if q.prefix else terms:
        df = ctx.stats.doc_freq.get((q.field, t), 0)
        parts.append((t, idf(df, dc), df, dc))
    total = float(np.float32(sum(p[1] for p in parts)))
    return float(legacy_boost(q.boost) * np.float32(total)), total, parts


def _phrase_freq_column(alternatives: list[list[str]], fd: TextField, slop: int,
                        n: int) -> np.ndarray:
    """Phrase frequency per document: the number of exact matches (vectorised), or with
    ``slop`` the sum of ``1 / (1 + match length)`` over Lucene's sloppy matches."""
    per_term: list[tuple[np.ndarray, np.ndarray]] = []
    for options in alternatives:
        docs_l, pos_l = [], []
        for opt in options:
            got = fd.postings.positions_of(opt)
            if got is not None:
                docs_l.append(got[0])
                pos_l.append(got[1])
        if not docs_l:
            return np.zeros(n, dtype=np.float32)
        d = np.concatenate(docs_l)
        p = np.concatenate(pos_l)
        if len(docs_l) > 1:
            order = np.lexsort((p, d))
            d, p = d[order], p[order]
        per_term.append((d, p))
    freq = np.zeros(n, dtype=np.float32)
    shift = np.int64(1 << 32)
    if slop == 0:
        d0, p0 = per_term[0]
        keys = d0.astype(np.int64) * shift + p0.astype(np.int64)
        for i, (d, p) in enumerate(per_term[1:], start=1):
            k = d.astype(np.int64) * shift + (p.astype(np.int64) - i)
            keys = np.intersect1d(keys, k)
            if len(keys) == 0:
                return freq
        np.add.at(freq, (keys // shift).astype(np.int64), np.float32(1))
        return freq
    common = np.unique(per_term[0][0])
    for d, _ in per_term[1:]:
        common = np.intersect1d(common, d)
    # a term repeated in the phrase needs as many occurrences in the document (Lucene's
    # "repeats" never let two phrase positions share one occurrence)
    need: dict[tuple[str, ...], int] = {}
    for options in alternatives:
        need[tuple(options)] = need.get(tuple(options), 0) + 1
    for doc in common.tolist():
        lists = []
        for d, p in per_term:
            a, b = np.searchsorted(d, doc, "left"), np.searchsorted(d, doc, "right")
            lists.append(p[a:b].tolist())
        if any(len(lists[i]) < need[tuple(opts)] for i, opts in enumerate(alternatives)):
            continue
        freq[doc] = sloppy_phrase_freq(lists, slop)
    return freq


def sloppy_phrase_freq(positions: list[list[int]], slop: int) -> float:
    """Lucene's ``SloppyPhraseMatcher`` for one document. (For a phrase that repeats a term,
    Lucene also keeps the repeated positions apart; here they are only required to exist.)

    ``positions[i]`` are the sorted positions of the phrase's i-th term. Each term walks its
    positions shifted by its offset in the phrase; a match is found whenever the span between
    the lowest and highest shifted position (the match length) is at most ``slop``, and counts
    ``1 / (1 + match length)``, accumulated in float as Lucene does.
    """
    heap: list[tuple[int, int]] = []
    idx = [0] * len(positions)
    end = -(1 << 62)
    for i, pl in enumerate(positions):
        if not pl:
            return 0.0
        p = pl[0] - i
        heap.append((p, i))
        end = max(end, p)
    heapq.heapify(heap)
    freq = np.float32(0)
    while True:  # one nextMatch() per iteration
        pos, i = heapq.heappop(heap)
        match_length = end - pos
        nxt = heap[0][0]
        found = False
        while True:
            idx[i] += 1
            if idx[i] >= len(positions[i]):
                break
            pos = positions[i][idx[i]] - i
            end = max(end, pos)
            if pos > nxt:  # done minimising the current match length
                heapq.heappush(heap, (pos, i))
                if match_length <= slop:
                    found = True
                    break
                pos, i = heapq.heappop(heap)
                nxt = heap[0][0]
                match_length = end - pos
            else:
                match_length = min(match_length, end - pos)
        if match_length <= slop:
            freq = np.float32(freq + np.float32(1) / (np.float32(1) + np.float32(match_length)))
        if not found:
            return float(freq)


# --- ranges and other filters -----------------------------------------------------------------

def _e_range(q: Q.Range, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return _none(seg)
    if ft.kind in ("numeric", "date", "boolean"):
        bounds = _numeric_bounds(q, ft, ctx)   # parsed even when the segment lacks the field
        fd = seg.fields.get(q.field)
        if not isinstance(fd, NumericField):
            return _none(seg)
        vals = fd.values
        cond = np.ones(len(vals), dtype=bool)
        for op, b in bounds:
            cond &= {"gt": vals > b, "gte": vals >= b, "lt": vals < b, "lte": vals <= b}[op]
        mask = np.zeros(seg.n, dtype=bool)
        mask[fd.value_docs[cond]] = True
        return _const(mask, q.boost)
    fd = seg.fields.get(q.field)
    if isinstance(fd, (KeywordField, TextField)):
        bounds = [None if b is None else _text(b) for b in (q.gt, q.gte, q.lt, q.lte)]
        ids = fd.postings.ids_in_range(*bounds)
        return _const(fd.postings.union(ids, seg.n), q.boost)
    return _none(seg)


def _numeric_bounds(q: Q.Range, ft: FieldType, ctx: Context) -> list[tuple[str, Any]]:
    """The range's bounds in the field's value space. Dates: date math, and rounding up for
    ``gt``/``lte`` (a bound covers all the instants its text names); floats: as float32."""
    out = []
    for op, bound in (("gt", q.gt), ("gte", q.gte), ("lt", q.lt), ("lte", q.lte)):
        if bound is None:
            continue
        if ft.kind == "date":
            b: Any = _date_bound(ft, bound, op in ("gt", "lte"), q.format, q.time_zone, ctx)
        elif ft.kind == "boolean":
            b = _numeric_value(ft, bound)
        else:
            if isinstance(bound, bool):
                raise _bad_value(bound)
            try:
                b = float(bound)
            except (TypeError, ValueError):
                raise _bad_value(bound) from None
            if ft.type in ("float", "half_float"):
                b = float(np.float32(b))
        out.append((op, b))
    return out


#: Metadata fields every document has: ``exists`` on them matches all (as in Elasticsearch).
_ALWAYS_PRESENT = frozenset({"_id", "_index", "_seq_no", "_version", "_primary_term"})


def _e_exists(q: Q.Exists, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field in _ALWAYS_PRESENT:
        return _const(np.ones(seg.n, dtype=bool), q.boost)
    if q.field == "_routing":
        mask = np.fromiter((r is not None for r in seg.routing), dtype=bool, count=seg.n)
        return _const(mask, q.boost)
    fd = seg.fields.get(q.field)
    if fd is not None:
        return _const(fd.present.copy(), q.boost)
    prefix = q.field + "."
    mask = np.zeros(seg.n, dtype=bool)
    for name, sub in seg.fields.items():
        if name.startswith(prefix):
            mask |= sub.present
    return _const(mask, q.boost)


def _e_ids(q: Q.Ids, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return _const(np.isin(seg.ids, np.asarray(q.values, dtype=object)), q.boost)


def _e_prefix(q: Q.Prefix, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field == "_id":
        return _const(np.array([i.startswith(q.value) for i in seg.ids], dtype=bool), q.boost)
    fd = seg.fields.get(q.field)
    if not isinstance(fd, (TextField, KeywordField)):
        return _none(seg)
    if q.case_insensitive:
        low = q.value.lower()
        ids = fd.postings.ids_where(lambda t: t.lower().startswith(low))
    else:
        ids = fd.postings.ids_with_prefix(q.value)
    return _const(fd.postings.union(ids, seg.n), q.boost)


def wildcard_regex(pattern: str, case_insensitive: bool = False) -> LinearPattern:
    """Lucene wildcard (``*``, ``?``, ``\\`` escapes) as a linear-time (RE2) pattern."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else escape(ch))
        i += 1
    return compile_linear("".join(out), case_insensitive, pattern)


_REGEX_CLASSES = {"d": r"[0-9]", "D": r"[^0-9]", "s": r"[ \t\n\r\f\v]",
                  "S": r"[^ \t\n\r\f\v]", "w": r"[a-zA-Z0-9_]", "W": r"[^a-zA-Z0-9_]"}


def lucene_regex(pattern: str, flags: str = "ALL",
                 case_insensitive: bool = False) -> LinearPattern:
    """A Lucene ``RegExp`` as a linear-time (RE2) pattern that must match a whole term.

    Lucene's syntax: ``. ? * + {n,m} | ( ) [...]``, ``"literal"``, ``\\c`` escapes any
    character (``\\d \\s \\w`` and their negations are classes); with the default flags
    ``@`` is any string, ``#`` the empty language and ``<1-10>`` a numeric interval. ``^`` and
    ``$`` are ordinary characters. ``~`` (complement) and ``&`` (intersection) are read as
    literal characters here.
    """
    on = set(flags.split("|")) if flags else set()
    every = "ALL" in on
    anystring = every or "ANYSTRING" in on
    empty = every or "EMPTY" in on
    interval = every or "INTERVAL" in on
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            out.append(_REGEX_CLASSES.get(nxt, escape(nxt)) if not in_class
                       else (_REGEX_CLASSES.get(nxt, escape(nxt))[1:-1]
                             if nxt in _REGEX_CLASSES else escape(nxt)))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
                out.append("]")
            elif c in "[&~|" or c == "\\":
                out.append(escape(c))
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append("[")
            if i + 1 < n and pattern[i + 1] == "^":
                out.append("^")
                i += 1
            i += 1
            continue
        if c == '"':
            end = pattern.find('"', i + 1)
            if end < 0:
                raise IllegalArgument(f"expected '\"' at position {n}")
            out.append(escape(pattern[i + 1:end]))
            i = end + 1
            continue
        if c == "@" and anystring:
            out.append(".*")
        elif c == "#" and empty:
            out.append(EMPTY_LANGUAGE)
        elif c == "<" and interval and (m := re.match(r"<(\d+)-(\d+)>", pattern[i:])):
            lo, hi = sorted((int(m.group(1)), int(m.group(2))))
            width = len(m.group(1)) if len(m.group(1)) == len(m.group(2)) else 0
            if hi - lo <= 10_000:
                nums = [str(v).zfill(width) for v in range(lo, hi + 1)]
                out.append("(?:" + "|".join(sorted(nums, key=len, reverse=True)) + ")")
            else:
                out.append(r"\d+")
            i += m.end()
            continue
        elif c in ".?*+|(){},":
            out.append(c)
        else:
            out.append(escape(c))
        i += 1
    return compile_linear("".join(out), case_insensitive, pattern)


def _terms_matching(field: str, rx: LinearPattern, boost: float,
                    seg: Segment) -> tuple[np.ndarray, np.ndarray]:
    """Constant-score match of every term (or ``_id``) the pattern matches in full."""
    if field == "_id":
        return _const(np.array([bool(rx.fullmatch(i)) for i in seg.ids], dtype=bool), boost)
    fd = seg.fields.get(field)
    if not isinstance(fd, (TextField, KeywordField)):
        return _none(seg)
    return _const(fd.postings.union(fd.postings.ids_matching(rx), seg.n), boost)


def _e_regexp(q: Q.Regexp, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return _terms_matching(q.field, lucene_regex(q.value, q.flags, q.case_insensitive),
                           q.boost, seg)


def _e_wildcard(q: Q.Wildcard, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    return _terms_matching(q.field, wildcard_regex(q.pattern, q.case_insensitive), q.boost,
                           seg)


# --- compound queries -------------------------------------------------------------------------

def _bool_need(q: Q.Bool) -> int:
    """Should clauses a document must match: ``minimum_should_match`` (not clamped: asking
    for more than there are matches nothing), and at least one when nothing else is
    required (a pure disjunction)."""
    need = Q.minimum_should_match(q.minimum_should_match, len(q.should)) \
        if q.minimum_should_match is not None else 0
    if not q.must and not q.filter and q.should:
        need = max(need, 1)
    return need


def _e_bool(q: Q.Bool, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    n = seg.n
    if not (q.must or q.should or q.filter or q.must_not):
        return _const(np.ones(n, dtype=bool), q.boost)   # rewritten to match_all
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
    return _const(m, q.boost)


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
    Q.Bool: _e_bool,
    Q.ConstantScore: _e_constant,
    Q.DisMax: _e_dismax,
}


# --- explanations -----------------------------------------------------------------------------

Explanation = dict[str, Any]


def _x(value: Any, description: str, details: list[Explanation] | None = None) -> Explanation:
    # float32 values, printed like the hits' ``_score`` (so the top value equals it exactly)
    v = value if isinstance(value, int) else float(np.float32(value))
    return {"value": v, "description": description, "details": details or []}


def explain(q: Q.Query, seg: Segment, docs: list[int], ctx: Context) -> list[Explanation]:
    """Lucene-style explanations of an *expanded* query for documents ``docs`` of ``seg``.

    The value of each node is the score ``evaluate`` gives that node, so the top value is the
    hit's ``_score``; leaves show BM25's parts (idf from n and N, tf from freq, k1, b, dl and
    avgdl). Cost: one ``evaluate`` per query node over the segment — for the page only.
    """
    return [_explain(q, seg, d, ctx) for d in docs]


def describe(q: Q.Query) -> str:
    """A Lucene ``Query.toString``-like rendering for explanation descriptions."""
    def boosted(s: str) -> str:
        return s if q.boost == 1.0 else f"({s})^{q.boost}"
    if isinstance(q, Q.MatchAll):
        return boosted("*:*")
    if isinstance(q, Q.MatchNone):
        return "MatchNoDocsQuery(\"\")"
    if isinstance(q, Q.Term):
        return boosted(f"{q.field}:{_text(q.value)}")
    if isinstance(q, Q.Terms):
        return boosted(f"{q.field}:(" + " ".join(_text(v) for v in q.values) + ")")
    if isinstance(q, Q.Match):
        return boosted(f"{q.field}:{_text(q.text)}")
    if isinstance(q, Q.MatchPhrase):
        return boosted(f"{q.field}:\"{_text(q.text)}\"" + (f"~{q.slop}" if q.slop else ""))
    if isinstance(q, Q.Range):
        lo = q.gte if q.gte is not None else q.gt
        hi = q.lte if q.lte is not None else q.lt
        return boosted(f"{q.field}:{'[' if q.gt is None else '{'}{'*' if lo is None else lo} "
                       f"TO {'*' if hi is None else hi}{']' if q.lt is None else '}'}")
    if isinstance(q, Q.Exists):
        return boosted(f"FieldExistsQuery [field={q.field}]")
    if isinstance(q, Q.Ids):
        return boosted("_id:(" + " ".join(q.values) + ")")
    if isinstance(q, Q.Prefix):
        return boosted(f"{q.field}:{q.value}*")
    if isinstance(q, Q.Wildcard):
        return boosted(f"{q.field}:{q.pattern}")
    if isinstance(q, Q.Regexp):
        return boosted(f"{q.field}:/{q.value}/")
    if isinstance(q, Q.ConstantScore):
        return boosted(f"ConstantScore({describe(q.filter)})")
    if isinstance(q, Q.Bool):
        parts = ([f"+{describe(s)}" for s in q.must] + [describe(s) for s in q.should]
                 + [f"-{describe(s)}" for s in q.must_not] + [f"#{describe(s)}" for s in q.filter])
        return boosted(" ".join(parts))
    if isinstance(q, Q.DisMax):
        return boosted("(" + " | ".join(describe(s) for s in q.queries) + ")")
    return type(q).__name__


def _value(q: Q.Query, seg: Segment, doc: int, ctx: Context) -> tuple[bool, float]:
    m, s = evaluate(q, seg, ctx)
    return bool(m[doc]), float(s[doc])


def _explain(q: Q.Query, seg: Segment, doc: int, ctx: Context) -> Explanation:
    matched, value = _value(q, seg, doc, ctx)
    if not matched:
        return _x(0.0, f"no matching term or clause for {describe(q)}")
    if isinstance(q, Q.Term):
        ft = ctx.mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and not q.case_insensitive \
                and ctx.stats is not None:
            return _term_explanation(q.field, _text(q.value), q.boost, seg, doc, ctx)
    if isinstance(q, Q.Match):
        ft = ctx.mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and ctx.stats is not None:
            terms = _match_terms(q, ft)
            if len(terms) == 1:
                return _term_explanation(q.field, terms[0], q.boost, seg, doc, ctx)
            fd = seg.fields.get(q.field)
            details = []
            for t in terms:
                got = fd.postings.get(t) if isinstance(fd, (TextField, KeywordField)) else None
                if got is not None and doc in set(got[0].tolist()):
                    details.append(_term_explanation(q.field, t, q.boost, seg, doc, ctx))
            return _x(value, "sum of:", details)
    if isinstance(q, Q.MatchPhrase) and ctx.stats is not None:
        ft = ctx.mapping.get(q.field)
        fd = seg.fields.get(q.field)
        terms = analyze_for(ft, q.text, q.analyzer) if ft is not None else []
        if ft is not None and ft.kind == "text" and isinstance(fd, TextField) \
                and (len(terms) > 1 or q.prefix):
            return _phrase_explanation(q, ft, fd, terms, value, seg, doc, ctx)
    if isinstance(q, Q.Bool):
        return _bool_explanation(q, value, seg, doc, ctx)
    if isinstance(q, Q.DisMax):
        details = [_explain(s, seg, doc, ctx) for s in q.queries
                   if _value(s, seg, doc, ctx)[0]]
        desc = "max of:" if q.tie_breaker == 0 else \
            f"max plus {q.tie_breaker} times others of:"
        return _boost_wrap(_x(value if q.boost == 1.0 else value / q.boost, desc, details),
                           q.boost, value)
    if isinstance(q, Q.ConstantScore):
        return _x(value, describe(q))
    if isinstance(q, Q.MatchAll):
        return _x(value, describe(q))
    return _x(value, describe(q))


def _boost_wrap(inner: Explanation, boost: float, value: float) -> Explanation:
    if boost == 1.0:
        return inner
    return _x(value, "product of:", [inner, _x(np.float32(boost), "boost")])


def _bool_explanation(q: Q.Bool, value: float, seg: Segment, doc: int,
                      ctx: Context) -> Explanation:
    if not (q.must or q.should or q.filter or q.must_not):
        return _x(value, describe(Q.MatchAll(boost=q.boost)))
    details = []
    for s in q.must + q.should:
        if _value(s, seg, doc, ctx)[0]:
            details.append(_explain(s, seg, doc, ctx))
    for s in q.filter:
        details.append(_x(0.0, "match on required clause, product of:",
                          [_x(0.0, "# clause"), _explain(s, seg, doc, ctx)]))
    unboosted = sum(d["value"] for d in details) if q.boost == 1.0 else value / q.boost
    inner = _x(value if q.boost == 1.0 else float(np.float32(unboosted)), "sum of:", details)
    return _boost_wrap(inner, q.boost, value)


def _idf_explanation(term_idf: float, df: int, dc: int) -> Explanation:
    return _x(term_idf, "idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:",
              [_x(int(df), "n, number of documents containing term"),
               _x(int(dc), "N, total number of documents with field")])


def _tf_explanation(freq: float, norm: int, avgdl: float) -> Explanation:
    dl = float(LENGTH_TABLE[norm])
    k1, b = np.float32(K1), np.float32(B)
    norm_inv = norm_inverse_cache(avgdl)[norm]
    one = np.float32(1)
    tf = one - one / (one + np.float32(freq) * norm_inv)   # float arithmetic, as Lucene 9
    dl_desc = "dl, length of field (approximate)" if norm > 39 else "dl, length of field"
    return _x(tf, "tf, computed as freq / (freq + k1 * (1 - b + b * dl / avgdl)) from:",
              [_x(np.float32(freq), "freq, occurrences of term within document"),
               _x(k1, "k1, term saturation parameter"),
               _x(b, "b, length normalization parameter"),
               _x(np.float32(dl), dl_desc),
               _x(np.float32(avgdl), "avgdl, average length of field")])


def _score_explanation(value: float, freq: float, boost: float, idf_x: Explanation,
                       tf_x: Explanation) -> Explanation:
    subs = [_x(float(legacy_boost(boost)), "boost"), idf_x, tf_x]
    return _x(value, f"score(freq={float(np.float32(freq))}), computed as boost * idf * tf from:",
              subs)


def _term_explanation(fname: str, term: str, boost: float, seg: Segment, doc: int,
                      ctx: Context) -> Explanation:
    fd = seg.fields[fname]
    assert isinstance(fd, (TextField, KeywordField))
    docs, freqs = fd.postings.get(term)  # type: ignore[misc]
    j = int(np.searchsorted(docs, doc))
    freq = float(freqs[j]) if isinstance(fd, TextField) else 1.0
    norm = int(fd.norms[doc]) if isinstance(fd, TextField) else 1
    _, term_idf, df, dc = _term_weight(fname, term, ctx, boost)
    assert ctx.stats is not None
    avgdl = ctx.stats.avgdl(fname)
    value = float(_term_scores(fname, term, seg, ctx, boost)[1][doc])
    score_x = _score_explanation(value, freq, boost, _idf_explanation(term_idf, df, dc),
                                 _tf_explanation(freq, norm, avgdl))
    return _x(value, f"weight({fname}:{term} in {doc}) [PerFieldSimilarity], result of:",
              [score_x])


def _phrase_explanation(q: Q.MatchPhrase, ft: FieldType, fd: TextField, terms: list[str],
                        value: float, seg: Segment, doc: int, ctx: Context) -> Explanation:
    assert ctx.stats is not None
    freq = float(_phrase_freq_column(_phrase_terms(q, ft, fd), fd, q.slop, seg.n)[doc])
    _, total_idf, parts = _phrase_weight(q, terms, ctx)
    idf_x = _x(total_idf, "idf, sum of:", [_idf_explanation(i, df, dc) for _, i, df, dc in parts])
    score_x = _score_explanation(value, freq, q.boost, idf_x,
                                 _tf_explanation(freq, int(fd.norms[doc]),
                                                 ctx.stats.avgdl(q.field)))
    phrase = " ".join(terms)
    slop = f"~{q.slop}" if q.slop else ""
    return _x(value, f"weight({q.field}:\"{phrase}\"{slop} in {doc}) [PerFieldSimilarity], "
                     "result of:", [score_x])
