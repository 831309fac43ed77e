"""``top_hits`` at the coordinator: merge the shards' kept rows per owner, cut from/size once,
render hits as the search's hits look (``_index``, ``_id``, ``_score``, ``_source``, ``sort``)."""
from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from ...engine.aggs.parse import AggNode
from ...engine.aggs.tophits import sort_fields
from ...engine.source_filter import filter_source

if TYPE_CHECKING:
    from .reduce import Result


def reduce_top_hits(res: Result, got: list[tuple[Any, np.ndarray]]) -> None:
    """Rows of every shard with global owners; totals summed per owner."""
    totals = np.zeros(res.n, dtype=np.int64)
    rows: list[tuple[int, list[Any], int, dict[str, Any]]] = []
    for p, m in got:
        totals[m] += p.totals
        for o, key, tie, doc in zip(m[p.owner].tolist(), p.keys, p.ties, p.docs):
            rows.append((o, key, tie, doc))
    res.counts = totals
    res.extra = rows


def _compare(node: AggNode, a: tuple, b: tuple) -> int:
    for sf, x, y in zip(sort_fields(node), a[1], b[1]):
        if x == y:
            continue
        if x is None or y is None:    # missing last in both directions
            return 1 if x is None else -1
        c = -1 if x < y else 1
        return -c if sf.desc else c
    ka, kb = (a[3]["_index"], a[2]), (b[3]["_index"], b[2])
    return -1 if ka < kb else 1 if ka > kb else 0


def render_top_hits(node: AggNode, res: Result | None, owner: int | None) -> dict[str, Any]:
    rows = [r for r in (res.extra or []) if r[0] == owner] if res is not None else []
    rows.sort(key=functools.cmp_to_key(lambda a, b: _compare(node, a, b)))
    start = int(node.params.get("from", 0))
    rows = rows[start:start + int(node.params.get("size", 3))]
    by_score = all(sf.field == "_score" for sf in sort_fields(node))
    sf_filter = node.params["_source_filter"]
    hits = []
    for _, key, _, doc in rows:
        hit: dict[str, Any] = {"_index": doc["_index"], "_id": doc["_id"]}
        if "_nested" in doc:
            hit["_nested"] = doc["_nested"]
        if node.params.get("version"):
            hit["_version"] = doc["_version"]
        if node.params.get("seq_no_primary_term"):
            hit["_seq_no"], hit["_primary_term"] = doc["_seq_no"], 1
        hit["_score"] = doc["_score"] if by_score else None
        if sf_filter.enabled and doc["_source"] is not None:   # None: _source disabled
            src = orjson.loads(doc["_source"])
            hit["_source"] = src if sf_filter.is_identity else filter_source(
                src, sf_filter.includes, sf_filter.excludes)
        if not by_score:     # a ``_geo_distance`` without a point: "Infinity", as in ES
            hit["sort"] = [("Infinity" if v > 0 else "-Infinity")
                           if isinstance(v, float) and math.isinf(v) else v for v in key]
        hits.append(hit)
    total = int(res.counts[owner]) if res is not None and res.counts is not None \
        and owner is not None else 0
    max_score = max((h["_score"] for h in hits), default=None) if by_score else None
    return {"hits": {"total": {"value": total, "relation": "eq"}, "max_score": max_score,
                     "hits": hits}}
