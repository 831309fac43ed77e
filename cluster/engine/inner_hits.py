"""``inner_hits`` of ``nested`` queries: for each hit of the page, its children that matched.

Asked after the query phase, for the page's hits only (as ``explain`` is), with the query and
global statistics the query phase scored with — so children's scores are those the nested
query joined. Per hit and per ``nested`` query with ``inner_hits``: the matching children in
``sort`` order (``_score`` descending by default; ties by their place in the document), cut to
``from``/``size``, each with ``_nested`` and its own ``_source`` (the object inside the root's).
"""
from __future__ import annotations

import math

from types import SimpleNamespace
from typing import Any

import numpy as np

from ..errors import IllegalArgument
from .aggs.collect import Rows
from .aggs.tophits import _column, _py, _rank
from .nested import NestedDocs
from .query import nodes as Q
from .query.context import Context
from .query.matching import evaluate
from .query.rewrite import expand
from .sorting import SortField, parse_sort
from .source_filter import filter_source, parse_source


def _children(q: Q.Query) -> tuple[Q.Query, ...]:
    if isinstance(q, Q.Bool):
        return q.must + q.should + q.filter + q.must_not
    if isinstance(q, Q.DisMax):
        return q.queries
    if isinstance(q, Q.ConstantScore):
        return (q.filter,)
    return ()


def inner_hit_queries(q: Q.Query) -> list[Q.Nested]:
    """The ``nested`` queries of ``q`` that ask for inner hits (not inside another one)."""
    if isinstance(q, Q.Nested):
        return [q] if q.inner_hits is not None else []
    return [n for s in _children(q) for n in inner_hit_queries(s)]


def _any_inner_hits(q: Q.Query) -> bool:
    if isinstance(q, Q.Nested):
        return q.inner_hits is not None or _any_inner_hits(q.query)
    return any(_any_inner_hits(s) for s in _children(q))


def check_inner_hits(q: Q.Query) -> None:
    """Names are unique (Elasticsearch: ``[inner_hits] already contains an entry for key``);
    inner hits of a nested query inside another nested query are refused by name; ``sort``
    and ``_source`` are checked."""
    seen: set[str] = set()
    for node in inner_hit_queries(q):
        name = node.inner_hits.get("name") or node.path
        if name in seen:
            raise IllegalArgument(f"[inner_hits] already contains an entry for key [{name}]")
        seen.add(name)
        parse_sort(node.inner_hits.get("sort"))      # refused here, not on the shards
        parse_source(node.inner_hits.get("_source"))
        if _any_inner_hits(node.query):
            raise IllegalArgument("[inner_hits] of a nested query inside another nested "
                                  "query are not supported by this server")


def shard_inner_hits(core: Any, query: Q.Query, stats: Any, addrs: list[int]
                     ) -> list[dict[str, Any]]:
    """Per address of the page, ``{name: {"hits": ...}}`` (Elasticsearch's ``inner_hits``).
    O(children at the path) per query and segment, then O(children of the hit) per hit."""
    expanded = expand(query, core.mapping)
    ctx = Context(mapping=core.mapping, stats=stats, index_name=core.index)
    nodes = inner_hit_queries(expanded)
    matched: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    out = []
    for a in addrs:
        seg, row = core.by_uid[int(a) >> 32], int(a) & 0xFFFFFFFF
        per: dict[str, Any] = {}
        for k, node in enumerate(nodes):
            block = seg.nested.get(node.path)
            name = node.inner_hits.get("name") or node.path
            if block is None:
                per[name] = _render(node, None, np.zeros(0, np.int64), np.zeros(0), core.index,
                                    core.mapping.source_enabled)
                continue
            if (k, seg.uid) not in matched:
                matched[(k, seg.uid)] = evaluate(node.query, block, ctx)
            mask, scores = matched[(k, seg.uid)]
            children = np.flatnonzero(mask & (block.rows_in("") == row))
            per[name] = _render(node, block, children, scores[children], core.index,
                                core.mapping.source_enabled, core.mapping)
        out.append(per)
    return out


def _render(node: Q.Nested, block: NestedDocs | None, children: np.ndarray,
            scores: np.ndarray, index: str, show_source: bool = True,
            mapping: Any = None) -> dict[str, Any]:
    opts = node.inner_hits
    sorts = parse_sort(opts.get("sort")) or (SortField("_score", "desc"),)
    by_score = all(sf.field == "_score" for sf in sorts)
    keys: list[list[Any]] = []
    if block is not None and len(children):
        view = SimpleNamespace(segments=[block], mapping=mapping)
        rows = Rows([children], [np.zeros(len(children), np.int64)], 1,
                    [scores.astype(np.float32)])
        cols = [_column(sf, view, rows) for sf in sorts]   # type: ignore[arg-type]
        ranks = [_rank(c, sf.desc) for sf, c in zip(sorts, cols)]
        order = np.lexsort(tuple([children] + list(reversed(ranks))))
        order = order[opts["from"]:opts["from"] + opts["size"]]
        keys = [[_py(c[i]) for c in cols] for i in order.tolist()]
    else:
        order = np.zeros(0, dtype=np.int64)
    source = parse_source(opts.get("_source"))
    hits = []
    for i, key in zip(order.tolist(), keys):
        assert block is not None
        c = int(children[i])
        hit: dict[str, Any] = {"_index": index, "_id": str(block.ids[c]),
                               "_nested": block.identity(c),
                               "_score": float(scores[i]) if by_score else None}
        if source.enabled and show_source:   # False: the mapping's _source is disabled
            hit["_source"] = _child_source(block, c, source)
        if not by_score:     # a ``_geo_distance`` without a point: "Infinity", as in ES
            hit["sort"] = [("Infinity" if v > 0 else "-Infinity")
                           if isinstance(v, float) and math.isinf(v) else v for v in key]
        hits.append(hit)
    max_score = float(scores.max()) if by_score and len(scores) else None
    return {"hits": {"total": {"value": int(len(children)), "relation": "eq"},
                     "max_score": max_score, "hits": hits}}


def _child_source(block: NestedDocs, c: int, source: Any) -> Any:
    """The child's object, filtered with full paths (``comments.author``) as in ES."""
    obj = block.child_source(c)
    if source.is_identity:
        return obj
    wrapped: Any = obj
    for part in reversed(block.path.split(".")):
        wrapped = {part: wrapped}
    got = filter_source(wrapped, source.includes, source.excludes)
    for part in block.path.split("."):
        got = got.get(part, {}) if isinstance(got, dict) else {}
    return got
