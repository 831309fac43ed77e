"""How often a phrase occurs in each document: exact (consecutive positions) and sloppy
(Lucene's ``SloppyPhraseMatcher``: the number of minimal windows within ``slop`` moves, each
counted ``1 / (1 + distance)``). Pure NumPy and heapq over a text field's positions."""
from __future__ import annotations

import heapq

import numpy as np

from ..segment import TextField


def phrase_freq_column(alternatives: list[list[str]], fd: TextField, slop: int,
                        n: int) -> np.ndarray:
    """Phrase frequency per document: the number of exact matches (vectorised), or with
    ``slop`` the sum of ``1 / (1 + match length)`` over Lucene's sloppy matches."""
    per_term: list[tuple[np.ndarray, np.ndarray]] = []
    for options in alternatives:
        docs_l, pos_l = [], []
        for opt in options:
            got = fd.postings.positions_of(opt)
            if got is not None:
                docs_l.append(got[0])
                pos_l.append(got[1])
        if not docs_l:
            return np.zeros(n, dtype=np.float32)
        d = np.concatenate(docs_l)
        p = np.concatenate(pos_l)
        if len(docs_l) > 1:
            order = np.lexsort((p, d))
            d, p = d[order], p[order]
        per_term.append((d, p))
    freq = np.zeros(n, dtype=np.float32)
    shift = np.int64(1 << 32)
    if slop == 0:
        d0, p0 = per_term[0]
        keys = _ascending_unique(d0.astype(np.int64) * shift + p0.astype(np.int64))
        for i, (d, p) in enumerate(per_term[1:], start=1):
            keys = _kept_if_in(keys, d.astype(np.int64) * shift + (p.astype(np.int64) - i))
            if len(keys) == 0:
                return freq
        np.add.at(freq, (keys // shift).astype(np.int64), np.float32(1))
        return freq
    common = _ascending_unique(per_term[0][0])
    for d, _ in per_term[1:]:
        common = _kept_if_in(common, d)
    # a term repeated in the phrase needs as many occurrences in the document (Lucene's
    # "repeats" never let two phrase positions share one occurrence)
    need: dict[tuple[str, ...], int] = {}
    for options in alternatives:
        need[tuple(options)] = need.get(tuple(options), 0) + 1
    needs = [need[tuple(opts)] for opts in alternatives]
    # every term's slice bounds for every common document at once; a term's positions as one
    # list when the common documents hold a good share of them, else sliced per document
    bounds = [(np.searchsorted(d, common, "left").tolist(),
               np.searchsorted(d, common, "right").tolist(),
               p.tolist() if len(p) <= 8 * len(common) else p) for d, p in per_term]
    for j, doc in enumerate(common.tolist()):
        lists = [_listed(p[lo[j]:hi[j]]) for lo, hi, p in bounds]
        if any(len(pl) < k for pl, k in zip(lists, needs)):
            continue
        freq[doc] = sloppy_phrase_freq(lists, slop)
    return freq


def _listed(positions: list[int] | np.ndarray) -> list[int]:
    return positions if isinstance(positions, list) else positions.tolist()


def _ascending_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` for postings, which come sorted: a linear pass instead of a sort."""
    if len(a) < 2:
        return a
    step = a[1:] > a[:-1]
    if step.all():
        return a
    if (a[1:] >= a[:-1]).all():
        return a[np.concatenate(([True], step))]
    return np.unique(a)


def _kept_if_in(keys: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``np.intersect1d(keys, other)`` for ascending unique ``keys``: each key looked up by
    binary search in ``other`` (sorted first only if it is not), so no union is sorted."""
    if len(keys) == 0 or len(other) == 0:
        return keys[:0]
    if len(other) > 1 and not (other[1:] >= other[:-1]).all():
        other = np.sort(other)
    at = np.searchsorted(other, keys)
    at[at == len(other)] = len(other) - 1
    return keys[other[at] == keys]


def sloppy_phrase_freq(positions: list[list[int]], slop: int) -> float:
    """Lucene's ``SloppyPhraseMatcher`` for one document. (For a phrase that repeats a term,
    Lucene also keeps the repeated positions apart; here they are only required to exist.)

    ``positions[i]`` are the sorted positions of the phrase's i-th term. Each term walks its
    positions shifted by its offset in the phrase; a match is found whenever the span between
    the lowest and highest shifted position (the match length) is at most ``slop``, and counts
    ``1 / (1 + match length)``, accumulated in float as Lucene does.
    """
    heap: list[tuple[int, int]] = []
    idx = [0] * len(positions)
    end = -(1 << 62)
    for i, pl in enumerate(positions):
        if not pl:
            return 0.0
        p = pl[0] - i
        heap.append((p, i))
        end = max(end, p)
    heapq.heapify(heap)
    freq = np.float32(0)
    while True:  # one nextMatch() per iteration
        pos, i = heapq.heappop(heap)
        match_length = end - pos
        nxt = heap[0][0]
        found = False
        while True:
            idx[i] += 1
            if idx[i] >= len(positions[i]):
                break
            pos = positions[i][idx[i]] - i
            end = max(end, pos)
            if pos > nxt:  # done minimising the current match length
                heapq.heappush(heap, (pos, i))
                if match_length <= slop:
                    found = True
                    break
                pos, i = heapq.heappop(heap)
                nxt = heap[0][0]
                match_length = end - pos
            else:
                match_length = min(match_length, end - pos)
        if match_length <= slop:
            freq = np.float32(freq + np.float32(1) / (np.float32(1) + np.float32(match_length)))
        if not found:
            return float(freq)


# --- ranges and other filters -----------------------------------------------------------------
