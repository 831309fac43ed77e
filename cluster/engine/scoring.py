"""BM25 exactly as Lucene computes it, with statistics summed over every shard.

Lucene's ``LegacyBM25Similarity``, as Elasticsearch and OpenSearch configure it:
``idf = ln(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5))``,
``score = boost * (k1 + 1) * idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``k1 = 1.2``,
``b = 0.75``, ``avgdl = sumTotalTermFreq / docCount`` and ``dl`` the field length after a
round trip through Lucene's one-byte norm (``SmallFloat.intToByte4``). Fields without norms
(keywords) score with ``dl = 1``.

The statistics (docCount, docFreq, sumTotalTermFreq) are *global*: the coordinator sums each
shard's counts over the documents visible in the search's snapshot and hands them to every shard,
so one shard and eight shards compute bit-identical scores.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .query.fuzzy import merge_candidates

K1 = 1.2
B = 0.75


def _long_to_int4(i: int) -> int:
    num_bits = i.bit_length()
    if num_bits < 4:
        return i
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07
    return encoded | ((shift + 1) << 3)


def _int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_MAX_INT4 = _long_to_int4(2**31 - 1)
_NUM_FREE_VALUES = 255 - _MAX_INT4


def int_to_byte4(i: int) -> int:
    """Lucene's ``SmallFloat.intToByte4`` (as an unsigned byte value 0..255)."""
    if i < 0:
        raise ValueError("Only supports positive values")
    if i < _NUM_FREE_VALUES:
        return i
    return _NUM_FREE_VALUES + _long_to_int4(i - _NUM_FREE_VALUES)


def byte4_to_int(b: int) -> int:
    """Lucene's ``SmallFloat.byte4ToInt``."""
    if b < _NUM_FREE_VALUES:
        return b
    return _NUM_FREE_VALUES + _int4_to_long(b - _NUM_FREE_VALUES)


LENGTH_TABLE = np.array([byte4_to_int(i) for i in range(256)], dtype=np.float64)
_ENCODE_CACHE = np.array([int_to_byte4(i) for i in range(4096)], dtype=np.uint8)


def encode_norms(lengths: np.ndarray) -> np.ndarray:
    """Vectorised ``intToByte4`` for an array of field lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.empty(lengths.shape, dtype=np.uint8)
    small = lengths < len(_ENCODE_CACHE)
    out[small] = _ENCODE_CACHE[lengths[small]]
    for i in np.nonzero(~small)[0]:
        out[i] = int_to_byte4(int(lengths[i]))
    return out


def legacy_boost(boost: float) -> np.float32:
    """``boost * (k1 + 1)`` in float: Elasticsearch and OpenSearch score with Lucene's
    ``LegacyBM25Similarity``, which keeps BM25's ``(k1 + 1)`` numerator by folding it into the
    boost (their explain output shows it as ``boost`` 2.2)."""
    return np.float32(boost) * (np.float32(1) + np.float32(K1))


def idf(doc_freq: int, doc_count: int) -> float:
    """Lucene's BM25 IDF (computed in double, stored as float)."""
    return float(np.float32(np.log(1.0 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5))))


@dataclass(frozen=True)
class PrefixTerms:
    """A request in the statistics round: the first ``limit`` terms (in term order) of
    ``field`` that start with ``prefix`` and occur in a visible document, with their document
    frequencies (a phrase prefix's expansions, the same on every shard)."""

    field: str
    prefix: str
    limit: int


@dataclass
class Stats:
    """Global statistics for one search: per field, per (field, term), the number of visible
    documents (Lucene's ``numDocs``), and the document frequencies of prefix expansions."""

    doc_count: dict[str, int] = field(default_factory=dict)
    sum_ttf: dict[str, int] = field(default_factory=dict)
    doc_freq: dict[tuple[str, str], int] = field(default_factory=dict)
    num_docs: int = 0
    expansions: dict[PrefixTerms, dict[str, int]] = field(default_factory=dict)
    #: per fuzzy term (``query/fuzzy.FuzzySpec``): its candidates, ``{term: (edits, df)}``
    fuzzy: dict[Any, dict[str, tuple[int, int]]] = field(default_factory=dict)

    def add(self, other: Stats) -> None:
        for k, v in other.doc_count.items():
            self.doc_count[k] = self.doc_count.get(k, 0) + v
        for k, v in other.sum_ttf.items():
            self.sum_ttf[k] = self.sum_ttf.get(k, 0) + v
        for k2, v in other.doc_freq.items():
            self.doc_freq[k2] = self.doc_freq.get(k2, 0) + v
        self.num_docs += other.num_docs
        for req, terms in other.expansions.items():
            mine = self.expansions.setdefault(req, {})
            for t, df in terms.items():
                mine[t] = mine.get(t, 0) + df
        for spec, found in other.fuzzy.items():
            merge_candidates(self.fuzzy.setdefault(spec, {}), found.items())

    def expansion(self, req: PrefixTerms) -> list[tuple[str, int]]:
        """``(term, df)`` of the first ``req.limit`` expansions over every shard: a term among
        them is among the first ``limit`` of each shard that has it, so its count is whole."""
        got = self.expansions.get(req, {})
        return [(t, got[t]) for t in sorted(got)[:req.limit]]

    def avgdl(self, fld: str) -> float:
        dc = self.doc_count.get(fld, 0)
        if dc <= 0:
            return 1.0
        return float(np.float32(self.sum_ttf.get(fld, 0) / dc))


def norm_inverse_cache(avgdl: float) -> np.ndarray:
    """``1 / (k1 * ((1 - b) + b * dl / avgdl))`` for each of the 256 norm bytes, in float32
    step by step as Lucene's ``BM25Similarity.scorer`` builds its cache."""
    k1, b = np.float32(K1), np.float32(B)
    lengths = LENGTH_TABLE.astype(np.float32)
    denom = k1 * ((np.float32(1) - b) + b * lengths / np.float32(avgdl))
    return (np.float32(1) / denom).astype(np.float32)


def bm25(freqs: np.ndarray, norms: np.ndarray | None, weight: float, avgdl: float) -> np.ndarray:
    """BM25 per posting, as Lucene's ``BM25Scorer.score``: ``w - w / (1 + f * normInverse)``.

    ``weight`` is ``boost * idf``; ``norms`` the encoded norm bytes of the postings' documents
    (``None`` for fields without norms: Lucene then reads norm byte 1, a length of 1). As in
    Lucene 9 every step is float arithmetic ("without promoting to doubles", which would move
    some scores by one float step). O(len(freqs)).
    """
    cache = norm_inverse_cache(avgdl)
    f = freqs.astype(np.float32)
    norm_inv = cache[1] if norms is None else np.take(cache, norms)  # faster than [] on uint8
    w = np.float32(weight)
    return (w - w / (np.float32(1) + f * norm_inv)).astype(np.float32)
