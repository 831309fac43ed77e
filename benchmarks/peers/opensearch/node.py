"""Start and stop one real OpenSearch node on loopback, for the differential tests and the benchmark.

The node is the Java main beside this file (``OpenSearchPeer``), built once with Maven from jars on
Maven Central (``pom.xml``); the build is skipped while ``target/`` is newer than its sources. The
JVM reads its standard input and exits when it closes, so a node never outlives the Python process
that started it. Standard library only: tests import this file by path.

    python3 benchmarks/peers/opensearch/node.py --port 9201     # or ./run.sh --port 9201
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE / "target"
JAR = TARGET / "opensearch-peer-1.jar"
CLASSPATH = TARGET / "classpath.txt"
MAIN = "shardsearch.peer.OpenSearchPeer"
HEAP_MB = 512
BUILD_TIMEOUT_S = 1200.0
READY_TIMEOUT_S = 180.0


class PeerUnavailable(RuntimeError):
    """OpenSearch cannot run here (no Java 17+, no Maven, a failed build or start): callers skip."""


def _sources() -> list[Path]:
    return [HERE / "pom.xml", *sorted((HERE / "src").rglob("*"))]


def is_built() -> bool:
    """True when the jar and the classpath file are newer than the pom and every source file."""
    if not (JAR.exists() and CLASSPATH.exists()):
        return False
    built = min(JAR.stat().st_mtime, CLASSPATH.stat().st_mtime)
    return all(p.stat().st_mtime <= built for p in _sources() if p.is_file())


def _java_major(java: str) -> int:
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    try:
        version = out.split('"')[1]
    except IndexError:
        raise PeerUnavailable(f"cannot read the Java version from {out!r}") from None
    head = version.split(".")
    return int(head[1]) if head[0] == "1" else int(head[0].split("-")[0])


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise PeerUnavailable(f"OpenSearch peer: `{name}` is not on PATH (Java 17+ and Maven needed)")
    return path


def build() -> list[str]:
    """The node's classpath, building it with Maven first when it is missing or stale.

    One build at a time (a lock file in ``target/``): pytest workers and the benchmark may call this
    together.
    """
    java = _tool("java")
    if _java_major(java) < 17:
        raise PeerUnavailable("OpenSearch peer: Java 17 or newer is needed")
    if not is_built():
        mvn = _tool("mvn")
        TARGET.mkdir(exist_ok=True)
        import fcntl
        with open(TARGET / ".build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not is_built():
                _run_maven(mvn)
    return [str(JAR), *CLASSPATH.read_text().strip().split(os.pathsep)]


def _run_maven(mvn: str) -> None:
    try:
        proc = subprocess.run([mvn, "-q", "-B", "package"], cwd=HERE, capture_output=True,
                              text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise PeerUnavailable(f"OpenSearch peer: Maven build took over {BUILD_TIMEOUT_S:.0f}s") \
            from None
    if proc.returncode != 0 or not (JAR.exists() and CLASSPATH.exists()):
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise PeerUnavailable(f"OpenSearch peer: Maven build failed (exit {proc.returncode}):\n"
                              f"{tail}")
    # the jar may predate a source Maven found unchanged: mark the build as current
    now = time.time()
    os.utime(JAR, (now, now))
    os.utime(CLASSPATH, (now, now))


class NodeHandle:
    """A running node: ``url``, ``port``, ``pid``; ``wait_ready()`` and ``stop()``."""

    def __init__(self, proc: subprocess.Popen, data_dir: Path, owns_data: bool) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.data_dir = data_dir
        self.owns_data = owns_data
        self.url: str | None = None
        self.port: int | None = None
        self.log: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()
        threading.Thread(target=self._read, args=(proc.stderr,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            line = line.rstrip("\n")
            if line.startswith("READY "):
                self.url = line.split()[1]
                self.port = int(self.url.rsplit(":", 1)[1])
                self._ready.set()
            elif len(self.log) < 2000:
                self.log.append(line)

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> str:
        """Block until the node printed READY; its URL. Raises PeerUnavailable if it died."""
        deadline = time.monotonic() + timeout_s
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                why = (f"exited with {self.proc.returncode}" if self.proc.poll() is not None
                       else f"not ready after {timeout_s:.0f}s")
                self.stop()
                tail = "\n".join(self.log[-15:])
                raise PeerUnavailable(f"OpenSearch peer {why}:\n{tail}")
        assert self.url is not None
        return self.url

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (the node closes its indices), then SIGKILL if it lingers; data removed if ours."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stdin:
            self.proc.stdin.close()
        if self.owns_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def start(port: int | None = None, data_dir: str | Path | None = None, heap_mb: int = HEAP_MB,
          wait: bool = True) -> NodeHandle:
    """Build if needed and start one node on 127.0.0.1 (``port=None``: a free one).

    With ``wait=False`` the handle comes back at once and ``wait_ready()`` blocks later, so a test
    session can start the node in the background and wait only at first use.
    """
    classpath = build()
    owns = data_dir is None
    data = Path(tempfile.mkdtemp(prefix="shardsearch-opensearch-")) if owns else Path(data_dir)
    data.mkdir(parents=True, exist_ok=True)
    cmd = [shutil.which("java") or "java", f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m",
           "-XX:+UseSerialGC", "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8",
           "-Dlog4j2.disable.jmx=true", "-cp", os.pathsep.join(classpath), MAIN,
           "--port", str(port or 0), "--data", str(data), "--watch-stdin"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=data)
    handle = NodeHandle(proc, data, owns)
    if wait:
        handle.wait_ready()
    return handle


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="one OpenSearch node on 127.0.0.1 (built with Maven)")
    p.add_argument("--port", type=int, default=9201, help="HTTP port (0: a free one)")
    p.add_argument("--data", default=None, help="data folder (default: a temporary one)")
    p.add_argument("--heap-mb", type=int, default=HEAP_MB)
    p.add_argument("--build-only", action="store_true", help="build the classpath and exit")
    args = p.parse_args(argv)
    try:
        if args.build_only:
            build()
            print(f"built: {JAR}")
            return 0
        node = start(args.port, args.data, args.heap_mb)
    except PeerUnavailable as e:
        print(e, file=sys.stderr)
        return 2
    print(f"OpenSearch ready at {node.url} (pid {node.pid}); Ctrl-C stops it", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5) and node.proc.poll() is None:
            pass
    except KeyboardInterrupt:
        pass
    node.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
