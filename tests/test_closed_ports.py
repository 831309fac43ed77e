"""Closed by default: every socket ``shardsearch serve`` opens beyond loopback refuses a caller
without the Ray token.

Ray 2.60 binds its GCS, raylet, object manager and worker servers on every interface whatever
address it is given, so the test does not ask for loopback-only Ray sockets: it lists every
listening socket of the service's processes (psutil) and proves each one that is reachable from
another machine refuses a caller without the token, while the same call with the token is served
(so the refusal is the token check, not a wrong method or port).
"""
from __future__ import annotations

import ipaddress
import os
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import httpx
import psutil
import pytest

from conftest import free_port
from service_proc import ServeProcess, session_pids

# One method of each Ray gRPC service; a port answers UNIMPLEMENTED for the services it lacks.
RAY_METHODS = ("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo",
               "/ray.rpc.NodeManagerService/GetNodeStats",
               "/ray.rpc.ObjectManagerService/Pull",
               "/ray.rpc.CoreWorkerService/GetCoreWorkerStats")
DRIVER = ("import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
          "print('JOINED', len(ray.nodes()))")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """The service on a fresh data folder (which it keeps its Ray token in), with one index."""
    state = tmp_path_factory.mktemp("state") / "data"
    port = free_port()
    proc = ServeProcess(port, ["--data-dir", str(state), "--num-cpus", "1"],
                        log=state.parent / "serve.log")
    try:
        proc.wait_up()
        r = httpx.put(f"{proc.url}/ports", json={"settings": {"number_of_shards": 1}}, timeout=60)
        assert r.status_code == 200, r.text
        r = httpx.put(f"{proc.url}/ports/_doc/1?refresh=true", json={"a": 1}, timeout=60)
        assert r.status_code == 201, r.text
        yield proc, state
    finally:
        proc.stop()


def listeners(pid: int) -> list[tuple[str, str, int]]:
    """(process name, address, port) of every listening TCP socket of the service's session."""
    out = []
    for p in session_pids(pid):
        try:
            proc = psutil.Process(p)
            for c in proc.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    out.append((proc.name(), c.laddr.ip, c.laddr.port))
        except psutil.Error:
            continue
    return out


def machine_address() -> str:
    """An address of this machine other machines would use (loopback if there is none)."""
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family.name == "AF_INET" and not ipaddress.ip_address(a.address).is_loopback:
                return a.address
    return "127.0.0.1"


def is_loopback_only(ip: str) -> bool:
    return ipaddress.ip_address(ip.split("%")[0]).is_loopback


def grpc_codes(host: str, port: int, token: str | None) -> dict[str, str]:
    """The status of each Ray method on that port, called with or without the token."""
    md = None if token is None else [("authorization", f"Bearer {token}")]
    codes = {}
    with grpc.insecure_channel(f"{host}:{port}") as ch:
        for m in RAY_METHODS:
            call = ch.unary_unary(m, request_serializer=bytes, response_deserializer=bytes)
            try:
                call(b"", timeout=10, metadata=md)
                codes[m] = "OK"
            except grpc.RpcError as e:
                codes[m] = e.code().name
    return codes


def test_the_http_api_listens_on_loopback_only(service):
    proc, _ = service
    mine = [(ip, port) for name, ip, port in listeners(proc.proc.pid) if port == proc.port]
    assert mine == [("127.0.0.1", proc.port)]


def test_every_socket_beyond_loopback_refuses_a_caller_without_the_token(service):
    proc, state = service
    token = (state / "ray_auth_token").read_text().strip()
    exposed = [s for s in listeners(proc.proc.pid) if not is_loopback_only(s[1])]
    assert exposed, "expected Ray's own servers (they bind every interface)"
    host = machine_address()
    for name, ip, port in exposed:
        target = host if ipaddress.ip_address(ip.split("%")[0]).is_unspecified else ip
        without = grpc_codes(target, port, None)
        if set(without.values()) == {"UNAVAILABLE"}:   # not gRPC: Ray's runtime-env agent (HTTP)
            r = httpx.get(f"http://{target}:{port}/", timeout=10)
            assert r.status_code == 401, (name, port, r.status_code, r.text[:200])
            continue
        assert "OK" not in without.values(), (name, port, without)
        served = [m for m, code in without.items() if code == "UNAUTHENTICATED"]
        assert served, (name, port, without)
        with_token = grpc_codes(target, port, token)
        assert all(with_token[m] == "OK" for m in served), (name, port, with_token)
        wrong = grpc_codes(target, port, "0" * len(token))
        assert all(wrong[m] == "UNAUTHENTICATED" for m in served), (name, port, wrong)


def _driver(address: str, env_extra: dict[str, str], home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0", **env_extra)
    return subprocess.run([sys.executable, "-c", DRIVER, address], env=env, capture_output=True,
                          text=True, timeout=180)


def test_a_ray_driver_without_the_token_cannot_join(service, tmp_path):
    proc, state = service
    gcs = [(ip, port) for name, ip, port in listeners(proc.proc.pid) if name == "gcs_server"]
    assert len(gcs) == 1
    ip, port = gcs[0]
    address = f"{machine_address() if ipaddress.ip_address(ip).is_unspecified else ip}:{port}"
    refused = _driver(address, {}, tmp_path)    # no token anywhere, not even in ~/.ray
    assert refused.returncode != 0 and "JOINED" not in refused.stdout
    assert "auth" in refused.stderr.lower(), refused.stderr[-2000:]
    token = (state / "ray_auth_token").read_text().strip()
    joined = _driver(address, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}, tmp_path)
    assert joined.returncode == 0 and "JOINED" in joined.stdout, joined.stderr[-2000:]


def test_the_token_is_kept_private_in_the_data_folder(service):
    _, state = service
    path = state / "ray_auth_token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert len(path.read_text().strip()) >= 32


def test_everything_in_the_data_folder_is_private_to_its_user(service):
    _, state = service
    paths = [state, *state.rglob("*")]
    assert len(paths) > 3
    loose = [(str(p), oct(stat.S_IMODE(p.lstat().st_mode))) for p in paths
             if stat.S_IMODE(p.lstat().st_mode) & 0o077]
    assert loose == []
