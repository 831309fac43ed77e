"""Writes: ``_bulk`` (and every single-document write, which is a bulk of one).

The path of a bulk, one named step each:

1. **accept** each item in arrival order: check it, give it an id if it has none, parse the
   document against the mapping when it may grow the mapping or fail (``Mapping.accepts``), and
   number it with the index's next sequence number — assigned here, synchronously, so the write
   order is the order of arrival. A failing item (bad mapping, conflict, missing document) fails
   alone;
2. **route** the accepted writes of each index at once (Murmur3 of ``routing`` or ``_id``) into
   one batch per shard;
3. **send** every batch in one fan-out (with the index's mapping: the shard parses the documents
   under it), after durability recorded the grown mappings and sequence numbers;
4. **spread** a mapping grown only by a failed item to the shards that got no batch;
5. **collect** the shards' results into the items' places (a shard that failed fails its items
   with 503);
6. **respond** as Elasticsearch does, or with the items as one JSON text (``as_json``) that the
   HTTP layer splices into its response instead of copying and re-encoding a list of dicts.
"""
from __future__ import annotations

import asyncio
import base64
import os
import pickle
import time
from typing import Any, Protocol

import numpy as np
import orjson

from ..engine.gcpause import gc_paused
from ..engine.doc_parsing import parse_document
from ..engine.doc_shape import doc_shape
from ..engine.exact_json import UnstorableValue, exact_json
from ..engine.writes import BatchBuilder
from ..engine.shard_calls import ShardCalls
from ..errors import IllegalArgument, IndexNotFound, MapperParsing, SearchError, domain_error
from ..indices.aliases import aliased
from ..indices.catalog import IndexMeta, validate_index_name
from ..indices.routing import shards_for
from .versioning import write_conditions

# one accepted write: (position, index, action, id, seq, source bytes, routing, extra)
Write = tuple[int, str, str, str, int, Any, Any, Any]


class WriteTarget(Protocol):
    """What a bulk needs of the coordinator."""

    indices: dict[str, IndexMeta]
    backend: Any
    durable: Any

    def auto_create(self, name: str) -> IndexMeta: ...
    def write_index(self, name: str, routing: Any) -> tuple[str, Any]: ...
    def mark_dirty(self, index: str, shard: int) -> None: ...


class ActionRequestValidationError(SearchError):
    es_type = "action_request_validation_exception"
    status = 400

    def __init__(self, what: str) -> None:
        super().__init__(f"Validation Failed: 1: {what};")


def generate_id() -> str:
    """A 20-character, URL-safe id like Elasticsearch's auto-generated ones."""
    raw = int(time.time() * 1000).to_bytes(6, "big") + os.urandom(9)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def bulk(c: WriteTarget, items: list[dict[str, Any]] | bytes, refresh: bool = False,
               as_json: bool = False) -> dict[str, Any]:
    """Apply a batch of writes. Each item: ``action`` (index/create/delete/update), ``index``,
    ``id``, ``source`` (dict) or ``raw`` (its JSON bytes, with ``shape``:
    ``engine/doc_shape.py``), ``routing``, optional ``if_seq_no``. The steps are the module docstring's."""
    t0 = time.perf_counter()
    if isinstance(items, bytes):   # the HTTP layer's items, pickled (see api/routes)
        with gc_paused():
            items = pickle.loads(items)
    results: list[dict[str, Any] | None] = [None] * len(items)
    changed: set[str] = set()       # indices whose mapping this bulk grew
    with gc_paused():   # thousands of objects that all stay
        known: dict[str, IndexMeta] = {}
        accepted = [w for pos, item in enumerate(items)
                    if (w := accept(c, pos, item, results, changed, known)) is not None]
        per_shard = route(c, accepted)
        del accepted   # gone before the collector resumes: it never walks them
        if not refresh:
            for name, sid in per_shard:
                c.mark_dirty(name, sid)
    if c.durable is not None:   # mappings grown by this bulk, seq high-water marks
        c.durable.before_writes({n for n, _ in per_shard} | changed, changed)
    keys = list(per_shard)
    outcomes = await send(c, per_shard, keys, refresh)
    await spread_mappings(c, changed, keys)
    with gc_paused():   # the items' results live only in here (as JSON): no collection
        collect(keys, outcomes, per_shard, results, refresh)   # walks or promotes them
        out = respond(items, results, t0, as_json)
        if as_json:
            results.clear()
    return out


def accept(c: WriteTarget, pos: int, item: dict[str, Any], results: list[Any],
           changed: set[str], known: dict[str, IndexMeta]) -> Write | None:
    """Check and number one item; a failure goes to ``results[pos]`` and gives None.
    ``known``: the indices this bulk already wrote to by their own name (no alias, no date
    math), which later items naming them need not resolve again."""
    action = item["action"]
    name = item.get("index")
    try:
        meta = known.get(name) if name and not item.get("require_alias") else None
        if meta is not None:   # an index this bulk already resolved
            routing = item.get("routing")
        else:
            if not name:
                raise ActionRequestValidationError("index is missing")
            if item.get("require_alias") and not aliased(c.indices, name):
                raise IndexNotFound(name, reason_suffix=name)
            given = name
            name, routing = c.write_index(name, item.get("routing"))   # aliases, date math
            validate_index_name(name)
            meta = c.auto_create(name) if action != "delete" else c.indices.get(name)
            if meta is None:
                raise IndexNotFound(name)
            if name == given:
                known[name] = meta
        doc_id = _doc_id(item, action)
        source_bytes = None
        if action in ("index", "create"):
            source_bytes = _source_of_index(item, meta, doc_id, changed)
        elif action == "update":   # updates read before they write: documents/update.py
            raise IllegalArgument("an update is applied by documents/update.py, not as a write")
        extra: dict[str, Any] | None = write_conditions(item) or None
        seq = meta.next_seq
        meta.next_seq += 1
        return (pos, name, action, doc_id, seq, source_bytes,
                None if routing is None else str(routing), extra)
    except SearchError as e:
        results[pos] = {"_index": name, "_id": item.get("id"), "status": e.status,
                        "error": e.to_cause()}
        return None


def _doc_id(item: dict[str, Any], action: str) -> str:
    doc_id = item.get("id")
    if doc_id is None:
        if action in ("delete", "update"):
            raise ActionRequestValidationError("id is missing")
        doc_id = generate_id()
    doc_id = str(doc_id)
    if not doc_id:   # IndexRequest.validate / DeleteRequest.validate
        raise ActionRequestValidationError("id is missing" if action in ("delete", "update")
                                           else "if _id is specified it must not be empty")
    if len(doc_id.encode()) > 512:
        raise IllegalArgument(f"id [{doc_id}] is too long, must be no longer than "
                              f"512 bytes but was: {len(doc_id.encode())}")
    return doc_id


def _source_of_index(item: dict[str, Any], meta: IndexMeta, doc_id: str,
                     changed: set[str]) -> bytes:
    # the shard parses every document; the coordinator only those that may grow the mapping
    # or fail (in write order), see ``Mapping.accepts``
    src = item.get("source")
    raw = item.get("raw")
    refused = None
    if raw is None:   # a Python object (the Python API, an update's new source): stored only
        try:          # if it reads back as it is (exact_json.py)
            raw = exact_json(src)
        except UnstorableValue as e:
            refused = e
    shape = item.get("shape") if src is None else doc_shape(src)
    if refused is not None or not meta.mapping.accepts(shape):
        if src is None:
            src = orjson.loads(raw)   # the HTTP layer sends the bytes only
        if not isinstance(src, dict):
            raise MapperParsing("failed to parse, document is empty"
                                if src is None else "failed to parse")
        try:   # the mapping's own errors first, as Elasticsearch's (a too-deep document,
            _, did_change = parse_document(src, meta.mapping, doc_id)   # an unsigned_long
        except (TypeError, ValueError, RecursionError):                  # past 2^64-1)
            if refused is None:
                raise
            raise refused from None
        if did_change:
            changed.add(meta.name)
    if refused is not None:
        raise refused
    return raw


def route(c: WriteTarget, accepted: list[Write]) -> dict[tuple[str, int], BatchBuilder]:
    """One batch per (index, shard), items in arrival order; the batches of an index in
    shard order. O(n) plus a NumPy pass per index and shard."""
    by_index: dict[str, list[Write]] = {}
    for w in accepted:
        ws = by_index.get(w[1])
        if ws is None:
            ws = by_index[w[1]] = []
        ws.append(w)
    per_shard: dict[tuple[str, int], BatchBuilder] = {}
    for name, ws in by_index.items():
        n = c.indices[name].number_of_shards
        sids = shards_for([w[3] if w[6] is None else w[6] for w in ws], n)
        # not ``np.unique``: its first call imports ``numpy.ma`` (~1,000 objects that then
        # sit among the first bulk request's, keeping their memory pages after the load)
        for sid in np.flatnonzero(np.bincount(sids, minlength=n)).tolist():
            per_shard[(name, sid)] = BatchBuilder.of(
                [ws[k] for k in np.flatnonzero(sids == sid).tolist()])
    return per_shard


async def send(c: WriteTarget, per_shard: dict[tuple[str, int], BatchBuilder],
               keys: list[tuple[str, int]], refresh: bool) -> list[Any]:
    """Every batch at once; each with the mapping (the shard parses the documents under it)."""
    shards = ShardCalls(c.backend)
    calls = []
    for (name, sid) in keys:
        meta = c.indices[name]
        calls.append(shards.apply(meta.shards[sid], per_shard[(name, sid)].build(),
                                  meta.mapping, refresh))
    return await asyncio.gather(*calls, return_exceptions=True)


def collect(keys: list[tuple[str, int]], outcomes: list[Any],
            per_shard: dict[tuple[str, int], BatchBuilder], results: list[Any],
            refresh: bool) -> None:
    """The shards' per-item results into their items' places."""
    for (name, sid), outcome in zip(keys, outcomes):
        entries = per_shard[(name, sid)]
        if isinstance(outcome, BaseException):
            err = shard_unavailable(name, sid, outcome)
            cause = domain_error(outcome)
            status = cause.status if isinstance(cause, SearchError) and \
                cause.status in (429, 503) else 503
            for pos, doc_id in zip(entries.positions, entries.ids):
                results[pos] = {"_index": name, "_id": doc_id, "status": status, "error": err}
            continue
        shard_results, _gen = outcome
        shards = dict(getattr(outcome, "shards", None)
                      or {"total": 1, "successful": 1, "failed": 0})
        fresh = isinstance(shard_results, str)
        if fresh:
            shard_results = orjson.loads(shard_results)
        for pos, r in zip(entries.positions, shard_results):
            if not fresh:
                r = dict(r)
            r["_index"] = name
            if "error" not in r:
                r["_shards"] = shards
                r["_primary_term"] = 1
                if refresh:
                    r["forced_refresh"] = True
            results[pos] = r


async def spread_mappings(c: WriteTarget, changed: set[str], keys: list[tuple[str, int]]) -> None:
    """Shards that received a new mapping only through a failed item still need it."""
    for name in changed:
        meta = c.indices[name]
        touched = {sid for (n, sid) in keys if n == name}
        rest = [s for i, s in enumerate(meta.shards) if i not in touched]
        if rest:
            await asyncio.gather(*(ShardCalls(c.backend).set_mapping(s, meta.mapping)
                                   for s in rest), return_exceptions=True)


def respond(items: list[dict[str, Any]], results: list[Any], t0: float,
            as_json: bool) -> dict[str, Any]:
    out_items = []
    errors = False
    for item, r in zip(items, results):
        assert r is not None
        if "error" in r:
            errors = True
        out_items.append({item["action"]: r})
    took = int((time.perf_counter() - t0) * 1000)
    if as_json:
        return {"took": took, "errors": errors, "items_json": orjson.dumps(out_items)}
    return {"took": took, "errors": errors, "items": out_items}


def shard_unavailable(index: str, shard: int, exc: BaseException) -> dict[str, Any]:
    """The error of every item of a batch whose shard did not take it."""
    exc = domain_error(exc)
    if isinstance(exc, SearchError) and exc.status in (429, 503):
        return exc.to_cause()      # unavailable shards, or a full disk (cluster_block)
    return {"type": "unavailable_shards_exception",
            "reason": f"[{index}][{shard}] primary shard is not active: {type(exc).__name__}"}
