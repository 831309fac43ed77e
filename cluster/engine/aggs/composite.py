"""``composite`` on a shard: its first ``size`` buckets after ``after``, in composite order.

Exact across shards with a bounded transfer: a key among the global first ``size`` keys after
``after`` has fewer than ``size`` keys before it on every shard that holds it, so each shard's
first ``size`` keys contain it. Keys (one value per source; a document with several values
makes the product of them) are grouped with one lexsort over per-source codes; only the
``size`` kept keys become Python values, shipped as JSON text so the coordinator's keyed
reduce groups them like any other key.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from ...errors import IllegalArgument
from ..ip import stored_ip
from .bucket import _pairs
from .collect import COLLECTORS, Rows, ShardView, collect_level, concat, field_kind, group
from .dates import parse_offset, round_down, zone
from .parse import AggNode
from .partials import Keyed
from .values import _ragged


def source_spec(source: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """``(name, kind, params)`` of one ``sources`` entry."""
    (name, body), = source.items()
    (kind, params), = body.items()
    return name, kind, params


def _source_values(src: AggNode, kind: str, view: ShardView, rows: Rows
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, str]:
    """``(global row, value)`` of one source; missing values (``missing_bucket``) are NaN."""
    node = AggNode(src.name, "terms", {k: v for k, v in src.params.items()
                                       if k in ("field", "value_type")})
    fkind = field_kind(node, view) if src.params.get("field") else "unmapped"
    pairs, distinct = _pairs(node, view, rows, fkind)
    offsets = np.cumsum([0] + [len(d) for d in rows.docs])
    r = concat([p[0] + offsets[i] for i, p in enumerate(pairs)], np.int64)
    v = concat([p[1] for p in pairs], np.float64).astype(np.float64)
    if kind == "histogram":
        iv = float(src.params["interval"])
        v = np.floor(v / iv) * iv
    elif kind == "date_histogram":
        p = src.params
        v = round_down(v.astype(np.int64), p.get("unit"), p.get("fixed_ms"),
                       zone(p.get("time_zone")), parse_offset(p.get("offset"))).astype(np.float64)
    if src.params.get("missing_bucket"):
        have = np.zeros(int(offsets[-1]), dtype=bool)
        have[r] = True
        lacking = np.flatnonzero(~have)
        r = np.concatenate([r, lacking])
        v = np.concatenate([v, np.full(len(lacking), np.nan)])
    order = np.argsort(r, kind="stable")
    return r[order], v[order], distinct, fkind


def composite(node: AggNode, view: ShardView, rows: Rows) -> Keyed:
    total = sum(len(d) for d in rows.docs)
    combo_row = np.arange(total, dtype=np.int64)
    cols: list[np.ndarray] = []
    dicts: list[np.ndarray | None] = []
    kinds: list[str] = []
    for src in node.params["_sources"]:
        r, v, distinct, fkind = _source_values(src, src.type, view, rows)
        kinds.append(fkind)
        counts = np.bincount(r, minlength=total)
        starts = np.cumsum(counts) - counts
        rep, idx = _ragged(starts[combo_row], counts[combo_row])
        combo_row = combo_row[rep]
        cols = [c[rep] for c in cols] + [v[idx]]
        dicts.append(distinct)
    codes = [_codes(c) for c in cols]
    key_id = _group_columns(codes, len(combo_row))
    row_of, bucket_of, _ = group(combo_row, key_id)          # a document once per bucket
    n_buckets = int(key_id.max()) + 1 if len(key_id) else 0
    counts = np.bincount(bucket_of, minlength=n_buckets).astype(np.int64)
    first = np.zeros(n_buckets, dtype=np.int64)
    first[key_id[::-1]] = np.arange(len(key_id))[::-1]      # a combo of each bucket
    values = [c[first] for c in cols]
    keep = _first_after(node, values, dicts, _stored_after(node, view))
    kept_keys = [_key_text(node, values, dicts, kinds, int(b)) for b in keep]
    part = Keyed(np.zeros(len(keep), dtype=np.int64), np.array(kept_keys, dtype=object),
                 counts[keep], value_kind="composite")
    if node.subs:
        new_owner = np.full(n_buckets, -1, dtype=np.int64)
        new_owner[keep] = np.arange(len(keep))
        sel = new_owner[bucket_of] >= 0
        row_of, owner = row_of[sel], new_owner[bucket_of[sel]]
        order = np.argsort(row_of, kind="stable")
        row_of, owner = row_of[order], owner[order]
        offsets = np.cumsum([0] + [len(d) for d in rows.docs])
        cuts = np.searchsorted(row_of, offsets)
        split = [(row_of[a:b] - offsets[si], owner[a:b])
                 for si, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))]
        part.subs = collect_level(node.subs, view, rows.take(split, len(keep)))
    return part


def _codes(col: np.ndarray) -> np.ndarray:
    """Dense codes of a column's values in ascending order; NaN (missing) is -1."""
    out = np.full(len(col), -1, dtype=np.int64)
    present = ~np.isnan(col)
    if present.any():
        _, inv = np.unique(col[present], return_inverse=True)
        out[present] = inv.reshape(-1)
    return out


def _group_columns(codes: list[np.ndarray], n: int) -> np.ndarray:
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(tuple(reversed(codes)))
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for c in codes:
        s = c[order]
        new[1:] |= s[1:] != s[:-1]
    gid = np.cumsum(new) - 1
    out = np.empty(n, dtype=np.int64)
    out[order] = gid
    return out


def _sort_keys(node: AggNode, values: list[np.ndarray]) -> list[np.ndarray]:
    """Per source, an ascending-sortable float: desc negated; missing first or last."""
    out = []
    for src, v in zip(node.params["_sources"], values):
        desc = src.params.get("order", "asc") == "desc"
        last = src.params.get("missing_order", "default") == "last" or (
            src.params.get("missing_order", "default") == "default" and desc)
        k = -v if desc else v.copy()
        k[np.isnan(v)] = np.inf if last else -np.inf
        out.append(k)
    return out


def _stored_after(node: AggNode, view: ShardView) -> list[Any] | None:
    """``after`` as the shard stores the values (an ip address as its sortable key)."""
    after = node.params.get("_after")
    if after is None:
        return None
    out = []
    for src, value in zip(node.params["_sources"], after):
        ft = view.mapping.get(src.field or "")
        if ft is not None and ft.type == "ip" and value is not None:
            try:
                value = stored_ip(value)
            except ValueError:
                raise IllegalArgument(f"'{value}' is not an IP string literal.") from None
        out.append(value)
    return out


def _first_after(node: AggNode, values: list[np.ndarray], dicts: list[np.ndarray | None],
                 after: list[Any] | None) -> np.ndarray:
    """Buckets after ``after`` (if any), the first ``size`` of them, in composite order."""
    keys = _sort_keys(node, values)
    n = len(values[0]) if values else 0
    if after is not None and n:
        probe = [np.array([a], dtype=np.float64) for a in
                 _after_values(node, after, dicts)]
        pk = _sort_keys(node, probe)
        gt = np.zeros(n, dtype=bool)
        eq = np.ones(n, dtype=bool)
        for k, p in zip(keys, pk):
            gt |= eq & (k > p[0])
            eq &= k == p[0]
        cand = np.flatnonzero(gt)
    else:
        cand = np.arange(n)
    order = np.lexsort(tuple(reversed([k[cand] for k in keys]))) if n else cand
    return cand[order][:int(node.params.get("size", 10))]


def _after_values(node: AggNode, after: list[Any], dicts: list[np.ndarray | None]
                  ) -> list[float]:
    """``after`` in each source's value space (a string's position among the shard's strings:
    an absent string sits half-way between its neighbours)."""
    out = []
    for value, d in zip(after, dicts):
        if value is None:
            out.append(np.nan)
        elif d is not None:
            pos = int(np.searchsorted(d, str(value)))
            out.append(float(pos) if pos < len(d) and d[pos] == str(value) else pos - 0.5)
        else:
            out.append(float(value))
    return out


def _key_text(node: AggNode, values: list[np.ndarray], dicts: list[np.ndarray | None],
              kinds: list[str], b: int) -> str:
    key: list[Any] = []
    for src, v, d, kind in zip(node.params["_sources"], values, dicts, kinds):
        x = v[b]
        if np.isnan(x):
            key.append(None)
        elif d is not None:
            key.append(str(d[int(x)]))
        elif src.type == "date_histogram" or (src.type == "terms" and kind in (
                "long", "date", "date_nanos", "boolean")):
            key.append(int(x))
        else:
            key.append(float(x))
    return orjson.dumps(key).decode()

COLLECTORS["composite"] = composite
