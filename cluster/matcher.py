"""Evaluate a parsed query against one segment: a match mask and BM25 scores, as arrays.

Every function here is vectorised over the segment's documents: a query node returns
``(mask: bool[n], scores: float32[n])``. ``bool`` sums the scores of its scoring clauses (as
Elasticsearch does); filters and ``must_not`` only narrow the mask. Field semantics come from
the index mapping passed in the context; the statistics come from the coordinator (global).
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import query as Q
from .analysis import get_analyzer
from .errors import IllegalArgument, ParsingError
from .mapping import FieldType, Mapping, parse_date
from .scoring import Stats, bm25, idf
from .segment import KeywordField, NumericField, Segment, TextField

_SCORE = np.float32


@dataclass
class Context:
    """What a segment evaluation needs beyond the segment itself."""

    mapping: Mapping
    stats: Stats | None
    index_name: str = ""


# --- the terms a query scores with (for global statistics) ----------------------------------

def resolve_fields(pattern: str, mapping: Mapping, *, default_all: bool = True) -> list[str]:
    """Field names matching ``pattern`` (``*`` wildcards) that hold searchable text or values."""
    if "*" not in pattern and "?" not in pattern:
        return [pattern]
    names = [p for p, ft in mapping.fields.items() if ft.kind in ("text", "keyword", "numeric",
                                                                   "date", "boolean")]
    if pattern == "*":
        # a "*" default field means every field that a free-text query can hit
        return [p for p in names if mapping.fields[p].kind in ("text", "keyword")]
    return [p for p in names if fnmatch.fnmatchcase(p, pattern)]


def analyze_for(ft: FieldType | None, text: Any, analyzer: str | None = None) -> list[str]:
    """Query text as the terms a field indexes (search analyzer for text, exact for keyword)."""
    if ft is None:
        return get_analyzer(analyzer)(str(text))
    if ft.kind == "text":
        return get_analyzer(analyzer or ft.search_analyzer or ft.analyzer)(_text(text))
    if ft.kind == "keyword":
        return [_text(text)]
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
        if ft is not None and ft.kind in ("text", "keyword"):
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


def expand(q: Q.Query, mapping: Mapping) -> Q.Query:
    """Rewrite multi-field and string queries into single-field ones for this mapping."""
    if isinstance(q, Q.MultiMatch):
        fields = []
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
                            boost=fb) for f, fb in fields]
        if q.type == "most_fields":
            return Q.Bool(should=tuple(subs), boost=q.boost)
        tb = q.tie_breaker if q.tie_breaker is not None else 0.0
        return Q.DisMax(queries=tuple(subs), tie_breaker=tb, boost=q.boost)
    if isinstance(q, Q.QueryString):
        from .querystring import expand_query_string
        defaults = q.fields or (("*", 1.0),)
        return expand(expand_query_string(q, defaults), mapping)
    if isinstance(q, Q.Match) and ("*" in q.field or "?" in q.field):
        fields = resolve_fields(q.field, mapping)
        subs = [Q.Match(field=f, text=q.text, operator=q.operator,
                        minimum_should_match=q.minimum_should_match, analyzer=q.analyzer,
                        boost=q.boost) for f in fields]
        return Q.DisMax(queries=tuple(subs)) if subs else Q.MatchNone()
    if isinstance(q, (Q.Prefix, Q.Wildcard, Q.MatchPhrase, Q.Range, Q.Exists)) \
            and ("*" in q.field or "?" in q.field):
        fields = resolve_fields(q.field, mapping)
        import dataclasses
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


def _term_scores(fname: str, term: str, seg: Segment, ctx: Context,
                 boost: float) -> tuple[np.ndarray, np.ndarray]:
    fd = seg.fields.get(fname)
    mask, scores = _none(seg)
    if not isinstance(fd, (TextField, KeywordField)):
        return mask, scores
    got = fd.postings.get(term)
    if got is None:
        return mask, scores
    docs, freqs = got
    mask[docs] = True
    stats = ctx.stats
    if stats is None:
        scores[docs] = _SCORE(boost)
        return mask, scores
    doc_count = stats.doc_count.get(fname, 0)
    df = stats.doc_freq.get((fname, term), 0)
    weight = float(np.float32(boost) * np.float32(idf(df, doc_count)))
    if isinstance(fd, TextField):
        scores[docs] = bm25(freqs, fd.norms[docs], weight, stats.avgdl(fname))
    else:
        scores[docs] = bm25(np.ones(len(docs), dtype=np.int32), None, weight,
                            stats.avgdl(fname))
    return mask, scores


def _numeric_value(ft: FieldType, value: Any) -> Any:
    try:
        if ft.kind == "date":
            return parse_date(value, ft)
        if ft.kind == "boolean":
            if isinstance(value, bool):
                return int(value)
            if str(value) in ("true", "false"):
                return int(str(value) == "true")
            raise ValueError(value)
        if isinstance(value, bool):
            raise ValueError(value)
        num = float(value)
        if ft.is_integer:
            if not num.is_integer():
                return None
            return int(num)
        if ft.type in ("float", "half_float"):
            return float(np.float32(num))
        return num
    except (TypeError, ValueError, OverflowError):
        raise IllegalArgument(f"failed to create query: For input string: \"{value}\"",
                              es_type="query_shard_exception") from None


def _e_term(q: Q.Term, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field in ("_id",):
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
            terms = [t for t in fd.postings.term_list if t.lower() == want]
            return _const(_union_terms(fd, terms, seg.n), q.boost)
        return _term_scores(q.field, _text(q.value), seg, ctx, q.boost)
    return _const(_numeric_in(q.field, ft, [q.value], seg), q.boost)


def _numeric_in(fname: str, ft: FieldType, values: list[Any], seg: Segment) -> np.ndarray:
    fd = seg.fields.get(fname)
    if not isinstance(fd, NumericField):
        return np.zeros(seg.n, dtype=bool)
    wanted = [v for v in (_numeric_value(ft, x) for x in values) if v is not None]
    hit = np.isin(fd.values, np.asarray(wanted, dtype=fd.values.dtype))
    mask = np.zeros(seg.n, dtype=bool)
    mask[fd.value_docs[hit]] = True
    return mask


def _union_terms(fd: TextField | KeywordField, terms: list[str], n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for t in terms:
        got = fd.postings.get(t)
        if got is not None:
            mask[got[0]] = True
    return mask


def _e_terms(q: Q.Terms, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    if q.field == "_id":
        return _e_ids(Q.Ids(values=tuple(str(v) for v in q.values), boost=q.boost), seg, ctx)
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return _none(seg)
    if ft.kind in ("text", "keyword"):
        fd = seg.fields.get(q.field)
        if not isinstance(fd, (TextField, KeywordField)):
            return _none(seg)
        return _const(_union_terms(fd, [_text(v) for v in q.values], seg.n), q.boost)
    return _const(_numeric_in(q.field, ft, list(q.values), seg), q.boost)


def _e_match(q: Q.Match, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    if ft is None:
        return _none(seg)
    if ft.kind in ("numeric", "date", "boolean"):
        return _e_term(Q.Term(field=q.field, value=q.text, boost=q.boost), seg, ctx)
    terms = analyze_for(ft, q.text, q.analyzer)
    if not terms:
        if q.zero_terms_query == "all":
            return _e_match_all(Q.MatchAll(), seg, ctx)
        return _none(seg)
    if len(terms) == 1:
        return _term_scores(q.field, terms[0], seg, ctx, q.boost)
    clauses = [_term_scores(q.field, t, seg, ctx, q.boost) for t in terms]
    if q.operator == "and":
        need = len(clauses)
    else:
        need = max(1, Q.minimum_should_match(q.minimum_should_match, len(clauses)))
    return _combine_should(clauses, need, seg.n)


def _combine_should(clauses: list[tuple[np.ndarray, np.ndarray]], need: int,
                    n: int) -> tuple[np.ndarray, np.ndarray]:
    count = np.zeros(n, dtype=np.int32)
    total = np.zeros(n, dtype=_SCORE)
    for m, s in clauses:
        count += m
        total += np.where(m, s, _SCORE(0))
    mask = count >= need
    return mask, np.where(mask, total, _SCORE(0)).astype(_SCORE)


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
    last_terms = [terms[-1]]
    if q.prefix:
        last_terms = fd.postings.terms_with_prefix(terms[-1])[:50] or [terms[-1]]
    per_term: list[tuple[np.ndarray, np.ndarray]] = []
    for i, t in enumerate(terms):
        options = last_terms if i == len(terms) - 1 else [t]
        docs_l, pos_l = [], []
        for opt in options:
            got = fd.postings.positions_of(opt)
            if got is not None:
                docs_l.append(got[0])
                pos_l.append(got[1])
        if not docs_l:
            return _none(seg)
        per_term.append((np.concatenate(docs_l), np.concatenate(pos_l)))
    freq = _phrase_freqs(per_term, q.slop, seg.n)
    mask = freq > 0
    scores = np.zeros(seg.n, dtype=_SCORE)
    if ctx.stats is not None and mask.any():
        dc = ctx.stats.doc_count.get(q.field, 0)
        w = sum(idf(ctx.stats.doc_freq.get((q.field, t), 0), dc) for t in terms
                if not q.prefix or t != terms[-1])
        w = float(np.float32(q.boost) * np.float32(w))
        docs = np.flatnonzero(mask)
        scores[docs] = bm25(freq[docs], fd.norms[docs], w, ctx.stats.avgdl(q.field))
    else:
        scores[mask] = q.boost
    return mask, scores


def _phrase_freqs(per_term: list[tuple[np.ndarray, np.ndarray]], slop: int,
                  n: int) -> np.ndarray:
    """Number of phrase occurrences per document (exact phrases vectorised; slop by scan)."""
    freq = np.zeros(n, dtype=np.int32)
    shift = np.int64(1 << 32)
    if slop == 0:
        d0, p0 = per_term[0]
        keys = d0.astype(np.int64) * shift + p0.astype(np.int64)
        for i, (d, p) in enumerate(per_term[1:], start=1):
            k = d.astype(np.int64) * shift + (p.astype(np.int64) - i)
            keys = np.intersect1d(keys, k, assume_unique=False)
            if len(keys) == 0:
                return freq
        np.add.at(freq, (keys // shift).astype(np.int64), 1)
        return freq
    common = set(per_term[0][0].tolist())
    for d, _ in per_term[1:]:
        common &= set(d.tolist())
    for doc in common:
        lists = [np.sort(p[d == doc]) for d, p in per_term]
        count = 0
        for start in lists[0]:
            ok = True
            for i, pl in enumerate(lists[1:], start=1):
                want = start + i
                if not np.any(np.abs(pl - want) <= slop):
                    ok = False
                    break
            if ok:
                count += 1
        freq[doc] = count
    return freq


def _bound(ft: FieldType, value: Any, fmt: str | None) -> Any:
    if ft.kind == "date":
        if isinstance(value, str) and value.startswith("now"):
            import time
            return parse_date(int(time.time() * 1000), ft)
        return _numeric_value(ft if fmt is None else FieldType(ft.path, ft.type, format=fmt),
                              value)
    if ft.kind in ("numeric", "boolean"):
        return float(_numeric_value(ft, value))
    return _text(value)


def _e_range(q: Q.Range, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    ft = ctx.mapping.get(q.field)
    fd = seg.fields.get(q.field)
    if ft is None or fd is None:
        return _none(seg)
    if isinstance(fd, NumericField):
        vals = fd.values
        cond = np.ones(len(vals), dtype=bool)
        for op, bound in (("gt", q.gt), ("gte", q.gte), ("lt", q.lt), ("lte", q.lte)):
            if bound is None:
                continue
            b = _bound(ft, bound, q.format)
            cond &= {"gt": vals > b, "gte": vals >= b, "lt": vals < b, "lte": vals <= b}[op]
        mask = np.zeros(seg.n, dtype=bool)
        mask[fd.value_docs[cond]] = True
        return _const(mask, q.boost)
    if isinstance(fd, (KeywordField, TextField)):
        terms = fd.postings.term_list
        sel = []
        for t in terms:
            ok = True
            if q.gt is not None and not t > _text(q.gt):
                ok = False
            if q.gte is not None and not t >= _text(q.gte):
                ok = False
            if q.lt is not None and not t < _text(q.lt):
                ok = False
            if q.lte is not None and not t <= _text(q.lte):
                ok = False
            if ok:
                sel.append(t)
        return _const(_union_terms(fd, sel, seg.n), q.boost)
    return _none(seg)


def _e_exists(q: Q.Exists, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
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
        terms = [t for t in fd.postings.term_list if t.lower().startswith(low)]
    else:
        terms = fd.postings.terms_with_prefix(q.value)
    return _const(_union_terms(fd, terms, seg.n), q.boost)


def wildcard_regex(pattern: str, case_insensitive: bool = False) -> re.Pattern[str]:
    """Lucene wildcard (``*``, ``?``, ``\\`` escapes) as a compiled regular expression."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.S | (re.I if case_insensitive else 0))


def _e_wildcard(q: Q.Wildcard, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    rx = wildcard_regex(q.pattern, q.case_insensitive)
    if q.field == "_id":
        return _const(np.array([bool(rx.fullmatch(i)) for i in seg.ids], dtype=bool), q.boost)
    fd = seg.fields.get(q.field)
    if not isinstance(fd, (TextField, KeywordField)):
        return _none(seg)
    return _const(_union_terms(fd, fd.postings.terms_matching(rx), seg.n), q.boost)


def _e_bool(q: Q.Bool, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    n = seg.n
    mask = np.ones(n, dtype=bool)
    score = np.zeros(n, dtype=_SCORE)
    for sub in q.must:
        m, s = evaluate(sub, seg, ctx)
        mask &= m
        score += np.where(m, s, _SCORE(0))
    for sub in q.filter:
        m, _ = evaluate(sub, seg, ctx)
        mask &= m
    for sub in q.must_not:
        m, _ = evaluate(sub, seg, ctx)
        mask &= ~m
    if q.should:
        count = np.zeros(n, dtype=np.int32)
        for sub in q.should:
            m, s = evaluate(sub, seg, ctx)
            count += m
            score += np.where(m, s, _SCORE(0))
        if q.minimum_should_match is not None:
            need = Q.minimum_should_match(q.minimum_should_match, len(q.should))
        else:
            need = 0 if (q.must or q.filter) else 1
        if need > 0:
            mask &= count >= need
    elif not q.must and not q.filter:
        # only must_not: matches everything else, with a constant score
        score = np.ones(n, dtype=_SCORE)
    if not q.must and not q.should and q.filter:
        score = np.zeros(n, dtype=_SCORE)
    if q.boost != 1.0:
        score = (score * _SCORE(q.boost)).astype(_SCORE)
    return mask, np.where(mask, score, _SCORE(0)).astype(_SCORE)


def _e_constant(q: Q.ConstantScore, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    m, _ = evaluate(q.filter, seg, ctx)
    return _const(m, q.boost)


def _e_dismax(q: Q.DisMax, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    n = seg.n
    mask = np.zeros(n, dtype=bool)
    best = np.zeros(n, dtype=_SCORE)
    total = np.zeros(n, dtype=_SCORE)
    for sub in q.queries:
        m, s = evaluate(sub, seg, ctx)
        s = np.where(m, s, _SCORE(0))
        mask |= m
        best = np.maximum(best, s)
        total += s
    score = best + _SCORE(q.tie_breaker) * (total - best)
    if q.boost != 1.0:
        score = score * _SCORE(q.boost)
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
    Q.Bool: _e_bool,
    Q.ConstantScore: _e_constant,
    Q.DisMax: _e_dismax,
}
