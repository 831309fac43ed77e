"""``top_hits`` on a shard: per owner, its first ``from + size`` rows in the sort order, with
their documents.

The transfer is bounded by owners × (from + size) documents; the coordinator merges the
shards' lists per owner and cuts once (the same from/size rule as the search's hits). Sort
keys: ``_score`` (the default), ``_doc``, or fields (numbers, dates, keywords; a document's
smallest value ascending, largest descending; missing last), ties by sequence number.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..geo_sort import geo_sort_values
from ..sorting import SortField, parse_sort
from .collect import Rows, ShardView, concat
from .parse import AggNode
from ..nested import NestedDocs
from ..segment import KeywordField, NumericField


@dataclass
class TopHits:
    """The kept rows of each owner, and how many rows each owner had."""

    owner: np.ndarray
    keys: list[list[Any]]        # sort values per kept row (None: missing)
    ties: list[int]              # sequence number per kept row
    docs: list[dict[str, Any]]   # _index, _id, _score, _source (bytes), _version, _seq_no
    totals: np.ndarray           # rows per owner
    value_kind: str = "top_hits"


def sort_fields(node: AggNode) -> tuple[SortField, ...]:
    return parse_sort(node.params.get("sort")) or (SortField("_score", "desc"),)


def _column(sf: SortField, view: ShardView, rows: Rows) -> np.ndarray:
    """The sort value of each row (object; None when missing): a document's smallest value
    ascending, its largest descending; ``_score`` negated when descending."""
    parts = []
    for si, seg in enumerate(view.segments):
        docs = rows.docs[si]
        if sf.field == "_score":
            v = (rows.scores[si].astype(np.float64) if rows.scores is not None
                 else np.ones(len(docs)))
            parts.append(v)
            continue
        if sf.field == "_doc":
            parts.append(seg.seq[docs].astype(np.float64))
            continue
        if sf.geo is not None:     # ``_geo_distance`` (``geo_sort.py``)
            parts.append(geo_sort_values(sf, seg, docs, view.mapping))
            continue
        fd = seg.fields.get(sf.field)
        vals = np.full(len(docs), None, dtype=object)
        if isinstance(fd, NumericField):
            ok = fd.present[docs]
            vals[ok] = (fd.max if sf.desc else fd.min)[docs][ok]
        elif isinstance(fd, KeywordField) and len(fd.postings.terms):
            ords = (fd.max_ord if sf.desc else fd.min_ord)[docs]
            ok = ords >= 0
            vals[ok] = fd.sorted_values[ords[ok]]
        parts.append(vals)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


def _rank(col: np.ndarray, desc: bool) -> np.ndarray:
    """Ascending ranks with missing (None/NaN) last, descending values first when ``desc``."""
    present = np.array([x is not None and x == x for x in col.tolist()], dtype=bool)
    out = np.full(len(col), np.iinfo(np.int64).max, dtype=np.int64)
    if present.any():
        vals = col[present]
        _, inv = np.unique(vals.astype(object if vals.dtype == object else np.float64),
                           return_inverse=True)
        inv = inv.reshape(-1).astype(np.int64)
        out[present] = -inv if desc else inv
    return out


def top_hits(node: AggNode, view: ShardView, rows: Rows) -> TopHits:
    k = int(node.params.get("from", 0)) + int(node.params.get("size", 3))
    owner = concat(rows.owner, np.int64)
    seqs = concat([seg.seq[d] for seg, d in zip(view.segments, rows.docs)], np.int64)
    seg_of = concat([np.full(len(d), i, dtype=np.int64) for i, d in enumerate(rows.docs)],
                    np.int64)
    doc_of = concat(list(rows.docs), np.int64)
    sorts = sort_fields(node)
    cols = [_column(sf, view, rows) for sf in sorts]
    ranks = [_rank(c, sf.desc) for sf, c in zip(sorts, cols)]
    order = np.lexsort(tuple([seqs] + list(reversed(ranks)) + [owner])) if len(owner) \
        else np.zeros(0, dtype=np.int64)
    o = owner[order]
    start = np.searchsorted(o, o, side="left")
    keep = order[(np.arange(len(o)) - start) < k]
    scores = concat(list(rows.scores), np.float32) if rows.scores is not None else None
    docs = []
    for i in keep.tolist():
        seg, doc = view.segments[int(seg_of[i])], int(doc_of[i])
        docs.append({"_index": view.index, "_id": str(seg.ids[doc]),
                     "_score": float(scores[i]) if scores is not None else 1.0,
                     "_source": seg.sources[doc] if view.mapping.source_enabled else None,
                     "_version": int(seg.version[doc]),
                     "_seq_no": int(seg.seq[doc])})
        if isinstance(seg, NestedDocs):   # a child: its place in the root's _source
            docs[-1]["_nested"] = seg.identity(doc)
    keys = [[_py(c[i]) for c in cols] for i in keep.tolist()]
    return TopHits(owner[keep], keys, seqs[keep].tolist(), docs,
                   np.bincount(owner, minlength=rows.n_owners).astype(np.int64))


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
