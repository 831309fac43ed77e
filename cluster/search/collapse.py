"""Field collapsing at the coordinator: the request's ``collapse``, its rules, and the
``inner_hits`` of each group (Elasticsearch's ``ExpandSearchPhase``).

The shards send each group's first row (``engine/collapse.py``); ``reduce.merge`` keeps the
first of each key in the global order, so a page holds one hit per group, exactly. Inner hits
are one more search per hit of the page: the query, narrowed to the group's key, with the
inner hits' own ``sort``, ``from`` and ``size`` — on the same snapshot.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..engine.query.nodes import Bool, Exists, Query, Term
from ..engine.query.parse_helpers import token_name
from ..engine.sorting import SortField, parse_sort
from ..engine.source_filter import SourceFilter, parse_source
from ..errors import IllegalArgument, ParsingError

COLLAPSE_KEYS = ("field", "inner_hits", "max_concurrent_group_searches")
INNER_HITS_KEYS = ("name", "from", "size", "sort", "version", "seq_no_primary_term", "_source",
                   "fields", "track_scores")
DEFAULT_INNER_SIZE = 3        # InnerHitBuilder's default
MAX_INNER_RESULT_WINDOW = 100  # index.max_inner_result_window's default


@dataclass(frozen=True)
class InnerHits:
    """One ``inner_hits`` entry of a collapse."""

    name: str
    from_: int = 0
    size: int = DEFAULT_INNER_SIZE
    sort: tuple[SortField, ...] = ()
    version: bool = False
    seq_no_primary_term: bool = False
    source: SourceFilter = SourceFilter()
    fields: tuple[Any, ...] = ()
    track_scores: bool = False


@dataclass(frozen=True)
class Collapse:
    """``collapse``: the field, its inner hits, and how many group searches may run at once."""

    field: str
    inner_hits: tuple[InnerHits, ...] = ()
    max_concurrent_group_searches: int = 0   # 0: Elasticsearch's default (no set bound)


def parse_collapse(value: Any) -> Collapse | None:
    """The body's ``collapse`` object (Elasticsearch's ``CollapseBuilder`` shape)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ParsingError(f"[collapse] collapse doesn't support values of type: "
                           f"{token_name(value)}")
    for k in value:
        if k not in COLLAPSE_KEYS:
            raise ParsingError(f"[collapse] unknown field [{k}]")
    field = value.get("field")
    if not isinstance(field, str) or not field:
        raise ParsingError("[collapse] field must be a non-empty string")
    mcgs = value.get("max_concurrent_group_searches", 0)
    if isinstance(mcgs, bool) or not isinstance(mcgs, int) or mcgs < 0:
        raise IllegalArgument("maxConcurrentGroupRequests must be positive")
    raw = value.get("inner_hits")
    entries = raw if isinstance(raw, list) else [] if raw is None else [raw]
    inner = tuple(_parse_inner(e, field) for e in entries)
    names = [i.name for i in inner]
    if len(set(names)) != len(names):
        raise IllegalArgument(f"[inner_hits] already contains an entry for key "
                              f"[{next(n for n in names if names.count(n) > 1)}]")
    return Collapse(field, inner, mcgs)


def _parse_inner(value: Any, field: str) -> InnerHits:
    if not isinstance(value, dict):
        raise ParsingError(f"[inner_hits] inner_hits doesn't support values of type: "
                           f"{token_name(value)}")
    for k in value:
        if k not in INNER_HITS_KEYS:
            raise ParsingError(f"[inner_hits] unknown field [{k}]")
    out = InnerHits(
        name=str(value.get("name", field)),
        from_=_non_negative(value.get("from", 0), "from"),
        size=_non_negative(value.get("size", DEFAULT_INNER_SIZE), "size"),
        sort=parse_sort(value["sort"]) if "sort" in value else (),
        version=bool(value.get("version", False)),
        seq_no_primary_term=bool(value.get("seq_no_primary_term", False)),
        source=parse_source(value.get("_source")),
        fields=tuple(value.get("fields") or ()),
        track_scores=bool(value.get("track_scores", False)))
    if out.from_ + out.size > MAX_INNER_RESULT_WINDOW:
        raise IllegalArgument(
            f"Inner result window is too large, the inner hit definition's [{out.name}]'s "
            f"from + size must be less than or equal to: [{MAX_INNER_RESULT_WINDOW}] but was "
            f"[{out.from_ + out.size}]. This limit can be set by changing the "
            "[index.max_inner_result_window] index level setting.")
    return out


def _non_negative(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise IllegalArgument(f"illegal {name} value, at least 0 or higher")
    return value


def collapse_errors(collapse: Collapse | None, scroll: bool, rescore: bool,
                    search_after: bool, sort: tuple[SortField, ...]) -> list[str]:
    """Validation errors of a collapsed search (``SearchRequest.validate``'s texts)."""
    if collapse is None:
        return []
    out = []
    if scroll:
        out.append("cannot use `collapse` in a scroll context")
    if rescore:
        out.append("cannot use `collapse` in conjunction with `rescore`")
    if search_after and (len(sort) != 1 or sort[0].field != collapse.field):
        out.append("cannot use `collapse` in conjunction with `search_after` unless the search "
                   "is sorted on the same field. Multiple sort fields are not allowed.")
    return out


def group_query(query: Query, field: str, key: Any) -> Query:
    """``query`` narrowed to one group (documents without a value form the ``null`` group)."""
    if key is None:
        return Bool(must=(query,), must_not=(Exists(field=field),))
    return Bool(must=(query,), filter=(Term(field=field, value=key),))


def key_fields(hit: dict[str, Any], field: str, key: Any) -> None:
    """The collapse key in the hit's ``fields``, as Elasticsearch shows it."""
    if key is not None:
        hit.setdefault("fields", {})[field] = [key]


async def expand_groups(run: Any, req: Any, hits: list[dict[str, Any]], keys: list[Any],
                        snapshot: dict[tuple[str, int], int]) -> None:
    """Each hit's ``inner_hits``: one search per (hit, inner hits entry), at most
    ``max_concurrent_group_searches`` at once (default: all of one page)."""
    collapse = req.collapse
    jobs = [(i, ih) for i in range(len(hits)) for ih in collapse.inner_hits]
    limit = asyncio.Semaphore(collapse.max_concurrent_group_searches or max(1, len(jobs)))

    async def one(i: int, ih: InnerHits) -> dict[str, Any]:
        async with limit:
            sub = _inner_request(req, ih, group_query(req.query, collapse.field, keys[i]))
            resp = await run(sub, snapshot)
            return resp["hits"]
    results = await asyncio.gather(*(one(i, ih) for i, ih in jobs))
    for (i, ih), section in zip(jobs, results):
        hits[i].setdefault("inner_hits", {})[ih.name] = {"hits": section}


def _inner_request(req: Any, ih: InnerHits, query: Query) -> Any:
    from dataclasses import replace
    return replace(req, query=query, from_=ih.from_, size=ih.size, sort=ih.sort,
                   version=ih.version, seq_no_primary_term=ih.seq_no_primary_term,
                   source=ih.source, fields=ih.fields, track_scores=ih.track_scores,
                   track_total_hits=True, collapse=None, aggs=None, post_filter=None,
                   search_after=None, explain=False, profile=False, docvalue_fields=(),
                   stored_fields=None, named=(), highlight=None, from_given=ih.from_ > 0,
                   terminate_after=None, paging="from_size", min_score=req.min_score)
