"""The ``nested`` query: its parsing, its check against the mapping, and its evaluation.

Evaluation runs the inner query over the children at ``path`` (a ``NestedDocs`` block of the
segment, ``nested.py``) as over any segment, then joins the matching children to the documents
being searched — the root documents, or the enclosing nested level for multi-level nesting —
with ``score_mode`` (Lucene's ``ToParentBlockJoinQuery``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import IllegalArgument, ParsingError
from ..mapping import Mapping
from ..nested import SCORE_MODES, join_scores
from . import nodes as Q
from .parse_helpers import ParseState, bool_option, float_option, is_value, token_name

INNER_HITS_KEYS = ("from", "size", "sort", "_source", "name", "ignore_unmapped")
INNER_HITS_REFUSED = ("highlight", "explain", "version", "seq_no_primary_term", "fields",
                      "docvalue_fields", "stored_fields", "script_fields", "track_scores",
                      "collapse")


def parse_nested(body: dict[str, Any], st: ParseState,
                 parse: Callable[[Any, ParseState], Q.Query]) -> Q.Query:
    """``NestedQueryBuilder.fromXContent``: path, query, score_mode, ignore_unmapped,
    inner_hits, boost."""
    path: str | None = None
    inner: Q.Query | None = None
    opts: dict[str, Any] = {"score_mode": "avg", "ignore_unmapped": False, "boost": 1.0}
    inner_hits = None
    for key, value in body.items():
        if key == "query":
            if not isinstance(value, dict):
                raise ParsingError(f"[nested] query malformed, unexpected token "
                                   f"[{token_name(value)}]")
            inner = parse(value, st)
        elif key == "inner_hits":
            inner_hits = parse_inner_hits(value)
        elif not is_value(value):
            raise ParsingError(f"[nested] query does not support [{key}]")
        elif key == "path":
            path = str(value)
        elif key == "score_mode":
            if value not in SCORE_MODES:
                raise IllegalArgument(f"No score mode for child query [{value}] found")
            opts["score_mode"] = value
        elif key == "ignore_unmapped":
            opts["ignore_unmapped"] = bool_option("nested", key, value)
        elif key == "boost":
            opts["boost"] = float_option("nested", key, value)
        elif key != "_name":
            raise ParsingError(f"[nested] query does not support [{key}]")
    if inner is None:
        raise ParsingError("[nested] requires 'query' field")
    if path is None:
        raise ParsingError("[nested] requires 'path' field")
    return Q.Nested(path=path, query=inner, inner_hits=inner_hits, **opts)


def parse_inner_hits(value: Any) -> dict[str, Any]:
    """The options of ``inner_hits`` we implement; the others are refused by name."""
    if not isinstance(value, dict):
        raise ParsingError("[inner_hits] query malformed, no start_object after query name")
    for key in value:
        if key in INNER_HITS_REFUSED:
            raise IllegalArgument(f"[inner_hits] option [{key}] is not supported by this "
                                  "server")
        if key not in INNER_HITS_KEYS:
            raise ParsingError(f"[inner_hits] unknown field [{key}]")
    out = dict(value)
    if not isinstance(out.get("name", ""), str):
        raise ParsingError("[inner_hits] failed to parse field [name]")
    for key in ("from", "size"):
        got = out.get(key, 0 if key == "from" else 3)
        if isinstance(got, bool) or not isinstance(got, int) or got < 0:
            raise IllegalArgument(f"[inner_hits] [{key}] must be a non-negative integer, "
                                  f"got [{got}]")
        out[key] = got
    if out["from"] + out["size"] > 100:       # index.max_inner_result_window
        raise IllegalArgument(
            f"Inner result window is too large, the inner hit definition's [{out.get('name')}]'s "
            f"from + size must be less than or equal to: [100] but was [{out['from'] + out['size']}]. "
            "This limit can be set by changing the [index.max_inner_result_window] index level "
            "setting.")
    return out


def check_path(q: Q.Nested, mapping: Mapping, outer: str = "") -> bool:
    """Whether ``q.path`` is a nested field of ``mapping``; False when it is unmapped and
    ``ignore_unmapped`` (the query then matches nothing); otherwise ES's error."""
    if q.path in mapping.nested:
        return True
    if q.ignore_unmapped:
        return False
    if q.path in mapping.objects or q.path in mapping.fields:
        raise IllegalArgument(f"failed to create query: [nested] nested object under path "
                              f"[{q.path}] is not of nested type", es_type="query_shard_exception")
    raise IllegalArgument(f"failed to create query: [nested] failed to find nested object under "
                          f"path [{q.path}]", es_type="query_shard_exception")


def evaluate_nested(q: Q.Nested, seg: Any, ctx: Any,
                    evaluate: Callable[[Q.Query, Any, Any], tuple[np.ndarray, np.ndarray]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` over ``seg``'s documents (a segment or a nested block). O(children)."""
    block = seg.nested.get(q.path)
    if block is None:
        return np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=np.float32)
    mask, scores = evaluate(q.query, block, ctx)
    hits = np.flatnonzero(mask)
    rows = block.rows_in(getattr(seg, "path", ""))[hits]
    out_mask, out = join_scores(rows, scores[hits], seg.n, q.score_mode)
    if q.boost != 1.0:
        out = (out * np.float32(q.boost)).astype(np.float32)
    return out_mask, out


def child_matches(q: Q.Nested, seg: Any, row: int, ctx: Any,
                  evaluate: Callable[[Q.Query, Any, Any], tuple[np.ndarray, np.ndarray]]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(children, scores)``: the children at ``q.path`` of root row ``row`` that match —
    inner hits' candidates, in document order."""
    block = seg.nested.get(q.path)
    if block is None:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    mask, scores = evaluate(q.query, block, ctx)
    children = np.flatnonzero(mask & (block.root == row))
    return children, scores[children]
