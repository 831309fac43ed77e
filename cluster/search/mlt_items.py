"""``more_like_this`` items: before a search goes to the shards, each liked or unliked stored
document (``{"_index", "_id", "routing"}``) is read through the get path and carried in the
query as its source, so every shard chooses terms from the same documents. As Elasticsearch's
multi-term-vectors fetch: a missing document or index is left out; an item without
``_index`` names the searched index. Fetched once each, concurrently.
"""
from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Awaitable, Callable

import orjson

from ..engine.query.more_like_this import LikeItem, MoreLikeThis
from ..engine.query.rewrite import walk
from ..errors import IllegalArgument, SearchError
from .terms_lookup import swap_nodes

GetDoc = Callable[[str, str, "str | None"], Awaitable[dict[str, Any]]]


def in_request(req: Any) -> bool:
    """Whether the query or ``post_filter`` holds a ``more_like_this`` with stored items;
    one inside an aggregation is refused (its terms would not be counted)."""
    if req.aggs is not None and _in_aggs(req.aggs.nodes):
        raise IllegalArgument("[more_like_this] inside aggregations is not supported by this "
                              "server")
    return any(_stored(n) for q in (req.query, req.post_filter) if q is not None
               for n in walk(q))


def _in_aggs(nodes: Any) -> bool:
    for n in nodes:
        queries = ([n.query] if n.query is not None else []) + [q for _, q in n.queries]
        if any(isinstance(x, MoreLikeThis) for q in queries for x in walk(q)) \
                or _in_aggs(n.subs):
            return True
    return False


def _stored(n: Any) -> bool:
    return isinstance(n, MoreLikeThis) and any(
        i.id is not None and not i.fetched for i in (*n.like_items, *n.unlike_items))


async def resolve(q: Any, get_doc: GetDoc, default_index: str | None) -> Any:
    """``q`` with the stored items of its ``more_like_this`` queries fetched."""
    if q is None or not any(_stored(n) for n in walk(q)):
        return q
    items = list(dict.fromkeys(i for n in walk(q) if _stored(n)
                               for i in (*n.like_items, *n.unlike_items) if i.id is not None))
    fetched = await asyncio.gather(*(_fetch(i, get_doc, default_index) for i in items))
    return _replaced(q, dict(zip(items, fetched)))


async def _fetch(item: LikeItem, get_doc: GetDoc, default_index: str | None) -> LikeItem:
    index = item.index or default_index
    if index is None:
        raise IllegalArgument("[more_like_this] an item without [_index] in a search that "
                              "does not name exactly one index is not supported by this "
                              "server")
    try:
        doc = await get_doc(index, str(item.id), item.routing)
    except SearchError as e:
        if e.status == 404:          # a missing index: the item is left out
            return dataclasses.replace(item, index=index, fetched=True)
        raise
    source = doc.get("_source") if doc.get("found") else None
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = orjson.loads(source)
    text = None if source is None else orjson.dumps(source).decode()
    return dataclasses.replace(item, index=index, doc=text, fetched=True)


def _replaced(q: Any, found: dict[LikeItem, LikeItem]) -> Any:
    def swap(n: Any) -> Any:
        if not isinstance(n, MoreLikeThis):
            return None
        return dataclasses.replace(
            n, like_items=tuple(found.get(i, i) for i in n.like_items),
            unlike_items=tuple(found.get(i, i) for i in n.unlike_items))
    return swap_nodes(q, swap)
