"""Background merges of one hosted shard copy: one thread, one merge at a time.

The host (``distribution/shard_service.py``) serialises every call to the shard with one lock;
the runner takes that same lock only to plan a merge and to swap it in, and builds it without
(``merging.py``), so searches and writes proceed while a merge runs. A refresh tells the runner
a merge may be due (:meth:`MergeRunner.kick`); a ``_forcemerge`` is queued
(:meth:`MergeRunner.force`) and its caller waits on it, cancellably. Closing the runner (the copy
is dropped, reset or its process stops) abandons the merge in flight: nothing is swapped after
``close``. Plain ``threading``: the engine knows nothing of Ray or asyncio.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from .merging import ForceMerge

log = logging.getLogger("shardsearch.merges")


class ForceRequest:
    """A queued ``_forcemerge``: its plan, and how it ended."""

    def __init__(self, plan: ForceMerge, then: Callable[[], None] | None = None) -> None:
        self.plan = plan
        self.then = then                    # under the lock, when it ends (a flush)
        self.finished = threading.Event()
        self.cancelled = False
        self.error: BaseException | None = None

    def wait(self, cancelled: Callable[[], bool] | None, slice_s: float = 0.05) -> int:
        """Block until it ends (the merges made); a cancelled caller stops it after the merge
        in flight and gets ``InterruptedError``. Raises what the merge raised."""
        while not self.finished.wait(slice_s):
            if cancelled is not None and cancelled():
                self.cancelled = True
                raise InterruptedError("the force merge's caller went away")
        if self.error is not None:
            raise self.error
        return self.plan.merges


class MergeRunner:
    """One background merge thread for the shard ``core_of()`` returns, under ``lock``."""

    def __init__(self, lock: Any, core_of: Callable[[], Any]) -> None:
        self.lock = lock
        self.core_of = core_of
        self.pause: Callable[[], None] | None = None   # test hook: half-way through a build
        self.running = False                # a merge is being built now
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        self._forces: deque[ForceRequest] = deque()
        self._thread: threading.Thread | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def kick(self) -> None:
        """A merge may be due (after a refresh)."""
        if self._closed:
            return
        self._idle.clear()
        self._wake.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="segment-merges",
                                            daemon=True)
            self._thread.start()

    def force(self, plan: ForceMerge, then: Callable[[], None] | None = None) -> ForceRequest:
        """Queue a ``_forcemerge`` (``then``: run under the lock when it ends); the caller
        waits on the request (``ForceRequest.wait``)."""
        req = ForceRequest(plan, then)
        if self._closed:
            req.error = InterruptedError("the shard copy is closing")
            req.finished.set()
            return req
        self._forces.append(req)
        self.kick()
        return req

    def close(self) -> None:
        """Stop: the merge in flight is abandoned, waiting force merges end with an error."""
        with self.lock:   # not while a merge is planned or swapped in
            self._closed = True
            self._wake.set()
            while self._forces:
                self._end(self._forces.popleft(), InterruptedError("the shard copy closed"))

    def _loop(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            while not self._closed and self._step():
                pass
            if not self._wake.is_set():
                self._idle.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no merge is due or running (benchmarks measure a settled shard)."""
        return self._idle.wait(timeout)

    def _step(self) -> bool:
        """Plan, build and swap one merge; False when there is nothing to do."""
        with self.lock:
            if self._closed:
                return False
            core = self.core_of()
            req = self._forces[0] if self._forces else None
            if req is not None and req.cancelled:
                self._finish(req)
                return True
            job = core.plan_merge(req.plan if req is not None else None)
            if job is None:
                if req is not None:
                    self._finish(req)
                return req is not None
            self.running = True
        try:
            job.build(self.pause)
        except Exception as e:  # noqa: BLE001 - a failed merge leaves the sources in place
            log.exception("merge of %d segments failed", len(job.sources))
            with self.lock:
                self.running = False
                core.merges["failed"] += 1
                if req is not None and self._forces and self._forces[0] is req:
                    self._forces.popleft()   # (unless ``close`` already ended it)
                    self._end(req, e)
            return req is not None
        with self.lock:
            self.running = False
            if self._closed:
                return False
            if self.core_of() is core and core.commit_merge(job) and req is not None:
                req.plan.merges += 1
        return True

    def _finish(self, req: ForceRequest) -> None:
        """A force merge ended (the lock held): its follow-up (a flush), then done."""
        self._forces.popleft()
        err: BaseException | None = None
        if req.then is not None and not req.cancelled:
            try:
                req.then()
            except Exception as e:  # noqa: BLE001 - the caller learns it
                err = e
        self._end(req, err)

    @staticmethod
    def _end(req: ForceRequest, err: BaseException | None) -> None:
        req.error = err
        req.finished.set()
