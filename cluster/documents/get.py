"""``GET /{index}/_doc/{id}``: one document, read from the shard its id (or routing) maps to.

What the answer shows is a :class:`GetOptions` — the same for a get and for each document of an
``_mget``: ``_source`` filtering (the search's URL spelling, ``source_from_params``),
``stored_fields`` (fields mapped with ``store: true``, read from ``_source``), and ``version``
with ``version_type``, which turns a different current version into a 409.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from ..engine.shard_calls import ShardCalls
from ..engine.source_filter import SourceFilter, filter_source
from ..errors import IllegalArgument, IndexNotFound, VersionConflict
from ..indices.catalog import IndexMeta
from ..indices.routing import shard_for
from ..search.request import source_from_params

VERSION_TYPES = ("internal", "external", "external_gte")


@dataclass(frozen=True)
class GetOptions:
    """How a get shows its document; ``explicit_source``: ``_source`` was asked for by name."""

    source: SourceFilter = field(default_factory=SourceFilter)
    explicit_source: bool = False
    stored_fields: tuple[str, ...] | None = None
    version: int | None = None
    version_type: str = "internal"
    routing: str | None = None


def parse_version(value: Any, version_type: Any) -> tuple[int | None, str]:
    """``version`` and ``version_type`` as Elasticsearch checks them."""
    vt = "internal" if version_type is None else str(version_type)
    if vt not in VERSION_TYPES:
        raise IllegalArgument(f"No version type match [{vt}]")
    if value is None:
        return None, vt
    try:
        return int(value), vt
    except (TypeError, ValueError):
        raise IllegalArgument(f"Failed to parse int parameter [version] with value "
                              f"[{value}]") from None


def _stored(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = value if isinstance(value, list) else str(value).split(",")
    return tuple(str(n).strip() for n in names if str(n).strip())


def get_options(params: dict[str, Any]) -> GetOptions:
    """The options of a get from its URL parameters (or an ``_mget`` item's keys)."""
    source = source_from_params({k: v for k, v in params.items() if k.startswith("_source")
                                 and isinstance(v, str)}, SourceFilter())
    explicit = any(k in params for k in ("_source", "_source_includes", "_source_excludes"))
    version, vt = parse_version(params.get("version"), params.get("version_type"))
    return GetOptions(source=source, explicit_source=explicit,
                      stored_fields=_stored(params.get("stored_fields")), version=version,
                      version_type=vt, routing=params.get("routing"))


async def get_doc(indices: dict[str, IndexMeta], backend: Any, index: str, doc_id: str,
                  routing: str | None = None, options: GetOptions | None = None
                  ) -> dict[str, Any]:
    """The document as Elasticsearch's get API shows it (``found: false`` when absent)."""
    opts = options or GetOptions(routing=routing)
    meta = indices.get(index)
    if meta is None:
        raise IndexNotFound(index)
    route = routing if routing is not None else opts.routing
    sid = shard_for(route if route is not None else doc_id, meta.number_of_shards)
    doc = await ShardCalls(backend).get(meta.shards[sid], doc_id)
    if doc is None:
        return {"_index": index, "_id": doc_id, "found": False}
    if opts.version is not None and doc.version != opts.version:
        raise VersionConflict(f"[{doc_id}]: version conflict, current version [{doc.version}] "
                              f"is different than the one provided [{opts.version}]",
                              index=index, shard=str(sid), index_uuid="_na_")
    out: dict[str, Any] = {"_index": index, "_id": doc_id, "_version": doc.version,
                           "_seq_no": doc.seq, "_primary_term": 1, "found": True}
    if doc.routing is not None:
        out["_routing"] = doc.routing
    if getattr(doc, "ignored", ()):
        out["_ignored"] = list(doc.ignored)      # fields ignore_malformed skipped
    shape_source(out, doc.source, meta, opts)
    return out


def shape_source(out: dict[str, Any], source: bytes, meta: IndexMeta, opts: GetOptions) -> None:
    """``_source`` (filtered, or hidden by ``stored_fields``) and ``fields`` into ``out``."""
    stored = opts.stored_fields
    if stored is not None:
        fields = stored_values(orjson.loads(source), stored, meta)
        if fields:
            out["fields"] = fields
    show = opts.source.enabled and (stored is None or "_source" in stored
                                    or opts.explicit_source)
    if not show or not meta.mapping.source_enabled:   # ``_source: {enabled: false}``
        return
    if opts.source.is_identity:
        out["_source"] = source
    else:
        out["_source"] = orjson.dumps(filter_source(orjson.loads(source), opts.source.includes,
                                                    opts.source.excludes))


def _mapping_spec(properties: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: Any = {"properties": properties}
    for part in path.split("."):
        node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
        if node is None:
            return None
    return node if isinstance(node, dict) else None


def stored_values(source: dict[str, Any], names: tuple[str, ...], meta: IndexMeta
                  ) -> dict[str, list[Any]]:
    """The values of the requested fields mapped with ``store: true`` (Lucene keeps those
    apart from ``_source``; here they are read from it, which gives the same values)."""
    out: dict[str, list[Any]] = {}
    for name in names:
        spec = _mapping_spec(meta.mapping.properties, name)
        if not spec or not spec.get("store"):
            continue
        node: Any = source
        for part in name.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        values = node if isinstance(node, list) else [node]
        values = [v for v in values if v is not None]
        if values:
            out[name] = values
    return out
