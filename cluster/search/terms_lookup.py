"""``terms`` lookups: before a search's query (or ``post_filter``, or an aggregation's
``filter``/``filters``) goes to the shards, each
``{"terms": {"f": {"index", "id", "path", "routing"}}}`` becomes a plain ``terms`` query on the
values at ``path`` of that document, read through the get path (the shard the id or routing
maps to). As Elasticsearch: a missing document gives no terms (matches nothing), a missing
index is ``index_not_found_exception``, more values than ``index.max_terms_count`` is refused.
Lookups are fetched once each, concurrently.
"""
from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Awaitable, Callable

import orjson

from ..engine.query import nodes as Q
from ..engine.query.validation import MAX_TERMS_COUNT
from ..engine.query.score_nodes import FilterFunction, TermsLookup
from ..errors import IllegalArgument

GetDoc = Callable[[str, str, "str | None"], Awaitable[dict[str, Any]]]


def lookups(q: Any) -> list[TermsLookup]:
    """Every terms lookup in the query tree."""
    if isinstance(q, TermsLookup):
        return [q]
    out: list[TermsLookup] = []
    for child in _children(q):
        out += lookups(child)
    return out


def _children(q: Any) -> list[Any]:
    if not dataclasses.is_dataclass(q):
        return []
    out: list[Any] = []
    for f in dataclasses.fields(q):
        v = getattr(q, f.name)
        if isinstance(v, (Q.Query, FilterFunction)):
            out.append(v)
        elif isinstance(v, tuple):
            out += [x for x in v if isinstance(x, (Q.Query, FilterFunction))]
    return out


def replaced(q: Any, found: dict[TermsLookup, Q.Query]) -> Any:
    """The tree with each lookup replaced by its resolved query."""
    return swap_nodes(q, lambda n: found[n] if isinstance(n, TermsLookup) else None)


def swap_nodes(q: Any, swap: Callable[[Any], Any]) -> Any:
    """The query tree with each node for which ``swap`` returns a value replaced by it (its
    subtree not visited); every other node rebuilt only where something below it changed.
    Shared by the coordinator's resolutions (terms lookups, liked documents)."""
    got = swap(q)
    if got is not None:
        return got
    if not dataclasses.is_dataclass(q) or not _children(q):
        return q
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(q):
        v = getattr(q, f.name)
        if isinstance(v, (Q.Query, FilterFunction)):
            changes[f.name] = swap_nodes(v, swap)
        elif isinstance(v, tuple) and any(isinstance(x, (Q.Query, FilterFunction)) for x in v):
            changes[f.name] = tuple(swap_nodes(x, swap) for x in v)
    return dataclasses.replace(q, **changes)


def values_at(source: Any, path: str) -> list[Any]:
    """``XContentMapValues.extractRawValues``: the values at a dotted path, arrays flattened
    (objects on the way may be arrays too; a key may itself hold dots)."""
    return _values(source, path.split("."))


def _values(node: Any, parts: list[str]) -> list[Any]:
    if isinstance(node, list):
        return [v for item in node for v in _values(item, parts)]
    if not parts:
        return [] if node is None or isinstance(node, dict) else [node]
    if not isinstance(node, dict):
        return []
    out = _values(node.get(parts[0]), parts[1:])
    for i in range(2, len(parts) + 1):
        joined = ".".join(parts[:i])
        if joined in node:
            out += _values(node[joined], parts[i:])
    return out


async def _resolve_one(t: TermsLookup, get_doc: GetDoc, limit: int) -> Q.Query:
    doc = await get_doc(t.index, t.id, t.routing)
    source = doc.get("_source") if doc.get("found") else None
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = orjson.loads(source)
    values = values_at(source, t.path)
    if len(values) > limit:
        raise IllegalArgument(f"The number of terms [{len(values)}] used in the Terms Query "
                              f"request has exceeded the allowed maximum of [{limit}]. "
                              "This maximum can be set by changing the [index.max_terms_count] "
                              "index level setting.")
    return Q.Terms(field=t.field, values=tuple(values), boost=t.boost)


async def resolve(q: Any, get_doc: GetDoc, limit: int = MAX_TERMS_COUNT) -> Any:
    """``q`` with its terms lookups fetched and replaced (``q`` itself when it has none);
    ``limit`` is the searched indices' smallest ``index.max_terms_count``."""
    found = list(dict.fromkeys(lookups(q)))
    if not found:
        return q
    resolved = await asyncio.gather(*(_resolve_one(t, get_doc, limit) for t in found))
    return replaced(q, dict(zip(found, resolved)))


def in_request(req: Any) -> bool:
    """Whether the search's query, post_filter or aggregation filters hold a lookup."""
    aggs = [] if req.aggs is None else _agg_nodes(req.aggs.nodes)
    return bool(lookups(req.query) or lookups(req.post_filter)
                or any(_agg_queries(n) for n in aggs))


def max_terms_count(metas: list[Any]) -> int:
    """The smallest ``index.max_terms_count`` of the searched indices (65,536 by default)."""
    return min((int(m.settings.get("max_terms_count", MAX_TERMS_COUNT)) for m in metas),
               default=MAX_TERMS_COUNT)


async def resolve_aggs(aggs: Any, get_doc: GetDoc, limit: int = MAX_TERMS_COUNT) -> Any:
    """The aggregation request with the lookups of its ``filter`` / ``filters`` queries
    fetched (``aggs`` itself when it has none)."""
    if aggs is None or not any(_agg_queries(n) for n in _agg_nodes(aggs.nodes)):
        return aggs
    return dataclasses.replace(aggs, nodes=tuple([await _resolve_node(n, get_doc, limit)
                                                  for n in aggs.nodes]))


def _agg_nodes(nodes: Any) -> list[Any]:
    return [m for n in nodes for m in (n, *_agg_nodes(n.subs))]


def _agg_queries(node: Any) -> list[TermsLookup]:
    return lookups(node.query) + [t for _, q in node.queries for t in lookups(q)]


async def _resolve_node(node: Any, get_doc: GetDoc, limit: int) -> Any:
    query = None if node.query is None else await resolve(node.query, get_doc, limit)
    queries = tuple([(k, await resolve(q, get_doc, limit)) for k, q in node.queries])
    subs = tuple([await _resolve_node(s, get_doc, limit) for s in node.subs])
    return dataclasses.replace(node, query=query, queries=queries, subs=subs)
