"""Tasks: long-running requests (by-query, reindex) that a client may follow and cancel.

Elasticsearch keeps a running task in its task manager and, when asked
(``wait_for_completion=false``), stores the finished task's response in the ``.tasks`` index.
We keep both in memory on the coordinator: running tasks until they end, finished ones until
:data:`MAX_FINISHED` newer ones have finished (the oldest are forgotten first) — so a result
does not survive a restart of the service, and ``GET /_tasks/{id}`` of a forgotten task is
the 404 Elasticsearch gives for an unknown task.
"""
from __future__ import annotations

import base64
import fnmatch
import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..errors import IllegalArgument, SearchError

MAX_FINISHED = 1_000       # finished tasks whose results are kept


def node_id(node_name: str) -> str:
    """A stable 22-character node id (Elasticsearch's are random, base64 like this one)."""
    return base64.urlsafe_b64encode(hashlib.sha1(node_name.encode()).digest()[:16]
                                    ).decode().rstrip("=")


@dataclass
class Task:
    """One task: what it does, its live ``status`` (a callable giving the counters now), its
    response once finished, and a cancelled flag the work checks between batches."""

    number: int
    action: str
    description: str
    status: Any = None                   # () -> dict, the counters so far
    start_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    start_ns: int = field(default_factory=time.monotonic_ns)
    end_ns: int | None = None
    cancelled: bool = False
    response: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    handle: Any = None                   # the asyncio task running it (when in background)
    rethrottle: Any = None               # (requests_per_second or None) -> None, while running

    @property
    def completed(self) -> bool:
        return self.response is not None or self.error is not None

    def info(self, node: str, detailed: bool = True) -> dict[str, Any]:
        """The ``task`` object Elasticsearch prints for this task."""
        end = self.end_ns if self.end_ns is not None else time.monotonic_ns()
        out: dict[str, Any] = {"node": node, "id": self.number, "type": "transport",
                               "action": self.action}
        if self.status is not None:
            out["status"] = self.status()
        if detailed:
            out["description"] = self.description
        out.update({"start_time_in_millis": self.start_ms,
                    "running_time_in_nanos": end - self.start_ns, "cancellable": True,
                    "cancelled": self.cancelled, "headers": {}})
        return out


class TaskRegistry:
    """The coordinator's tasks, numbered from 1; finished ones bounded by :data:`MAX_FINISHED`."""

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name
        self.node = node_id(node_name)
        self.running: dict[int, Task] = {}
        self.finished: OrderedDict[int, Task] = OrderedDict()
        self._next = 1

    def start(self, action: str, description: str) -> Task:
        task = Task(self._next, action, description)
        self._next += 1
        self.running[task.number] = task
        return task

    def finish(self, task: Task, response: dict[str, Any] | None = None,
               error: dict[str, Any] | None = None) -> None:
        task.end_ns = time.monotonic_ns()
        task.response, task.error = response, error
        if task.response is None and task.error is None:
            task.error = {"type": "exception", "reason": "the task ended without a result"}
        self.running.pop(task.number, None)
        self.finished[task.number] = task
        while len(self.finished) > MAX_FINISHED:
            self.finished.popitem(last=False)

    def task_id(self, task: Task) -> str:
        return f"{self.node}:{task.number}"

    def _number(self, task_id: str) -> int:
        node, _, number = task_id.partition(":")
        if not number:
            raise IllegalArgument(f"malformed task id {task_id}")
        try:
            n = int(number)
        except ValueError:
            raise IllegalArgument(f"malformed task id {task_id}") from None
        if node != self.node:
            raise _missing(task_id)
        return n

    def find(self, task_id: str) -> Task:
        n = self._number(task_id)
        task = self.running.get(n) or self.finished.get(n)
        if task is None:
            raise _missing(task_id)
        return task

    def get(self, task_id: str) -> dict[str, Any]:
        """``GET /_tasks/{id}``: ``completed``, ``task`` and, when done, ``response``/``error``."""
        task = self.find(task_id)
        out: dict[str, Any] = {"completed": task.completed, "task": task.info(self.node)}
        if task.response is not None:
            out["response"] = task.response
        if task.error is not None:
            out["error"] = task.error
        return out

    def matching(self, actions: str | None) -> list[Task]:
        patterns = [p for p in (actions or "*").split(",") if p]
        return [t for t in self.running.values()
                if any(fnmatch.fnmatchcase(t.action, p) for p in patterns)]

    def list(self, actions: str | None, detailed: bool, node_name: str) -> dict[str, Any]:
        """``GET /_tasks``: the running tasks whose action matches, grouped by node."""
        tasks = {self.task_id(t): t.info(self.node, detailed) for t in self.matching(actions)}
        return self.nodes_view(tasks, node_name)

    def nodes_view(self, tasks: dict[str, Any], node_name: str) -> dict[str, Any]:
        if not tasks:
            return {"nodes": {}}
        return {"nodes": {self.node: {"name": node_name, "transport_address": "127.0.0.1:9300",
                                      "host": "127.0.0.1", "ip": "127.0.0.1:9300",
                                      "roles": ["data", "ingest", "master"], "tasks": tasks}}}

    def cancel(self, task_id: str | None, actions: str | None, node_name: str
               ) -> dict[str, Any]:
        """``POST /_tasks/{id}/_cancel`` or ``/_tasks/_cancel?actions=``: flag the running
        tasks; their work stops at its next check (between batches)."""
        if task_id is not None:
            task = self.find(task_id)
            if task.completed:
                raise IllegalArgument(f"task [{task_id}] doesn't support cancellation or is "
                                      "already finished")
            targets = [task]
        else:
            targets = self.matching(actions)
        for t in targets:
            t.cancelled = True
        return self.nodes_view({self.task_id(t): t.info(self.node) for t in targets}, node_name)

    def rethrottle(self, task_id: str, rps: float | None, node_name: str) -> dict[str, Any]:
        """``POST /_update_by_query/{id}/_rethrottle``: the new ``requests_per_second`` holds
        from the task's next batch on."""
        task = self.find(task_id)
        if task.completed or task.rethrottle is None:
            raise IllegalArgument(f"task [{task_id}] is not running, it cannot be rethrottled")
        task.rethrottle(rps)
        return self.nodes_view({self.task_id(task): task.info(self.node)}, node_name)


def _missing(task_id: str) -> SearchError:
    return SearchError(f"task [{task_id}] isn't running and hasn't stored its results",
                       es_type="resource_not_found_exception", status=404)
