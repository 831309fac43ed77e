"""Cursor searches: point in time, scroll and consistent-page tokens.

:class:`CursorOps` is owned by the coordinator; every top-level search enters through
:meth:`CursorOps.search`, which picks the snapshot and runs the search path
(``search/phases.py``) on it:

* **point in time** — ``open_pit`` pins each shard's latest generation (one fan-out) and
  registers the snapshot; a search with ``pit`` reads exactly that snapshot over the PIT's own
  index list (so each index keeps its tie-break rank), with Elasticsearch's implicit
  ``_shard_doc`` tie-breaker;
* **scroll** — opens a cursor like a PIT, then every batch is a ``search_after`` from the last
  hit's sort values plus tie-break: O(size) candidates per shard at any depth, no window limit;
* **page tokens** — every plain search names its snapshot in an opaque token; passed back as
  ``consistent_page`` it makes ``from``/``size`` pages of one snapshot (no duplicates, no gaps
  under writes). The first use leases (pins) the snapshot for :data:`PAGE_TOKEN_KEEP_ALIVE_MS`.

Expired cursors are swept by a background task on the coordinator's event loop (and lazily on
every cursor call); releasing a cursor unpins it on its shards.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from typing import Any

from ..engine.shard_calls import ShardCalls
from ..engine.sorting import SCORE_SORT
from ..errors import ActionRequestValidation, SearchError, SearchPhaseExecution
from .cursors import (PAGE_TOKEN_KEEP_ALIVE_MS, Cursor, PageToken, Registry, check_keep_alive,
                      decode_page_token, empty_response, encode_page_token, missing_context,
                      parse_keep_alive, pit_sort, snapshot_in, strip_hits_sort, with_tiebreak)
from .phases import SearchPath
from .request import SearchRequest
from .settings import SearchSettings

_SWEEP_MAX_S = 30.0


class CursorOps:
    """Cursor entry points of the coordinator (see the module docstring)."""

    def __init__(self, catalog: Any, backend: Any, settings: SearchSettings,
                 path: SearchPath) -> None:
        self.catalog = catalog      # indices/admin.py: the indices and their expressions
        self.shards = ShardCalls(backend)
        self.settings = settings
        self.path = path
        self.cursors = Registry(session=uuid.uuid4().hex[:12])
        self._sweeper_task: asyncio.Task[None] | None = None

    # --- registry and pins ------------------------------------------------------------------

    def _shard_refs(self, snapshot_keys) -> list[tuple[tuple[str, int], Any]]:
        out = []
        for name, sid in snapshot_keys:
            meta = self.catalog.indices.get(name)
            if meta is not None and sid < len(meta.shards):
                out.append(((name, sid), meta.shards[sid]))
        return out

    async def _open_cursor(self, kind: str, names: list[str], keep_alive_ms: int,
                           snapshot: dict[tuple[str, int], int] | None = None,
                           key: str | None = None) -> tuple[Cursor, int]:
        """Pin a snapshot of ``names`` on their shards and register it.

        With ``snapshot`` None, each shard pins (and reports) its latest refresh generation.
        Returns the cursor and how many shards failed to pin.
        """
        names = sorted(names)
        metas = [self.catalog.indices[n] for n in names]
        cursor = self.cursors.open(kind, tuple(names), tuple(m.uuid for m in metas), {},
                                   keep_alive_ms, key=key)
        refs = [((m.name, sid), ref) for m in metas for sid, ref in enumerate(m.shards)]
        outcomes = await asyncio.gather(
            *(self.shards.pin(ref, cursor.key, None if snapshot is None else snapshot.get(k))
              for k, ref in refs), return_exceptions=True)
        failed = 0
        for (k, _), o in zip(refs, outcomes):
            if isinstance(o, BaseException):
                failed += 1
            else:
                cursor.snapshot[k] = int(o)
        if snapshot is not None:
            cursor.snapshot.update({k: g for k, g in snapshot.items() if k not in cursor.snapshot})
        self._ensure_sweeper()
        return cursor, failed

    async def _release(self, cursors: list[Cursor]) -> None:
        """Unpin closed or expired cursors on their shards (failures are ignored: a dead shard
        holds no pins)."""
        by_ref: dict[int, tuple[Any, list[str]]] = {}
        for c in cursors:
            for _, ref in self._shard_refs(c.snapshot):
                by_ref.setdefault(id(ref), (ref, []))[1].append(c.key)
        if by_ref:
            await asyncio.gather(*(self.shards.unpin(ref, keys)
                                   for ref, keys in by_ref.values()), return_exceptions=True)

    async def sweep_cursors(self) -> int:
        """Drop expired cursors and release their pins; returns how many expired."""
        expired = self.cursors.expire()
        if expired:
            await self._release(expired)
        return len(expired)

    def _ensure_sweeper(self) -> None:
        task = self._sweeper_task
        if task is not None and not task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._sweeper_task = loop.create_task(self._sweeper())

    async def _sweeper(self) -> None:
        """Background expiry: sleeps until the next deadline (at most 30 s), sweeps, repeats;
        stops when no cursor is left (the next open starts it again)."""
        while len(self.cursors):
            deadline = self.cursors.next_deadline()
            delay = _SWEEP_MAX_S if deadline is None else \
                min(_SWEEP_MAX_S, max(0.01, deadline - self.cursors.clock()))
            await asyncio.sleep(delay)
            try:
                await self.sweep_cursors()
            except Exception:  # noqa: BLE001 - the sweeper must outlive a failing shard
                pass

    def forget_cursors_of(self, names: list[str]) -> int:
        """An index was deleted: its readers are gone, so are the cursors that read it (as in
        Elasticsearch, which frees their contexts). Their pins on other indices are released in
        the background. Returns how many cursors were dropped."""
        gone = set(names)
        dropped = [c for c in self.cursors.live() if gone & set(c.indices)]
        for c in dropped:
            self.cursors.close(c)
        if dropped:
            try:
                asyncio.get_running_loop().create_task(self._release(dropped))
            except RuntimeError:
                pass
        return len(dropped)

    def _check_indices(self, cursor: Cursor) -> None:
        """A cursor's indices must still be the ones it pinned (not deleted, not re-created)."""
        for name, u in zip(cursor.indices, cursor.uuids):
            meta = self.catalog.indices.get(name)
            if meta is None or meta.uuid != u:
                raise missing_context(str(cursor.number))

    # --- the entry point of every search ---------------------------------------------------------

    async def search(self, req: SearchRequest) -> dict[str, Any]:
        """A top-level search: point in time, scroll, page token, or a plain search that offers
        a page token (``_page_token``, internal: the HTTP layer moves it to a header)."""
        await self.sweep_cursors()
        if req.pit is not None:
            resp = await self._pit_search(req)
            if isinstance(resp.get("profile"), dict):
                resp["profile"]["shardsearch"].update(method="pit", cursor="pit")
            return resp
        if req.scroll:
            return await self._open_scroll(req)
        return await self._page_search(req)

    # --- point in time ------------------------------------------------------------------------------

    async def open_pit(self, expr: str, keep_alive: str | None, *, ignore_unavailable: bool = False,
                       allow_no_indices: bool = True, flavor: str = "elasticsearch"
                       ) -> dict[str, Any]:
        """``POST /{index}/_pit`` (Elasticsearch) or ``/{index}/_search/point_in_time``
        (OpenSearch): pin every shard's latest refresh and return the id."""
        if keep_alive is None:
            msg = "keep alive not specified" if flavor == "opensearch" \
                else "[keep_alive] is not specified"
            raise ActionRequestValidation(f"Validation Failed: 1: {msg};")
        ms = parse_keep_alive(keep_alive, "keep_alive")
        check_keep_alive(ms, self.settings.max_keep_alive())
        access = self.catalog.resolve_access(expr, ignore_unavailable=ignore_unavailable,
                                             allow_no_indices=allow_no_indices,
                                             refuse_closed=True)
        names = list(access)
        cursor, failed = await self._open_cursor("pit", names, ms)
        cursor.access = access
        total = sum(self.catalog.indices[n].number_of_shards for n in names)
        if failed and failed == total:
            self.cursors.close(cursor)
            raise SearchPhaseExecution("all shards failed", phase="open_pit", grouped=True,
                                       failed_shards=[], root_cause=[])
        shards = {"total": total, "successful": total - failed, "skipped": 0, "failed": failed}
        if flavor == "opensearch":
            return {"pit_id": cursor.token, "_shards": shards,
                    "creation_time": cursor.created_ms}
        return {"id": cursor.token, "_shards": shards}

    async def close_pits(self, ids: list[str] | None) -> list[tuple[str, bool, int]]:
        """Close points in time (all of them when ``ids`` is None).

        Returns ``(id, found, shards freed)`` per id; malformed ids raise 400.
        """
        await self.sweep_cursors()
        if ids is None:
            found = self.cursors.live("pit")
            pairs = [(c.token, c) for c in found]
        else:
            pairs = []
            for tok in ids:
                pairs.append((tok, self.cursors.find(self.cursors.number_of(tok, "pit"), "pit")))
        closed = [c for _, c in pairs if c is not None and self.cursors.close(c)]
        await self._release(closed)
        return [(tok, c is not None, c.shard_count if c is not None else 0) for tok, c in pairs]

    def list_pits(self) -> list[dict[str, Any]]:
        """OpenSearch's ``GET /_search/point_in_time/_all``."""
        return [{"pit_id": c.token, "creation_time": c.created_ms, "keep_alive": c.keep_alive_ms}
                for c in sorted(self.cursors.live("pit"), key=lambda c: c.number)]

    async def _pit_search(self, req: SearchRequest) -> dict[str, Any]:
        pit = req.pit or {}
        cursor = self.cursors.get(str(pit.get("id")), "pit")
        keep = pit.get("keep_alive")
        ms = None
        if keep is not None:
            ms = parse_keep_alive(keep, "keep_alive")
            check_keep_alive(ms, self.settings.max_keep_alive())
        self._check_indices(cursor)
        self.cursors.touch(cursor, ms)
        if not cursor.indices:
            resp = empty_response(req.rest_total_hits_as_int)
        else:
            inner = replace(req, indices=cursor.indices, pit=None, access=cursor.access,
                            sort=pit_sort(req.sort, req.search_after))
            resp = await self.path.run(inner, snapshot=cursor.snapshot)
            resp.pop("_after", None)
        return {"pit_id": cursor.token, **resp}

    def _access_again(self, req: SearchRequest) -> dict[str, Any] | None:
        """A page token's request resolved again for its aliases (None: its indices as they
        are, when the expression no longer resolves; the token's own checks then answer)."""
        try:
            return self.path.access(req)
        except SearchError:
            return None

    # --- scroll -------------------------------------------------------------------------------------

    async def _open_scroll(self, req: SearchRequest) -> dict[str, Any]:
        ms = parse_keep_alive(req.scroll, "scroll")
        check_keep_alive(ms, self.settings.max_keep_alive())
        access = self.path.access(req)
        cursor, _ = await self._open_cursor("scroll", list(access), ms)
        sort, added = with_tiebreak(req.sort or SCORE_SORT)
        inner = replace(req, indices=cursor.indices, sort=sort, track_total_hits=True,
                        search_after=None, from_=0, consistent_page=None, access=access)
        cursor.request = inner
        cursor.strip_sort = added
        cursor.show_sort = bool(req.sort)
        cursor.lock = asyncio.Lock()
        try:
            async with cursor.lock:
                return await self._scroll_batch(cursor, req.rest_total_hits_as_int)
        except BaseException:
            self.cursors.close(cursor)
            await self._release([cursor])
            raise

    async def scroll(self, scroll_id: str, keep_alive: str | None = None,
                     rest_total_hits_as_int: bool = False) -> dict[str, Any]:
        """``POST /_search/scroll``: the next batch of an open scroll."""
        await self.sweep_cursors()
        if not scroll_id:
            raise ActionRequestValidation("Validation Failed: 1: scrollId is missing;")
        cursor = self.cursors.get(scroll_id, "scroll")
        ms = None
        if keep_alive is not None:
            ms = parse_keep_alive(keep_alive, "scroll")
            check_keep_alive(ms, self.settings.max_keep_alive())
        self._check_indices(cursor)
        self.cursors.touch(cursor, ms)
        async with cursor.lock:
            return await self._scroll_batch(cursor, rest_total_hits_as_int)

    async def _scroll_batch(self, cursor: Cursor, rest_total_hits_as_int: bool
                            ) -> dict[str, Any]:
        """One batch: ``search_after`` the last hit returned, on the scroll's snapshot."""
        base = cursor.request
        done = cursor.batches > 0 and cursor.after is None   # the first batch was empty
        if not cursor.indices:
            resp = empty_response(rest_total_hits_as_int)
        else:
            inner = replace(base, search_after=cursor.after, size=0 if done else base.size,
                            rest_total_hits_as_int=rest_total_hits_as_int,
                            aggs=base.aggs if cursor.batches == 0 else None)  # first batch only
            resp = await self.path.run(inner, snapshot=cursor.snapshot)
            after = resp.pop("_after", None)
            if after is not None:
                cursor.after = after
        cursor.batches += 1
        strip_hits_sort(resp, cursor.strip_sort, cursor.show_sort)
        return {"_scroll_id": cursor.token, **resp}

    async def clear_scroll(self, ids: list[str]) -> dict[str, Any]:
        """``DELETE /_search/scroll``: ``{"succeeded": true, "num_freed": shards freed}``; the
        route answers 404 when nothing was freed, as Elasticsearch does."""
        await self.sweep_cursors()
        if not ids:
            raise ActionRequestValidation("Validation Failed: 1: no scroll ids specified;")
        if "_all" in ids:
            targets = self.cursors.live("scroll")
        else:
            found = (self.cursors.find(self.cursors.number_of(t, "scroll"), "scroll")
                     for t in ids)                                   # 400 if malformed
            targets = list({c.number: c for c in found if c is not None}.values())
        closed = [c for c in targets if self.cursors.close(c)]
        await self._release(closed)
        return {"succeeded": True, "num_freed": sum(c.shard_count for c in closed)}

    # --- consistent pages -----------------------------------------------------------------------------

    async def _page_search(self, req: SearchRequest) -> dict[str, Any]:
        raw = req.consistent_page
        want_field = raw is not None
        now_ms = int(time.time() * 1000)
        if raw and raw.lower() not in ("true", ""):
            tok = decode_page_token(self.cursors.session, raw, now_ms)
            lease = self.cursors.by_key(tok.key)
            if lease is None:
                for name, u in zip(tok.indices, tok.uuids):
                    meta = self.catalog.indices.get(name)
                    if meta is None or meta.uuid != u:
                        raise missing_context(f"page token issued at {tok.issued_ms}")
                lease, _ = await self._open_cursor("page", list(tok.indices),
                                                   PAGE_TOKEN_KEEP_ALIVE_MS,
                                                   snapshot=tok.snapshot, key=tok.key)
            else:
                self._check_indices(lease)
                self.cursors.touch(lease)
            if not tok.indices:
                resp = empty_response(req.rest_total_hits_as_int)
            else:
                # the same request again: its aliases' filters and routing apply again
                inner = replace(req, indices=tok.indices, consistent_page=None,
                                access=self._access_again(req))
                resp = await self.path.run(inner, snapshot=tok.snapshot)
            names, snapshot = tok.indices, tok.snapshot
        else:
            names = tuple(m.name for m in self.path.targets(req))
            # a plain search (no token asked for) needs no copy of its request
            plain = req if req.consistent_page is None else replace(req, consistent_page=None)
            resp = await self.path.run(plain, snapshot={})
            snapshot = snapshot_in(resp.get("_snapshot", {}))
        resp.pop("_after", None)
        indices = self.catalog.indices
        uuids = tuple(indices[n].uuid if n in indices else "" for n in names)
        token = encode_page_token(self.cursors.session,
                                  PageToken(tuple(names), uuids, snapshot, now_ms))
        resp["_page_token"] = token
        if want_field:
            resp["page_token"] = token
        return resp
