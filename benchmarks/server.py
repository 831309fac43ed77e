"""An engine's HTTP server as a child process on 127.0.0.1 (shardsearch, a peer behind FastAPI,
or OpenSearch), with its process tree's memory sampled, stopped by signal when done."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_ADDRESS", "SHARDSEARCH_RAY_ADDRESS")}
    env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    return env


def _process_label(p: Any) -> str:
    """A short name for a process of a server's tree (Ray workers by their actor class)."""
    try:
        cmd = p.cmdline()
    except Exception:  # noqa: BLE001
        cmd = []
    name = p.name()
    if cmd and cmd[0].startswith("ray::"):
        return cmd[0]
    for part in cmd:
        if part.endswith(("raylet", "gcs_server")):
            return part.rsplit("/", 1)[-1]
    if "shardsearch.cli" in cmd or "shardsearch.benchmarks.peers.serve" in cmd:
        return "http front end (driver)"
    return name


def _opensearch_peer() -> Any:
    """``peers/opensearch/peer.py``, loaded by path (it sits beside its Maven project, not in a
    Python package)."""
    import importlib.util
    path = Path(__file__).resolve().parent / "peers/opensearch/peer.py"
    spec = importlib.util.spec_from_file_location("opensearch_bench_peer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mapping_kind(path: str) -> str:
    """What a memory mapping of a process holds, for the memory breakdown."""
    if path in ("[heap]", "[anon]", ""):
        return "heap"                  # the process's own allocations (malloc and pymalloc)
    if path.startswith("/dev/shm"):
        return "object store"          # Ray's shared-memory object store, as touched
    if path.startswith("["):
        return "other"                 # stack, vdso...
    return "code and files"            # binaries, shared libraries, mapped files


def _pss_by_kind(p: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in p.memory_maps(grouped=True):
        kind = _mapping_kind(m.path)
        out[kind] = out.get(kind, 0) + m.pss
    return out


class Server:
    """An engine's HTTP server as a child process on 127.0.0.1, with its memory sampled."""

    def __init__(self, engine: str, log_dir: Path, ray_env: dict[str, str] | None = None,
                 data_dir: str | None = None) -> None:
        """``ray_env`` (shardsearch only): join the Ray cluster it names (``RAY_ADDRESS`` and
        its token) instead of starting a private Ray. ``data_dir`` (shardsearch only): serve
        the indices kept there, and keep them after :meth:`stop` (a fresh temporary one,
        removed at stop, by default)."""
        self.engine = engine
        self.port = free_port()
        self.data_dir: str | None = None
        self._keep_data = data_dir is not None
        env = _child_env()
        if engine == "shardsearch":
            # a fresh data directory: durable writes as configured by default, no old indices
            self.data_dir = data_dir or tempfile.mkdtemp(prefix="shardsearch-bench-")
            cmd = [sys.executable, "-m", "shardsearch.cli", "serve", "--host", "127.0.0.1",
                   "--port", str(self.port), "--data-dir", self.data_dir]
            if ray_env:
                cmd += ["--ray-address", "auto"]
                env.update(ray_env)
            else:
                cmd += ["--num-cpus", "2", "--object-store-mb", "512"]
        elif engine == "opensearch":
            cmd = _opensearch_peer().command(self.port)
        else:
            cmd = [sys.executable, "-m", "shardsearch.benchmarks.peers.serve", "--engine", engine,
                   "--port", str(self.port)]
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log = open(log_dir / f"{engine}-{self.port}.log", "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=env, start_new_session=True)
        self.peak_rss = 0
        self._stop_sampling = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout_s: float = 180.0) -> None:
        import httpx
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.engine} server exited with {self.proc.returncode}; "
                                   f"see {self.log.name}")
            try:
                if httpx.get(self.url + "/", timeout=2).status_code == 200:
                    self._sampler.start()
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.engine} server did not start in {timeout_s:.0f} s")

    def processes(self) -> list[Any]:
        import psutil
        try:
            root = psutil.Process(self.proc.pid)
            return [root] + root.children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def cpu_by_process(self) -> dict[tuple[str, int], float]:
        """User + system CPU seconds so far of each process of the server's tree alive now,
        by (label, pid)."""
        out = {}
        for p in self.processes():
            try:
                t = p.cpu_times()
                out[(_process_label(p), p.pid)] = t.user + t.system
            except Exception:  # noqa: BLE001 - a process that just exited
                continue
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the server's process tree so far (processes alive now)."""
        return sum(self.cpu_by_process().values())

    def memory(self) -> dict[str, int]:
        """RSS and PSS (bytes) summed over the server's process tree (driver, Ray's
        processes and workers); PSS also by process and, within each, by kind of mapping."""
        rss = pss = 0
        by_name: dict[str, int] = {}
        by_kind: dict[str, dict[str, int]] = {}
        for p in self.processes():
            try:
                info = p.memory_full_info()
                rss += info.rss
                pss += getattr(info, "pss", info.rss)
                name = _process_label(p)
                by_name[name] = by_name.get(name, 0) + getattr(info, "pss", info.rss)
                kinds = by_kind.setdefault(name, {})
                for kind, size in _pss_by_kind(p).items():
                    kinds[kind] = kinds.get(kind, 0) + size
            except Exception:  # noqa: BLE001 - a process that just exited
                continue
        return {"rss": rss, "pss": pss, "pss_by_process": by_name, "pss_by_kind": by_kind}

    def _sample(self) -> None:
        while not self._stop_sampling.wait(0.5):
            total = 0
            for p in self.processes():
                try:
                    total += p.memory_info().rss
                except Exception:  # noqa: BLE001
                    continue
            self.peak_rss = max(self.peak_rss, total)

    def stop(self) -> None:
        """SIGTERM (graceful: shardsearch stops its Ray), then SIGKILL of our own child
        process group if it does not exit in time."""
        self._stop_sampling.set()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()
        if self.data_dir is not None and not self._keep_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)
