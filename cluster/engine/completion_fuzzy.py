"""Fuzzy completion: which analysed inputs start within ``edits`` of the prefix, and the boost.

Lucene's ``FuzzyCompletionQuery`` intersects a Levenshtein automaton (the first
``prefix_length`` characters exact; Damerau transpositions counted as one edit unless
``transpositions`` is false) with the suggester's FST. Each FST path stops at its first
accepting prefix, the paths are collected depth first (higher labels first), and the boost of
every suggestion is the common-prefix length of the query and the *last* collected path — the
smallest accepting prefix in label order — with a boost of 0 meaning "the weight alone". We
compute the same over the candidates: :func:`accepted_prefix` per input, the smallest of them
across all shards at the coordinator. Lengths are UTF-8 bytes unless ``unicode_aware``.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_FUZZY_CANDIDATES = 20_000   # ours: inputs one fuzzy prefix may be compared with per segment


@dataclass(frozen=True)
class FuzzyOptions:
    """The ``fuzzy`` object of a completion suggester (Elasticsearch's defaults)."""

    edits: int = 1
    transpositions: bool = True
    min_length: int = 3
    prefix_length: int = 1
    unicode_aware: bool = False

    def units(self, text: str) -> str:
        """``text`` in the units lengths are measured in (bytes as latin-1 characters)."""
        return text if self.unicode_aware else text.encode("utf-8").decode("latin-1")

    def exact(self, query: str) -> bool:
        """Too short for edits: the prefix must match as it is (Lucene's rule)."""
        return len(query) <= self.prefix_length or len(query) < self.min_length or \
            self.edits == 0


def accepted_prefix(query: str, key: str, opts: FuzzyOptions) -> int | None:
    """The length of the shortest prefix of ``key`` the automaton of ``query`` accepts (both
    in ``opts`` units), None when none does. O(len(query) * (len(query) + edits))."""
    if opts.exact(query):
        return len(query) if key.startswith(query) else None
    p = opts.prefix_length
    if not key.startswith(query[:p]):
        return None
    q, k, e = query[p:], key[p:len(query) + opts.edits], opts.edits
    prev2: list[int] | None = None
    prev = list(range(len(q) + 1))          # distances of q[:i] to k[:0]
    if prev[-1] <= e:
        return p
    for j in range(1, len(k) + 1):
        cur = [j] + [0] * len(q)
        for i in range(1, len(q) + 1):
            cost = 0 if q[i - 1] == k[j - 1] else 1
            cur[i] = min(prev[i] + 1, cur[i - 1] + 1, prev[i - 1] + cost)
            if opts.transpositions and prev2 is not None and i > 1 \
                    and q[i - 1] == k[j - 2] and q[i - 2] == k[j - 1]:
                cur[i] = min(cur[i], prev2[i - 2] + 1)
        if cur[-1] <= e:
            return p + j
        if min(cur) > e:
            return None
        prev2, prev = prev, cur
    return None


def boost(query: str, smallest: str | None) -> int:
    """The common-prefix length of ``query`` and the smallest accepted prefix (0: none)."""
    if smallest is None:
        return 0
    n = 0
    for a, b in zip(query, smallest):
        if a != b:
            break
        n += 1
    return n


__all__ = ["FuzzyOptions", "MAX_FUZZY_CANDIDATES", "accepted_prefix", "boost"]
