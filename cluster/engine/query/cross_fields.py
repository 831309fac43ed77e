"""``multi_match`` ``type: cross_fields``: the fields as one big field, term by term
(Elasticsearch's ``MultiMatchQuery.CrossFieldsQueryBuilder`` over Lucene's blended terms).

The fields are grouped by the analyzer that searches them. A group of one field is a plain
``match`` (its field boost applied); a larger group analyses the text once and, per term,
takes a ``dis_max`` (``tie_breaker``) over the fields' term queries, each scored with a
*blended* document frequency (``BlendedTermQuery.blend``: the largest over the fields, one
more for each less frequent field, at most ``maxDoc`` and the field's document count) so that a term rare in one field but
common in another does not win just for being rare there. ``operator`` and
``minimum_should_match`` count terms across the fields. The groups combine as a ``dis_max``
with the same ``tie_breaker``. All statistics are the global ones: shard-invariant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import nodes as Q
from ..mapping import Mapping
from ..scoring import Stats, bm25, idf, legacy_boost
from ..segment import KeywordField, Segment, TextField
from .context import Context
from .dsl import minimum_should_match


@dataclass(frozen=True)
class CrossFieldsGroup(Q.Query):
    """Fields searched with one analyzer, blended term by term."""

    fields: tuple[tuple[str, float], ...] = ()
    terms: tuple[str, ...] = ()
    operator: str = "or"
    minimum_should_match: Any = None
    tie_breaker: float = 0.0


def cross_fields_query(q: Q.MultiMatch, fields: list[tuple[str, float]], mapping: Mapping,
                       lenient: bool, analyze_for: Callable[..., list[str]]) -> Q.Query:
    """The groups of ``fields`` (resolved, boosted) as one ``dis_max``; ``analyze_for`` is
    ``rewrite.analyze_for`` (the query text as a field's search analyzer makes it)."""
    groups: dict[Any, list[tuple[str, float]]] = {}
    for f, b in fields:
        ft = mapping.get(f)
        if ft is None:
            continue
        if q.analyzer is not None and ft.kind in ("text", "keyword") and ft.type != "ip":
            key: Any = ("text", q.analyzer)        # one analyzer for all: one group
        elif ft.kind == "text":
            key = ("text", ft.search_analyzer or ft.analyzer)
        elif ft.kind == "keyword" and ft.type != "ip":
            key = ("keyword", getattr(ft, "normalizer", None))
        else:
            key = ("field", f)             # numbers, dates, booleans: one match each
        groups.setdefault(key, []).append((f, b))
    tb = q.tie_breaker or 0.0
    subs: list[Q.Query] = []
    for members in groups.values():
        if len(members) == 1:
            f, b = members[0]
            subs.append(Q.Match(field=f, text=q.text, operator=q.operator,
                                minimum_should_match=q.minimum_should_match,
                                analyzer=q.analyzer, boost=b, lenient=lenient,
                                zero_terms_query=q.zero_terms_query))
            continue
        terms = analyze_for(mapping.get(members[0][0]), q.text, q.analyzer)
        if not terms:
            subs.append(Q.MatchAll() if q.zero_terms_query == "all" else Q.MatchNone())
            continue
        subs.append(CrossFieldsGroup(fields=tuple(members), terms=tuple(terms),
                                     operator=q.operator, tie_breaker=tb,
                                     minimum_should_match=q.minimum_should_match))
    if not subs:
        return Q.MatchNone()
    return Q.DisMax(queries=tuple(subs), tie_breaker=tb, boost=q.boost)


def blended_doc_freqs(dfs: list[int], max_doc: int) -> list[int]:
    """``BlendedTermQuery.blend``: the fields in descending document frequency (ties in field
    order) get the largest frequency, plus one for each step down to a less frequent field,
    capped at ``max_doc``; a field without the term keeps 0."""
    if len(dfs) <= 1 or max(dfs, default=0) == 0:
        return list(dfs)
    order = sorted(range(len(dfs)), key=lambda i: -dfs[i])
    out = list(dfs)
    actual = min(max_doc, max(dfs))
    prev = dfs[order[0]]
    for i in order:
        if dfs[i] == 0:
            break
        if prev > dfs[i]:
            actual += 1
        out[i] = min(max_doc, actual)
        prev = dfs[i]
    return out


def _max_doc(q: CrossFieldsGroup, dfs: list[int], stats: Stats) -> int:
    """``maxDoc``, lowered to the smallest total term count of a field that has the term
    (as ``blend`` does)."""
    return min([stats.num_docs] + [stats.sum_ttf.get(f, 0)
                                   for (f, _), df in zip(q.fields, dfs) if df > 0])


def evaluate_cross_fields(q: CrossFieldsGroup, seg: Segment, ctx: Context
                          ) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)``: each term a ``dis_max`` over the fields, the terms a ``bool``.
    O(postings of the terms in the fields)."""
    n = seg.n
    count = np.zeros(n, dtype=np.int32)
    total = np.zeros(n, dtype=np.float64)
    for t in q.terms:
        ctx.cancel.check()
        m, s = _term(q, t, seg, ctx)
        count += m
        total += s
    need = len(q.terms) if q.operator == "and" else \
        max(1, minimum_should_match(q.minimum_should_match, len(q.terms)))
    mask = count >= need
    scores = np.where(mask, total, 0.0).astype(np.float32)
    if q.boost != 1.0:
        scores = (scores * np.float32(q.boost)).astype(np.float32)
    return mask, scores


def _term(q: CrossFieldsGroup, term: str, seg: Segment, ctx: Context
          ) -> tuple[np.ndarray, np.ndarray]:
    st = ctx.stats
    dfs = [0 if st is None else st.doc_freq.get((f, term), 0) for f, _ in q.fields]
    blended = dfs if st is None else blended_doc_freqs(dfs, _max_doc(q, dfs, st))
    mask = np.zeros(seg.n, dtype=bool)
    best = np.zeros(seg.n, dtype=np.float32)
    summed = np.zeros(seg.n, dtype=np.float32)
    for (f, b), df in zip(q.fields, blended):
        fd = seg.fields.get(f)
        got = fd.postings.get(term) if isinstance(fd, (TextField, KeywordField)) else None
        if got is None:
            continue
        docs, freqs = got[0].astype(np.intp), got[1]
        if st is None:
            s = np.full(len(docs), np.float32(b), dtype=np.float32)
        else:
            dc = st.doc_count.get(f, 0)     # a blended frequency never exceeds the field's
            weight = float(legacy_boost(b) * np.float32(idf(min(df, dc), dc)))
            norms = fd.norms[docs] if isinstance(fd, TextField) else None
            tf = freqs if isinstance(fd, TextField) else np.ones(len(docs), dtype=np.int32)
            s = bm25(tf, norms, weight, st.avgdl(f))
        mask[docs] = True
        best[docs] = np.maximum(best[docs], s)
        summed[docs] += s
    score = (best + (summed - best) * np.float32(q.tie_breaker)).astype(np.float32)
    return mask, np.where(mask, score, np.float32(0))
