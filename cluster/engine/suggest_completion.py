"""One shard's part of a ``completion`` suggester: its top options from the searched snapshot.

Each segment's completion column (``completion.py``) is built once and kept with the segment (a
weak reference: it goes when a merge drops the segment). The shard answers its best ``size``
options in the order the coordinator merges them in (``completion.order_key``, then the
document's sequence number), each document once, with its ``_source``.
"""
from __future__ import annotations

import bisect
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import IllegalArgument
from .completion import CompletionColumn, CompletionSpec, best_per_document, matching, \
    segment_column
from .completion_contexts import QueryContext, java_set_order
from .completion_fuzzy import MAX_FUZZY_CANDIDATES, FuzzyOptions, accepted_prefix
from .query.patterns import LinearPattern

_COLUMNS: weakref.WeakKeyDictionary[Any, dict[tuple[str, CompletionSpec], CompletionColumn]] \
    = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class CompletionPlan:
    """What a shard looks up for one completion suggester (built by the coordinator)."""

    name: str
    field: str
    spec: CompletionSpec
    prefix: str | None            # the analysed prefix, or None with a regex
    regex: str | None             # a translated (RE2) pattern matched at the start of forms
    size: int
    skip_duplicates: bool
    fuzzy: FuzzyOptions | None = None   # with ``prefix``: inputs starting within edits of it
    contexts: tuple[tuple[int, tuple[QueryContext, ...]], ...] = ()   # queried contexts


@dataclass(frozen=True)
class RefusedPlan:
    """A completion suggester this shard's index cannot build (its field is no completion
    field there): the shard fails with ``error``, as an Elasticsearch shard does, while the
    indices that map it answer (``search/suggest_indices.py``)."""

    name: str
    error: Exception


def column(seg: Any, field: str, spec: CompletionSpec) -> CompletionColumn:
    """The segment's column for ``field`` analysed by ``spec`` (built on first use)."""
    per_seg = _COLUMNS.setdefault(seg, {})
    col = per_seg.get((field, spec))
    if col is None:
        sources = seg.sources.take(list(range(seg.n)))
        col = per_seg[(field, spec)] = segment_column(sources, field, spec)
    return col


def completion_partial(segments: list[Any], gen: int, plan: CompletionPlan, index: str,
                       with_source: bool = True) -> dict[str, Any]:
    """``options``: ``(order key, index, seq, _id, _source, contexts)`` of the best
    ``plan.size`` options here, in the coordinator's merge order (``completion.order_key``,
    then the document); ``first``: with ``fuzzy``, the smallest accepted prefix of the shard's
    inputs (the boost, ``completion_fuzzy.py``). Without ``with_source`` (an index whose
    ``_source`` is disabled) the options carry no source."""
    rx = LinearPattern(f"(?:{plan.regex}).*") if plan.regex is not None else None
    found = []
    first: str | None = None
    for seg in segments:
        col = column(seg, plan.field, plan.spec)
        if not col.keys:
            continue
        if plan.fuzzy is not None:
            assert plan.prefix is not None
            hits, smallest = fuzzy_matching(col, plan.prefix, plan.fuzzy)
            if smallest is not None and (first is None or smallest < first):
                first = smallest
        else:
            hits = matching(col, plan.prefix, rx)
        wanted = dict(plan.contexts)
        for key, row, ctxs in best_per_document(col, hits, seg.visible(gen), wanted):
            found.append((key, int(seg.seq[row]), seg, row, ctxs))
    found.sort(key=lambda f: (f[0], f[1]))
    out: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    for key, seq, seg, row, ctxs in found:
        if plan.skip_duplicates:
            if key[2] in seen:
                continue
            seen.add(key[2])
        shown = {plan.spec.contexts[i]: java_set_order(v) for i, v in sorted(ctxs.items())}
        raw = seg.sources.take([row])[0] if with_source else None
        out.append((key, index, seq, str(seg.ids[row]), raw, shown))
        if len(out) >= plan.size:
            break
    return {"options": out, "first": first}


def fuzzy_matching(col: CompletionColumn, prefix: str, opts: FuzzyOptions
                   ) -> tuple[np.ndarray, str | None]:
    """Entries whose form starts within ``opts.edits`` of ``prefix`` (candidates narrowed to
    the exact leading characters by bisection), and the smallest accepted prefix (in
    ``opts`` units). At most ``MAX_FUZZY_CANDIDATES`` forms are compared."""
    lead = prefix[:opts.prefix_length] if prefix.isascii() else ""
    lo = bisect.bisect_left(col.keys, lead)
    hi = bisect.bisect_left(col.keys, lead + "\U0010ffff")
    if hi - lo > MAX_FUZZY_CANDIDATES:
        raise IllegalArgument(f"[fuzzy] would compare more than [{MAX_FUZZY_CANDIDATES}] "
                              "completion inputs of one segment; use a longer prefix or a "
                              "larger [prefix_length]")
    q = opts.units(prefix)
    hits, smallest = [], None
    for i in range(lo, hi):
        key = opts.units(col.keys[i])
        n = accepted_prefix(q, key, opts)
        if n is not None:
            hits.append(i)
            if smallest is None or key[:n] < smallest:
                smallest = key[:n]
    return np.array(hits, dtype=np.int64), smallest


__all__ = ["CompletionPlan", "column", "completion_partial", "fuzzy_matching"]
