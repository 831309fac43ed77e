"""The ``phrase`` suggester's shard partial: like the ``term`` suggester's
(``suggest_terms.py``), with each term's total frequency next to its document frequency and
the field's total token count, which the noisy-channel language model divides by.

Summed over the shards at the coordinator (``search/suggest_phrase.py``), so the corrections do
not depend on the shard count. Bounded as the term suggester's partial.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .segment import KeywordField, TextField
from .suggest_terms import MAX_CANDIDATES, edit_distance

Stats = tuple[int, int]   # (document frequency, total term frequency)


def phrase_partial(segments: list[Any], gen: int, field: str, tokens: list[str],
                   max_edits: int, prefix_length: int) -> dict[str, Any]:
    """``{"docs", "sum_ttf", "tokens": [((df, ttf), {candidate: (df, ttf, edits)})]}`` over
    the visible documents of ``segments`` at generation ``gen``."""
    docs = sum_ttf = 0
    out: list[tuple[Stats, dict[str, tuple[int, int, int]]]] = [((0, 0), {}) for _ in tokens]
    for seg in segments:
        vis = seg.visible(gen)
        docs += int(vis.sum())
        fd = seg.fields.get(field)
        if not isinstance(fd, (TextField, KeywordField)):
            continue
        sum_ttf += _sum_ttf(fd, vis)
        for i, tok in enumerate(tokens):
            (df, ttf), cands = out[i]
            own = _stats(fd.postings, tok, vis)
            out[i] = ((df + own[0], ttf + own[1]), cands)
            lo, hi = fd.postings.terms.prefix_range(tok[:prefix_length])
            for tid in range(lo, min(hi, lo + MAX_CANDIDATES)):
                term = fd.postings.terms[tid]
                d = edit_distance(tok, term, max_edits) if term != tok else max_edits + 1
                if d > max_edits:
                    continue
                f, t = _stats(fd.postings, term, vis)
                if f:
                    old = cands.get(term, (0, 0, d))
                    cands[term] = (old[0] + f, old[1] + t, d)
    return {"docs": docs, "sum_ttf": sum_ttf, "tokens": out}


def _sum_ttf(fd: TextField | KeywordField, vis: np.ndarray) -> int:
    """Lucene's ``sumTotalTermFreq``: the field's tokens (one per value for a keyword)."""
    if isinstance(fd, TextField):
        return int(fd.lengths[vis].sum())
    return int(fd.value_count[vis].sum())


def _stats(postings: Any, term: str, vis: np.ndarray) -> Stats:
    got = postings.get(term)
    if got is None:
        return 0, 0
    live = vis[got[0]]
    return int(live.sum()), int(np.asarray(got[1])[live].sum())
