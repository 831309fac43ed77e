"""When to merge: a tiered merge policy, after Lucene's ``TieredMergePolicy`` (pure functions).

Each refresh adds a segment; left alone, a shard refreshed thousands of times searches
thousands of segments. The policy keeps their number about ``segments_per_tier`` per size tier:

* segments are measured in bytes (columns, postings and compressed ``_source``), the small ones
  counted as ``floor_segment`` (so a thousand one-document segments are one tier, not many);
* the allowed count is Lucene's: ``segments_per_tier`` at the floor size, as many at
  ``max_merge_at_once`` times that, and so on up to the shard's total size;
* over that count, the ``max_merge_at_once`` smallest segments are merged into one (similar
  sizes, the cheapest merge that cuts the count), never more than ``max_merged_segment`` bytes
  in all;
* a segment whose droppable share (versions no reader can see, see ``segment_merge``) exceeds
  ``deletes_pct_allowed`` percent is rewritten alone, to give the memory back.

Merges are built outside the shard's lock (``merging.py``: plan, build, swap), so a merge does
not hold up searches or writes. Automatic merges are still bounded, so that a shard's
background work (and its transient memory: the merged segment beside its sources) stays
bounded: at most ``AUTO_MERGE_MAX_BYTES`` (256 MiB) of segments per merge, one merge at a time
per shard copy — about 25 s of one core at ~90 ms per MiB on a loaded 2-core machine. Bigger
segments are merged only when asked (``_forcemerge``, up to ``max_merged_segment``), and a
``_forcemerge`` makes at most ``FORCE_MERGE_MAX_STEPS`` merges.

Settings honoured (``index.merge.policy.*``, as in Elasticsearch): ``segments_per_tier``,
``max_merge_at_once``, ``max_merged_segment``, ``floor_segment``, ``deletes_pct_allowed``,
``expunge_deletes_allowed``. Any other ``index.merge.*`` setting is refused (``UNSUPPORTED``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .segment import KeywordField, NumericField, Segment, TextField

AUTO_MERGE_MAX_BYTES = 256 << 20
FORCE_MERGE_MAX_STEPS = 1000
KNOWN = ("segments_per_tier", "max_merge_at_once", "max_merged_segment", "floor_segment",
         "deletes_pct_allowed", "expunge_deletes_allowed")


@dataclass(frozen=True)
class MergePolicy:
    segments_per_tier: float = 10.0
    max_merge_at_once: int = 10
    max_merged_segment: int = 5 << 30          # Elasticsearch's default, 5gb
    floor_segment: int = 2 << 20               # 2mb
    deletes_pct_allowed: float = 20.0
    expunge_deletes_allowed: float = 10.0

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> MergePolicy:
        """The policy of flat index settings (``merge.policy.segments_per_tier``...);
        raises ``ValueError`` naming a setting that is unknown or out of range."""
        from .storage import parse_byte_size
        kw: dict[str, Any] = {}
        for key, raw in settings.items():
            if not key.startswith("merge."):
                continue
            name = key[len("merge.policy."):] if key.startswith("merge.policy.") else None
            if name not in KNOWN:
                raise ValueError(f"unsupported setting [index.{key}]: shardsearch's merge policy "
                                 f"honours only index.merge.policy.{{{','.join(KNOWN)}}}")
            if raw is None:
                continue
            try:
                if name in ("max_merged_segment", "floor_segment"):
                    val: Any = parse_byte_size(raw, -1)
                    ok = val > 0
                elif name == "max_merge_at_once":
                    val = int(str(raw))
                    ok = val >= 2
                else:
                    val = float(str(raw))
                    ok = val >= 2.0 if name == "segments_per_tier" else \
                        (5.0 <= val <= 50.0 if name == "deletes_pct_allowed" else
                         0.0 <= val <= 100.0)
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"Failed to parse value [{raw}] for setting [index.{key}]")
            kw[name] = val
        return cls(**kw)


def segment_bytes(seg: Segment) -> int:
    """Approximate in-memory size: every column, postings array and the ``_source`` blob."""
    total = seg.sources.nbytes()
    for col in (seg.seq, seg.version, seg.created_gen, seg.deleted_gen):
        total += col.nbytes
    for fd in seg.fields.values():
        if isinstance(fd, (TextField, KeywordField)):
            p = fd.postings
            total += p.nbytes()
            total += fd.present.nbytes + (fd.lengths.nbytes + fd.norms.nbytes
                                          if isinstance(fd, TextField)
                                          else fd.min_ord.nbytes * 2 + fd.value_count.nbytes)
        elif isinstance(fd, NumericField):
            total += fd.values.nbytes + fd.value_docs.nbytes + fd.present.nbytes
            if fd.min is not fd.values:
                total += fd.min.nbytes + fd.max.nbytes
    return int(total)


def allowed_segments(sizes: list[int], policy: MergePolicy) -> int:
    """Lucene's allowed segment count for segments of ``sizes`` bytes: ``segments_per_tier``
    per tier, tiers ``max_merge_at_once`` times apart from the floor up."""
    total = float(sum(sizes))
    if not sizes:
        return 0
    level = float(max(min(sizes), policy.floor_segment))
    allowed = 0.0
    while True:
        count = total / level
        if count < policy.segments_per_tier or level >= policy.max_merged_segment:
            allowed += math.ceil(count)
            break
        allowed += policy.segments_per_tier
        total -= policy.segments_per_tier * level
        level *= policy.max_merge_at_once
    return int(max(allowed, policy.segments_per_tier))


def find_merge(sizes: list[int], dropped: list[float], policy: MergePolicy,
               max_bytes: int) -> list[int] | None:
    """The segments (indexes into ``sizes``) to merge next, or None.

    ``dropped[i]`` is the share of segment ``i``'s rows no reader can see; segments over
    ``max_bytes`` (or half of ``max_merged_segment``: merging them would make a too-big one)
    are left out of size merges. O(s log s) for s segments."""
    cap = min(max_bytes, policy.max_merged_segment)
    for i, (size, d) in enumerate(zip(sizes, dropped)):
        if d * 100.0 > policy.deletes_pct_allowed and size <= cap:
            return [i]
    eligible = [i for i, s in enumerate(sizes) if s <= min(cap, policy.max_merged_segment // 2)]
    if len(eligible) <= allowed_segments([sizes[i] for i in eligible], policy):
        return None
    eligible.sort(key=lambda i: (max(sizes[i], policy.floor_segment), sizes[i], i))
    picked, total = [], 0
    for i in eligible[:policy.max_merge_at_once]:
        if total + sizes[i] > cap and picked:
            break
        picked.append(i)
        total += sizes[i]
    return sorted(picked) if len(picked) >= 2 else None


def force_groups(sizes: list[int], max_num_segments: int) -> list[int] | None:
    """``_forcemerge?max_num_segments=N``: the smallest segments to merge into one so that
    ``N`` are left (None: already at most ``N``)."""
    if len(sizes) <= max_num_segments:
        return None
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    return sorted(order[:len(sizes) - max_num_segments + 1])


def dropped_share(droppable: np.ndarray) -> float:
    return float(droppable.mean()) if len(droppable) else 0.0
