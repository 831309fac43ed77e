"""`shardsearch serve` as a user runs it: its own private Ray, a real port, a clean Ctrl-C."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from conftest import free_port

EXE = shutil.which("shardsearch", path=str(Path(sys.executable).parent)) or "shardsearch"


def test_help_explains_every_option() -> None:
    out = subprocess.run([EXE, "serve", "--help"], capture_output=True, text=True, check=True)
    for opt in ("--host", "--port", "--ray-address", "--num-cpus", "--object-store-mb"):
        assert opt in out.stdout
    top = subprocess.run([EXE, "--help"], capture_output=True, text=True, check=True).stdout
    assert "serve" in top


def test_serve_on_a_busy_port_says_so_without_starting_ray() -> None:
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([EXE, "serve", "--port", str(port), "--in-memory"],
                             capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in run.stderr
    assert "Traceback" not in run.stderr and "ray" not in run.stderr.lower()


def test_help_shows_examples() -> None:
    top = subprocess.run([EXE, "--help"], capture_output=True, text=True, check=True).stdout
    assert "examples:" in top and "shardsearch load" in top


def test_serve_starts_a_private_ray_answers_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "RAY_ADDRESS": ""}
    env.pop("RAY_ADDRESS")
    proc = subprocess.Popen([EXE, "serve", "--port", str(port), "--num-cpus", "1",
                             "--object-store-mb", "80", "--data-dir", str(tmp_path)],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.3)
        lines = "\n".join(f'{{"index":{{"_index":"cli","_id":"{i}"}}}}\n{{"n":{i}}}'
                          for i in range(12)) + "\n"
        r = httpx.post(url + "/_bulk?refresh=true", content=lines,
                       headers={"content-type": "application/x-ndjson"}, timeout=30)
        assert r.json()["errors"] is False
        page = httpx.get(url + "/_search?size=5&from=5", timeout=30).json()
        assert [h["_id"] for h in page["hits"]["hits"]] == ["5", "6", "7", "8", "9"]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert proc.returncode == 0, out
    assert f"listening on http://127.0.0.1:{port}" in out
    assert "stopped" in out
