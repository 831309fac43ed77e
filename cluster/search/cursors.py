"""Cursors over snapshots: point in time, scroll, and consistent-page tokens.

A cursor is a *saved snapshot* — one refresh generation per shard, ``{(index, shard): gen}`` —
over a fixed, sorted list of indices (so every index keeps its rank in the tie-break
``index_rank << 40 | seq``), plus a keep-alive. A scroll also remembers its request and the sort
values of the last hit it returned: the next batch is a ``search_after`` from there, so each batch
costs O(size) candidates per shard whatever its depth. Nothing is copied: a generation sees
exactly the versions with ``created_gen <= gen < deleted_gen`` (see ``engine/segment.py``).

This module is pure (no Ray, no I/O): ids, keep-alive parsing and expiry, the registry, page
tokens, and the sort rewrites cursors need. ``cursor_phase.py`` does the fan-outs.

Ids are opaque to clients: URL-safe base64 of a small JSON object. PIT and scroll ids name a
registry entry (``{"c": coordinator session, "k": kind, "n": number}``); a page token carries its
snapshot itself (``{"c", "i": indices, "u": uuids, "s": generations, "t": issue time}``) so a
plain search can offer one without registering anything.
"""
from __future__ import annotations

import base64
import hashlib
import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import IllegalArgument, SearchContextMissing, SearchPhaseExecution
from ..values import parse_time_ms
from ..engine.shard_messages import ShardHits
from ..engine.sorting import SortField

MAX_KEEP_ALIVE_MS = 24 * 3_600_000          # Elasticsearch's default search.max_keep_alive
PAGE_TOKEN_KEEP_ALIVE_MS = 5 * 60_000       # a page token stays valid 5 minutes after issue
SHARD_DOC = SortField("_shard_doc", "asc")

Snapshot = dict[tuple[str, int], int]


# --- keep-alive -------------------------------------------------------------------------------

def parse_keep_alive(value: Any, name: str) -> int:
    """An Elasticsearch time value (``1m``, ``30s``, ``500ms``) in milliseconds, ES's errors."""
    return int(parse_time_ms(value, name, negative=False))


def format_time(ms: float) -> str:
    """A duration the way Elasticsearch prints a ``TimeValue`` (``90000`` -> ``1.5m``)."""
    if ms <= 0:
        return "0s" if ms == 0 else str(int(ms))
    for unit, mult in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= mult:
            v = round(ms / mult, 1)
            return (f"{v:.1f}".rstrip("0").rstrip(".")) + unit
    return f"{int(ms)}ms"


def check_keep_alive(ms: int, maximum: int = MAX_KEEP_ALIVE_MS) -> None:
    """Refuse a keep-alive above ``search.max_keep_alive``, as Elasticsearch does (400)."""
    if ms > maximum:
        raise IllegalArgument(
            f"Keep alive for request ({format_time(ms)}) is too large. It must be less than "
            f"({format_time(maximum)}). This limit can be set by changing the "
            "[search.max_keep_alive] cluster level setting.")


# --- ids ------------------------------------------------------------------------------------

def _b64(obj: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(obj)).decode().rstrip("=")


def _unb64(token: str) -> dict[str, Any]:
    """The JSON object inside a token; ValueError when it is not one of ours."""
    if not isinstance(token, str) or not token or len(token) > 1_000_000:
        raise ValueError("not a token")
    pad = "=" * (-len(token) % 4)
    try:
        obj = orjson.loads(base64.urlsafe_b64decode(token + pad))
    except Exception as e:  # noqa: BLE001 - any decoding failure means "not ours"
        raise ValueError("not a token") from e
    if not isinstance(obj, dict):
        raise ValueError("not a token")
    return obj


def missing_context(what: str) -> SearchPhaseExecution:
    """Elasticsearch's answer to an unknown or expired PIT/scroll: 404, all shards failed."""
    cause = SearchContextMissing(f"No search context found for id [{what}]").to_cause()
    return SearchPhaseExecution("all shards failed", status=404, phase="query", grouped=True,
                                failed_shards=[{"shard": -1, "index": None, "reason": cause}],
                                root_cause=[cause])


def snapshot_out(snapshot: Snapshot) -> dict[str, int]:
    return {f"{i}:{s}": int(g) for (i, s), g in snapshot.items()}


def snapshot_in(wire: dict[str, Any]) -> Snapshot:
    """``{"index:shard": gen}`` (a response's ``_snapshot``) -> ``{(index, shard): gen}``."""
    out: Snapshot = {}
    for key, gen in wire.items():
        name, _, sid = str(key).rpartition(":")
        if not name or not sid.isdigit() or not isinstance(gen, int) or isinstance(gen, bool):
            raise ValueError("bad snapshot")
        out[(name, int(sid))] = gen
    return out


# --- the registry -----------------------------------------------------------------------------

@dataclass
class Cursor:
    """One open point in time, scroll or leased page snapshot."""

    kind: str                           # "pit" | "scroll" | "page"
    number: int                         # registry key; what "No search context found" names
    indices: tuple[str, ...]            # sorted: position = index rank in the tie-break
    uuids: tuple[str, ...]              # the indices' uuids when opened (a re-created index
                                        # with the same name is not the snapshot's index)
    snapshot: Snapshot                  # generation per shard
    keep_alive_ms: int
    created_ms: int                     # wall clock, for OpenSearch's creation_time
    expires_at: float                   # monotonic seconds
    token: str = ""
    request: Any = None                 # scroll: the SearchRequest of every batch
    after: list[Any] | None = None      # scroll: raw sort values of the last hit returned
    batches: int = 0                    # scroll: batches returned so far
    strip_sort: int = 0                 # scroll: trailing sort values to hide from hits
    show_sort: bool = True              # scroll: whether hits carry ``sort`` at all
    lock: Any = None                    # scroll: serialises concurrent batches (asyncio.Lock)
    key: str = ""                       # what the cursor's pins are named on the shards
    access: Any = None                  # pit: alias filters and routing of its indices

    @property
    def shard_count(self) -> int:
        return len(self.snapshot)


class Registry:
    """Open cursors by number, with lazy expiry. O(log n) per open/expire (a heap of deadlines).

    Not thread-safe: the coordinator's event loop is its only user.
    """

    def __init__(self, session: str, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.session = session
        self.clock = clock
        self.wall = wall
        self._by_number: dict[int, Cursor] = {}
        self._by_key: dict[str, int] = {}
        self._deadlines: list[tuple[float, int]] = []
        self._next = 1

    def __len__(self) -> int:
        return len(self._by_number)

    def open(self, kind: str, indices: tuple[str, ...], uuids: tuple[str, ...],
             snapshot: Snapshot, keep_alive_ms: int, key: str | None = None) -> Cursor:
        """Register a cursor; ``key`` (page leases) makes it findable by content."""
        number = self._next
        self._next += 1
        now = self.clock()
        c = Cursor(kind=kind, number=number, indices=tuple(indices), uuids=tuple(uuids),
                   snapshot=dict(snapshot), keep_alive_ms=keep_alive_ms,
                   created_ms=int(self.wall() * 1000), expires_at=now + keep_alive_ms / 1000.0)
        c.token = _b64({"c": self.session, "k": kind, "n": number})
        c.key = key or f"{kind}:{self.session}:{number}"
        self._by_number[number] = c
        if key is not None:
            self._by_key[key] = number
        heapq.heappush(self._deadlines, (c.expires_at, number))
        return c

    def number_of(self, token: str, kind: str) -> int | None:
        """The registry number a PIT/scroll id names; None if it is another session's.

        Raises IllegalArgument (400) when the id is not one of ours at all, as Elasticsearch
        does for a malformed id.
        """
        try:
            obj = _unb64(token)
            n = obj["n"]
            if obj.get("k") != kind or not isinstance(n, int):
                raise ValueError("wrong kind")
        except (ValueError, KeyError):
            if kind == "scroll":
                raise IllegalArgument("Cannot parse scroll id") from None
            raise IllegalArgument(f"invalid id: [{token}]") from None
        return n if obj.get("c") == self.session else None

    def get(self, token: str, kind: str) -> Cursor:
        """The live cursor an id names, or ``search_context_missing_exception`` (404)."""
        n = self.number_of(token, kind)
        c = self._by_number.get(n) if n is not None else None
        if c is not None and c.kind != kind:
            c = None
        if c is None or c.expires_at <= self.clock():
            # an expired cursor stays until expire() hands it over to release its pins
            raise missing_context(str(n if n is not None else token[:32]))
        return c

    def find(self, number: int | None, kind: str) -> Cursor | None:
        """The live cursor with this number and kind, if any."""
        c = self._by_number.get(number) if number is not None else None
        if c is None or c.kind != kind or c.expires_at <= self.clock():
            return None
        return c

    def by_key(self, key: str) -> Cursor | None:
        n = self._by_key.get(key)
        c = self._by_number.get(n) if n is not None else None
        if c is not None and c.expires_at <= self.clock():
            return None
        return c

    def touch(self, c: Cursor, keep_alive_ms: int | None = None) -> None:
        """Renew a cursor on use: it now expires ``keep_alive`` after this access."""
        if keep_alive_ms is not None:   # Elasticsearch keeps the longest keep-alive asked for
            c.keep_alive_ms = max(c.keep_alive_ms, keep_alive_ms)
        c.expires_at = self.clock() + c.keep_alive_ms / 1000.0
        heapq.heappush(self._deadlines, (c.expires_at, c.number))

    def close(self, c: Cursor) -> bool:
        """Remove a cursor; False when it was already gone."""
        if self._by_number.get(c.number) is not c:
            return False
        self._drop(c)
        return True

    def _drop(self, c: Cursor) -> None:
        self._by_number.pop(c.number, None)
        if self._by_key.get(c.key) == c.number:
            self._by_key.pop(c.key, None)

    def live(self, kind: str | None = None) -> list[Cursor]:
        now = self.clock()
        return [c for c in self._by_number.values()
                if (kind is None or c.kind == kind) and c.expires_at > now]

    def expire(self) -> list[Cursor]:
        """Remove and return every cursor whose keep-alive has run out (to release its pins)."""
        now = self.clock()
        out: list[Cursor] = []
        while self._deadlines and self._deadlines[0][0] <= now:
            deadline, n = heapq.heappop(self._deadlines)
            c = self._by_number.get(n)
            if c is not None and c.expires_at <= now:
                self._drop(c)
                out.append(c)
        return out

    def next_deadline(self) -> float | None:
        """Monotonic time of the next possible expiry (stale heap entries may make it early)."""
        while self._deadlines:
            deadline, n = self._deadlines[0]
            c = self._by_number.get(n)
            if c is None or c.expires_at != deadline:
                heapq.heappop(self._deadlines)
                continue
            return deadline
        return None


# --- page tokens --------------------------------------------------------------------------------

@dataclass(frozen=True)
class PageToken:
    """What a consistent-page token pins: indices (in rank order), their uuids, generations."""

    indices: tuple[str, ...]
    uuids: tuple[str, ...]
    snapshot: Snapshot = field(hash=False)
    issued_ms: int = 0

    @property
    def key(self) -> str:
        """Identity of the snapshot (not of the issue time): names its lease and pins."""
        body = orjson.dumps([list(self.indices), list(self.uuids),
                             sorted(snapshot_out(self.snapshot).items())])
        return "page:" + hashlib.sha1(body).hexdigest()[:20]


def encode_page_token(session: str, token: PageToken) -> str:
    return _b64({"c": session, "i": list(token.indices), "u": list(token.uuids),
                 "s": snapshot_out(token.snapshot), "t": token.issued_ms})


def decode_page_token(session: str, raw: str, now_ms: int,
                      keep_alive_ms: int = PAGE_TOKEN_KEEP_ALIVE_MS) -> PageToken:
    """Check a token passed back as ``consistent_page``: 400 if malformed, 404 if it expired or
    was issued by an earlier coordinator (whose generations mean nothing now)."""
    try:
        obj = _unb64(raw)
        indices = tuple(str(i) for i in obj["i"])
        uuids = tuple(str(u) for u in obj["u"])
        snapshot = snapshot_in(obj["s"])
        issued = int(obj["t"])
        if len(indices) != len(uuids) or list(indices) != sorted(indices):
            raise ValueError("bad token")
    except (ValueError, KeyError, TypeError):
        raise IllegalArgument(f"invalid consistent_page token [{raw[:64]}]") from None
    if obj.get("c") != session or now_ms - issued > keep_alive_ms:
        raise missing_context(f"page token issued at {issued}")
    return PageToken(indices, uuids, snapshot, issued)


# --- sorts and cursor positions -------------------------------------------------------------------

def pit_sort(sort: tuple[SortField, ...], search_after: list[Any] | None
             ) -> tuple[SortField, ...]:
    """Elasticsearch's implicit ``_shard_doc`` tie-breaker for a point-in-time search: added when
    there is a sort, its last key is not already ``_shard_doc``, and ``search_after`` (if any)
    carries a value for it."""
    if not sort or sort[-1].field == "_shard_doc":
        return sort
    if search_after is not None and len(search_after) != len(sort) + 1:
        return sort
    return sort + (SHARD_DOC,)


def with_tiebreak(sort: tuple[SortField, ...]) -> tuple[tuple[SortField, ...], int]:
    """The sort a scroll walks with: the request's (or ``_score``) plus the tie-break, so the
    last hit's values name one position in the snapshot. Returns (sort, keys added)."""
    if sort and sort[-1].field in ("_shard_doc", "_doc"):
        return sort, 0
    return sort + (SHARD_DOC,), 1


def raw_sort_values(h: ShardHits, row: int) -> list[Any]:
    """One candidate's sort values as ``search_after`` wants them back: in the column's own
    value space (no date formatting, missing keyword as None), tie-break as an int."""
    out: list[Any] = []
    for j, kind in enumerate(h.kinds):
        miss = h.missing[j]
        if miss is not None and bool(miss[row]):
            out.append(None)
            continue
        v = h.columns[j][row]
        if kind in ("int", "tiebreak"):
            out.append(int(v))
        elif kind in ("float", "score"):
            out.append(float(v))
        else:
            out.append(None if v is None else str(v))
    return out


def strip_hits_sort(resp: dict[str, Any], drop_last: int, keep: bool) -> None:
    """Hide sort keys a cursor added from the hits' ``sort`` arrays (in place)."""
    for hit in resp.get("hits", {}).get("hits", []):
        if "sort" not in hit:
            continue
        if not keep:
            del hit["sort"]
        elif drop_last:
            hit["sort"] = hit["sort"][:-drop_last]


def empty_response(rest_total_hits_as_int: bool) -> dict[str, Any]:
    """A search over no shards at all (a cursor over zero indices)."""
    total: Any = 0 if rest_total_hits_as_int else {"value": 0, "relation": "eq"}
    return {"took": 0, "timed_out": False,
            "_shards": {"total": 0, "successful": 0, "skipped": 0, "failed": 0},
            "hits": {"total": total, "max_score": None, "hits": []}}
