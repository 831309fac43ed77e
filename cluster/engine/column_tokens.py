"""The ``standard`` analyzer over a whole column of values at once, in Arrow's C++ kernels.

A refresh tokenizes every value of a text field; per value in Python that is ~2 µs plus a
Python string per token. Here the values that take ``standard_tokens``' first fast path
(ASCII, no joined tokens such as ``u.s.a`` or ``3.14``, no ``_``, no token over 255
characters) are lowercased and split in one kernel call each, and only the others go through
``standard_tokens`` one by one: the same tokens, in the same order, as an Arrow array that
``term_ids.arrow_ranked_ids`` numbers without making a Python string per token.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .analysis import MAX_TOKEN_LENGTH, get_analyzer, standard_tokens
from .postings import TermDict, sorted_ids, stable_order
from .term_ids import POOL, arrow_ranked_ids, as_arrow, numpy_view

# a joiner between two letters (. ' :) or two digits (. ' , ;): ``standard_tokens``' regex path
_JOINED = r"[a-z][.':][a-z]|[0-9][.',;][0-9]"


def text_term_ids(values: list[str], analyzer: str | None
                  ) -> tuple[TermDict, np.ndarray, np.ndarray]:
    """``(terms, ids, counts)`` of a text column: the distinct tokens of all ``values`` under
    ``analyzer``, the term id of each token (values one after the other) and how many tokens
    each value has. ``standard`` goes through Arrow when it can; every analyzer has its own
    Python function as well, which is the reference."""
    analyze = get_analyzer(analyzer)
    if analyze is standard_tokens and values:
        try:
            tokens, counts = standard_column(values)
            distinct, tids = arrow_ranked_ids(tokens)
            return TermDict(distinct), tids, counts
        except (pa.ArrowException, TypeError, UnicodeError):
            pass
    all_toks: list[str] = []
    counts_list: list[int] = []
    for v in values:
        toks = analyze(v)
        all_toks += toks
        counts_list.append(len(toks))
    terms, tids = sorted_ids(all_toks)
    return terms, tids, np.asarray(counts_list, dtype=np.int64)


def standard_column(values: list[str]) -> tuple[pa.Array, np.ndarray]:
    """``(tokens, counts)``: the ``standard`` tokens of every value one after the other, and
    how many each value has. Raises ``TypeError``/``UnicodeError`` when Arrow cannot take the
    values (a NUL inside one, a lone surrogate): the caller then tokenizes them in Python."""
    arr = as_arrow(values)
    lower = pc.ascii_lower(arr, memory_pool=POOL)
    fast = _bools(pc.and_not(pc.string_is_ascii(arr, memory_pool=POOL),
                             pc.or_(pc.match_substring_regex(lower, _JOINED, memory_pool=POOL),
                                    pc.match_substring(arr, "_", memory_pool=POOL))))
    del arr
    lists = pc.split_pattern_regex(lower, "[^a-z0-9]+", memory_pool=POOL)
    del lower
    flat = pc.list_flatten(lists, memory_pool=POOL)
    parents = numpy_view(pc.list_parent_indices(lists, memory_pool=POOL)).astype(np.int64)
    del lists
    lengths = numpy_view(pc.binary_length(flat, memory_pool=POOL))
    fast[parents[lengths > MAX_TOKEN_LENGTH]] = False
    keep = (lengths > 0) & fast[parents]
    slow = np.flatnonzero(~fast)
    slow_tokens: list[str] = []
    slow_parents: list[int] = []
    for i in slow.tolist():
        toks = standard_tokens(values[i])
        slow_tokens += toks
        slow_parents += [i] * len(toks)
    kept_parents = parents[keep]
    tokens = pc.filter(flat, _mask(keep), memory_pool=POOL)
    if slow_tokens:
        all_parents = np.concatenate((kept_parents, np.asarray(slow_parents, dtype=np.int64)))
        both = pa.concat_arrays([tokens, as_arrow(slow_tokens)], memory_pool=POOL)
        order = stable_order(all_parents.astype(np.int32))
        tokens = pc.take(both, pa.Array.from_buffers(
            pa.int64(), len(order), [None, pa.py_buffer(order.astype(np.int64))]),
            memory_pool=POOL)
        kept_parents = all_parents
    counts = np.bincount(kept_parents, minlength=len(values))
    return tokens, counts


def _bools(arr: pa.Array) -> np.ndarray:
    """A null-free Arrow boolean array as a writable NumPy bool array."""
    bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[arr.offset:arr.offset + len(arr)].astype(bool)


def _mask(keep: np.ndarray) -> pa.Array:
    """A NumPy bool array as an Arrow boolean array (``pa.array`` would import pandas)."""
    bits = np.packbits(keep, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(keep), [None, pa.py_buffer(bits)])
