"""Fuzzy term expansion, as Lucene's ``FuzzyQuery`` does it (pure functions, no data access).

A fuzzy term names the dictionary terms within ``edits`` edits of it (Levenshtein, or
optimal-string-alignment when ``transpositions`` counts a swap of neighbours as one edit, as
Lucene's automata do) that share its first ``prefix_length`` characters. Each gets Lucene's
boost ``1 - ed / min(len(candidate), len(term))`` (``FuzzyTermsEnum``), and the query keeps
the top ``max_expansions`` by boost, ties to the smaller term (``TopTermsRewrite``). The
kept terms score as one blended term (``TopTermsBlendedFreqScoringRewrite``): each with its
boost, all with the largest document frequency among them.

Every user of fuzziness shares this module: the ``fuzzy`` query, ``match`` / ``multi_match``
/ ``match_bool_prefix`` with ``fuzziness``, ``term~N`` in the query strings and the
``intervals`` ``fuzzy`` rule. Distances come from ``rapidfuzz`` (bit-parallel C++), after a
bisect to the prefix's range of the sorted dictionary and a filter on length.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA, Levenshtein

from ...errors import IllegalArgument
from ..postings import TermDict

DEFAULT_MAX_EXPANSIONS = 50
#: a longer fuzzy term is refused before the search (``fuzzy_query.check_fuzzy``; Lucene
#: refuses terms past its automaton's budget): one distance computation stays cheap
MAX_TERM_LENGTH = 1024
#: ``max_expansions`` above this is refused (Lucene's ``indices.query.bool.max_clause_count``)
MAX_EXPANSIONS_LIMIT = 4096


class FuzzySpec(NamedTuple):
    """One fuzzy term of one field: what its expansion depends on (a hashable key, so the
    statistics round can carry each shard's candidates and the shards find them again).
    ``max_expansions`` 0 keeps every candidate (a constant-score rewrite)."""

    field: str
    term: str
    edits: int
    prefix_length: int = 0
    transpositions: bool = True
    max_expansions: int = DEFAULT_MAX_EXPANSIONS


def fuzzy_edits(fuzziness: Any, term: str) -> int:
    """Elasticsearch's ``Fuzziness.asDistance`` of ``term``: ``AUTO`` (0 edits below 3
    characters, 1 below 6, else 2), ``AUTO:low,high``, a JSON number (0, 1 or 2), or a numeric
    string (its integer part, at most 2)."""
    if isinstance(fuzziness, (int, float)) and not isinstance(fuzziness, bool):
        edits = int(fuzziness)
        if edits not in (0, 1, 2):
            raise IllegalArgument(f"Valid edit distances are [0, 1, 2] but was [{edits}]")
        return edits
    s = str(fuzziness).upper()
    if s.startswith("AUTO"):
        low, high = _auto_bounds(s, fuzziness)
        n = len(term)
        return 0 if n < low else 1 if n < high else 2
    try:
        edits = min(2, int(float(s)))
    except (ValueError, OverflowError):
        raise IllegalArgument(f"Invalid fuzziness value [{fuzziness}]") from None
    if edits < 0:
        raise IllegalArgument("maxEdits must be between 0 and 2")
    return edits


def _auto_bounds(s: str, original: Any) -> tuple[int, int]:
    if s == "AUTO":
        return 3, 6
    try:
        low, high = (int(x) for x in s[5:].split(",")) if s[4:5] == ":" else (None, None)
    except ValueError:
        low = high = None
    if low is None or high is None:
        raise IllegalArgument("failed to find low and high distance values",
                              es_type="parse_exception")
    if low < 0 or high < 0 or low > high:
        raise IllegalArgument("fuzziness wrongly configured, must be: lowDistance > 0, "
                              "highDistance > 0 and lowDistance <= highDistance ")
    return low, high


def check_fuzziness(fuzziness: Any) -> None:
    """Refuse a malformed ``fuzziness`` when the query is parsed (its distance is only
    known once the text is analysed)."""
    fuzzy_edits(fuzziness, "")


def boost(term: str, candidate: str, ed: int) -> float:
    """``FuzzyTermsEnum``'s boost: 1 for the term itself, else ``1 - ed / min length``
    (in float, as Lucene)."""
    if ed == 0:
        return 1.0
    shortest = min(len(candidate), len(term))
    if shortest == 0:
        return 1.0
    return float(np.float32(1.0) - np.float32(ed) / np.float32(shortest))


def candidates(terms: TermDict, spec: FuzzySpec) -> dict[str, int]:
    """The dictionary's terms within the spec's distance: ``{candidate: edits}``.

    Cost: a bisect for the prefix, then one bit-parallel distance per term of the prefix's
    range whose length is within ``edits`` of the term's."""
    word, edits, plen = spec.term, spec.edits, spec.prefix_length
    if edits == 0 or plen >= len(word):   # Lucene's SingleTermsEnum: the term alone
        return {word: 0} if terms.find(word) >= 0 else {}
    lo, hi = terms.prefix_range(word[:plen])
    if hi <= lo:
        return {}
    starts = np.asarray(terms.starts, dtype=np.int64)
    lengths = np.diff(starts[lo:hi + 1]) - 1
    keep = np.flatnonzero(np.abs(lengths - len(word)) <= edits)
    if len(keep) == 0:
        return {}
    pool = [terms[lo + int(i)] for i in keep]
    if plen:
        head = word[plen:]
        suffixes = [t[plen:] for t in pool]
    else:
        head, suffixes = word, pool
    scorer = OSA.distance if spec.transpositions else Levenshtein.distance
    found = process.extract(head, suffixes, scorer=scorer, score_cutoff=edits, limit=None)
    return {pool[i]: int(d) for _, d, i in found}


def within(spec: FuzzySpec, token: str) -> bool:
    """Whether ``token`` is one of the spec's candidates (what a highlighter marks: every
    term the fuzzy automaton accepts)."""
    word, plen = spec.term, spec.prefix_length
    if spec.edits == 0 or plen >= len(word):
        return token == word
    if not token.startswith(word[:plen]) or abs(len(token) - len(word)) > spec.edits:
        return False
    scorer = OSA.distance if spec.transpositions else Levenshtein.distance
    return scorer(word[plen:], token[plen:], score_cutoff=spec.edits) <= spec.edits


def top_terms(term: str, found: dict[str, int], limit: int) -> list[tuple[str, float]]:
    """The kept expansions ``[(candidate, boost)]``: the ``limit`` best by boost, ties to
    the smaller term (``TopTermsRewrite``), listed in term order. ``limit`` 0: all."""
    ranked = sorted(found, key=lambda c: (-boost(term, c, found[c]), c))
    if limit:
        ranked = ranked[:limit]
    return [(c, max(boost(term, c, found[c]), 0.0)) for c in sorted(ranked)]


def merge_candidates(into: dict[str, tuple[int, int]],
                     more: Iterable[tuple[str, tuple[int, int]]]) -> None:
    """Sum ``{candidate: (edits, doc_freq)}`` maps from several segments or shards."""
    for t, (ed, df) in more:
        got = into.get(t)
        into[t] = (ed, df + (got[1] if got else 0))


def blended_doc_freq(chosen: list[tuple[str, float]], dfs: dict[str, int]) -> int:
    """``BlendedTermQuery``: every kept term scores with the largest document frequency."""
    return max((dfs.get(t, 0) for t, _ in chosen), default=0)
