"""Term ids of many tokens at once: the distinct values sorted, and each value's rank.

A refresh assigns a term id to every token of a field (1.4M for half of GCIDE's ``text``). In
Python that is a dict built over all tokens, a sort of the distinct ones and a lookup per token
(~0.3 µs per token); Arrow's compute kernels do the same in C++ (hash-based dictionary encoding,
a sort of the dictionary, one NumPy gather): ~3× less CPU, the same ids.

Arrow sorts strings by their UTF-8 bytes, which is code point order, Python's order. Values
Arrow cannot take as UTF-8 strings (lone surrogates, non-strings) go the Python way. Arrow
allocates through the system allocator here, so the memory freed after a refresh goes back to
the OS with the rest (``segment.release_free_memory``), not into Arrow's own pool.
"""
from __future__ import annotations

import operator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

POOL = pa.system_memory_pool()
_INDEX_DTYPES = {"int32": np.int32, "int64": np.int64, "uint64": np.uint64}
_ARROW_FROM = 64     # fewer values: the Python passes are cheaper than Arrow's set-up


def ranked_ids(values: list[str]) -> tuple[list[str], np.ndarray]:
    """``(distinct, ids)``: the distinct ``values`` sorted, and the rank of each value among
    them as int32. O(V + U log U) for V values, U distinct."""
    if len(values) >= _ARROW_FROM:
        try:
            return _arrow_ids(values)
        except (pa.ArrowException, TypeError, UnicodeError):
            pass
    return _python_ids(values)


def _arrow_ids(values: list[str]) -> tuple[list[str], np.ndarray]:
    return arrow_ranked_ids(as_arrow(values))


def arrow_ranked_ids(arr: pa.Array) -> tuple[list[str], np.ndarray]:
    """:func:`ranked_ids` of an Arrow string array."""
    distinct, tids = _arrow_sorted(arr)
    return distinct.to_pylist(), tids


Utf8 = tuple[np.ndarray, np.ndarray]     # (data, offsets): strings as UTF-8 bytes and bounds


def ranked_utf8(values: list[str]) -> tuple[list[str] | Utf8, np.ndarray]:
    """:func:`ranked_ids`, the distinct values as Arrow's UTF-8 buffers when Arrow numbered
    them (``postings.TermDict.from_utf8`` reads them without a Python string per value)."""
    if len(values) >= _ARROW_FROM:
        try:
            return arrow_ranked_utf8(as_arrow(values))
        except (pa.ArrowException, TypeError, UnicodeError):
            pass
    return _python_ids(values)


def arrow_ranked_utf8(arr: pa.Array) -> tuple[Utf8, np.ndarray]:
    """:func:`ranked_utf8` of an Arrow string array (``column_tokens.py``'s tokens)."""
    distinct, tids = _arrow_sorted(arr)
    bufs = distinct.buffers()
    wide = pa.types.is_large_string(distinct.type)
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if wide else np.int32,
                            count=len(distinct) + 1 + distinct.offset)[distinct.offset:]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None \
        else np.zeros(0, dtype=np.uint8)
    return (data, offsets), tids


def _arrow_sorted(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """``(distinct, ids)``: the distinct strings of ``arr`` sorted (an Arrow array), and the
    rank of each value among them as int32."""
    encoded = pc.dictionary_encode(arr, memory_pool=POOL)
    del arr
    dictionary = encoded.dictionary
    order = pc.sort_indices(dictionary, memory_pool=POOL)
    rank = np.empty(len(dictionary), dtype=np.int32)
    rank[numpy_view(order)] = np.arange(len(dictionary), dtype=np.int32)
    tids = rank[numpy_view(encoded.indices)]
    return pc.take(dictionary, order, memory_pool=POOL), tids


def numpy_view(arr: pa.Array) -> np.ndarray:
    """A null-free Arrow integer array as a NumPy view (``to_numpy`` imports pandas)."""
    dtype = _INDEX_DTYPES[str(arr.type)]
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr) + arr.offset)[arr.offset:]


def as_arrow(values: list[str]) -> pa.Array:
    """``values`` as an Arrow string array, made from their UTF-8 bytes joined by NULs
    and split in C++. Not ``pa.array``: its first call imports pandas (~30 MiB per worker,
    allocated in the middle of a full write buffer's heap, so it also keeps freed pages)."""
    joined = "\x00".join(values)      # TypeError for a non-string
    if joined.count("\x00") != len(values) - 1:
        raise TypeError("a value holds a NUL")
    data = joined.encode()          # UnicodeEncodeError for a lone surrogate
    del joined
    offsets = np.array([0, len(data)], dtype=np.int64)
    one = pa.Array.from_buffers(pa.large_string(), 1,
                                [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pc.split_pattern(one, "\x00", memory_pool=POOL).values


def _python_ids(values: list[str]) -> tuple[list[str], np.ndarray]:
    ids: dict[str, int] = dict.fromkeys(values)   # type: ignore[arg-type]
    distinct = sorted(ids)
    ids.update(zip(distinct, range(len(distinct))))
    # one ``itemgetter`` call looks every value up in C (~20 % faster than ``map``)
    found = operator.itemgetter(*values)(ids) if len(values) > 1 else [ids[v] for v in values]
    return distinct, np.fromiter(found, dtype=np.int32, count=len(values))
