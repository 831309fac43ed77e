"""What ``_cat/nodes`` reports about each node's processes and machine: memory, cpu, load,
file descriptors, disk and uptime, measured with psutil where the processes run.

Every process of the service measures itself (``sample``): the front end, the coordinator and
each shard copy (its ``info`` answer carries one, so a node on another machine reports through
the copies it holds). ``node_metrics`` then sums a node's processes and reads its machine from
any of them. *Heap* has no JVM here: ``heap.current`` is the resident memory (RSS) of the
node's processes, ``heap.max`` the node's Ray ``memory`` resource (the bound Ray schedules
actors under), else the machine's memory.
"""
from __future__ import annotations

import os
import shutil
import socket
import time
from typing import Any

import psutil

psutil.cpu_percent(interval=None)   # primes the machine's counter: later calls measure from here


def _machine() -> str:
    """One key per running machine: processes with the same key share RAM, load and disks."""
    return f"{socket.gethostname()}:{int(psutil.boot_time())}"


def _fd_limit() -> int | None:
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return None if soft == resource.RLIM_INFINITY else int(soft)
    except (ImportError, OSError, ValueError):
        return None


def sample(path: str | None = None) -> dict[str, Any]:
    """This process and its machine, now (``path``: where its data lives, for ``disk.*``).
    Cost: a few /proc reads, well under a millisecond."""
    proc = psutil.Process()
    mem = psutil.virtual_memory()
    try:
        fds: int | None = proc.num_fds()
    except (AttributeError, psutil.Error):
        fds = None
    try:
        disk = shutil.disk_usage(path or os.getcwd())
        disk_total, disk_avail = int(disk.total), int(disk.free)
    except OSError:
        disk_total = disk_avail = None
    try:
        load: list[float] | None = list(os.getloadavg())
    except (AttributeError, OSError):
        load = None
    return {"pid": proc.pid, "machine": _machine(), "rss": int(proc.memory_info().rss),
            "started": proc.create_time(), "fds": fds, "fd_max": _fd_limit(),
            "ram_total": int(mem.total), "ram_used": int(mem.total - mem.available),
            "cpu": psutil.cpu_percent(interval=None), "load": load,
            "disk_total": disk_total, "disk_avail": disk_avail}


def _percent(used: int | None, total: int | None) -> int | None:
    """Elasticsearch's ``(short) (100d * used / max)``; 0 when there is no max."""
    if used is None or total is None:
        return None
    return 0 if total <= 0 else int(100 * used / total)


def node_metrics(samples: list[dict[str, Any]], heap_max: int | None,
                 now: float | None = None) -> dict[str, Any]:
    """The ``_cat/nodes`` values of one node from its processes' samples (raw: bytes as
    integers, ``uptime`` in milliseconds); all None when no process of it answered."""
    procs = sorted({s["pid"]: s for s in samples}.values(), key=lambda s: s["pid"])
    if not procs:
        return {}
    host = procs[0]
    oldest = min(procs, key=lambda s: (s["started"], s["pid"]))   # the node's pid and uptime
    heap = sum(s["rss"] for s in procs)
    heap_max = int(heap_max or host["ram_total"])
    fds = None if any(s["fds"] is None for s in procs) else sum(s["fds"] for s in procs)
    out: dict[str, Any] = {
        "pid": oldest["pid"], "heap.current": heap, "heap.max": heap_max,
        "heap.percent": _percent(heap, heap_max), "ram.current": host["ram_used"],
        "ram.max": host["ram_total"], "ram.percent": _percent(host["ram_used"],
                                                              host["ram_total"]),
        "file_desc.current": fds, "file_desc.max": host["fd_max"],
        "file_desc.percent": _percent(fds, host["fd_max"]),
        "cpu": str(int(round(host["cpu"]))),
        "uptime": int(((now or time.time()) - oldest["started"]) * 1000)}
    for key, value in zip(("load_1m", "load_5m", "load_15m"), host["load"] or (None,) * 3):
        out[key] = None if value is None else f"{value:.2f}"
    total, avail = host["disk_total"], host["disk_avail"]
    if total is not None and avail is not None:
        used = total - avail
        out.update({"disk.total": total, "disk.avail": avail, "disk.used": used,
                    "disk.used_percent": f"{100.0 * (used / total if total else 1.0):.2f}"})
    return out


def assign(nodes: list[dict[str, Any]], samples: list[tuple[str | None, dict[str, Any]]]
           ) -> dict[str, list[dict[str, Any]]]:
    """Samples by node id. A sample without a node (the front end outside Ray) goes to the
    first node sharing its machine, else to the first node (where Ray runs the service)."""
    by_node: dict[str, list[dict[str, Any]]] = {n["id"]: [] for n in nodes}
    machines: dict[str, str] = {}
    for node, s in samples:
        if node in by_node:
            by_node[node].append(s)
            machines.setdefault(s["machine"], node)
    for node, s in samples:
        if node not in by_node and nodes:
            by_node[machines.get(s["machine"], nodes[0]["id"])].append(s)
    return by_node
