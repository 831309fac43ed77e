"""Postings: a field's sorted terms and, per term, its documents, frequencies and positions.

Memory decides the layout: a field's terms are one sorted string (:class:`TermDict`) and a
term's id is its rank, so a keyword's ordinals are its term ids. The lists are CSR arrays in the
narrowest integer dtype their values fit, chosen per segment; readers get ``int32``
(``Postings.get``, ``positions_of``), so matching and scoring arithmetic never depends on that
choice.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np


def narrow(values: np.ndarray, high: int | None = None) -> np.ndarray:
    """``values`` (non-negative integers below ``high``, default their maximum + 1) in the
    smallest of uint8, uint16, int32, int64 that holds them."""
    if high is None:
        high = int(values.max()) + 1 if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.int32):
        if high <= np.iinfo(dtype).max + 1:
            return values.astype(dtype, copy=False)
    return values.astype(np.int64, copy=False)


def _i32(values: np.ndarray) -> np.ndarray:
    """A narrowed column as int32, as readers expect it (a view when it already is)."""
    return values.astype(np.int32, copy=False)


class TermDict:
    """A field's distinct terms, sorted, in one string; a term's id is its rank.

    ``text`` is every term followed by ``"\\n"``, ``starts[i]`` where term ``i`` begins
    (``starts[n]``: the end). About one byte per character and 4 per term, where a dict of
    Python strings costs ~100 bytes per term. Lookups are binary searches: O(log n) string
    comparisons (~4 µs for 150,000 terms); strings are made only for the terms asked for.
    """

    __slots__ = ("text", "starts", "_plain")

    def __init__(self, terms: list[str]) -> None:
        """``terms`` sorted and distinct."""
        self.text = "\n".join(terms) + "\n" if terms else ""
        starts = np.zeros(len(terms) + 1, dtype=np.int64)
        if terms:
            np.cumsum(np.fromiter(map(len, terms), dtype=np.int64, count=len(terms)) + 1,
                      out=starts[1:])
        self.starts = narrow(starts, len(self.text) + 1)
        # no term holds a newline: a range of terms is one split of the text
        self._plain = self.text.count("\n") == len(terms)

    @classmethod
    def from_utf8(cls, data: np.ndarray, offsets: np.ndarray) -> TermDict:
        """The dictionary of the terms ``data[offsets[i]:offsets[i + 1]]`` (UTF-8 bytes,
        sorted, distinct; ``term_ids.Utf8``), made in NumPy passes: no Python string
        per term, as ``TermDict(list)`` needs (~60 ns each, and a short-lived object)."""
        n = len(offsets) - 1
        if n <= 0:
            return cls([])
        body = data[int(offsets[0]):int(offsets[-1])]
        at = offsets.astype(np.int64) - int(offsets[0]) + np.arange(n + 1)   # bytes, in text
        out = np.empty(len(body) + n, dtype=np.uint8)
        newline = at[1:] - 1
        kept = np.ones(len(out), dtype=bool)
        kept[newline] = False
        out[kept] = body
        out[newline] = ord("\n")
        self = cls.__new__(cls)
        self.text = out.tobytes().decode("utf-8")
        if len(self.text) != len(out):     # non-ASCII: starts count code points, not bytes
            chars = np.zeros(len(out) + 1, dtype=np.int64)
            np.cumsum((out & 0xC0) != 0x80, out=chars[1:])
            at = chars[at]
        self.starts = narrow(at, len(self.text) + 1)
        self._plain = self.text.count("\n") == n
        return self

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i: int) -> str:
        s = self.starts
        return self.text[int(s[i]):int(s[i + 1]) - 1]

    def bisect(self, term: str, right: bool = False) -> int:
        """The first id whose term is ``>= term`` (``right``: ``> term``)."""
        text, s = self.text, memoryview(self.starts)
        lo, hi = 0, len(s) - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            t = text[s[mid]:s[mid + 1] - 1]
            if t < term or right and t == term:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def find(self, term: str) -> int:
        """The id of ``term``, or -1."""
        i = self.bisect(term)
        return i if i < len(self) and self[i] == term else -1

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """``(lo, hi)``: the ids of the terms starting with ``prefix`` (they are adjacent)."""
        lo = self.bisect(prefix)
        text, s = self.text, memoryview(self.starts)
        hi = len(s) - 1
        first = lo
        while first < hi:    # the first term at or after ``lo`` without the prefix
            mid = (first + hi) >> 1
            if text.startswith(prefix, s[mid], s[mid + 1] - 1):
                first = mid + 1
            else:
                hi = mid
        return lo, first

    def between(self, lo: int, hi: int) -> list[str]:
        """Terms ``lo`` to ``hi - 1``, as new strings."""
        if hi <= lo:
            return []
        if self._plain:
            return self.text[int(self.starts[lo]):int(self.starts[hi]) - 1].split("\n")
        return [self[i] for i in range(lo, hi)]


def _pack_bytes(values: np.ndarray
                ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Non-negative values in one byte each; those of 255 and more (rare: a word hundreds of
    times in one document, a position past a long document's 255th token) also as
    ``(index, value)``, sorted by index. Falls back to :func:`narrow` (exact values, no table)
    when such values are common or a value is negative. :func:`_unpack` reads either form."""
    if len(values) and int(values.min()) < 0:
        return values.astype(np.int64), None
    big = np.flatnonzero(values >= 255)
    if len(big) == 0:
        return values.astype(np.uint8), None
    if 12 * len(big) > len(values):
        return narrow(values), None
    # the indices' dtype must hold ``len(values)`` too: ``_unpack`` searches for its bound
    # ``b`` (up to ``len(values)``) in that dtype
    at = narrow(big, len(values) + 1)
    return np.minimum(values, 255).astype(np.uint8), (at, narrow(values[big]))


def _unpack(packed: np.ndarray, big: tuple[np.ndarray, np.ndarray] | None, a: int, b: int
            ) -> np.ndarray:
    """int32 values ``a`` to ``b - 1`` of a :func:`_pack_bytes` column."""
    out = packed[a:b].astype(np.int32)
    if big is not None:
        at, value = big
        # bounds in the table's own dtype: mixed ones would convert the whole table per call
        lo, hi = np.searchsorted(at, np.array((a, b), dtype=at.dtype)).tolist()
        out[at[lo:hi].astype(np.int64) - a] = value[lo:hi]
    return out


def _pack_freqs(freqs: np.ndarray
                ) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray] | None]:
    """:func:`_pack_bytes` of the frequencies, or ``(None, None)`` when every one is 1 (a
    keyword field's: nothing to store)."""
    if not len(freqs) or int(freqs.max()) == 1:
        return None, None
    return _pack_bytes(freqs)


def _literal_prefix(regex: re.Pattern[str]) -> str:
    """The literal text every full match of ``regex`` starts with ("" when unknown)."""
    if regex.flags & re.IGNORECASE:
        return ""
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]
        parsed = _parser.parse(regex.pattern, regex.flags)
    except Exception:  # noqa: BLE001 - an optimisation only: scan every term instead
        return ""
    out = []
    for op, arg in parsed:
        if op is not _constants.LITERAL:
            break
        out.append(chr(arg))
    return "".join(out)


class Postings:
    """Term -> (docs, freqs[, positions]) in CSR form over a :class:`TermDict`.

    ``offsets[t]:offsets[t + 1]`` are term ``t``'s postings in ``docs`` (ascending) and
    ``freqs`` (one byte each, see :func:`_pack_freqs`; None when all are 1); with positions,
    ``pos_starts[t]:pos_starts[t + 1]`` are its positions, document after document (``freqs``
    of them each, ascending), one byte each with the larger ones aside (:func:`_pack_bytes`:
    ~7 % of GCIDE's, 5.45 → 3.9 MiB for half of it). Deltas within a document would take
    3.2 MiB, but decoding them (a running sum restarted per document) made ``positions_of``
    2.5x slower; this form reads at the cost of the ``uint16`` column it replaced.
    Expansions (prefix, pattern, range) answer term ids, which :meth:`union` turns into a
    document mask in one slice per term.
    """

    __slots__ = ("terms", "offsets", "docs", "freqs", "big_freqs", "pos_starts", "positions",
                 "big_positions")

    def __init__(self, terms: TermDict, offsets: np.ndarray, docs: np.ndarray,
                 freqs: np.ndarray, pos_starts: np.ndarray | None,
                 positions: np.ndarray | None) -> None:
        self.terms = terms
        self.offsets = offsets
        self.docs = docs
        self.freqs, self.big_freqs = _pack_freqs(freqs)
        self.pos_starts = pos_starts
        self.positions, self.big_positions = (None, None) if positions is None \
            else _pack_bytes(positions)

    def terms_of(self, doc: int) -> list[str]:
        """The terms document ``doc`` holds. O(postings): for small fields (``_ignored``)."""
        at = np.flatnonzero(self.docs == doc)
        ids = np.searchsorted(self.offsets, at, side="right") - 1
        return [self.terms[int(t)] for t in ids]

    def _freqs(self, a: int, b: int) -> np.ndarray:
        """int32 frequencies of postings ``a`` to ``b - 1``."""
        if self.freqs is None:
            return np.ones(b - a, dtype=np.int32)
        return _unpack(self.freqs, self.big_freqs, a, b)

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(docs, freqs)`` of ``term`` as int32, or None. O(log terms + postings)."""
        tid = self.terms.find(term)
        if tid < 0:
            return None
        a, b = int(self.offsets[tid]), int(self.offsets[tid + 1])
        return _i32(self.docs[a:b]), self._freqs(a, b)

    def positions_of(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(doc of each position, position) for every occurrence of ``term``, as int32."""
        tid = self.terms.find(term)
        if tid < 0 or self.pos_starts is None or self.positions is None:
            return None
        a, b = int(self.offsets[tid]), int(self.offsets[tid + 1])
        pa, pb = int(self.pos_starts[tid]), int(self.pos_starts[tid + 1])
        docs = np.repeat(_i32(self.docs[a:b]), self._freqs(a, b))
        return docs, _unpack(self.positions, self.big_positions, pa, pb)

    def all_positions(self) -> np.ndarray | None:
        """Every position, term after term, as int32 (merges re-emit them)."""
        if self.positions is None:
            return None
        return _unpack(self.positions, self.big_positions, 0, len(self.positions))

    def nbytes(self) -> int:
        """Bytes of the arrays and the term text (``merge_policy.segment_bytes``)."""
        arrays = [self.offsets, self.docs, self.freqs, self.pos_starts, self.positions,
                  self.terms.starts]
        for pair in (self.big_freqs, self.big_positions):
            arrays += list(pair) if pair is not None else []
        return len(self.terms.text) + sum(a.nbytes for a in arrays if a is not None)

    @property
    def term_list(self) -> list[str]:
        """Every term, sorted (new strings on each call: iterate, do not keep)."""
        return self.terms.between(0, len(self.terms))

    def terms_with_prefix(self, prefix: str) -> list[str]:
        """The terms starting with ``prefix``, sorted."""
        return self.terms.between(*self.terms.prefix_range(prefix))

    def ids_with_prefix(self, prefix: str) -> np.ndarray:
        lo, hi = self.terms.prefix_range(prefix)
        return np.arange(lo, hi, dtype=np.int64)

    def ids_matching(self, regex: re.Pattern[str]) -> np.ndarray:
        """Ids of the terms ``regex`` matches in full; only those with its literal prefix are
        tried."""
        lo, hi = self.terms.prefix_range(_literal_prefix(regex))
        hits = [i for i, t in enumerate(self.terms.between(lo, hi), lo) if regex.fullmatch(t)]
        return np.asarray(hits, dtype=np.int64)

    def ids_where(self, keep: Callable[[str], bool]) -> np.ndarray:
        """Ids of the terms ``keep`` accepts (tries every term)."""
        return np.asarray([i for i, t in enumerate(self.term_list) if keep(t)], dtype=np.int64)

    def ids_in_range(self, gt: str | None, gte: str | None, lt: str | None,
                     lte: str | None) -> np.ndarray:
        """Ids of the terms within the bounds (string order; adjacent, found by bisection)."""
        lo, hi = 0, len(self.terms)
        if gt is not None:
            lo = max(lo, self.terms.bisect(gt, right=True))
        if gte is not None:
            lo = max(lo, self.terms.bisect(gte))
        if lt is not None:
            hi = min(hi, self.terms.bisect(lt))
        if lte is not None:
            hi = min(hi, self.terms.bisect(lte, right=True))
        return np.arange(lo, max(lo, hi), dtype=np.int64)

    def union(self, ids: np.ndarray, n: int) -> np.ndarray:
        """bool[n]: the documents holding any of the terms ``ids``. O(their postings)."""
        mask = np.zeros(n, dtype=bool)
        if len(ids) == 0:
            return mask
        starts = self.offsets[ids].astype(np.int64)
        counts = self.offsets[ids + 1].astype(np.int64) - starts
        total = int(counts.sum())
        if total:
            # every posting index of every term, without a Python loop over the terms
            run_start = np.cumsum(counts) - counts
            idx = np.arange(total, dtype=np.int64) + np.repeat(starts - run_start, counts)
            mask[self.docs[idx]] = True
        return mask


def positions_in(docs: np.ndarray, positions: np.ndarray, doc: int) -> list[int]:
    """The positions of one term in ``doc``, from its :meth:`Postings.positions_of` arrays.
    ``doc`` is looked up as a scalar of ``docs``' dtype: a Python int makes NumPy convert all
    of ``docs`` on each call (~28 µs for a common term's int32 postings)."""
    at = docs.dtype.type(doc)
    return positions[docs.searchsorted(at):docs.searchsorted(at, "right")].tolist()


def sorted_ids(values: list[str]) -> tuple[TermDict, np.ndarray]:
    """The distinct values as a :class:`TermDict`, and the term id (rank) of each value
    (``term_ids.py``). O(V + U log U) for V values, U distinct."""
    from .term_ids import ranked_utf8   # only where segments are built (``load_build_modules``)
    distinct, tids = ranked_utf8(values)
    if isinstance(distinct, tuple):
        return TermDict.from_utf8(*distinct), tids
    return TermDict(distinct), tids


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of int32 keys, by stable radix passes over their
    16-bit halves when none is negative: NumPy radix-sorts 16-bit integers but merge-sorts
    wider ones (2.85M term ids of half of GCIDE: 0.14 → 0.05-0.09 s)."""
    if not len(keys) or int(keys.min()) < 0:
        return np.argsort(keys, kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    if int(keys.max()) < 1 << 16:
        return low
    return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]


def _run_bounds(ids: np.ndarray, n: int) -> np.ndarray:
    """Where each id's run starts in the sorted non-negative ``ids`` (``[n]``: the end): a
    count and a running sum, O(len + n) in sequence, where ``searchsorted`` of every id probed
    the array at random."""
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ids, minlength=n)[:n], out=out[1:])
    return out


def build_postings(terms: TermDict, tids: Any, docs: Any, poss: Any | None,
                   n_docs: int) -> Postings:
    """CSR postings from one entry per token occurrence. ``docs`` (then ``poss``) must be
    non-decreasing in the order given — the segment builders produce them so — which lets a
    stable sort on the term id alone give the (term, doc, position) order. O(P log P)."""
    n_terms = len(terms)
    t = np.asarray(tids, dtype=np.int32)
    order = stable_order(t)
    t = t[order]
    d = np.asarray(docs, dtype=np.int32)[order]
    key_change = np.ones(len(t), dtype=bool)
    key_change[1:] = (t[1:] != t[:-1]) | (d[1:] != d[:-1])
    starts = np.flatnonzero(key_change)
    offsets = _run_bounds(t[starts], n_terms)
    freqs = np.diff(np.append(starts, len(t)))
    pos_starts = positions = None
    if poss is not None:
        positions = np.asarray(poss, dtype=np.int64)[order]
        pos_starts = narrow(_run_bounds(t, n_terms), len(t) + 1)
    return Postings(terms, narrow(offsets, len(starts) + 1), narrow(d[starts], n_docs),
                    freqs, pos_starts, positions)
