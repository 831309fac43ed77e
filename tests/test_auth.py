"""Who may talk to the service: API keys and basic auth, Elasticsearch's 401, the bind rule."""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import ServerThread
from shardsearch.api.auth import AuthConfig, is_loopback
from shardsearch.api.passwords import hash_secret


def api_key(key_id: str, key: str) -> dict[str, str]:
    return {"Authorization": "ApiKey " + base64.b64encode(f"{key_id}:{key}".encode()).decode()}


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def auth_file(tmp_path: Path) -> Path:
    p = tmp_path / "auth.json"
    p.write_text(json.dumps({
        "api_keys": [{"id": "ingest", "key": "k3y"}],
        "users": [{"username": "alice", "password": "wonderland"},
                  {"username": "bob", "password_hash": hash_secret("builder")}],
    }))
    return p


def test_credentials_load_from_a_file_and_the_environment(auth_file: Path) -> None:
    cfg = AuthConfig.load(auth_file, environ={"SHARDSEARCH_API_KEYS": "ops:opskey,bad",
                                              "SHARDSEARCH_USERS": "carol:pw"})
    assert cfg.enabled
    assert cfg.check(api_key("ingest", "k3y")["Authorization"]) == (True, "ingest")
    assert cfg.check(api_key("ops", "opskey")["Authorization"])[0]
    assert cfg.check(basic("alice", "wonderland")["Authorization"])[0]
    assert cfg.check(basic("bob", "builder")["Authorization"])[0]
    assert cfg.check(basic("carol", "pw")["Authorization"])[0]
    for bad in (api_key("ingest", "nope"), basic("alice", "k3y"), basic("bob", "x"),
                {"Authorization": "Bearer abc"}, {"Authorization": "ApiKey !!!"}):
        assert not cfg.check(bad["Authorization"])[0]
    assert not cfg.check(None)[0]
    assert not AuthConfig.load(None, environ={}).enabled


def test_a_broken_auth_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    p.write_text('{"users": [{"username": "x"}]}')
    with pytest.raises(ValueError, match="password"):
        AuthConfig.load(p, environ={})


def test_loopback_addresses() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.10", "example.org"))


@pytest.fixture(scope="module")
def secured(coordinator, tmp_path_factory) -> Iterator[str]:
    """The real app with credentials, on its own uvicorn (the session coordinator behind)."""
    from shardsearch.api.app import create_app
    from shardsearch.api.deps import RayCoordinator
    p = tmp_path_factory.mktemp("auth") / "auth.json"
    p.write_text(json.dumps({"api_keys": [{"id": "ingest", "key": "k3y"}],
                             "users": [{"username": "alice", "password": "wonderland"}]}))
    srv = ServerThread(create_app(RayCoordinator(coordinator), auth=AuthConfig.load(p, {})))
    srv.start()
    yield srv.url
    srv.stop()


def test_missing_credentials_get_a_401_security_exception(secured: str) -> None:
    r = httpx.get(secured + "/_search")
    assert r.status_code == 401
    body = r.json()
    assert body["status"] == 401
    assert body["error"]["type"] == "security_exception"
    assert body["error"]["reason"] == \
        "missing authentication credentials for REST request [/_search]"
    assert body["error"]["root_cause"][0]["type"] == "security_exception"
    challenges = r.headers.get_list("www-authenticate")
    assert any(c.startswith("Basic realm=") for c in challenges) and "ApiKey" in challenges
    assert r.headers["x-elastic-product"] == "Elasticsearch"


def test_wrong_credentials_get_a_401_and_nothing_is_written(secured: str) -> None:
    good = api_key("ingest", "k3y")
    with httpx.Client(base_url=secured, timeout=60) as c:
        c.delete("/locked", headers=good)
        for bad in (api_key("ingest", "wrong"), basic("alice", "nope"), basic("mallory", "x"),
                    {}):
            r = c.put("/locked", json={"settings": {"number_of_replicas": 0}}, headers=bad)
            assert r.status_code == 401 and r.json()["error"]["type"] == "security_exception"
            r = c.post("/locked/_doc/1?refresh=true", json={"a": 1}, headers=bad)
            assert r.status_code == 401
        assert c.head("/locked", headers=good).status_code == 404    # nothing was created
        assert c.head("/locked").status_code == 401


def test_api_keys_and_users_are_let_in(secured: str) -> None:
    with httpx.Client(base_url=secured, timeout=60) as c:
        r = c.put("/open", json={"settings": {"number_of_replicas": 0}},
                  headers=api_key("ingest", "k3y"))
        assert r.status_code == 200, r.text
        r = c.post("/open/_doc/1?refresh=true", json={"a": 1}, headers=basic("alice", "wonderland"))
        assert r.status_code == 201, r.text
        r = c.get("/open/_search", headers=basic("alice", "wonderland"))
        assert r.json()["hits"]["total"]["value"] == 1
        assert c.delete("/open", headers=api_key("ingest", "k3y")).status_code == 200


def test_wrong_basic_credentials_name_the_user(secured: str) -> None:
    r = httpx.get(secured + "/", headers=basic("mallory", "x"))
    assert r.status_code == 401
    assert r.json()["error"]["reason"] == \
        "unable to authenticate user [mallory] for REST request [/]"


EXE = shutil.which("shardsearch", path=str(Path(sys.executable).parent)) or "shardsearch"


def test_serve_refuses_a_public_address_without_credentials(tmp_path: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("SHARDSEARCH_API_KEYS", "SHARDSEARCH_USERS")}
    out = subprocess.run([EXE, "serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2
    assert "refusing to listen on 0.0.0.0 without credentials" in out.stderr
    assert "--insecure" in out.stderr
