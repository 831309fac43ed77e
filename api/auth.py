"""Who may talk to the service: API keys and HTTP basic auth, as Elasticsearch speaks them.

Credentials come from a JSON file (``shardsearch serve --auth-file``)::

    {"api_keys": [{"id": "ingest", "key": "s3cret"}],
     "users": [{"username": "alice", "password": "..."},
               {"username": "bob", "password_sha256": "<hex sha-256 of the password>"}]}

or from the environment: ``SHARDSEARCH_API_KEYS="id:key,id2:key2"`` and
``SHARDSEARCH_USERS="alice:password,bob:password"``.

When any credential is configured every request must carry one of::

    Authorization: ApiKey <base64 of "id:key">        (Elasticsearch's API-key scheme)
    Authorization: Basic <base64 of "user:password">

A missing or wrong one is answered ``401 security_exception`` with ``WWW-Authenticate``, before
the request body is read or the coordinator is called: nothing is read or written. The check is
a plain ASGI middleware (``AuthMiddleware``) so it runs ahead of routing.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

CHALLENGES = ('Basic realm="security", charset="UTF-8"', "ApiKey")


@dataclass
class AuthConfig:
    """Accepted credentials: API keys (id -> key) and users (name -> password or sha-256)."""

    api_keys: dict[str, str] = field(default_factory=dict)
    passwords: dict[str, str] = field(default_factory=dict)        # plain
    password_hashes: dict[str, str] = field(default_factory=dict)  # hex sha-256

    @property
    def enabled(self) -> bool:
        return bool(self.api_keys or self.passwords or self.password_hashes)

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
            for k in data.get("api_keys") or []:
                if not isinstance(k, dict) or not k.get("id") or not k.get("key"):
                    raise ValueError(f"auth file [{path}]: every api key needs 'id' and 'key'")
                cfg.api_keys[str(k["id"])] = str(k["key"])
            for u in data.get("users") or []:
                if not isinstance(u, dict) or not u.get("username"):
                    raise ValueError(f"auth file [{path}]: every user needs 'username'")
                if u.get("password_sha256"):
                    cfg.password_hashes[str(u["username"])] = str(u["password_sha256"]).lower()
                elif u.get("password"):
                    cfg.passwords[str(u["username"])] = str(u["password"])
                else:
                    raise ValueError(f"auth file [{path}]: user [{u['username']}] needs "
                                     "'password' or 'password_sha256'")
        for pair in _pairs(env.get("SHARDSEARCH_API_KEYS", "")):
            cfg.api_keys[pair[0]] = pair[1]
        for pair in _pairs(env.get("SHARDSEARCH_USERS", "")):
            cfg.passwords[pair[0]] = pair[1]
        return cfg

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
            want = self.api_keys.get(name)
            return (want is not None and hmac.compare_digest(want.encode(), secret.encode()),
                    name)
        if scheme == "basic":
            if name in self.password_hashes:
                got = hashlib.sha256(secret.encode()).hexdigest()
                return hmac.compare_digest(got, self.password_hashes[name]), name
            want = self.passwords.get(name)
            return (want is not None and hmac.compare_digest(want.encode(), secret.encode()),
                    name)
        return False, None


def _pairs(raw: str) -> list[tuple[str, str]]:
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
