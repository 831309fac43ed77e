"""Field collapsing on one shard: the best document of each group, in the global order.

A group is the set of matches sharing one value of the collapse field (a keyword or a number
with doc values; documents without a value form one group whose key is ``null``, as in
Elasticsearch). The shard keeps the first row of each group in the search's order, so that
the coordinator, merging the shards' group leaders in the same order and keeping the first of
each key again, finds every group's global best — exact for any number of shards.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import IllegalArgument
from .mapping import Mapping
from .segment import KeywordField, NumericField


def check_collapse_field(field: str, mapping: Mapping, index: str) -> None:
    """Elasticsearch 8's refusals (``CollapseBuilder.build``): unmapped, not a keyword or a
    number (``collapseType`` NONE), or without doc values."""
    ft = mapping.get(field)
    if ft is None:
        raise IllegalArgument(f"no mapping found for `{field}` in order to collapse on",
                              es_type="illegal_argument_exception", index=index)
    if ft.type != "keyword" and ft.kind != "numeric":
        raise IllegalArgument(f"collapse is not supported for the field [{field}] of the type "
                              f"[{ft.type}]", index=index)
    if not ft.doc_values:
        raise IllegalArgument(f"cannot collapse on field `{field}` without `doc_values`",
                              index=index)


def group_values(segments_by_uid: dict[int, Any], field: str, addr: np.ndarray) -> list[Any]:
    """The collapse key of each address (None when the document has no value).

    A multi-valued document is refused, as Elasticsearch does."""
    out: list[Any] = [None] * len(addr)
    uids = addr >> np.int64(32)
    rows = (addr & np.int64(0xFFFFFFFF)).astype(np.int64)
    for uid in np.unique(uids):
        where = np.flatnonzero(uids == uid)
        seg = segments_by_uid[int(uid)]
        fd = seg.fields.get(field)
        r = rows[where]
        if isinstance(fd, KeywordField):
            if (fd.value_count[r] > 1).any():
                raise _multi_valued(field)
            ords = fd.min_ord[r]
            vals = fd.sorted_values
            for w, o in zip(where.tolist(), ords.tolist()):
                out[w] = vals[o] if o >= 0 else None
        elif isinstance(fd, NumericField):
            if len(fd.values) > int(fd.present.sum()) and \
                    (np.bincount(fd.value_docs, minlength=len(fd.present))[r] > 1).any():
                raise _multi_valued(field)
            present = fd.present[r]
            vals = fd.min[r].tolist()
            for w, p, v in zip(where.tolist(), present.tolist(), vals):
                out[w] = v if p else None
    return out


def _multi_valued(field: str) -> IllegalArgument:
    return IllegalArgument(f"failed to collapse field `{field}`, the collapse field must be "
                           "single valued")


def first_of_groups(segments_by_uid: dict[int, Any], field: str, addr: np.ndarray,
                    ordered_rows: np.ndarray, k: int, chunk: int = 4096
                    ) -> tuple[np.ndarray, list[Any]]:
    """Of rows already in the search's order, the first of each group until ``k`` groups,
    and their keys. Reads the keys a chunk at a time, so a page of groups near the top costs
    little more than those rows; O(m) for m rows at worst."""
    seen: set[Any] = set()
    keep: list[int] = []
    keys: list[Any] = []
    for start in range(0, len(ordered_rows), chunk):
        part = ordered_rows[start:start + chunk]
        for r, key in zip(part.tolist(), group_values(segments_by_uid, field, addr[part])):
            h = _hashable(key)
            if h in seen:
                continue
            seen.add(h)
            keep.append(r)
            keys.append(key)
            if len(keep) >= k:
                return np.asarray(keep, dtype=np.int64), keys
    return np.asarray(keep, dtype=np.int64), keys


def first_per_key(keys: list[Any]) -> list[int]:
    """Positions of the first occurrence of each key (the coordinator's dedup of the shards'
    group leaders, already merged in the global order)."""
    seen: set[Any] = set()
    out = []
    for i, key in enumerate(keys):
        h = _hashable(key)
        if h not in seen:
            seen.add(h)
            out.append(i)
    return out


def _hashable(value: Any) -> Any:
    """Numbers compare by value across int and float columns (1 and 1.0 are one group)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def collapsed_top(core: Any, q: Any, c: Any) -> tuple[np.ndarray, list[Any]]:
    """The shard's top ``q.k`` groups: ``(rows, group keys)`` of each group's first row in the
    search's order (``c``: the shard's ``Candidates``). O(m log m) to order the m matches."""
    from .sorting import ascending_keys, order
    check_collapse_field(q.collapse, core.mapping, core.index)
    if q.k <= 0 or len(c.ties) == 0:
        return np.zeros(0, dtype=np.int64), []
    ordered = order(ascending_keys(q.sort, c.kinds, c.columns, c.missing, c.ties, c.ranks))
    return first_of_groups(core.by_uid, q.collapse, c.addr, np.asarray(ordered), q.k)
