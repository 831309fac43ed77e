"""Which documents of a segment belong to one slice (``nodes.Slice``).

Elasticsearch's ``TermsSliceQuery`` hashes each ``_id`` with Murmur3 (seed 7919) and keeps the
documents whose hash, ``floorMod`` the number of slices, is the slice id; ``DocValuesSliceQuery``
does the same with a numeric field's values. Both are pure functions of the document, so the
slices of one snapshot partition it: every document in exactly one slice (for ``field``: every
document with exactly one value; a document without one is in none, one with several values can
be in several — Elasticsearch's rule too). Python's ``hash()`` is salted per process and never
used. Cost: O(n · len(id)) per segment for ``_id``, O(values) for a field.
"""
from __future__ import annotations

import numpy as np

from ..segment import NumericField, Segment
from ..murmur3 import murmur3_32
from . import nodes as Q

SLICE_SEED = 7919


def id_slices(ids: list[str] | np.ndarray, max_: int) -> np.ndarray:
    """The slice (``0 <= s < max_``) of each ``_id``: Murmur3 of its UTF-8 bytes, floorMod."""
    return np.fromiter((murmur3_32(str(i).encode("utf-8"), SLICE_SEED) % max_ for i in ids),
                       dtype=np.int64, count=len(ids))


def slice_mask(q: Q.Slice, seg: Segment) -> np.ndarray:
    """bool[n]: the documents of ``seg`` in slice ``q.id`` of ``q.max``."""
    if q.field is None or q.field == "_id":
        return id_slices(seg.ids, q.max) == q.id
    fd = seg.fields.get(q.field)
    mask = np.zeros(seg.n, dtype=bool)
    if not isinstance(fd, NumericField) or not len(fd.values):
        return mask
    values = np.floor(fd.values).astype(np.int64) if fd.values.dtype.kind == "f" else fd.values
    mask[fd.value_docs[np.mod(values, q.max) == q.id]] = True
    return mask
