"""Ray's token authentication, kept on: where the service's token lives and how Ray finds it.

Ray 2.60 listens on every interface (GCS, raylet, workers) whatever ``--node-ip-address`` says,
so the token is what keeps other machines out: a driver without it cannot join. The private
Ray of ``shardsearch serve`` gets a random token generated on first start and kept (mode 0600)
in the data folder, or in a per-user state folder for in-memory runs. Ray reads it from the
file named by ``RAY_AUTH_TOKEN_PATH``; the GCS, raylet and workers are started by this process
and inherit that environment, so every process of the service has it.

Joining a cluster (``--ray-address``) uses the cluster's token the way Ray looks it up:
``RAY_AUTH_TOKEN``, else the file ``RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

TOKEN_FILE = "ray_auth_token"


def private_dir(path: str | os.PathLike[str]) -> Path:
    """``path`` as a directory only its owner can enter (created 0700, tightened if looser)."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = p.stat()
    if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(p, 0o700)
    return p


def state_dir() -> Path:
    """Where an in-memory service keeps its token: ``SHARDSEARCH_STATE_DIR`` or the user's
    state folder (e.g. ``~/.local/state/shardsearch``)."""
    env = os.environ.get("SHARDSEARCH_STATE_DIR")
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_state_dir("shardsearch"))


def ensure_token(directory: str | os.PathLike[str]) -> Path:
    """The token file in ``directory``, created (random, mode 0600) if missing or empty.

    Created with ``O_EXCL`` so two services starting at once never see a half-written token;
    an existing file readable by others is tightened to 0600.
    """
    path = private_dir(directory) / TOKEN_FILE
    if not path.exists() or path.stat().st_size == 0:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        os.chmod(path, 0o600)
    return path


def use_private_token(directory: str | os.PathLike[str]) -> Path:
    """Turn token auth on for a private Ray whose token is kept in ``directory``.

    Sets the environment this process (and everything it starts) reads: ``RAY_AUTH_MODE=token``
    and ``RAY_AUTH_TOKEN_PATH``; a ``RAY_AUTH_TOKEN`` inherited from elsewhere is dropped, as
    Ray would prefer it to our file.
    """
    path = ensure_token(directory)
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN_PATH"] = str(path)
    os.environ.pop("RAY_AUTH_TOKEN", None)
    return path


def use_cluster_token(token_file: str | None = None) -> None:
    """Token auth for joining a cluster: on unless the user turned it off explicitly for that
    cluster; ``token_file`` (``serve --ray-token-file``) names the cluster's token."""
    if token_file:
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token_file)
        os.environ.pop("RAY_AUTH_TOKEN", None)
    os.environ.setdefault("RAY_AUTH_MODE", "token")
