"""A shard's aggregation partials, computed from the columnar doc values of its matches.

:func:`collect` walks the request tree once. Each aggregation receives :class:`Rows` — per
segment, the matching documents and the *owner* (parent bucket) of each row — and answers a
partial (``partials.py``) indexed by owner; a bucket aggregation hands its children new rows
owned by its buckets. All of it is NumPy over rows: no Python per document or per bucket.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...errors import IllegalArgument
from ..dates import parse_date
from ..mapping import Mapping
from ..query.nodes import Query
from ..segment import Segment
from .parse import PIPELINE_TYPES, AggNode, AggRequest
from ..ip import stored_ip
from .range_histogram import check_range_agg
from .values import stored_kind

Matcher = Callable[[Query, Segment], np.ndarray]


@dataclass
class ShardView:
    """What aggregations read on a shard at one snapshot (built by the shard's query phase)."""

    index: str
    mapping: Mapping
    segments: list[Segment]           # segments with a visible document at the snapshot
    visible: list[np.ndarray]         # bool[n] per segment
    match: Matcher                    # bool[n] matches of a query in a segment (no visibility)
    path: str = ""                    # the nested path whose children these are ("": documents)
    outer: ShardView | None = None    # the view of the enclosing level (nested aggregations)


@dataclass
class Rows:
    """Rows to aggregate: per segment of the view, documents and the owner of each row."""

    docs: list[np.ndarray]
    owner: list[np.ndarray]
    n_owners: int
    scores: list[np.ndarray] | None = None   # the query's score of each row (top_hits)

    def take(self, parts: list[tuple[np.ndarray, np.ndarray]], n_owners: int) -> Rows:
        """Rows ``(row indices, new owners)`` per segment, as a child's rows."""
        return Rows([d[r] for d, (r, _) in zip(self.docs, parts)],
                    [o.astype(np.int64) for _, o in parts], n_owners,
                    None if self.scores is None else
                    [s[r] for s, (r, _) in zip(self.scores, parts)])


def collect(req: AggRequest, view: ShardView, matched: list[np.ndarray],
            scores: list[np.ndarray] | None = None) -> dict[str, Any]:
    """The partial of every top-level aggregation over ``matched`` (docs per segment, with
    their scores when known)."""
    rows = Rows(list(matched), [np.zeros(len(d), dtype=np.int64) for d in matched], 1, scores)
    return collect_level(req.nodes, view, rows)


#: Aggregation type -> its collector; ``bucket``, ``metric`` and ``composite`` register theirs
#: (they call back into :func:`collect_level` for sub-aggregations, so this module cannot
#: import them without a cycle). The package's ``__init__`` imports them all.
COLLECTORS: dict[str, Any] = {}


def collect_level(nodes: tuple[AggNode, ...], view: ShardView, rows: Rows) -> dict[str, Any]:
    """The partials of sibling aggregations over the same rows."""
    out: dict[str, Any] = {}
    for node in nodes:
        if node.type in PIPELINE_TYPES:   # the coordinator runs them on the reduced result
            continue
        fn = COLLECTORS.get(node.type)
        if fn is None:
            raise IllegalArgument(f"aggregation type [{node.type}] is not supported")
        out[node.name] = fn(node, view, rows)
    return out


def all_rows(view: ShardView) -> Rows:
    """Every visible document, one owner (``global``)."""
    docs = [np.flatnonzero(v) for v in view.visible]
    return Rows(docs, [np.zeros(len(d), dtype=np.int64) for d in docs], 1)


def field_kind(node: AggNode, view: ShardView) -> str:
    """The field's value kind for this aggregation; ``text`` fields refuse, as without
    fielddata in Elasticsearch; an unmapped field reads as its ``value_type`` (or none)."""
    ft = view.mapping.get(node.field) if node.field else None
    kind = stored_kind(ft)
    if kind == "text":
        raise IllegalArgument(
            f"Fielddata is disabled on [{node.field}] in [{view.index}]. Text fields are not "
            "optimised for operations that require per-document field data like aggregations "
            "and sorting, so these operations are disabled by default. Please use a keyword "
            "field instead. Alternatively, set fielddata=true on [{node.field}] in order to "
            "load field data by uninverting the inverted index. Note that this can use "
            "significant memory.".replace("{node.field}", str(node.field)))
    if kind in ("keyword", "boolean") and ft is not None and "format" in node.params:
        raise IllegalArgument(f"Field [{node.field}] of type [{ft.type}] does not support "
                              "custom formats")
    if kind == "unmapped":
        vt = node.params.get("value_type")
        by_type = {"string": "keyword", "keyword": "keyword", "long": "long",
                   "unsigned_long": "long",
                   "number": "double", "double": "double", "numeric": "double", "date": "date",
                   "boolean": "boolean"}
        m = node.params.get("missing")
        if vt is None and isinstance(m, (int, float)) and not isinstance(m, bool) \
                and node.type != "terms":   # a number stands in for a number
            return "double"
        return by_type.get(str(vt), "unmapped")
    if kind == "date" and ft is not None and ft.type == "date_nanos":
        return "date_nanos"
    if kind == "range":
        check_range_agg(node, ft)
    if ft is not None and ft.type == "completion":
        raise IllegalArgument(f"Fielddata is not supported on field [{node.field}] of type "
                              "[completion]")
    if ft is not None and ft.kind in ("geo", "binary") \
            and node.type not in ("missing", "value_count"):
        raise IllegalArgument(f"Field [{node.field}] of type [{ft.type}] is not supported for "
                              f"aggregation [{node.type}]")
    return kind


def missing_value(node: AggNode, view: ShardView, kind: str) -> Any:
    """The aggregation's ``missing`` value in the field's value space (None: not given)."""
    if "missing" not in node.params:
        return None
    m = node.params["missing"]
    ft = view.mapping.get(node.field or "") if kind == "keyword" else None
    if ft is not None and ft.type == "ip":     # an address, stored as its sortable key
        try:
            return stored_ip(str(m))
        except ValueError:
            raise IllegalArgument(f"'{m}' is not an IP string literal.") from None
    if kind in ("keyword", "unmapped"):
        return str(m).lower() if isinstance(m, bool) else str(m)
    if kind in ("date", "date_nanos"):
        return parse_date(m, view.mapping.get(node.field or "")) if not isinstance(
            m, (int, float)) else int(m)
    if kind == "boolean":
        return 1 if m in (True, "true") else 0
    try:
        return float(m) if kind == "double" else int(float(m))
    except (TypeError, ValueError):
        raise IllegalArgument(f"For input string: \"{m}\"") from None


def concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def group(owner: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(owner, key)`` pairs in (owner, key) order, and each input's group.

    Integer keys on a small grid (dictionary ranks, rounded dates) are counted with one
    ``bincount`` over ``owner × grid`` codes, O(p + grid); anything else takes one lexsort,
    O(p log p) for p pairs. Both answer the same arrays."""
    if len(owner) == 0:
        return owner[:0], key[:0], np.zeros(0, dtype=np.int64)
    dense = _dense_codes(owner, key)
    if dense is not None:
        return _group_dense(owner, key, *dense)
    order = np.lexsort((key, owner))
    o, k = owner[order], key[order]
    new = np.ones(len(o), dtype=bool)
    new[1:] = (o[1:] != o[:-1]) | (k[1:] != k[:-1])
    gid = np.cumsum(new) - 1
    inverse = np.empty(len(o), dtype=np.int64)
    inverse[order] = gid
    return o[new], k[new], inverse


#: the largest ``owners × grid`` counted densely (a bincount of this many int64 is ~8 MB)
DENSE_GROUPS = 1 << 20


def _dense_codes(owner: np.ndarray, key: np.ndarray
                 ) -> tuple[np.ndarray, int, int, int] | None:
    """``(code of each pair, grid size, key origin, key step)`` when the integer keys lie on
    a grid ``origin + step * i`` small enough to count densely (None: lexsort instead)."""
    if key.dtype.kind not in "iu" or owner.dtype.kind not in "iu" or len(key) < 64:
        return None
    kmin, kmax = int(key.min()), int(key.max())
    n_owners = int(owner.max()) + 1
    if int(owner.min()) < 0 or kmax - kmin >= 1 << 62 or kmax >= 1 << 63:
        return None
    shifted = key.astype(np.int64) - kmin
    step = 1
    if (kmax - kmin + 1) * n_owners > DENSE_GROUPS:
        step = int(np.gcd.reduce(shifted)) or 1
    span = (kmax - kmin) // step + 1
    if span * n_owners > DENSE_GROUPS:
        return None
    codes = owner.astype(np.int64) * span + (shifted // step if step > 1 else shifted)
    return codes, span, kmin, step


def _group_dense(owner: np.ndarray, key: np.ndarray, codes: np.ndarray, span: int, kmin: int, step: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = np.bincount(codes)
    present = np.flatnonzero(counts)
    gid = np.cumsum(counts > 0) - 1
    u_key = (present % span * step + kmin).astype(key.dtype)
    return (present // span).astype(owner.dtype), u_key, gid[codes]
