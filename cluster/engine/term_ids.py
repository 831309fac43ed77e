"""Term ids of many tokens at once: the distinct values sorted, and each value's rank.

A refresh assigns a term id to every token of a field (2.8M for half of GCIDE's ``text``). In
Python that is a dict built over all tokens, a sort of the distinct ones and a lookup per token
(~0.3 µs per token). Here the tokens are UTF-8 bytes with their bounds (``Utf8``), and NumPy
passes number them: each token's first 16 bytes as two big-endian words (longer tokens, rare,
also get the rank of their whole bytes), an open-addressing hash table filled by vectorised
linear probing, then a sort of the distinct keys only. About Arrow's CPU for its hash encoding,
without loading Arrow (~20 MiB per shard process) — the same ids.

UTF-8 byte order is code point order, Python's order, and zero padding keeps it (a token holds
no NUL byte). Values that cannot be UTF-8 (lone surrogates, non-strings) or that hold a NUL go
the Python way.
"""
from __future__ import annotations

import operator

import numpy as np

Utf8 = tuple[np.ndarray, np.ndarray]     # (data, offsets): strings as UTF-8 bytes and bounds
_COLUMN_FROM = 64     # fewer values: the Python passes are cheaper than the column passes
_FIRST_BITS = 20      # the hash table's first size at most (2^20 slots: 32 MiB while used)
_MAX_BITS = 21        # and its largest (64 MiB): more distinct tokens are grouped by a sort
_MASK = np.array([0] + [((1 << (8 * n)) - 1) << (8 * (8 - n)) for n in range(1, 9)],
                 dtype=np.uint64)     # the first n bytes of a big-endian word
_MIX = (np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
_FMIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))


def ranked_ids(values: list[str]) -> tuple[list[str], np.ndarray]:
    """``(distinct, ids)``: the distinct ``values`` sorted, and the rank of each value among
    them as int32. O(V + U log U) for V values, U distinct."""
    distinct, ids = ranked_utf8(values)
    return (utf8_list(distinct) if isinstance(distinct, tuple) else distinct), ids


def ranked_utf8(values: list[str]) -> tuple[list[str] | Utf8, np.ndarray]:
    """:func:`ranked_ids`, the distinct values as UTF-8 bytes and bounds when the column
    passes numbered them (``postings.TermDict.from_utf8`` reads them without a Python string
    per value)."""
    if len(values) >= _COLUMN_FROM:
        try:
            return ranked_utf8_column(utf8_of(values))
        except (TypeError, UnicodeError):
            pass
    return _python_ids(values)


def ranked_utf8_column(tokens: Utf8) -> tuple[Utf8, np.ndarray]:
    """``(distinct, ids)`` of UTF-8 tokens: the distinct ones sorted by their bytes, and each
    token's rank among them as int32. Tokens of 1 to 8 bytes (most words) are keyed by one
    word in a table of their own; the others by two words and their tail's rank."""
    data, offsets = tokens
    starts, lengths = offsets[:-1], np.diff(offsets)
    if np.count_nonzero(lengths > 16) * 8 > len(lengths):   # mostly long values (keywords):
        distinct, ids = _python_ids(utf8_list(tokens))     # their tails are ranked in
        return utf8_of(distinct), ids                        # Python anyway
    padded = np.concatenate([data, np.zeros(16, dtype=np.uint8)])
    hi = _words(padded, starts, np.minimum(lengths, 8))
    short = (lengths > 0) & (lengths <= 8)
    groups = [(np.flatnonzero(short), (hi[short],))]
    if not short.all():
        rest = np.flatnonzero(~short)
        groups.append((rest, (hi[rest], _words(padded, starts[rest] + 8,
                                              np.clip(lengths[rest] - 8, 0, 8)),
                              _tail_ranks(data, starts[rest], lengths[rest]))))
    found = [(at, *_slots(keys)) for at, keys in groups]
    columns: list[list[np.ndarray]] = [[], [], []]
    first, where = [], []
    for at, slots, table, owner in found:
        filled = np.flatnonzero(owner >= 0)
        for c in range(3):                  # a short token's key is (word, 0, 0)
            columns[c].append(table[c][filled] if c < len(table) else
                              np.zeros(len(filled), dtype=np.uint64))
        first.append(at[owner[filled]])     # a token holding each slot's term
        pos = np.empty(len(table[0]), dtype=np.int64)
        pos[filled] = np.arange(len(filled)) + sum(len(f) for f in first[:-1])
        where.append(pos[slots])
    keys = [np.concatenate(c) for c in columns]
    order = np.lexsort((keys[2], keys[1], keys[0]))
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    ids = np.empty(len(lengths), dtype=np.int32)
    for (at, *_), pos in zip(found, where):
        ids[at] = rank[pos]
    return take_utf8(tokens, np.concatenate(first)[order]), ids


def _words(padded: np.ndarray, at: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The big-endian 8-byte word at each of ``at`` in ``padded``, keeping its first ``keep``
    bytes (the rest zero): one gather through an unaligned view, one mask."""
    view = np.ndarray(shape=(len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    return view[at].astype(np.uint64) & _MASK[keep]


def _tail_ranks(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """1 + each token's rank among the distinct tokens, for the tokens over 16 bytes (their
    first 16 bytes do not tell them apart); 1 for the others. Such tokens are rare."""
    tail = np.ones(len(starts), dtype=np.uint64)
    longer = np.flatnonzero(lengths > 16)
    if len(longer):
        raw = data.tobytes()
        toks = [raw[s:s + n] for s, n in zip(starts[longer].tolist(), lengths[longer].tolist())]
        rank = {t: r for r, t in enumerate(sorted(set(toks)), start=2)}
        tail[longer] = np.fromiter(map(rank.__getitem__, toks), dtype=np.uint64,
                                   count=len(toks))
    return tail


Keys = tuple[np.ndarray, ...]


def _slots(keys: Keys) -> tuple[np.ndarray, Keys, np.ndarray]:
    """Each key's slot in an open-addressing table (equal keys, equal slots), the table's key
    columns and each slot's owner (a token holding its key; -1: empty). Linear probing, all
    keys at once: each pass gives each free slot one of the pending tokens after it, keeps the
    tokens now found, and moves the others one slot on. The table grows when half full."""
    bits = min(max(10, (2 * len(keys[0])).bit_length()), _FIRST_BITS)   # room for all
    while bits <= _MAX_BITS:
        found = _probe(keys, bits)
        if found is not None:
            return found
        bits += 1
    return _sorted_groups(keys)


def _sorted_groups(keys: Keys) -> tuple[np.ndarray, Keys, np.ndarray]:
    """:func:`_slots`' answer by a sort instead of a table, for vocabularies too large for
    one (a merge's union of term lists): O(n log n) time, O(n) memory; each distinct key is
    its own slot."""
    order = np.lexsort(keys[::-1]) if len(keys) > 1 else np.argsort(keys[0], kind="stable")
    new = np.ones(len(order), dtype=bool)
    for k in keys:
        col = k[order]
        new[1:] &= col[1:] == col[:-1]
    new[1:] = ~new[1:]
    group = np.cumsum(new) - 1
    slots = np.empty(len(order), dtype=np.int64)
    slots[order] = group
    owner = order[new]
    return slots, tuple(k[owner] for k in keys), owner


def _probe(keys: Keys, bits: int) -> tuple[np.ndarray, Keys, np.ndarray] | None:
    """``(slots, table, owner)`` with a table of ``2**bits`` slots, None once half full;
    ``owner``: the token whose key each slot holds (-1: empty)."""
    size = 1 << bits
    table = tuple(np.zeros(size, dtype=np.uint64) for _ in keys)
    owner = np.full(size, -1, dtype=np.int64)
    hashed = _mixed(*keys) if len(keys) == 3 else _mixed(keys[0], keys[0], keys[0])
    slots = (hashed >> np.uint64(64 - bits)).astype(np.int64)
    pending = np.arange(len(keys[0]), dtype=np.int64)
    s = slots
    into, new = s, pending                  # the table is empty: every slot is free
    filled = 0
    while True:
        owner[into] = new                   # one of the tokens after a free slot wins it,
        won = owner[into]                   # and the slot takes that token's key whole
        filled += int(np.count_nonzero(won == new))
        for t, k in zip(table, keys):
            t[into] = k[won]
        here = table[0][s] == keys[0][pending]
        for t, k in zip(table[1:], keys[1:]):
            here &= t[s] == k[pending]
        pending = pending[~here]
        if filled > size // 2:
            return None
        if not len(pending):
            return slots, table, owner
        slots[pending] = (slots[pending] + 1) & (size - 1)
        s = slots[pending]
        free = owner[s] < 0
        into, new = s[free], pending[free]


def _mixed(hi: np.ndarray, lo: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each key whose every bit depends on every input bit (MurmurHash3's
    finalizer): a short token's word has only its high bytes set, which a multiplication
    alone would leave in few distinct top bits, all in one cluster of slots."""
    x = hi ^ (lo * _MIX[0]) ^ (tail * _MIX[1])
    x ^= x >> np.uint64(33)
    x *= _FMIX[0]
    x ^= x >> np.uint64(33)
    x *= _FMIX[1]
    x ^= x >> np.uint64(33)
    return x


def take_utf8(tokens: Utf8, index: np.ndarray) -> Utf8:
    """The tokens at ``index``, in that order."""
    data, offsets = tokens
    lengths = np.diff(offsets)[index]
    out = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    at = np.arange(int(out[-1]), dtype=np.int64) + np.repeat(offsets[index] - out[:-1], lengths)
    return data[at], out


def concat_utf8(a: Utf8, b: Utf8) -> Utf8:
    """The tokens of ``a``, then those of ``b`` (each may be a slice of a larger buffer)."""
    a_data, b_data = a[0][a[1][0]:a[1][-1]], b[0][b[1][0]:b[1][-1]]
    return (np.concatenate([a_data, b_data]),
            np.concatenate([a[1] - a[1][0], b[1][1:] - b[1][0] + len(a_data)]))


def utf8_of(values: list[str]) -> Utf8:
    """``values`` as UTF-8 bytes and bounds: joined by NULs, encoded once, cut at the NULs.
    ``TypeError`` for a non-string or a NUL inside a value, ``UnicodeError`` for a lone
    surrogate."""
    if not values:
        return np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    joined = "\x00".join(values)      # TypeError for a non-string
    if joined.count("\x00") != len(values) - 1:
        raise TypeError("a value holds a NUL")
    raw = np.frombuffer(joined.encode(), dtype=np.uint8)   # UnicodeEncodeError: a surrogate
    del joined
    nul = raw == 0
    offsets = np.empty(len(values) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:-1] = np.flatnonzero(nul) + 1 - np.arange(1, len(values), dtype=np.int64)
    offsets[-1] = len(raw) - (len(values) - 1)
    return raw[~nul], offsets


def utf8_list(tokens: Utf8) -> list[str]:
    """The tokens as Python strings."""
    data, offsets = tokens
    raw = data.tobytes()
    bounds = offsets.tolist()
    return [raw[a:b].decode("utf-8") for a, b in zip(bounds[:-1], bounds[1:])]


def _python_ids(values: list[str]) -> tuple[list[str], np.ndarray]:
    ids: dict[str, int] = dict.fromkeys(values)   # type: ignore[arg-type]
    distinct = sorted(ids)
    ids.update(zip(distinct, range(len(distinct))))
    # one ``itemgetter`` call looks every value up in C (~20 % faster than ``map``)
    found = operator.itemgetter(*values)(ids) if len(values) > 1 else [ids[v] for v in values]
    return distinct, np.fromiter(found, dtype=np.int32, count=len(values))
