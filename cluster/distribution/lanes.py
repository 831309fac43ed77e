"""A fast lane to an actor on the same machine: its calls over a Unix socket.

A Ray actor call costs 2-3 ms of CPU across the two processes (Ray's C++ core worker threads
on both sides, task bookkeeping, an event-loop wake-up), measured while serving searches on a
2-core machine; a search needs two hops, so this overhead was the larger part of a ranked
page 1. When the caller and the actor share a machine, the actor also listens on a Unix
socket and the caller sends the same ``call(method, *args, **kwargs)`` there: one pickled frame
each way, many calls in flight on one connection. The actor is still found, created,
restarted and placed by Ray; a caller on another node, or one whose lane broke, uses Ray's
actor calls.

A caller that gives up on a call (its task was cancelled) sends a cancel frame — the call's
id with no method — and the server cancels that call's task; a synchronous actor's lane runs
each call on a worker thread with a :class:`threading.Event` the cancel sets, which the
engine reads as "cancelled" (``cancel_calls.py``), so the actor stops the work too.

The socket lives in a directory only its owner can enter (``0700``, see :func:`lane_dir`):
frames are pickles, so only processes of the same user may connect.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import os
import pickle
import queue
import stat
import struct
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from .cancel_calls import lane_call

_HEADER = struct.Struct("!I")
Handler = Callable[..., Awaitable[Any]]


class LaneClosed(ConnectionError):
    """The lane broke (the actor's process died or closed it). ``sent`` False: the call never
    left this process, so it is safe to send it another way."""

    def __init__(self, reason: str, sent: bool = True) -> None:
        super().__init__(reason)
        self.sent = sent


async def _read_frame(reader: asyncio.StreamReader) -> Any:
    head = await reader.readexactly(_HEADER.size)
    return pickle.loads(await reader.readexactly(_HEADER.unpack(head)[0]))


def _frame(obj: Any) -> bytes:
    body = pickle.dumps(obj, protocol=5)
    return _HEADER.pack(len(body)) + body


class LaneServer:
    """Answers ``(id, method, args, kwargs)`` frames with ``(id, ok, value)`` frames, each call
    running as its own task (as concurrent actor calls would); ``(id, None, (), {})`` cancels
    call ``id``'s task (its answer is then never sent) if ``cancellable(method)`` — so does a
    closed connection. Other calls (writes) always run to their end."""

    def __init__(self, handler: Handler,
                 cancellable: Callable[[str], bool] = lambda method: True) -> None:
        self.handler = handler
        self.cancellable = cancellable
        self.path: str | None = None
        self._server: asyncio.base_events.Server | None = None

    async def start(self) -> str:
        if self.path is None:
            path = os.path.join(lane_dir(), f"{os.getpid()}-{uuid.uuid4().hex[:8]}.sock")
            self._server = await asyncio.start_unix_server(self._serve, path=path,
                                                           limit=1 << 20)
            self.path = path
        return self.path

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def one(call_id: int, method: str, args: tuple, kwargs: dict) -> None:
            try:
                out = (call_id, True, await self.handler(method, *args, **kwargs))
            except asyncio.CancelledError:
                return                    # the caller gave up: nobody reads an answer
            except Exception as e:  # noqa: BLE001 - travels back to its caller
                out = (call_id, False, e.with_traceback(None))   # its frames hold the args
            finally:
                running.pop(call_id, None)
            try:
                data = _frame(out)
            except Exception as e:  # noqa: BLE001 - an answer that does not pickle
                data = _frame((call_id, False, RuntimeError(f"unpicklable answer: {e}")))
            writer.write(data)
            try:
                await writer.drain()
            except ConnectionError:
                pass
        running: dict[int, asyncio.Task] = {}
        try:
            while True:
                call_id, method, args, kwargs = await _read_frame(reader)
                if method is None:
                    task = running.pop(call_id, None)
                    if task is not None:
                        task.cancel()
                    continue
                task = asyncio.get_running_loop().create_task(
                    one(call_id, method, args, kwargs))
                if self.cancellable(method):
                    running[call_id] = task
                del args, kwargs, task   # the task holds them; none waits here for a frame
        except (asyncio.IncompleteReadError, ConnectionError):
            for task in list(running.values()):   # the caller's process is gone
                task.cancel()
        finally:
            _close_quietly(writer)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(AttributeError):   # Python 3.12+: also its connections
                self._server.close_clients()
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        self.path = self._server = None


def _close_quietly(writer: asyncio.StreamWriter) -> None:
    """Close a connection; at interpreter exit its loop may already be closed (the coroutine
    is being finalized), and then there is nothing left to close — not an error to report."""
    with contextlib.suppress(RuntimeError):
        writer.close()


def lane_dir() -> str:
    """The directory of this user's lane sockets: ``<tmp>/shardsearch-lanes-<uid>``, mode
    ``0700``. Sockets are named ``<pid>-<random>.sock``; those of processes that are gone (a
    killed actor never cleans up) are removed here, so the directory holds live ones only. A
    directory that is not ours or not private is not used: a fresh private one is made."""
    base = os.path.join(tempfile.gettempdir(), f"shardsearch-lanes-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(base, 0o700)
    st = os.lstat(base)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() \
            or stat.S_IMODE(st.st_mode) != 0o700:
        return tempfile.mkdtemp(prefix="shardsearch-lanes-")
    for name in os.listdir(base):
        pid = name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(base, name))
    return base


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LaneClient:
    """One connection, many calls in flight; a broken connection fails every pending call
    with :class:`LaneClosed` and the client stays closed (the caller makes a new one)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.closed = False
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task | None = None
        self._connecting: asyncio.Lock | None = None

    async def _connect(self) -> None:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._writer is not None or self.closed:
                return
            try:
                reader, writer = await asyncio.open_unix_connection(self.path, limit=1 << 20)
            except OSError as e:
                self.closed = True
                raise LaneClosed(f"cannot reach {self.path}: {e}", sent=False) from None
            self._writer = writer
            self._reader_task = asyncio.get_running_loop().create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                call_id, ok, value = await _read_frame(reader)
                fut = self._pending.pop(call_id, None)
                if fut is None or fut.done():
                    continue
                if ok:
                    fut.set_result(value)
                else:
                    fut.set_exception(value)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self._fail_all()

    def _fail_all(self) -> None:
        self.closed = True
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(LaneClosed("the lane to the coordinator closed"))
        if self._writer is not None:
            _close_quietly(self._writer)

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if self._writer is None:
            await self._connect()
        if self.closed or self._writer is None:
            raise LaneClosed("the lane to the coordinator is closed", sent=False)
        call_id = next(self._ids)
        fut = asyncio.get_running_loop().create_future()
        self._pending[call_id] = fut
        try:
            self._writer.write(_frame((call_id, method, args, kwargs)))
            await self._writer.drain()
        except asyncio.CancelledError:     # the frame is buffered: it will run, so cancel it
            self._pending.pop(call_id, None)
            self._cancel(call_id)
            raise
        except ConnectionError as e:
            self._pending.pop(call_id, None)
            self._fail_all()
            raise LaneClosed(f"the lane to the coordinator broke: {e}") from None
        try:
            return await fut
        except asyncio.CancelledError:
            self._cancel(call_id)
            raise
        finally:
            self._pending.pop(call_id, None)

    def _cancel(self, call_id: int) -> None:
        """Tell the server that nobody waits for call ``call_id`` any more."""
        if self.closed or self._writer is None:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            self._writer.write(_frame((call_id, None, (), {})))

    def close(self) -> None:
        if self._reader_task is not None:
            self._reader_task.cancel()
        self._fail_all()


class LaneFinder:
    """Finds actors' lanes: asks an actor (its ``lane()`` method, through Ray) for
    ``(node id, socket path)`` once per process of it. An actor on another node has no lane
    for us, for good; one that cannot be asked, or whose lane broke, is asked again a second
    later (meanwhile callers use Ray)."""

    def __init__(self) -> None:
        self._lanes: dict[str, LaneClient | float] = {}

    async def get(self, handle: Any) -> LaneClient | None:
        key = handle._actor_id.hex()
        got = self._lanes.get(key)
        if isinstance(got, LaneClient) and not got.closed:
            return got
        if isinstance(got, float) and time.monotonic() < got:
            return None
        self._lanes[key] = time.monotonic() + 1.0
        try:
            node, path = await handle.lane.remote()
        except Exception:  # noqa: BLE001 - no lane (yet): Ray's calls still work
            return None
        import ray
        if node != ray.get_runtime_context().get_node_id():
            self._lanes[key] = float("inf")   # a Unix socket cannot reach another machine
            return None
        lane = self._lanes[key] = LaneClient(path)
        return lane


class ThreadLane:
    """The lane of a synchronous actor: a thread with its own event loop serves the socket and
    hands the allowed methods of ``target`` to one worker thread, in order, so that the loop
    stays free to read a cancel frame while a call computes. The target must hold one lock per
    call on every path (see :func:`serialized`), since Ray runs its calls on another thread."""

    def __init__(self, target: Any, allowed: frozenset[str]) -> None:
        from ..errors import IllegalArgument

        async def handler(method: str, *args: Any, **kwargs: Any) -> Any:
            if method not in allowed:
                raise IllegalArgument(f"[{method}] is not served by the lane")
            flag = threading.Event()
            fut = self.loop.create_future()
            self.calls.put((fut, flag, functools.partial(getattr(target, method), *args,
                                                         **kwargs)))
            try:
                return await fut
            except asyncio.CancelledError:
                flag.set()      # the worker's checks see it (``cancel_calls.cancelled_predicate``)
                raise
        self.calls: queue.SimpleQueue = queue.SimpleQueue()
        self.worker = threading.Thread(target=self._work, name="lane-call", daemon=True)
        self.worker.start()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="lane", daemon=True)
        self.thread.start()
        self.server = LaneServer(handler)
        self.path: str = asyncio.run_coroutine_threadsafe(self.server.start(),
                                                          self.loop).result(30)

    def _work(self) -> None:
        """The worker: each call as a lane call its flag cancels, its answer set on the loop
        (a queue hand-off costs about half of an executor's, ~30 µs). Nothing of a call
        outlives it here: the last bulk write's batch (its ids and sources) was kept alive
        until the lane's next call, which may never come."""
        while True:
            item = self.calls.get()
            if item is None:
                return
            self._run(*item)
            del item

    def _run(self, fut: asyncio.Future, flag: threading.Event, call: Callable[[], Any]) -> None:
        try:
            with lane_call(flag):
                out, ok = call(), True
        except BaseException as e:  # noqa: BLE001 - travels back; the worker goes on
            out, ok = e.with_traceback(None), False   # its frames would hold ``call``
        del call
        self.loop.call_soon_threadsafe(_settle, fut, ok, out)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.calls.put(None)


def _settle(fut: asyncio.Future, ok: bool, value: Any) -> None:
    if fut.done():          # its caller gave up
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


def serialized(cls: type) -> type:
    """``cls`` with each public method holding a re-entrant lock of its instance: the calls
    that Ray runs on its thread and those a :class:`ThreadLane` runs on its own then never
    overlap, as a synchronous actor's calls never did."""
    ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                          "__doc__": cls.__doc__}
    for name in dir(cls):
        raw = inspect.getattr_static(cls, name)
        if name.startswith("_") or not inspect.isfunction(raw) or getattr(raw, "own_lock", False):
            continue
        ns[name] = _locked(raw)
    return type(cls.__name__, (cls,), ns)


def own_lock(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a method :func:`serialized` leaves alone: it takes the instance's lock itself, only
    where it must (a force merge waits for the merge thread without holding it)."""
    fn.own_lock = True  # type: ignore[attr-defined]
    return fn


def _locked(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        lock = self.__dict__.get("_serial_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_serial_lock", threading.RLock())
        with lock:
            return fn(self, *args, **kwargs)
    return wrapper
