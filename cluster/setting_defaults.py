"""The defaults section of ``include_defaults=true`` (``GET /{index}``, ``GET _settings``).

Only settings this server reads, each with the value it uses when an index does not set it
(the constant the reading code falls back to), never Elasticsearch's list: a setting the
server ignores is not shown as if it applied. Flat names without ``index.``, as an index's
own settings are kept (``catalog.flat_settings``). It sits above the layers whose readers
it names; the coordinator adds it to the answers.
"""
from __future__ import annotations

from typing import Any

from .distribution.translog_settings import DEFAULT_FLUSH_THRESHOLD
from .engine.merge_policy import MergePolicy
from .engine.query.validation import MAX_TERMS_COUNT
from .indices.catalog import DEFAULT_MAX_RESULT_WINDOW, IndexMeta
from .search.slicing import DEFAULT_MAX_SLICES_PER_SCROLL
from .values import nest

_MERGE = MergePolicy()

# setting -> the value used when unset (where the code reads it)
FIXED_DEFAULTS: dict[str, str] = {
    "refresh_interval": "1s",                                     # catalog.refresh_interval_s
    "max_result_window": str(DEFAULT_MAX_RESULT_WINDOW),          # catalog.max_result_window
    "max_docvalue_fields_search": "100",                          # search/checks.py
    "max_script_fields": "32",                                    # search/checks.py
    "max_regex_length": "1000",                                   # search/checks.py
    "max_terms_count": str(MAX_TERMS_COUNT),                      # search/checks.py
    "max_slices_per_scroll": str(DEFAULT_MAX_SLICES_PER_SCROLL),  # search/slicing.py
    "mapping.ignore_malformed": "false",                          # indices/admin.py
    "translog.durability": "request",                             # translog_settings.py
    "translog.sync_interval": "5s",
    "translog.flush_threshold_size": f"{DEFAULT_FLUSH_THRESHOLD >> 20}mb",
    "merge.policy.segments_per_tier": str(_MERGE.segments_per_tier),   # merge_policy.py
    "merge.policy.max_merge_at_once": str(_MERGE.max_merge_at_once),
    "merge.policy.max_merged_segment": f"{_MERGE.max_merged_segment >> 30}gb",
    "merge.policy.floor_segment": f"{_MERGE.floor_segment >> 20}mb",
    "merge.policy.deletes_pct_allowed": str(_MERGE.deletes_pct_allowed),
    "merge.policy.expunge_deletes_allowed": str(_MERGE.expunge_deletes_allowed),
}


def index_defaults(meta: IndexMeta) -> dict[str, Any]:
    """``{"index": {...}}``: the defaults ``meta`` does not override, nested as Elasticsearch
    prints them; ``max_rescore_window`` follows the index's own ``max_result_window``."""
    flat = dict(FIXED_DEFAULTS, max_rescore_window=str(meta.max_result_window))
    return {"index": nest({k: v for k, v in sorted(flat.items())
                                if k not in meta.settings})}
