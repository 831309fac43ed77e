"""``nested`` and ``reverse_nested`` on a shard: single-bucket aggregations that move the rows
between a document and its nested children (``engine/nested.py``).

``nested`` turns each row (a document, owned by a bucket) into the rows of its children at
``path`` — the same owner — in a view whose "segments" are the segments' ``NestedDocs``
blocks, so every other aggregation reads children exactly as it reads documents.
``reverse_nested`` goes back up to the root documents (or an enclosing nested ``path``); a
document counts once per bucket however many of its children were in it. All NumPy.
"""
from __future__ import annotations

import numpy as np

from ...errors import IllegalArgument
from ..nested import NestedDocs
from .collect import COLLECTORS, Rows, ShardView, collect_level, group
from .parse import AggNode
from .partials import Fixed


def _empty_block(path: str, seg: object) -> NestedDocs:
    z = np.zeros(0, dtype=np.int32)
    block = NestedDocs(path, "", z, z, z, {})
    block.segment = seg
    return block


def nested_view(view: ShardView, path: str) -> ShardView:
    """The children at ``path`` of the view's documents, segment by segment."""
    blocks = [seg.nested.get(path) or _empty_block(path, getattr(seg, "segment", seg))
              for seg in view.segments]
    root_vis = view.visible if view.outer is None else _root_visible(view)
    visible = [vis[b.root] for vis, b in zip(root_vis, blocks)]
    return ShardView(view.index, view.mapping, blocks, visible, view.match, path, view)  # type: ignore[arg-type]


def _root_visible(view: ShardView) -> list[np.ndarray]:
    while view.outer is not None:
        view = view.outer
    return view.visible


def _children_of(parents: np.ndarray, owners: np.ndarray, child_parent: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(children, owners)``: every child whose parent is among ``parents`` (rows may repeat
    a parent with several owners: a child is a row per owner). O((r + m) log r)."""
    order = np.argsort(parents, kind="stable")
    sp = parents[order]
    lo = np.searchsorted(sp, child_parent, side="left")
    hi = np.searchsorted(sp, child_parent, side="right")
    reps = hi - lo
    children = np.repeat(np.arange(len(child_parent), dtype=np.int64), reps)
    starts = np.repeat(lo, reps)
    within = np.arange(len(children), dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
    return children, owners[order[starts + within]]


def nested(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    path = node.params["path"]
    if path not in view.mapping.nested:
        if path in view.mapping.objects or path in view.mapping.fields:
            raise IllegalArgument(f"[nested] nested path [{path}] is not nested")
        return _single(node, view, rows, [np.zeros(0, dtype=np.int64)] * len(rows.docs),
                       [np.zeros(0, dtype=np.int64)] * len(rows.docs))
    inner = nested_view(view, path)
    docs, owners = [], []
    for si, block in enumerate(inner.segments):
        assert isinstance(block, NestedDocs)
        c, o = _children_of(rows.docs[si].astype(np.int64), rows.owner[si].astype(np.int64),
                            block.rows_in(view.path).astype(np.int64))
        docs.append(c)
        owners.append(o)
    return _single(node, inner, rows, docs, owners)


def reverse_nested(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    if view.outer is None:
        raise IllegalArgument(f"Reverse nested aggregation [{node.name}] can only be used "
                              "inside a [nested] aggregation")
    target = node.params.get("path") or ""
    up = view.outer
    while up is not None and up.path != target:
        up = up.outer
    if up is None:
        raise IllegalArgument(f"Reverse nested aggregation [{node.name}]: nested path "
                              f"[{target}] is not a parent of [{view.path}]")
    docs, owners = [], []
    for si, block in enumerate(view.segments):
        assert isinstance(block, NestedDocs)
        parents = block.rows_in(target)[rows.docs[si]].astype(np.int64)
        o, p, _ = group(rows.owner[si].astype(np.int64), parents)
        docs.append(p)
        owners.append(o)
    return _single(node, up, rows, docs, owners)


def _single(node: AggNode, view: ShardView, rows: Rows, docs: list[np.ndarray],
            owners: list[np.ndarray]) -> Fixed:
    """One bucket per owner holding the moved rows, and the sub-aggregations over them."""
    all_owners = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    counts = np.bincount(all_owners, minlength=rows.n_owners).astype(np.int64)
    part = Fixed(1, counts)
    if node.subs:
        part.subs = collect_level(node.subs, view, Rows(docs, owners, rows.n_owners))
    return part


COLLECTORS.update({"nested": nested, "reverse_nested": reverse_nested})
