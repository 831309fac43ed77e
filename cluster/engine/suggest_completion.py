"""One shard's part of a ``completion`` suggester: its top options from the searched snapshot.

Each segment's completion column (``completion.py``) is built once and kept with the segment (a
weak reference: it goes when a merge drops the segment). The shard answers its best ``size``
options in the order the coordinator merges them in (``completion.order_key``, then the
document's sequence number), each document once, with its ``_source``.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from .completion import CompletionColumn, CompletionSpec, best_per_document, matching, \
    order_key, segment_column
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


def column(seg: Any, field: str, spec: CompletionSpec) -> CompletionColumn:
    """The segment's column for ``field`` analysed by ``spec`` (built on first use)."""
    per_seg = _COLUMNS.setdefault(seg, {})
    col = per_seg.get((field, spec))
    if col is None:
        sources = seg.sources.take(list(range(seg.n)))
        col = per_seg[(field, spec)] = segment_column(sources, field, spec)
    return col


def completion_partial(segments: list[Any], gen: int, plan: CompletionPlan, index: str
                       ) -> list[tuple[int, str, str, int, str, bytes]]:
    """``(weight, text, index, seq, _id, _source)`` of this shard's best ``plan.size``
    options, in the coordinator's merge order."""
    rx = LinearPattern(f"(?:{plan.regex}).*") if plan.regex is not None else None
    found = []
    for seg in segments:
        col = column(seg, plan.field, plan.spec)
        if not col.keys:
            continue
        hits = matching(col, plan.prefix, rx)
        for weight, text, row in best_per_document(col, hits, seg.visible(gen)):
            found.append((order_key(weight, text), int(seg.seq[row]), weight, text, seg, row))
    found.sort(key=lambda f: (f[0], f[1]))
    out: list[tuple[int, str, str, int, str, bytes]] = []
    seen: set[str] = set()
    for _, seq, weight, text, seg, row in found:
        if plan.skip_duplicates:
            if text in seen:
                continue
            seen.add(text)
        out.append((weight, text, index, seq, str(seg.ids[row]),
                    seg.sources.take([row])[0]))
        if len(out) >= plan.size:
            break
    return out


__all__ = ["CompletionPlan", "column", "completion_partial"]
