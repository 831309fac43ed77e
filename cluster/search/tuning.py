"""The knobs of the search path, shared by its phases (tests and benchmarks turn them)."""
from __future__ import annotations

from dataclasses import dataclass

from .sample_and_range import DEFAULT_SAMPLES


@dataclass
class SearchTuning:
    """When a page takes which path; none of these changes an answer, only its cost."""

    # pages with from + size up to this come back with their documents from the query phase
    prefetch_max: int = 50
    # deep pages: the range round's rows come back with their documents up to this many
    # (a range holds ~size + 2 m / samples rows per shard, most not on the page: decompressing
    # hundreds of sources cost more than the fetch round it saves)
    prefetch_deep_max: int = 50
    # pages at or beyond this depth use the sample-and-range method (search/sample_and_range.py);
    # a request's ``paging`` parameter overrides the choice
    deep_page_threshold: int = 1000
    deep_page_samples: int = DEFAULT_SAMPLES
