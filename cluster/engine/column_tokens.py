"""The ``standard`` analyzer over a whole column of values at once, in NumPy byte passes.

A refresh tokenizes every value of a text field; per value in Python that is ~2 µs plus a
Python string per token. Here the ASCII values are lowercased, classified (word character,
joiner, other) and cut into tokens with a few NumPy passes over their bytes — joined tokens
such as ``u.s.a``, ``don't`` or ``3.14`` and underscores included — and only the others
(non-ASCII text, a token over 255 characters) go through ``standard_tokens`` one by one: the
same tokens, in the same order, as UTF-8 bytes and bounds that ``term_ids.ranked_utf8_column``
numbers without making a Python string per token. (Arrow's regex split, used before, took over
twice the CPU on GCIDE and left a sixth of its values, those with joined tokens, to Python.)
"""
from __future__ import annotations

import numpy as np

from .analysis import MAX_TOKEN_LENGTH, get_analyzer, standard_tokens
from .postings import TermDict, sorted_ids
from .term_ids import Utf8, concat_utf8, ranked_utf8_column, take_utf8, utf8_of


def text_term_ids(values: list[str], analyzer: str | None
                  ) -> tuple[TermDict, np.ndarray, np.ndarray]:
    """``(terms, ids, counts)`` of a text column: the distinct tokens of all ``values`` under
    ``analyzer``, the term id of each token (values one after the other) and how many tokens
    each value has. ``standard`` goes through NumPy passes when it can; every analyzer has
    its own Python function as well, which is the reference."""
    analyze = get_analyzer(analyzer)
    if analyze is standard_tokens and values:
        try:
            tokens, counts, at = _standard_tokens_unordered(values)
            distinct, tids = ranked_utf8_column(tokens)
            return TermDict.from_utf8(*distinct), _in_value_order(tids, at), counts
        except (TypeError, UnicodeError):
            pass
    all_toks: list[str] = []
    counts_list: list[int] = []
    for v in values:
        toks = analyze(v)
        all_toks += toks
        counts_list.append(len(toks))
    terms, tids = sorted_ids(all_toks)
    return terms, tids, np.asarray(counts_list, dtype=np.int64)


def standard_column(values: list[str]) -> tuple[Utf8, np.ndarray]:
    """``(tokens, counts)``: the ``standard`` tokens of every value one after the other (UTF-8
    bytes and bounds), and how many each value has. Raises ``TypeError``/``UnicodeError`` for
    values that are no UTF-8 text (a NUL inside one, a lone surrogate): the caller then
    tokenizes them in Python."""
    tokens, counts, at = _standard_tokens_unordered(values)
    if at is not None:
        tokens = take_utf8(tokens, _in_value_order(
            np.arange(len(tokens[1]) - 1, dtype=np.int64), at))
    return tokens, counts


def _standard_tokens_unordered(values: list[str]
                               ) -> tuple[Utf8, np.ndarray, np.ndarray | None]:
    """``(tokens, counts, at)``: :func:`standard_column`'s tokens with the ``len(at)`` tokens
    of the values tokenized in Python (non-ASCII) after all the others; in value order, each
    of those goes before the token its ``at`` names among the others (``at`` None: there are
    none). Term ids are then put in order (:func:`_in_value_order`, an integer insertion)
    rather than the strings (a sort and a string ``take`` over every token: 0.1 CPU s on half
    of GCIDE's text, for its 3 non-ASCII values)."""
    if not values:
        return ((np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)),
                np.zeros(0, dtype=np.int64), None)
    slow = ~np.fromiter(map(str.isascii, values), dtype=bool, count=len(values))
    datas, lengths, parents = [], [], []
    for lo, hi in _chunks(values):
        data, length, parent = _ascii_tokens(values, lo, hi, slow)
        datas.append(data)
        lengths.append(length)
        parents.append(parent)
    length = np.concatenate(lengths)
    kept_parents = np.concatenate(parents)
    offsets = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    tokens = (np.concatenate(datas), offsets)
    counts = np.bincount(kept_parents, minlength=len(values))
    slow_tokens: list[str] = []
    slow_parents: list[int] = []
    for i in np.flatnonzero(slow).tolist():
        toks = standard_tokens(values[i])
        slow_tokens += toks
        slow_parents += [i] * len(toks)
    if not slow_tokens:
        return tokens, counts, None
    tokens = concat_utf8(tokens, utf8_of(slow_tokens))
    after = np.asarray(slow_parents, dtype=np.int64)
    counts += np.bincount(after, minlength=len(values))
    # parents are disjoint (a value goes one way): a slow token goes before the first ASCII
    # token of a later value
    return tokens, counts, np.searchsorted(kept_parents, after)


def _in_value_order(per_token: np.ndarray, at: np.ndarray | None) -> np.ndarray:
    """``per_token`` (one entry per token of :func:`_standard_tokens_unordered`) in value
    order: its last ``len(at)`` entries inserted at ``at`` among the others. O(n), no sort."""
    if at is None:
        return per_token
    cut = len(per_token) - len(at)
    return np.insert(per_token[:cut], at, per_token[cut:])


# Byte classes of ASCII text for ``_ascii_tokens``: word characters (``\w``, either case), and
# the joiners that join two letters (. ' :) or two digits (. ' , ;) into one token
# (``standard_tokens``).
_LETTER, _DIGIT, _UNDERSCORE, _JOIN_BOTH, _JOIN_LETTERS, _JOIN_DIGITS = range(1, 7)
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[ord("a"):ord("z") + 1] = _LETTER
_CLASS[ord("A"):ord("Z") + 1] = _LETTER
_CLASS[ord("0"):ord("9") + 1] = _DIGIT
_CLASS[ord("_")] = _UNDERSCORE
_CLASS[[ord("."), ord("'")]] = _JOIN_BOTH
_CLASS[ord(":")] = _JOIN_LETTERS
_CLASS[[ord(","), ord(";")]] = _JOIN_DIGITS
_CHUNK_CHARS = 8 << 20     # characters tokenized at once: bounds the per-byte arrays


def _chunks(values: list[str]) -> list[tuple[int, int]]:
    """Ranges of ``values`` of about ``_CHUNK_CHARS`` characters each (at least one)."""
    ends = np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)))
    cuts = np.searchsorted(ends, np.arange(_CHUNK_CHARS, int(ends[-1]) if len(ends) else 0,
                                           _CHUNK_CHARS), side="right").tolist()
    bounds = sorted(set([0] + [c for c in cuts if 0 < c < len(values)] + [len(values)]))
    return list(zip(bounds[:-1], bounds[1:]))


def _ascii_tokens(values: list[str], lo: int, hi: int, slow: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tokens of the ASCII values among ``values[lo:hi]`` as NumPy byte passes: their
    bytes one after the other, their lengths and their values' indices. A value with a token
    over ``MAX_TOKEN_LENGTH`` is marked ``slow`` instead (its tokens are split in Python).

    Few passes touch every byte (class lookup, token edges, the kept bytes); joiners and
    underscores are rare, so their rules look at their own positions only."""
    part = values[lo:hi]
    skip = slow[lo:hi]
    if skip.any():
        part = ["" if s else v for v, s in zip(part, skip.tolist())]
    joined = "\x00".join(part)
    if joined.count("\x00") != hi - lo - 1:
        raise TypeError("a value holds a NUL")
    raw = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    del joined
    cls = _CLASS[raw]
    tok = (cls - np.uint8(_LETTER)) <= _UNDERSCORE - _LETTER   # word bytes (0 wraps to 255)
    _join(cls, tok)
    del cls
    first, length = _runs(tok)                 # each token's bytes: raw[first:first + length]
    value_at = np.zeros(hi - lo, dtype=np.int64)   # each value's first byte in ``raw``
    np.cumsum(np.fromiter(map(len, part), dtype=np.int64, count=hi - lo)[:-1] + 1,
              out=value_at[1:])
    del part
    parent = np.searchsorted(value_at, first, side="right") - 1 + lo
    under = np.flatnonzero(raw == ord("_"))
    keep = _not_underscores(under, first, length)
    if len(first) and length.max() > MAX_TOKEN_LENGTH:
        long_values = np.unique(parent[length > MAX_TOKEN_LENGTH])
        slow[long_values] = True
        keep &= ~np.isin(parent, long_values)
    if not keep.all():                         # their bytes leave the token bytes
        tok[_bytes_of(first[~keep], length[~keep])] = False
        first, length, parent = first[keep], length[keep], parent[keep]
    data = raw[tok]
    np.bitwise_or(data, 0x20, out=data)        # lower case: no other token byte changes...
    if len(under):
        data[data == 0x7F] = ord("_")          # ...but ``_`` (0x5F), which turned DEL
    return data, length, parent


def _runs(tok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, length)`` of each run of True in ``tok``."""
    padded = np.zeros(len(tok) + 2, dtype=bool)     # a run never touches an end
    padded[1:-1] = tok
    edges = np.flatnonzero(padded[1:] != padded[:-1])   # starts and ends, alternating
    first = edges[0::2]
    return first, edges[1::2] - first


def _bytes_of(first: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The byte indices of the tokens at ``first`` (of ``length`` bytes each)."""
    total = int(length.sum())
    run_start = np.cumsum(length) - length
    return np.arange(total, dtype=np.int64) + np.repeat(first - run_start, length)


def _join(cls: np.ndarray, tok: np.ndarray) -> None:
    """Mark in ``tok`` the joiners between two letters (. ' :) or two digits (. ' , ;)."""
    at = np.flatnonzero(cls[1:-1] >= _JOIN_BOTH) + 1
    if not len(at):
        return
    mid, before, after = cls[at], cls[at - 1], cls[at + 1]
    letters = (before == _LETTER) & (after == _LETTER) & (mid != _JOIN_DIGITS)
    digits = (before == _DIGIT) & (after == _DIGIT) & (mid != _JOIN_LETTERS)
    tok[at[letters | digits]] = True


def _not_underscores(under: np.ndarray, first: np.ndarray, length: np.ndarray) -> np.ndarray:
    """bool per token: it holds a character other than ``_`` (underscores alone are no
    token); ``under``: the indices of the underscores, which are all inside tokens."""
    if not len(under):
        return np.ones(len(first), dtype=bool)
    owner = np.searchsorted(first, under, side="right") - 1
    return np.bincount(owner, minlength=len(first)) < length
