"""``explain``: a few documents' scores broken down as Lucene's ``Explanation`` tree (value,
description, details), computed with the same statistics and formulas as :mod:`.matching`."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import nodes as Q
from . import score_nodes as S
from ..field_types import FieldType
from ..scoring import K1, LENGTH_TABLE, B, legacy_boost, norm_inverse_cache
from ..segment import KeywordField, Segment, TextField
from .context import Context
from .explain_scoring import (explain_distance_feature, explain_function_score,
                              explain_script_score)
from .mlt_terms import mlt_query
from .more_like_this import MoreLikeThis
from .matching import (evaluate, match_terms, phrase_freq_column, phrase_terms, phrase_weight,
                       term_scores, term_weight)
from .rewrite import analyze_for, query_text

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
        return boosted(f"{q.field}:{query_text(q.value)}")
    if isinstance(q, Q.Terms):
        return boosted(f"{q.field}:(" + " ".join(query_text(v) for v in q.values) + ")")
    if isinstance(q, Q.Match):
        return boosted(f"{q.field}:{query_text(q.text)}")
    if isinstance(q, Q.MatchPhrase):
        return boosted(f"{q.field}:\"{query_text(q.text)}\"" + (f"~{q.slop}" if q.slop else ""))
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
    if isinstance(q, Q.Fuzzy):
        from .fuzzy_query import spec_of
        return boosted(f"{q.field}:{q.value}~{spec_of(q)[0].edits}")
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
    if isinstance(q, Q.Nested):
        return boosted(f"ToParentBlockJoinQuery ({describe(q.query)})")
    if isinstance(q, S.FunctionScore):
        return boosted(f"function score ({describe(q.query)}, functions: "
                       f"[{len(q.functions)}])")
    if isinstance(q, S.ScriptScore):
        return boosted(f"script_score ({describe(q.query)}, script: {q.script.source})")
    if isinstance(q, S.DistanceFeature):
        return boosted(f"DistanceFeatureQuery(field={q.field},origin={q.origin},"
                       f"pivot={q.pivot})")
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
            return _term_explanation(q.field, query_text(q.value), q.boost, seg, doc, ctx)
    if isinstance(q, Q.Match):
        ft = ctx.mapping.get(q.field)
        if ft is not None and ft.kind in ("text", "keyword") and ctx.stats is not None:
            terms = match_terms(q, ft)
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
    if isinstance(q, MoreLikeThis):     # the term queries it stands for
        return _explain(mlt_query(q, ctx.mapping, ctx.stats), seg, doc, ctx)
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
    if isinstance(q, S.FunctionScore):
        return explain_function_score(q, seg, doc, ctx, _explain, describe, evaluate)
    if isinstance(q, S.ScriptScore):
        return explain_script_score(q, seg, doc, ctx, _explain, value)
    if isinstance(q, S.DistanceFeature):
        return explain_distance_feature(q, seg, doc, ctx, value)
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
    _, term_idf, df, dc = term_weight(fname, term, ctx, boost)
    assert ctx.stats is not None
    avgdl = ctx.stats.avgdl(fname)
    value = float(term_scores(fname, term, seg, ctx, boost)[1][doc])
    score_x = _score_explanation(value, freq, boost, _idf_explanation(term_idf, df, dc),
                                 _tf_explanation(freq, norm, avgdl))
    return _x(value, f"weight({fname}:{term} in {doc}) [PerFieldSimilarity], result of:",
              [score_x])


def _phrase_explanation(q: Q.MatchPhrase, ft: FieldType, fd: TextField, terms: list[str],
                        value: float, seg: Segment, doc: int, ctx: Context) -> Explanation:
    assert ctx.stats is not None
    freq = float(phrase_freq_column(phrase_terms(q, ft, fd, ctx.stats), fd, q.slop, seg.n)[doc])
    _, total_idf, parts = phrase_weight(q, terms, ctx)
    idf_x = _x(total_idf, "idf, sum of:", [_idf_explanation(i, df, dc) for _, i, df, dc in parts])
    score_x = _score_explanation(value, freq, q.boost, idf_x,
                                 _tf_explanation(freq, int(fd.norms[doc]),
                                                 ctx.stats.avgdl(q.field)))
    phrase = " ".join(terms)
    slop = f"~{q.slop}" if q.slop else ""
    return _x(value, f"weight({q.field}:\"{phrase}\"{slop} in {doc}) [PerFieldSimilarity], "
                     "result of:", [score_x])
