"""Sliced scroll and point in time: ``{"slice": {"id": i, "max": m, "field": f}}``.

Elasticsearch's ``SliceBuilder.toFilter`` decides per shard: with one shard the slice is a
filter on the documents; with at least as many slices as shards, slice ``i`` lives on shard
``i % shards`` only and is split there among the slices that share the shard; with fewer slices
than shards, slice ``i`` takes the whole shards ``s`` with ``s % max == i``. Elasticsearch still
sends the request to every shard and answers "no documents" from the others; we do not ask those
shards at all (OpenSearch 2.19 does the same), so a slice's ``_shards.total`` counts only the
shards it reads — beyond Elasticsearch, and the point of slicing: N parallel readers, each
talking to few shards. The union of the slices of one snapshot is every document once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.query.nodes import Bool, MatchAll, Query, Slice
from ..errors import IllegalArgument, ParsingError, XContentParseError

DEFAULT_MAX_SLICES_PER_SCROLL = 1024
_NUMERIC_KINDS = ("numeric", "date", "boolean")


@dataclass(frozen=True)
class SliceSpec:
    """The request's ``slice``: which part (``id``) of how many (``max``), by what."""

    id: int
    max: int
    field: str | None = None


def parse_slice(value: Any) -> SliceSpec:
    """``slice`` as Elasticsearch's ``SliceBuilder`` parses and checks it (same texts)."""
    if not isinstance(value, dict):
        raise ParsingError("[slice] failed to parse object")
    for key in value:
        if key not in ("id", "max", "field"):
            raise XContentParseError(f"[1:1] [slice] unknown field [{key}]")
    id_, max_ = _int(value.get("id", -1), "id"), _int(value.get("max", -1), "max")
    field = value.get("field")
    if field is not None and not isinstance(field, str):
        raise XContentParseError("[1:1] [slice] failed to parse field [field]")
    if "id" in value and id_ < 0:
        raise IllegalArgument("id must be greater than or equal to 0")
    if "max" in value and max_ <= 1:
        raise IllegalArgument("max must be greater than 1")
    if "id" in value and "max" in value and id_ >= max_:
        raise IllegalArgument("max must be greater than id")
    if "id" not in value or "max" not in value:
        raise IllegalArgument("[slice] requires both [id] and [max]")
    return SliceSpec(id_, max_, field)


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise XContentParseError(f"[1:1] [slice] failed to parse field [{name}]")
    try:
        return int(value)
    except ValueError:
        raise XContentParseError(f"[1:1] [slice] failed to parse field [{name}]") from None


def check_slice(spec: SliceSpec, *, scroll: bool, pit: bool) -> None:
    """A slice partitions a scroll or a point in time, nothing else (Elasticsearch's
    ``SearchService`` text)."""
    if not scroll and not pit:
        raise IllegalArgument("`slice` cannot be used outside of a scroll context or PIT context",
                              es_type="search_exception")
    if pit and spec.field == "_id":
        raise IllegalArgument("cannot slice on [_id] when using [point-in-time]")


def check_slice_limit(spec: SliceSpec, index_settings: dict[str, Any]) -> None:
    """``index.max_slices_per_scroll`` (default 1024), checked for scrolls as in Elasticsearch."""
    limit = int(index_settings.get("max_slices_per_scroll", DEFAULT_MAX_SLICES_PER_SCROLL))
    if spec.max > limit:
        raise IllegalArgument(
            f"The number of slices [{spec.max}] is too large. It must be less than [{limit}]. "
            "This limit can be set by changing the [index.max_slices_per_scroll] index level "
            "setting.")


def check_slice_field(spec: SliceSpec, kind: str | None) -> None:
    """A ``field`` slice needs a numeric field with doc values (``kind``: its mapped kind)."""
    if spec.field is None or spec.field == "_id":
        return
    if kind is None:
        raise IllegalArgument(f"field {spec.field} not found")
    if kind not in _NUMERIC_KINDS:
        raise IllegalArgument(f"cannot load numeric doc values on {spec.field}")


def shard_part(spec: SliceSpec, shard: int, shards: int) -> Slice | MatchAll | None:
    """What slice ``spec`` reads of ``shard`` (of ``shards``): None (nothing: the shard is not
    asked), everything, or one part of it (``SliceBuilder.toFilter``)."""
    if shards == 1:
        return Slice(id=spec.id, max=spec.max, field=spec.field)
    if spec.max >= shards:
        if spec.id % shards != shard:
            return None
        in_shard = spec.max // shards + (1 if spec.max % shards > shard else 0)
        if in_shard == 1:
            return MatchAll()
        return Slice(id=spec.id // shards, max=in_shard, field=spec.field)
    return MatchAll() if shard % spec.max == spec.id else None


def sliced_query(query: Query, part: Slice | MatchAll) -> Query:
    """``query`` restricted to a shard's part of the slice (a filter: scores do not change)."""
    if isinstance(part, MatchAll):
        return query
    return Bool(must=(query,), filter=(part,))
