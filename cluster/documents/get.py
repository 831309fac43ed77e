"""``GET /{index}/_doc/{id}``: one document, read from the shard its id (or routing) maps to."""
from __future__ import annotations

from typing import Any

from ..engine.shard_calls import ShardCalls
from ..errors import IndexNotFound
from ..indices.catalog import IndexMeta
from ..indices.routing import shard_for


async def get_doc(indices: dict[str, IndexMeta], backend: Any, index: str, doc_id: str,
                  routing: str | None = None) -> dict[str, Any]:
    """The document as Elasticsearch's get API shows it (``found: false`` when absent)."""
    meta = indices.get(index)
    if meta is None:
        raise IndexNotFound(index)
    sid = shard_for(routing if routing is not None else doc_id, meta.number_of_shards)
    doc = await ShardCalls(backend).get(meta.shards[sid], doc_id)
    if doc is None:
        return {"_index": index, "_id": doc_id, "found": False}
    out: dict[str, Any] = {"_index": index, "_id": doc_id, "_version": doc.version,
                           "_seq_no": doc.seq, "_primary_term": 1, "found": True,
                           "_source": doc.source}
    if doc.routing is not None:
        out["_routing"] = doc.routing
    if getattr(doc, "ignored", ()):
        out["_ignored"] = list(doc.ignored)      # fields ignore_malformed skipped
    return out
