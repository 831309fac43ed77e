"""Bucket aggregations on a shard: terms, histograms, ranges, filters, missing, global.

Keyed buckets (terms, histogram, date_histogram) group ``(owner, key)`` pairs of the rows'
values with one lexsort; a document counts once per bucket however many of its values fall in
it. Fixed buckets (ranges, filters, missing, global) are ``width`` per owner. Children are
collected over the bucket's rows with the bucket as owner.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ...errors import IllegalArgument
from ..dates import parse_date_math
from .collect import (COLLECTORS, Rows, ShardView, all_rows, collect_level, concat, field_kind, group,
                      missing_value)
from .dates import next_key, parse_offset, round_down, zone
from .ip_values import ip_include_exclude
from .parse import AggNode
from .partials import Fixed, Keyed
from .range_histogram import date_expansion, numeric_expansion
from .values import dictionary, has_value, row_values


def _pairs(node: AggNode, view: ShardView, rows: Rows, kind: str
           ) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray | None]:
    """Per segment ``(row, value)`` with ``missing`` substituted; keyword values are ranks
    into the returned dictionary (the missing string appended last when given)."""
    field = node.field or ""
    miss = missing_value(node, view, kind)
    distinct = None
    maps: list[np.ndarray | None] = [None] * len(view.segments)
    if kind in ("keyword", "unmapped") and (kind == "keyword" or miss is not None):
        distinct, rank_maps = dictionary(view.segments, field)
        maps = list(rank_maps)
        if miss is not None:
            distinct = np.append(distinct, np.array([miss], dtype=object))
    out = []
    for si, seg in enumerate(view.segments):
        docs = rows.docs[si]
        r, v = row_values(seg, field, docs, maps[si]) if kind != "unmapped" else \
            (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        if kind in ("date_nanos",):
            v = np.floor_divide(v, 1_000_000)
        if miss is not None:
            lacking = np.flatnonzero(~has_value(seg, field, docs)) if kind != "unmapped" \
                else np.arange(len(docs), dtype=np.int64)
            fill = len(distinct) - 1 if distinct is not None else miss
            r = np.concatenate([r, lacking])
            v = np.concatenate([v, np.full(len(lacking), fill, dtype=v.dtype if
                                           distinct is not None else np.asarray(fill).dtype)])
        out.append((r, v))
    return out, distinct


def _keyed(node: AggNode, view: ShardView, rows: Rows, kind: str,
           key_fn: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | None]],
           extend: Callable[[Keyed], None] | None = None,
           given: list[tuple[np.ndarray, np.ndarray]] | None = None) -> Keyed:
    """Group the rows' keys per owner; ``key_fn`` maps values to ``(keys, keep mask)``.
    ``extend`` adds empty buckets before the sub-aggregations are collected, so that these
    have one (empty) partial per bucket too. ``given``: per segment ``(row, value)`` pairs
    already made (a range field's expansion) instead of the field's values."""
    pairs, distinct = (given, None) if given is not None else _pairs(node, view, rows, kind)
    if node.type == "terms" and distinct is not None and rows.n_owners == 1 \
            and extend is None and not node.subs:
        counted = _dictionary_counts(pairs, distinct, key_fn, kind)
        if counted is not None:
            return counted
    offsets = np.cumsum([0] + [len(d) for d in rows.docs])
    g_rows, g_keys, g_owner = [], [], []
    for si, (r, v) in enumerate(pairs):
        keys, keep = key_fn(v)
        if keep is not None:
            r, keys = r[keep], keys[keep]
        g_rows.append(r + offsets[si])
        g_keys.append(keys)
        g_owner.append(rows.owner[si][r])
    all_rows_ = concat(g_rows, np.int64)
    keys = concat(g_keys, np.float64)
    u_owner, u_key, inv = group(concat(g_owner, np.int64), keys)
    if len(all_rows_) < 2 or bool(np.all(all_rows_[1:] > all_rows_[:-1])):
        row_of, bucket_of = all_rows_, inv   # one value per row: already once per bucket
    else:
        row_of, bucket_of, _ = group(all_rows_, inv)   # a document once per bucket
    counts = np.bincount(bucket_of, minlength=len(u_owner)).astype(np.int64)
    keys_out = distinct[u_key.astype(np.int64)] if distinct is not None else u_key
    part = Keyed(u_owner, keys_out, counts, value_kind=kind)
    if extend is not None:
        extend(part)
    if node.subs:
        cuts = np.searchsorted(row_of, offsets)
        split = [(row_of[a:b] - offsets[si], bucket_of[a:b])
                 for si, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))]
        part.subs = collect_level(node.subs, view, rows.take(split, len(part.owner)))
    return part


def _dictionary_counts(pairs: list[tuple[np.ndarray, np.ndarray]], distinct: np.ndarray,
                       key_fn: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | None]],
                       kind: str) -> Keyed | None:
    """:func:`_keyed`'s answer for one owner and no sub-aggregations over dictionary ranks
    with at most one value per row (a top-level ``terms`` on a single-valued keyword): one
    ``bincount`` per segment instead of grouping ``(owner, key)`` pairs, several passes fewer
    over every matched row. None when a row has several values (the general path then counts
    a document once per bucket)."""
    counts = np.zeros(len(distinct), dtype=np.int64)
    for r, v in pairs:
        keys, keep = key_fn(v)
        if keep is not None:
            r, keys = r[keep], keys[keep]
        if keys.dtype.kind not in "iu" or len(r) > 1 and not bool(np.all(r[1:] > r[:-1])):
            return None
        counts += np.bincount(keys, minlength=len(distinct))
    present = np.flatnonzero(counts)
    return Keyed(np.zeros(len(present), dtype=np.int64), distinct[present], counts[present],
                 value_kind=kind)


def terms(node: AggNode, view: ShardView, rows: Rows) -> Keyed:
    kind = field_kind(node, view)
    if kind == "date_nanos":
        kind = "date"
    allowed = _only_keys(node, view, kind, _include_exclude(node, view, kind))
    if kind == "unmapped" and "missing" not in node.params:
        return Keyed(np.zeros(0, np.int64), np.zeros(0, object), np.zeros(0, np.int64),
                     value_kind="unmapped")

    def keys(v: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return v, (allowed(v) if allowed is not None else None)
    def add_empty(part: Keyed) -> None:
        _add_empty_terms(part, node, view, rows.n_owners, kind, allowed)
    every = node.params.get("min_doc_count", 1) == 0 and kind != "unmapped"
    return _keyed(node, view, rows, kind, keys, add_empty if every else None)


def _add_empty_terms(part: Keyed, node: AggNode, view: ShardView, n_owners: int, kind: str,
                     allowed: Callable[[np.ndarray], np.ndarray] | None) -> None:
    """``min_doc_count: 0``: every value of the field in the shard, with 0 documents."""
    every = _keyed(AggNode(node.name, "terms", {"field": node.field}), view, all_rows(view),
                   kind, lambda v: (v, allowed(v) if allowed is not None else None))
    keys = np.tile(every.keys, n_owners)
    owner = np.repeat(np.arange(n_owners, dtype=np.int64), len(every.keys))
    seen = set(zip(part.owner.tolist(), part.keys.tolist()))   # one bucket per (owner, key)
    fresh = np.array([(o, k) not in seen for o, k in zip(owner.tolist(), keys.tolist())],
                     dtype=bool)
    keys, owner = keys[fresh], owner[fresh]
    part.owner = np.concatenate([part.owner, owner])
    part.keys = np.concatenate([part.keys, keys.astype(part.keys.dtype)])
    part.counts = np.concatenate([part.counts, np.zeros(len(keys), dtype=np.int64)])


def _only_keys(node: AggNode, view: ShardView, kind: str,
               allowed: Callable[[np.ndarray], np.ndarray] | None
               ) -> Callable[[np.ndarray], np.ndarray] | None:
    """The coordinator's ``_keys`` (an internal parameter of the later rounds of a cut terms,
    ``tput.py``): only these keys' buckets, so their sub-aggregations are all collected."""
    only = node.params.get("_keys")
    if only is None:
        return allowed
    if kind in ("keyword", "unmapped"):
        distinct, _ = dictionary(view.segments, node.field or "")
        if "missing" in node.params:
            distinct = np.append(distinct, np.array([missing_value(node, view, kind)],
                                                    dtype=object))
        ok = np.isin(distinct.astype(object), np.asarray(list(only), dtype=object)) \
            if len(distinct) else np.zeros(0, dtype=bool)

        def keep(v: np.ndarray) -> np.ndarray:   # a segment without the field: float []
            return ok[v.astype(np.int64)] if len(ok) else np.zeros(len(v), dtype=bool)
    else:
        exact = all(isinstance(k, (int, np.integer)) for k in only)
        wanted = np.asarray(list(only), dtype=np.int64 if exact else np.float64)

        def keep(v: np.ndarray) -> np.ndarray:   # longs compare as longs (no 2^53 rounding)
            return np.isin(v if exact and v.dtype.kind in "iu" else v.astype(np.float64),
                           wanted)
    if allowed is None:
        return keep
    return lambda v: keep(v) & allowed(v)


def _include_exclude(node: AggNode, view: ShardView, kind: str
                     ) -> Callable[[np.ndarray], np.ndarray] | None:
    """A filter over values (keyword ranks or numbers) from ``include`` / ``exclude``."""
    inc, exc = node.params.get("include"), node.params.get("exclude")
    if inc is None and exc is None:
        return None
    ft = view.mapping.get(node.field) if node.field else None
    if ft is not None and ft.type == "ip":
        inc, exc = ip_include_exclude(node.name, inc, exc)
    if kind in ("keyword", "unmapped"):
        distinct, _ = dictionary(view.segments, node.field or "")
        if "missing" in node.params:
            distinct = np.append(distinct, np.array([str(node.params["missing"])], dtype=object))
        ok = np.array([_accepts(str(t), inc, exc) for t in distinct.tolist()], dtype=bool)
        # a segment without the field has float ranks (none): index with ints
        return lambda v: ok[v.astype(np.int64)] if len(ok) else np.zeros(len(v), dtype=bool)
    if isinstance(inc, str) or isinstance(exc, str):
        raise IllegalArgument(f"Aggregation [{node.name}] cannot support regular expression "
                              f"style include/exclude settings as they can only be applied "
                              "to string fields. Use an array of numeric values for "
                              "include/exclude clauses used to filter numeric fields")

    def numeric(v: np.ndarray) -> np.ndarray:
        keep = np.ones(len(v), dtype=bool)
        if isinstance(inc, list):
            keep &= np.isin(v, np.asarray([_num(x, kind, ft) for x in inc], dtype=v.dtype))
        elif isinstance(inc, dict):
            keep &= np.array([_long_partition(int(x), inc) for x in v.tolist()], dtype=bool)
        if isinstance(exc, list):
            keep &= ~np.isin(v, np.asarray([_num(x, kind, ft) for x in exc], dtype=v.dtype))
        return keep
    return numeric


def _num(x: Any, kind: str, ft: Any = None) -> float:
    """An include/exclude value as the field stores it: a date in the field's format (as
    Elasticsearch parses it with the field's ``DocValueFormat``), else a number."""
    if kind == "boolean":
        return 1 if x in (True, "true") else 0
    try:
        if kind == "date" and isinstance(x, str):
            return parse_date_math(x, ft)
        return float(x)
    except (ValueError, TypeError, OverflowError):
        raise IllegalArgument(f"failed to parse [{x}] as a {kind} value in include/exclude"
                              ) from None


def _accepts(term: str, inc: Any, exc: Any) -> bool:
    if isinstance(inc, str) and not re.fullmatch(inc, term):
        return False
    if isinstance(inc, list) and term not in {str(x) for x in inc}:
        return False
    if isinstance(inc, dict) and not _string_partition(term, inc):
        return False
    if isinstance(exc, str) and re.fullmatch(exc, term):
        return False
    if isinstance(exc, list) and term in {str(x) for x in exc}:
        return False
    return True


def _string_partition(term: str, spec: dict[str, Any]) -> bool:
    """Elasticsearch's partition of a string term: murmur3 x86_32 (seed 31) of its UTF-8."""
    h = _murmur3_32(term.encode(), 31)
    h = h - (1 << 32) if h >= 1 << 31 else h
    return h % int(spec["num_partitions"]) == int(spec["partition"])


def _long_partition(value: int, spec: dict[str, Any]) -> bool:
    """Elasticsearch's partition of a long: ``floorMod(BitMixer.mix64(v), n)``."""
    m = (1 << 64) - 1
    k = value & m
    k ^= k >> 32
    k = (k * 0x4CD6944C5CC20B6D) & m
    k ^= k >> 29
    k = (k * 0xFC12C5B19D3259E9) & m
    k ^= k >> 32
    k = k - (1 << 64) if k >= 1 << 63 else k
    return k % int(spec["num_partitions"]) == int(spec["partition"])


def _murmur3_32(data: bytes, seed: int) -> int:
    c1, c2, h = 0xCC9E2D51, 0x1B873593, seed & 0xFFFFFFFF
    n = len(data) // 4 * 4
    for i in range(0, n, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        h ^= (k * c2) & 0xFFFFFFFF
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    tail = data[n:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        h ^= (k * c2) & 0xFFFFFFFF
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _bounds_keep(node: AggNode, keys: np.ndarray) -> np.ndarray | None:
    hb = node.params.get("hard_bounds")
    if not isinstance(hb, dict):
        return None
    keep = np.ones(len(keys), dtype=bool)
    if hb.get("min") is not None:
        keep &= keys >= float(hb["min"])
    if hb.get("max") is not None:
        keep &= keys <= float(hb["max"])
    return keep


def histogram(node: AggNode, view: ShardView, rows: Rows) -> Keyed:
    kind = field_kind(node, view)
    interval = float(node.params["interval"])
    offset = float(node.params.get("offset", 0) or 0)

    def keys(v: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        k = np.floor((v.astype(np.float64) - offset) / interval) * interval + offset
        return k, _bounds_keep(node, k)
    if kind == "range":
        spread = numeric_expansion(node, _pairs(node, view, rows, "double")[0])
        return _keyed(node, view, rows, "double", lambda v: (v, None), given=spread)
    return _keyed(node, view, rows, "double" if kind != "unmapped" else kind, keys)


def date_histogram(node: AggNode, view: ShardView, rows: Rows) -> Keyed:
    kind = field_kind(node, view)
    p = node.params
    tz, offset = zone(p.get("time_zone")), parse_offset(p.get("offset"))
    hb = p.get("hard_bounds")
    lo = _date_bound(hb.get("min"), view, node) if isinstance(hb, dict) else None
    hi = _date_bound(hb.get("max"), view, node) if isinstance(hb, dict) else None

    def keys(v: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        k = round_down(v.astype(np.int64), p.get("unit"), p.get("fixed_ms"), tz, offset)
        keep = None
        if lo is not None or hi is not None:
            keep = np.ones(len(k), dtype=bool)
            if lo is not None:
                keep &= k >= lo
            if hi is not None:
                keep &= k <= hi
        return k, keep
    if kind == "range":
        def key_of(v: np.ndarray) -> np.ndarray:
            return round_down(v, p.get("unit"), p.get("fixed_ms"), tz, offset)

        def step(k: np.ndarray) -> np.ndarray:
            return np.array([next_key(int(x), p.get("unit"), p.get("fixed_ms"), tz, offset)
                             for x in k.tolist()], dtype=np.int64)
        cap = None if hi is None or not offset else \
            int(round_down(np.array([hi]), p.get("unit"), p.get("fixed_ms"), tz, 0)[0])
        spread = date_expansion(_pairs(node, view, rows, "date")[0], key_of, step, lo, hi, cap)
        part = _keyed(node, view, rows, "date", lambda v: (v, None), given=spread)
    else:
        part = _keyed(node, view, rows, kind, keys)
    part.value_kind = "date" if kind != "unmapped" else kind
    return part


def _date_bound(value: Any, view: ShardView, node: AggNode) -> int | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    ft = view.mapping.get(node.field or "")
    return parse_date_math(value, ft if ft is not None and ft.kind == "date" else None) \
        // (1_000_000 if ft is not None and ft.type == "date_nanos" else 1)


def resolve_ranges(node: AggNode, mapping: Any) -> list[tuple[str | None, float, float]]:
    """``(key, from, to)`` of each range in Elasticsearch's order (by from, then to); open
    ends are infinities. Dates in millis (``date_range``, or ``range`` on a date field)."""
    ft = mapping.get(node.field or "") if node.field else None
    is_date = node.type == "date_range" or (ft is not None and ft.kind == "date")
    out = []
    fmt = node.params.get("format") if is_date else None    # reads the bounds too, as in ES
    for r in node.params["ranges"]:
        lo = _bound(r.get("from"), is_date, ft, float("-inf"), fmt)
        hi = _bound(r.get("to"), is_date, ft, float("inf"), fmt)
        out.append((r.get("key"), lo, hi))
    return sorted(out, key=lambda t: (t[1], t[2]))


def _bound(value: Any, is_date: bool, ft: Any, default: float, fmt: str | None = None
           ) -> float:
    if value is None:
        return default
    if is_date and (not isinstance(value, (int, float)) or (ft is not None and ft.format)
                    or fmt):
        nanos = ft is not None and ft.type == "date_nanos"
        try:
            ms = parse_date_math(value, ft if ft is not None and ft.kind == "date" else None,
                                 fmt=fmt)
        except IllegalArgument:
            raise
        except (ValueError, OverflowError):
            shown = fmt or (ft.format if ft is not None else None) \
                or "strict_date_optional_time||epoch_millis"
            raise IllegalArgument(f"failed to parse date field [{value}] with format [{shown}]",
                                  es_type="parse_exception") from None
        return float(ms // 1_000_000 if nanos else ms)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise IllegalArgument(f"For input string: \"{value}\"") from None


def ranges(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    kind = field_kind(node, view)
    spans = resolve_ranges(node, view.mapping)
    width = len(spans)
    pairs, _ = _pairs(node, view, rows, kind) if kind != "unmapped" or \
        "missing" in node.params else ([(np.zeros(0, np.int64), np.zeros(0))] *
                                        len(view.segments), None)
    offsets = np.cumsum([0] + [len(d) for d in rows.docs])
    g_rows, g_bucket = [], []
    for si, (r, v) in enumerate(pairs):
        vf = v.astype(np.float64)
        for b, (_, lo, hi) in enumerate(spans):
            sel = (vf >= lo) & (vf < hi)
            g_rows.append(r[sel] + offsets[si])
            g_bucket.append(np.full(int(sel.sum()), b, dtype=np.int64))
    return _fixed(node, view, rows, width, concat(g_rows, np.int64),
                  concat(g_bucket, np.int64), offsets, kind)


def _fixed(node: AggNode, view: ShardView, rows: Rows, width: int, g_rows: np.ndarray,
           g_bucket: np.ndarray, offsets: np.ndarray, kind: str = "double") -> Fixed:
    """Fixed buckets from ``(global row, bucket)`` pairs (deduplicated)."""
    row_of, bucket_of, _ = group(g_rows, g_bucket)
    owners_all = concat(rows.owner, np.int64)
    child_owner = owners_all[row_of] * width + bucket_of
    counts = np.bincount(child_owner, minlength=rows.n_owners * width).astype(np.int64)
    part = Fixed(width, counts, value_kind=kind)
    if node.subs:
        order = np.argsort(row_of, kind="stable")
        row_of, child_owner = row_of[order], child_owner[order]
        cuts = np.searchsorted(row_of, offsets)
        split = [(row_of[a:b] - offsets[si], child_owner[a:b])
                 for si, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))]
        part.subs = collect_level(node.subs, view, rows.take(split, rows.n_owners * width))
    return part


def _mask_buckets(node: AggNode, view: ShardView, rows: Rows,
                  masks: Callable[[int], list[np.ndarray]]) -> Fixed:
    """Fixed buckets where ``masks(si)`` gives, per bucket, a bool per row of segment si."""
    offsets = np.cumsum([0] + [len(d) for d in rows.docs])
    g_rows, g_bucket = [], []
    width = 0
    for si in range(len(view.segments)):
        ms = masks(si)
        width = len(ms)
        for b, m in enumerate(ms):
            idx = np.flatnonzero(m)
            g_rows.append(idx + offsets[si])
            g_bucket.append(np.full(len(idx), b, dtype=np.int64))
    if not view.segments:
        width = masks(-1).__len__() if node.type == "filters" else 1
    return _fixed(node, view, rows, width, concat(g_rows, np.int64), concat(g_bucket, np.int64),
                  offsets)


def filter_(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    assert node.query is not None
    return _mask_buckets(node, view, rows, lambda si: [
        view.match(node.query, view.segments[si])[rows.docs[si]]])  # type: ignore[arg-type]


def filters(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    other = bool(node.params.get("other_bucket", False))

    def masks(si: int) -> list[np.ndarray]:
        if si < 0:
            return [np.zeros(0, bool)] * (len(node.queries) + other)
        seg, docs = view.segments[si], rows.docs[si]
        ms = [view.match(q, seg)[docs] for _, q in node.queries]
        if other:
            ms.append(~np.logical_or.reduce(ms) if ms else np.ones(len(docs), dtype=bool))
        return ms
    return _mask_buckets(node, view, rows, masks)


def missing(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    field = node.field or ""
    ft = view.mapping.get(field)
    return _mask_buckets(node, view, rows, lambda si: [
        ~has_value(view.segments[si], field, rows.docs[si]) if ft is not None
        else np.ones(len(rows.docs[si]), dtype=bool)])


def global_(node: AggNode, view: ShardView, rows: Rows) -> Fixed:
    everything = all_rows(view)
    return _mask_buckets(node, view, everything,
                         lambda si: [np.ones(len(everything.docs[si]), dtype=bool)])


BUCKETS = {"terms": terms, "histogram": histogram, "date_histogram": date_histogram,
           "range": ranges, "date_range": ranges, "filter": filter_, "filters": filters,
           "missing": missing, "global": global_}
COLLECTORS.update(BUCKETS)
