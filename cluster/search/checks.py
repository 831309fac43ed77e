"""What a search may ask for, checked before any fan-out.

Elasticsearch checks these on each shard; we check them once at the coordinator and report them
as the shards would have (``failures.shard_level``): the result window (or a scroll's batch
size), the rescore window, ``docvalue_fields`` / ``script_fields`` counts, clause limits and
``search.allow_expensive_queries``.
"""
from __future__ import annotations

from ..engine.binary import check_searchable
from ..engine.completion import refuse_queries_on_completion
from ..engine.limits import check_expensive_queries, expensive_allowed
from ..engine.query.rewrite import expand
from ..engine.query.validation import check_clause_limits
from .slicing import check_slice_field, check_slice_limit
from ..errors import IllegalArgument, SearchError
from ..indices.catalog import IndexMeta
from .failures import shard_level
from .request import SearchRequest, refuse_unsupported


def check_request(req: SearchRequest, metas: list[IndexMeta],
                  cluster_settings: dict[str, dict[str, str]]) -> None:
    """Raise what Elasticsearch would for ``req`` on the indices ``metas``."""
    _check_window(req, metas)
    for m in metas:
        _check_fetch_limits(req, m)
        # too_many_clauses / regex length before any fan-out
        try:
            check_clause_limits(req.query, m.mapping, max_regex_length=int(
                m.settings.get("max_regex_length", 1000)), max_terms_count=int(
                m.settings.get("max_terms_count", 65536)))
            check_searchable(req.query, m.mapping)
            if any(ft.type == "completion" for ft in m.mapping.fields.values()):
                refuse_queries_on_completion(expand(req.query, m.mapping), m.mapping)
        except SearchError as e:
            if e.es_type != "query_shard_exception":
                raise
            raise shard_level(m.name, e) from None
        if not expensive_allowed(cluster_settings):
            check_expensive_queries(expand(req.query, m.mapping), m.mapping)
        _check_slice(req, m)
    refuse_unsupported(req)


def _check_slice(req: SearchRequest, m: IndexMeta) -> None:
    """A slice's field and, for a scroll, ``index.max_slices_per_scroll`` (slicing.py)."""
    if req.slice is None:
        return
    if req.scroll:
        check_slice_limit(req.slice, m.settings)
    ft = m.mapping.get(req.slice.field) if req.slice.field else None
    check_slice_field(req.slice, ft.kind if ft is not None else None)


def _check_window(req: SearchRequest, metas: list[IndexMeta]) -> None:
    """``from + size`` within each index's ``max_result_window``; a scroll's batch within the
    smallest of them."""
    if not req.scroll:
        for m in metas:
            window = req.from_ + req.size
            if window > m.max_result_window:
                raise shard_level(m.name, IllegalArgument(
                    "Result window is too large, from + size must be less than or equal to: "
                    f"[{m.max_result_window}] but was [{window}]. See the scroll api for a "
                    "more efficient way to request large data sets. This limit can be set by "
                    "changing the [index.max_result_window] index level setting."))
    elif metas:
        limit = min(m.max_result_window for m in metas)
        if req.size > limit:
            raise IllegalArgument(
                "Batch size is too large, size must be less than or equal to: "
                f"[{limit}] but was [{req.size}]. Scroll batch sizes cost as much memory as "
                "result windows so they are controlled by the [index.max_result_window] "
                "index level setting.")


def _check_fetch_limits(req: SearchRequest, m: IndexMeta) -> None:
    """Per-index ceilings on what one search may ask for (ES ``DefaultSearchContext``)."""
    s = m.settings
    max_rescore = int(s.get("max_rescore_window", m.max_result_window))
    for w in req.rescore_windows:
        if w > max_rescore:
            raise IllegalArgument(
                f"Rescore window [{w}] is too large. It must be less than [{max_rescore}]. This "
                "prevents allocating massive heaps for storing the results to be rescored. This "
                "limit can be set by changing the [index.max_rescore_window] index level setting.")
    for what, n, key, default in (
            ("docvalue_fields", len(req.docvalue_fields), "max_docvalue_fields_search", 100),
            ("script_fields", len(req.script_fields), "max_script_fields", 32)):
        limit = int(s.get(key, default))
        if n > limit:
            raise IllegalArgument(
                f"Trying to retrieve too many {what}. Must be less than or equal to: [{limit}] "
                f"but was [{n}]. This limit can be set by changing the [index.{key}] index "
                "level setting.")
