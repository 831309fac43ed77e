"""The fetch phase on a shard: the documents at a page's addresses.

Grouped by segment so that each segment's columns are read with one NumPy gather per column
and its ``_source`` blocks are decompressed once (or found in the shard's ``BlockCache``),
instead of a lookup per hit and per column.
"""
from __future__ import annotations

import numpy as np

from .segment import NoRouting, Segment, ignored_fields
from .shard_messages import FetchedDoc
from .source_cache import BlockCache


def fetch_page(by_uid: dict[int, Segment], addrs: list[int],
               cache: BlockCache | None) -> list[FetchedDoc]:
    """The documents at ``addrs`` (segment uid in the high 32 bits, row in the low ones), in
    the order given. O(len(addrs) log len(addrs)) plus the blocks read."""
    if not addrs:
        return []
    arr = np.asarray(addrs, dtype=np.int64)
    uids = arr >> 32
    if (uids == uids[0]).all():   # the common case: one segment
        return _segment_docs(by_uid[int(uids[0])], arr & 0xFFFFFFFF, cache)
    out: list[FetchedDoc | None] = [None] * len(addrs)
    for uid in np.unique(uids).tolist():
        pos = np.flatnonzero(uids == uid)
        seg = by_uid[uid]
        rows = arr[pos] & 0xFFFFFFFF
        docs = _segment_docs(seg, rows, cache)
        for p, doc in zip(pos.tolist(), docs):
            out[p] = doc
    return out   # type: ignore[return-value]


def _segment_docs(seg: Segment, rows: np.ndarray, cache: BlockCache | None
                  ) -> list[FetchedDoc]:
    """The documents at ``rows`` of one segment."""
    rl = rows.tolist()
    sources = seg.sources.take(rl, cache, seg.uid)
    routing = ([None] * len(rl) if isinstance(seg.routing, NoRouting)
               else [seg.routing[i] for i in rl])
    return list(map(FetchedDoc, seg.ids[rows].tolist(), sources, seg.version[rows].tolist(),
                    seg.seq[rows].tolist(), routing,
                    [ignored_fields(seg, i) for i in rl] if "_ignored" in seg.fields
                    else [()] * len(rl)))

