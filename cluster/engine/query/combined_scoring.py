"""Scoring of ``combined_fields`` (BM25F, Lucene's ``CombinedFieldQuery``): see
``combined_fields.py`` for the statistics it blends."""
from __future__ import annotations

import numpy as np

from ...errors import IllegalArgument
from ..analysis import get_analyzer
from ..scoring import LENGTH_TABLE, bm25, encode_norms, idf, legacy_boost
from ..segment import Segment, TextField
from .combined_fields import CombinedFields
from .context import Context
from .dsl import minimum_should_match


def check_combined_fields(q: CombinedFields, ctx: Context) -> list[tuple[str, float]]:
    """The mapped fields, refused as Elasticsearch refuses them: not text, or analysed
    differently."""
    fields = [(f, b) for f, b in q.fields if ctx.mapping.get(f) is not None]
    analyzers = set()
    for f, _ in fields:
        ft = ctx.mapping.get(f)
        assert ft is not None
        if ft.kind != "text":
            raise IllegalArgument(f"Field [{f}] of type [{ft.type}] does not support "
                                  "[combined_fields] queries")
        analyzers.add(ft.search_analyzer or ft.analyzer)
    if len(analyzers) > 1:
        raise IllegalArgument("All fields in [combined_fields] query must have the same "
                              "search analyzer")
    return fields


def query_terms(q: CombinedFields, ctx: Context, fields: list[tuple[str, float]]) -> list[str]:
    """The query text as the (shared) search analyzer of the fields makes it."""
    if not fields:
        return []
    ft = ctx.mapping.get(fields[0][0])
    assert ft is not None
    text = ("true" if q.text else "false") if isinstance(q.text, bool) else str(q.text)
    return get_analyzer(ft.search_analyzer or ft.analyzer)(text)


def evaluate_combined(q: CombinedFields, seg: Segment, ctx: Context
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)``: one BM25F clause per term, combined as ``bool``. O(postings)."""
    fields = check_combined_fields(q, ctx)
    terms = query_terms(q, ctx, fields)
    n = seg.n
    if not terms:
        full = q.zero_terms_query == "all"
        return np.full(n, full), np.full(n, np.float32(1.0 if full else 0.0), dtype=np.float32)
    norms = _combined_norms(fields, seg)
    count = np.zeros(n, dtype=np.int32)
    total = np.zeros(n, dtype=np.float64)
    for t in terms:
        ctx.cancel.check()
        m, s = _term(t, fields, seg, ctx, norms, q.boost)
        count += m
        total += s
    need = len(terms) if q.operator == "and" else \
        max(1, minimum_should_match(q.minimum_should_match, len(terms)))
    mask = count >= need
    return mask, np.where(mask, total, 0.0).astype(np.float32)


def _combined_norms(fields: list[tuple[str, float]], seg: Segment) -> np.ndarray:
    """``MultiNormsLeafSimScorer``: ``sum boost_f * length_f`` re-encoded as a norm byte."""
    length = np.zeros(seg.n, dtype=np.float32)
    for f, b in fields:
        fd = seg.fields.get(f)
        if isinstance(fd, TextField):
            lengths = np.float32(b) * LENGTH_TABLE[fd.norms].astype(np.float32)
            length += np.where(fd.present, lengths, np.float32(0))
    return encode_norms(np.round(length).astype(np.int64))


def _term(term: str, fields: list[tuple[str, float]], seg: Segment, ctx: Context,
          norms: np.ndarray, boost: float) -> tuple[np.ndarray, np.ndarray]:
    freq = np.zeros(seg.n, dtype=np.float32)
    for f, b in fields:
        fd = seg.fields.get(f)
        got = fd.postings.get(term) if isinstance(fd, TextField) else None
        if got is not None:
            freq[got[0]] += np.float32(b) * got[1].astype(np.float32)
    mask = freq > 0
    scores = np.zeros(seg.n, dtype=np.float32)
    if ctx.stats is None:
        scores[mask] = boost
        return mask, scores
    st = ctx.stats
    df = max(st.doc_freq.get((f, term), 0) for f, _ in fields)
    dc = max(st.doc_count.get(f, 0) for f, _ in fields)
    sum_ttf = sum(b * st.sum_ttf.get(f, 0) for f, b in fields)
    avgdl = float(np.float32(sum_ttf / dc)) if dc > 0 else 1.0
    weight = float(legacy_boost(boost) * np.float32(idf(df, dc)))
    docs = np.flatnonzero(mask)
    scores[docs] = bm25(freq[docs], norms[docs], weight, avgdl)
    return mask, scores
