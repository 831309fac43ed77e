"""A shard's share of a prefix expansion in the statistics round (``scoring.PrefixTerms``):
the first ``limit`` terms with the prefix that a visible document holds, with their document
frequencies. The coordinator merges the shares (``Stats.expansion``) so every shard expands a
phrase prefix to the same terms, scored with the same statistics."""
from __future__ import annotations

import numpy as np

from .scoring import PrefixTerms, Stats
from .segment import KeywordField, TextField


def add_prefix_terms(st: Stats, req: PrefixTerms, cols: dict, vis: np.ndarray) -> None:
    """Count ``req``'s expansions in one document set into ``st``. O(terms with the prefix
    up to ``limit`` visible ones, times their postings)."""
    fd = cols.get(req.field)
    if not isinstance(fd, (TextField, KeywordField)):
        return
    mine = st.expansions.setdefault(req, {})
    lo, hi = fd.postings.terms.prefix_range(req.prefix)
    found = 0
    for term in fd.postings.terms.between(lo, hi):
        if found >= req.limit:
            break
        post = fd.postings.get(term)
        df = 0 if post is None else int(vis[post[0]].sum())
        if df:
            mine[term] = mine.get(term, 0) + df
            found += 1


def cut(st: Stats) -> None:
    """Keep each request's first ``limit`` terms over the shard's document sets."""
    for req, terms in st.expansions.items():
        if len(terms) > req.limit:
            st.expansions[req] = {t: terms[t] for t in sorted(terms)[:req.limit]}
