"""Who may talk to the service: API keys and HTTP basic auth, as Elasticsearch speaks them.

Credentials come from a JSON file (``shardsearch serve --auth-file``)::

    {"api_keys": [{"id": "ingest", "key_hash": "scrypt$15$8$1$..."}],
     "users": [{"username": "alice", "password_hash": "scrypt$15$8$1$..."},
               {"username": "bob", "password": "..."}]}

Hashes are salted scrypt or PBKDF2 (``api/passwords.py``; make one with
``shardsearch hash-password``); plain ``key``/``password`` are accepted too (keep the file
0600). From the environment, a JSON object allows any character in names and secrets:
``SHARDSEARCH_API_KEYS='{"id": "key"}'`` and ``SHARDSEARCH_USERS='{"alice": "pass,word:x"}'``;
the older ``id:key,id2:key2`` form still works for secrets without commas.

When any credential is configured every request must carry one of::

    Authorization: ApiKey <base64 of "id:key">        (Elasticsearch's API-key scheme)
    Authorization: Basic <base64 of "user:password">

A missing or wrong one is answered ``401 security_exception`` with ``WWW-Authenticate``, before
the request body is read or the coordinator is called: nothing is read or written. The check is
a plain ASGI middleware (``AuthMiddleware``) so it runs ahead of routing.
"""
from __future__ import annotations

import asyncio
import base64
import hmac
import ipaddress
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .passwords import Verifier, check_format

CHALLENGES = ('Basic realm="security", charset="UTF-8"', "ApiKey")


@dataclass
class AuthConfig:
    """Accepted credentials: API keys (id -> key) and users (name -> password or sha-256)."""

    api_keys: dict[str, str] = field(default_factory=dict)
    key_hashes: dict[str, str] = field(default_factory=dict)       # salted slow hashes
    passwords: dict[str, str] = field(default_factory=dict)        # plain
    password_hashes: dict[str, str] = field(default_factory=dict)  # salted slow hashes
    verifier: Verifier = field(default_factory=Verifier, repr=False)

    @property
    def enabled(self) -> bool:
        return bool(self.api_keys or self.passwords or self.password_hashes or self.key_hashes)

    @property
    def slow(self) -> bool:
        """Whether checks may hash (then they run off the event loop)."""
        return bool(self.password_hashes or self.key_hashes)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None,
             environ: dict[str, str] | None = None) -> AuthConfig:
        """Credentials from ``path`` (JSON, see the module docstring) and the environment."""
        env = os.environ if environ is None else environ
        cfg = cls()
        if path is not None:
            try:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise ValueError(f"cannot read auth file [{path}]: {e}") from None
            if not isinstance(data, dict):
                raise ValueError(f"auth file [{path}] must hold a JSON object")
            cfg._load_entries(data, str(path))
        for name, secret in _env_credentials(env, "SHARDSEARCH_API_KEYS"):
            cfg.api_keys[name] = secret
        for name, secret in _env_credentials(env, "SHARDSEARCH_USERS"):
            cfg.passwords[name] = secret
        return cfg

    def _load_entries(self, data: dict[str, Any], path: str) -> None:
        for k in data.get("api_keys") or []:
            if not isinstance(k, dict) or not k.get("id") or not (k.get("key")
                                                                  or k.get("key_hash")):
                raise ValueError(f"auth file [{path}]: every api key needs 'id' and 'key' or "
                                 "'key_hash'")
            _put(k["id"], k.get("key_hash"), k.get("key"), self.key_hashes, self.api_keys, path)
        for u in data.get("users") or []:
            if not isinstance(u, dict) or not u.get("username"):
                raise ValueError(f"auth file [{path}]: every user needs 'username'")
            if u.get("password_sha256"):
                raise ValueError(f"auth file [{path}]: user [{u['username']}]: unsalted "
                                 "'password_sha256' is not accepted; store a salted hash as "
                                 "'password_hash' (make one with `shardsearch hash-password`)")
            if not (u.get("password") or u.get("password_hash")):
                raise ValueError(f"auth file [{path}]: user [{u['username']}] needs "
                                 "'password' or 'password_hash'")
            _put(u["username"], u.get("password_hash"), u.get("password"),
                 self.password_hashes, self.passwords, path)

    def check(self, header: str | None) -> tuple[bool, str | None]:
        """(accepted, who) for an ``Authorization`` header value. Constant-time compares."""
        if not header:
            return False, None
        scheme, _, value = header.strip().partition(" ")
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return False, None
        name, sep, secret = decoded.partition(":")
        if not sep:
            return False, None
        scheme = scheme.lower()
        if scheme == "apikey":
            return self._match(name, secret, self.key_hashes, self.api_keys), name
        if scheme == "basic":
            return self._match(name, secret, self.password_hashes, self.passwords), name
        return False, None

    def _match(self, name: str, secret: str, hashes: dict[str, str],
               plain: dict[str, str]) -> bool:
        if name in hashes:
            return self.verifier.verify(name, secret, hashes[name])
        want = plain.get(name)
        return want is not None and hmac.compare_digest(want.encode(), secret.encode())


def _put(name: Any, hashed: Any, plain: Any, hashes: dict[str, str], plains: dict[str, str],
         path: str) -> None:
    if hashed:
        try:
            check_format(str(hashed))
        except ValueError as e:
            raise ValueError(f"auth file [{path}]: [{name}]: {e}") from None
        hashes[str(name)] = str(hashed)
    else:
        plains[str(name)] = str(plain)


def _env_credentials(env: Any, var: str) -> list[tuple[str, str]]:
    """``{"name": "secret"}`` (JSON: any character) or the older ``name:secret,...``."""
    raw = env.get(var, "")
    if raw.strip().startswith("{"):
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"{var} is not a JSON object: {e}") from None
        if not all(isinstance(k, str) and isinstance(v, str) and k and v
                   for k, v in data.items()):
            raise ValueError(f"{var}: every name and secret must be a non-empty string")
        return list(data.items())
    out = []
    for item in raw.split(","):
        name, sep, secret = item.strip().partition(":")
        if sep and name and secret:
            out.append((name, secret))
    return out


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the service on this machine."""
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _reason(header: str | None, path: str) -> str:
    """Elasticsearch's wording for a refused request."""
    if not header:
        return f"missing authentication credentials for REST request [{path}]"
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() == "basic":
        try:
            user = base64.b64decode(value.strip()).decode("utf-8").partition(":")[0]
        except (ValueError, UnicodeDecodeError):
            user = ""
        return f"unable to authenticate user [{user}] for REST request [{path}]"
    return "unable to authenticate with provided credentials and anonymous access is not " \
           f"allowed for this request [{path}]"


class AuthMiddleware:
    """ASGI middleware: requests without an accepted credential get 401 and go no further."""

    def __init__(self, app: Any, config: AuthConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.config.enabled:
            await self.app(scope, receive, send)
            return
        header = None
        for k, v in scope.get("headers") or []:
            if k == b"authorization":
                header = v.decode("latin-1")
                break
        if self.config.slow:   # a slow hash may run: not on the event loop
            ok, who = await asyncio.to_thread(self.config.check, header)
        else:
            ok, who = self.config.check(header)
        if ok:
            scope.setdefault("state", {})["user"] = who
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "/")
        cause = {"type": "security_exception", "reason": _reason(header, path),
                 "header": {"WWW-Authenticate": list(CHALLENGES)}}
        body = b"" if scope.get("method") == "HEAD" else orjson.dumps(
            {"error": {"root_cause": [cause], **cause}, "status": 401})
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
        headers += [(b"www-authenticate", c.encode()) for c in CHALLENGES]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})
