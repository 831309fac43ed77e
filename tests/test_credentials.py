"""Credentials done right: salted slow hashes in the auth file, any character in environment
credentials, unsalted hashes refused."""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from shardsearch.api.auth import AuthConfig
from shardsearch.api.passwords import Verifier, check_format, hash_secret, verify_secret


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_a_stored_hash_is_salted_scrypt():
    a, b = hash_secret("same"), hash_secret("same")
    assert a != b and a.startswith("scrypt$")
    assert verify_secret("same", a) and verify_secret("same", b)
    assert not verify_secret("other", a)


def test_pbkdf2_hashes_are_verified_and_weak_ones_refused():
    salt = b"0123456789abcdef"
    digest = hashlib.pbkdf2_hmac("sha256", b"pw", salt, 200_000)
    stored = f"pbkdf2_sha256$200000${base64.b64encode(salt).decode()}$" \
             f"{base64.b64encode(digest).decode()}"
    check_format(stored)
    assert verify_secret("pw", stored) and not verify_secret("px", stored)
    with pytest.raises(ValueError, match="iterations"):
        check_format(stored.replace("$200000$", "$1000$"))
    with pytest.raises(ValueError):
        check_format(hashlib.sha256(b"pw").hexdigest())


def test_unsalted_sha256_in_the_auth_file_is_refused(tmp_path: Path):
    p = tmp_path / "auth.json"
    p.write_text(json.dumps({"users": [{"username": "bob",
                                        "password_sha256": hashlib.sha256(b"x").hexdigest()}]}))
    with pytest.raises(ValueError, match="password_hash"):
        AuthConfig.load(p, environ={})


def test_hashed_api_keys_and_passwords_authenticate(tmp_path: Path):
    p = tmp_path / "auth.json"
    p.write_text(json.dumps({"api_keys": [{"id": "ingest", "key_hash": hash_secret("k,:y")}],
                             "users": [{"username": "bob", "password_hash": hash_secret("b")}]}))
    cfg = AuthConfig.load(p, environ={})
    assert cfg.slow
    key = "ApiKey " + base64.b64encode(b"ingest:k,:y").decode()
    assert cfg.check(key) == (True, "ingest")
    assert cfg.check(basic("bob", "b")) == (True, "bob")
    assert cfg.check(basic("bob", "b")) == (True, "bob")      # remembered: no second hash
    assert not cfg.check(basic("bob", "B"))[0]


def test_environment_credentials_as_json_allow_any_character():
    env = {"SHARDSEARCH_USERS": json.dumps({"al,ice": "p:a,s s\"w"}),
           "SHARDSEARCH_API_KEYS": json.dumps({"ops": "x,y:z"})}
    cfg = AuthConfig.load(None, environ=env)
    assert cfg.check(basic("al,ice", "p:a,s s\"w"))[0]
    assert cfg.check("ApiKey " + base64.b64encode(b"ops:x,y:z").decode())[0]
    with pytest.raises(ValueError, match="SHARDSEARCH_USERS"):
        AuthConfig.load(None, environ={"SHARDSEARCH_USERS": "{broken"})


def test_the_verifier_forgets_nothing_it_should_not_remember():
    v = Verifier()
    stored = hash_secret("right")
    assert not v.verify("u", "wrong", stored)
    assert v.verify("u", "right", stored)
    assert not v.verify("u", "wrong", stored)


def test_the_cli_prints_a_hash_the_service_accepts():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "shardsearch.cli", "hash-password", "--stdin"],
                         input="se,cret:\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert verify_secret("se,cret:", out.stdout.strip())
