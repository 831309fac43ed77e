"""The ``term`` suggester's shard partial: for each token of the text, the shard's terms of the
field within ``max_edits`` (Damerau-Levenshtein, as Lucene's ``DirectSpellChecker``), with
their document frequency in the snapshot, and the token's own frequency.

The coordinator sums frequencies over the shards and ranks (``search/suggest.py``), so the
suggestions do not depend on the shard count. Bounded: only terms sharing the token's first
``prefix_length`` characters and within ``max_edits`` in length are compared, and at most
``MAX_CANDIDATES`` of them per token and segment.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .segment import KeywordField, TextField

MAX_CANDIDATES = 2_000


def edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (adjacent transpositions), or ``limit + 1`` when over."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def term_partial(segments: list[Any], gen: int, field: str, tokens: list[str],
                 max_edits: int, prefix_length: int) -> dict[str, Any]:
    """``{"docs": visible documents, "tokens": [(own freq, {candidate: (freq, edits)})]}``
    over the visible documents of ``segments`` at generation ``gen``."""
    docs = 0
    out: list[tuple[int, dict[str, tuple[int, int]]]] = [(0, {}) for _ in tokens]
    for seg in segments:
        vis = seg.visible(gen)
        docs += int(vis.sum())
        fd = seg.fields.get(field)
        if not isinstance(fd, (TextField, KeywordField)):
            continue
        for i, tok in enumerate(tokens):
            own, cands = out[i]
            out[i] = (own + _freq(fd.postings, tok, vis), cands)
            lo, hi = fd.postings.terms.prefix_range(tok[:prefix_length])
            for tid in range(lo, min(hi, lo + MAX_CANDIDATES)):
                term = fd.postings.terms[tid]
                if term == tok:
                    continue
                d = edit_distance(tok, term, max_edits)
                if d > max_edits:
                    continue
                f = _freq(fd.postings, term, vis)
                if f:
                    old = cands.get(term, (0, d))
                    cands[term] = (old[0] + f, d)
    return {"docs": docs, "tokens": out}


def _freq(postings: Any, term: str, vis: np.ndarray) -> int:
    got = postings.get(term)
    return 0 if got is None else int(vis[got[0]].sum())
