"""Salted slow hashes for stored credentials (scrypt and PBKDF2 from the standard library).

A hash is one string, ``scrypt$<log2 n>$<r>$<p>$<salt b64>$<hash b64>`` or
``pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>``; make one with
``shardsearch hash-password``. A slow hash costs tens of milliseconds, too much for every
request: :class:`Verifier` remembers the credentials it has already verified as a keyed digest
(a random per-process key, never written anywhere), so each is paid for once per process.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P = 15, 8, 1
PBKDF2_MIN_ITERATIONS = 100_000
_MAX_REMEMBERED = 4096


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_secret(secret: str) -> str:
    """A new salted scrypt hash of ``secret``."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=2 ** SCRYPT_LOG_N, r=SCRYPT_R,
                            p=SCRYPT_P, maxmem=2 ** 26, dklen=32)
    return f"scrypt${SCRYPT_LOG_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def check_format(stored: str) -> None:
    """Refuse (ValueError) a stored hash in no format we verify, or too weak."""
    parts = stored.split("$")
    try:
        if parts[0] == "scrypt" and len(parts) == 6:
            log_n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
            if not (14 <= log_n <= 20 and 1 <= r <= 32 and 1 <= p <= 16):
                raise ValueError("scrypt parameters out of range")
        elif parts[0] == "pbkdf2_sha256" and len(parts) == 4:
            if int(parts[1]) < PBKDF2_MIN_ITERATIONS:
                raise ValueError(f"fewer than {PBKDF2_MIN_ITERATIONS} PBKDF2 iterations")
        else:
            raise ValueError("expected scrypt$... or pbkdf2_sha256$...")
        for b in parts[-2:]:
            base64.b64decode(b, validate=True)
    except (ValueError, IndexError) as e:
        raise ValueError(f"unusable password hash: {e}") from None


def verify_secret(secret: str, stored: str) -> bool:
    """Whether ``secret`` hashes to ``stored`` (constant-time compare)."""
    parts = stored.split("$")
    salt, want = base64.b64decode(parts[-2]), base64.b64decode(parts[-1])
    if parts[0] == "scrypt":
        n, r, p = 2 ** int(parts[1]), int(parts[2]), int(parts[3])
        got = hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p,
                             maxmem=256 * n * r + 2 ** 20, dklen=len(want))
    else:
        got = hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, int(parts[1]),
                                  dklen=len(want))
    return hmac.compare_digest(got, want)


class Verifier:
    """Checks secrets against stored hashes, remembering successes for this process."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self._ok: set[bytes] = set()

    def verify(self, name: str, secret: str, stored: str) -> bool:
        mark = hmac.new(self._key, f"{name}\0{secret}\0{stored}".encode(), "sha256").digest()
        if mark in self._ok:
            return True
        if not verify_secret(secret, stored):
            return False
        if len(self._ok) >= _MAX_REMEMBERED:
            self._ok.clear()
        self._ok.add(mark)
        return True
