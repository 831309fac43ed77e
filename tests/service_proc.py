"""``shardsearch serve`` as a separate process (its own session), for crash and cluster tests.

The process is started in a new session so that it — and, with no Ray address, the private
Ray it starts — can be killed as a whole (``kill_session``), the way a machine losing power
would stop it, without touching any other process on the machine.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

EXE = shutil.which("shardsearch", path=str(Path(sys.executable).parent)) or "shardsearch"


def session_pids(sid: int) -> list[int]:
    """Every process in session ``sid`` (read from /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":   # stat: state ppid pgrp session
            out.append(int(d.name))
    return out


def kill_session(sid: int, sig: int = signal.SIGKILL, wait: float = 20.0) -> None:
    """Signal every process of the session; with SIGKILL wait until they are gone."""
    for pid in session_pids(sid):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.1)


class ServeProcess:
    """One ``shardsearch serve`` (and whatever it starts) in its own session."""

    def __init__(self, port: int, args: list[str], env: dict[str, str] | None = None,
                 log: Path | None = None) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        out = open(log, "ab") if log is not None else subprocess.DEVNULL
        full_env = {**os.environ, **(env or {})}
        if "RAY_ADDRESS" in full_env and not full_env["RAY_ADDRESS"]:
            full_env.pop("RAY_ADDRESS")
        self.proc = subprocess.Popen([EXE, "serve", "--port", str(port), *args],
                                     stdout=out, stderr=subprocess.STDOUT, env=full_env,
                                     start_new_session=True)

    def wait_up(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(self.url + "/", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}: {self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"serve did not come up: {self.tail()}")
            time.sleep(0.05)

    def tail(self) -> str:
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")[-3000:]

    def kill9(self) -> None:
        """The whole service (its Ray included) dies at once."""
        kill_session(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """Ctrl-C, then make sure nothing of it is left."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        kill_session(self.proc.pid, signal.SIGKILL)
