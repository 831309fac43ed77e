"""``_delete_by_query``, ``_update_by_query`` and ``_reindex``: walk a snapshot, write each batch.

1. Resolve the source indices and pin a snapshot of them (a point in time): documents written
   later are not read, and every document is read once, in one order.
2. Per slice (one per group of shards, run side by side), page through the snapshot with
   ``search_after`` in batches (``scroll_size`` / ``source.size``), never past ``max_docs``.
3. For each batch, decide each document's write (a delete, a write back of the source changed
   by the script, a copy into ``dest``) and send the batch as one bulk. By-query writes carry
   the ``_seq_no`` read from the snapshot (``if_seq_no``): a document written meanwhile is a
   version conflict, counted — never overwritten, never lost. ``conflicts=abort`` stops at the
   first one and reports it in ``failures``; ``proceed`` counts and goes on.
4. Between batches: wait out ``requests_per_second``, stop if the task was cancelled.
5. Release the snapshot, refresh if asked, answer Elasticsearch's counters.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from ..engine.script import Compiled, json_value
from ..errors import ActionRequestValidation, IllegalArgument, SearchError, domain_error
from ..search.cursors import SHARD_DOC
from ..search.request import SearchRequest
from .by_query_request import ByQuery
from .tasks import Task, TaskRegistry

KEEP_ALIVE = "5m"            # the snapshot's keep-alive, renewed by every batch
MAX_FAILURES = 100           # failures kept in a response (the first ones)
THROTTLE_STEP = 0.1          # seconds: a throttled wait checks for cancellation this often


class JobTarget(Protocol):
    """What a job needs from the coordinator (the facade passes itself)."""

    indices: dict[str, Any]

    def resolve(self, expr: Any, **options: Any) -> list[str]: ...
    async def open_pit(self, expr: str, keep_alive: str | None, **kw: Any) -> dict[str, Any]: ...
    async def close_pits(self, ids: list[str] | None) -> Any: ...
    async def search(self, req: SearchRequest) -> dict[str, Any]: ...
    async def bulk(self, items: list[dict[str, Any]], refresh: bool = False) -> dict[str, Any]: ...
    async def refresh(self, expr: str | None) -> dict[str, Any]: ...


@dataclass
class Counters:
    """One slice's progress, in Elasticsearch's names."""

    total: int = 0
    updated: int = 0
    created: int = 0
    deleted: int = 0
    batches: int = 0
    version_conflicts: int = 0
    noops: int = 0
    throttled_ms: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Run:
    """State the slices of one job share: the budget of ``max_docs``, abort and cancel."""

    job: ByQuery
    target: JobTarget
    names: list[str]
    pit_id: str
    task: Task | None
    remaining: int | None
    aborted: bool = False
    canceled: bool = False


def status(job: ByQuery, slices: list[Counters], rps: float | None) -> dict[str, Any]:
    """Elasticsearch's task status: totals, and each slice when there are several."""
    out = _status_fields(job, slices)
    out["requests_per_second"] = -1.0 if rps is None else float(rps)
    out["throttled_until_millis"] = 0
    if len(slices) > 1:
        out["slices"] = [{"slice_id": i, **_status_fields(job, [c]),
                          "requests_per_second": out["requests_per_second"],
                          "throttled_until_millis": 0} for i, c in enumerate(slices)]
    return out


def _status_fields(job: ByQuery, slices: list[Counters]) -> dict[str, Any]:
    total = sum(c.total for c in slices)
    out: dict[str, Any] = {"total": min(total, job.max_docs) if job.max_docs else total}
    if job.action != "delete":
        out["updated"] = sum(c.updated for c in slices)
    if job.action == "reindex":
        out["created"] = sum(c.created for c in slices)
    out.update(deleted=sum(c.deleted for c in slices), batches=sum(c.batches for c in slices),
               version_conflicts=sum(c.version_conflicts for c in slices),
               noops=sum(c.noops for c in slices), retries={"bulk": 0, "search": 0},
               throttled_millis=sum(c.throttled_ms for c in slices))
    return out


def slice_preferences(target: JobTarget, names: list[str], slices: int | str
                      ) -> list[str | None]:
    """One ``_shards:`` preference per slice (shards numbered ``i mod n`` go to slice ``i``);
    ``auto`` is one slice per shard, and there are never more slices than shards."""
    most = max(target.indices[n].number_of_shards for n in names)
    least = min(target.indices[n].number_of_shards for n in names)
    n = least if slices == "auto" else min(int(slices), most)
    if n <= 1:
        return [None]
    return ["_shards:" + ",".join(str(s) for s in range(i, most, n)) for i in range(n)]


async def run_job(job: ByQuery, target: JobTarget, task: Task | None = None
                  ) -> tuple[int, dict[str, Any], list[Counters]]:
    """Run ``job`` to its end: ``(http status, response, counters)`` (the steps above)."""
    t0 = time.perf_counter()
    names = target.resolve(",".join(job.indices))
    if not names:
        return 200, _response(job, [Counters()], t0, False), [Counters()]
    if job.dest is not None and job.dest in names:
        raise ActionRequestValidation(f"Validation Failed: 1: reindex cannot write into an "
                                      f"index its reading from [{job.dest}];")
    prefs = slice_preferences(target, names, job.slices)
    slices = [Counters() for _ in prefs]
    if task is not None:
        task.status = lambda: status(job, slices, job.requests_per_second)
        task.rethrottle = lambda rps: setattr(job, "requests_per_second", rps)
    # opened through the request's own names, so an alias's filter and routing hold (resolver.py)
    pit = await target.open_pit(",".join(job.indices), KEEP_ALIVE)
    run = _Run(job, target, names, pit["id"], task, job.max_docs)
    try:
        await asyncio.gather(*(_run_slice(run, p, c) for p, c in zip(prefs, slices)))
    finally:
        await target.close_pits([run.pit_id])
    if job.refresh:
        await target.refresh(job.dest if job.dest is not None else ",".join(names))
    resp = _response(job, slices, t0, run.canceled)
    failures = resp["failures"]
    return (max(f["status"] for f in failures) if failures else 200), resp, slices


def _response(job: ByQuery, slices: list[Counters], t0: float, canceled: bool
              ) -> dict[str, Any]:
    out: dict[str, Any] = {"took": int((time.perf_counter() - t0) * 1000), "timed_out": False,
                           **status(job, slices, job.requests_per_second)}
    if canceled:
        out["canceled"] = "by user request"
    out["failures"] = [f for c in slices for f in c.failures][:MAX_FAILURES]
    return out


async def _run_slice(run: _Run, preference: str | None, counters: Counters) -> None:
    after: list[Any] | None = None
    first = True
    while not run.aborted:
        if run.task is not None and run.task.cancelled:
            run.canceled = True
            return
        size = run.job.batch_size if run.remaining is None else min(run.job.batch_size,
                                                                    run.remaining)
        if size <= 0:
            return
        started = time.monotonic()
        hits, total = await _read_batch(run, preference, size, after, first)
        if first:
            counters.total = total if run.job.max_docs is None else min(total, run.job.max_docs)
            first = False
        if not hits:
            return
        if run.remaining is not None:
            hits = hits[:run.remaining]
            run.remaining -= len(hits)
        after = hits[-1]["sort"]
        await _write_batch(run, hits, counters)
        counters.batches += 1
        await _throttle(run, len(hits), started, counters)
        if len(hits) < size:
            return


async def _read_batch(run: _Run, preference: str | None, size: int, after: list[Any] | None,
                      first: bool) -> tuple[list[dict[str, Any]], int]:
    req = SearchRequest(indices=tuple(run.names), query=run.job.query, size=size,
                        sort=(SHARD_DOC,), search_after=after, version=True,
                        seq_no_primary_term=True, track_total_hits=first,
                        pit={"id": run.pit_id, "keep_alive": KEEP_ALIVE},
                        preference=preference, source=run.job.source)
    resp = await run.target.search(req)
    total = resp["hits"].get("total") or 0      # asked for on the first batch only
    return resp["hits"]["hits"], total["value"] if isinstance(total, dict) else int(total)


async def _throttle(run: _Run, docs: int, started: float, counters: Counters) -> None:
    """Wait so that the job writes no more than ``requests_per_second`` documents a second."""
    rps = run.job.requests_per_second
    if rps is None:
        return
    wait = docs / rps - (time.monotonic() - started)
    if wait <= 0:
        return
    begin = time.monotonic()
    end = begin + wait
    while (left := end - time.monotonic()) > 0:
        if run.task is not None and run.task.cancelled:
            break
        await asyncio.sleep(min(left, THROTTLE_STEP))
    counters.throttled_ms += int((time.monotonic() - begin) * 1000)


async def _write_batch(run: _Run, hits: list[dict[str, Any]], counters: Counters) -> None:
    items, ops = [], []
    for hit in hits:
        op, item = plan_write(run.job, hit)
        if item is None:
            counters.noops += 1
            continue
        items.append(item)
        ops.append(op)
    if not items:
        return
    resp = await run.target.bulk(items, False)
    for op, entry in zip(ops, resp["items"]):
        _count(run, counters, op, next(iter(entry.values())))


def _count(run: _Run, counters: Counters, op: str, r: dict[str, Any]) -> None:
    if "error" in r:
        conflict = r.get("status") == 409
        if conflict:
            counters.version_conflicts += 1
        if not conflict or not run.job.proceed_on_conflict:
            counters.failures.append({"index": r.get("_index"), "id": r.get("_id"),
                                      "cause": r["error"], "status": r.get("status", 500)})
            run.aborted = True
        return
    result = r.get("result")
    if result == "deleted":
        counters.deleted += 1
    elif result == "noop":
        counters.noops += 1
    elif result == "created" and run.job.action == "reindex":
        counters.created += 1
    else:
        counters.updated += 1


def plan_write(job: ByQuery, hit: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The bulk item for one document of the snapshot (None: a ``noop``), and its op."""
    source = hit.get("_source")
    if source is None and job.action != "delete":   # the mapping's _source is disabled
        raise IllegalArgument(f"[{hit['_index']}][{hit['_id']}] didn't store _source")
    source = orjson.loads(source) if isinstance(source, (bytes, str)) else source
    meta = {"_index": hit["_index"], "_id": hit["_id"], "_routing": hit.get("_routing"),
            "_version": hit.get("_version")}
    op = "delete" if job.action == "delete" else "index"
    if job.action == "reindex":
        meta["_index"] = job.dest
    if job.script is not None and job.action != "delete":
        op, source, meta = _apply_script(job, job.script, source, meta)
        if op == "noop":
            return op, None
    if job.action == "reindex":
        return op, _copy_item(job, op, source, meta)
    item = {"action": op, "index": meta["_index"], "id": meta["_id"],
            "routing": meta["_routing"], "if_seq_no": hit["_seq_no"],
            "if_primary_term": hit.get("_primary_term", 1)}
    if op == "index":
        item["source"] = source
    return op, item


def _copy_item(job: ByQuery, op: str, source: Any, meta: dict[str, Any]) -> dict[str, Any]:
    routing = meta["_routing"]
    if job.dest_routing == "discard":
        routing = None
    elif job.dest_routing.startswith("="):
        routing = job.dest_routing[1:]
    if op == "delete":
        return {"action": "delete", "index": meta["_index"], "id": meta["_id"],
                "routing": routing}
    item = {"action": job.op_type, "index": meta["_index"], "id": meta["_id"],
            "routing": routing, "source": source}
    if job.dest_version_type != "internal" and meta.get("_version") is not None:
        item.update(version=meta["_version"], version_type=job.dest_version_type)
    return item


_OPS = ("noop", "index", "delete")


def _apply_script(job: ByQuery, script: Compiled, source: Any, meta: dict[str, Any]
                  ) -> tuple[str, Any, dict[str, Any]]:
    """Run the job's script over ``ctx``; reindex may change ``_index``, ``_id`` and
    ``_routing`` (by-query may not, as in Elasticsearch)."""
    ctx: dict[str, Any] = {"_source": source, "op": "index", **meta}
    script.run({"ctx": ctx})
    op = ctx.get("op")
    if op not in _OPS:
        raise IllegalArgument(f"Operation type [{op}] not allowed, only {list(_OPS)} are "
                              "allowed")
    for key in ("_index", "_id", "_routing", "_version"):
        if ctx.get(key) != meta.get(key):
            if job.action != "reindex" or key == "_version":
                raise IllegalArgument(f"Modifying [{key}] not allowed")
    new_meta = {k: ctx.get(k) for k in ("_index", "_id", "_routing", "_version")}
    if not isinstance(new_meta["_index"], str) or not isinstance(new_meta["_id"], str):
        raise IllegalArgument("[_index] and [_id] must be strings")
    if not isinstance(ctx.get("_source"), dict):
        raise IllegalArgument("[ctx._source] must be a map")
    return op, json_value(script.source, ctx["_source"]), new_meta


async def submit(job: ByQuery, target: JobTarget, registry: TaskRegistry
                 ) -> tuple[int, dict[str, Any]]:
    """Run ``job`` as a task: to its end (``wait_for_completion``), or in the background,
    answering ``{"task": id}`` at once (the result is kept: ``tasks.py``)."""
    task = registry.start(job.task_action, job.description())
    if job.wait_for_completion:
        try:
            code, resp, _ = await run_job(job, target, task)
        except BaseException as e:
            registry.finish(task, error=_cause(e))
            raise
        registry.finish(task, response=resp)
        return code, resp
    try:
        target.resolve(",".join(job.indices))      # a missing index is this request's 404
    except BaseException as e:
        registry.finish(task, error=_cause(e))
        raise

    async def background() -> None:
        try:
            _, resp, _ = await run_job(job, target, task)
        except BaseException as e:    # kept as the task's error, as Elasticsearch stores it
            registry.finish(task, error=_cause(e))
            if not isinstance(e, Exception):
                raise
        else:
            registry.finish(task, response=resp)

    task.handle = asyncio.ensure_future(background())
    return 200, {"task": registry.task_id(task)}


def _cause(e: BaseException) -> dict[str, Any]:
    err = domain_error(e)
    if isinstance(err, SearchError):
        return err.to_cause()
    return {"type": "exception", "reason": f"{type(err).__name__}: {err}"}
