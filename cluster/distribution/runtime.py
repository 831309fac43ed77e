"""Starting or joining Ray the way this service needs it.

Traps handled here (see RAY_NOTES.md): a bare ``ray.init()`` silently joins any cluster already
running on the machine, so with no address we start a *private* local Ray
(``address="local"``); and ``ray.init`` replaces the process's SIGINT/SIGTERM handlers, so we
put the previous ones back (uvicorn's graceful shutdown depends on them). A private Ray starts
without the helper processes it never uses (``lean_head``).
"""
from __future__ import annotations

import os
import signal
from contextlib import nullcontext
from typing import Any

from .lazy_addons import install_lazy_addons
from .lean_head import lean_head
from .raytoken import state_dir, use_cluster_token, use_private_token


# Ray starts idle workers ahead of need (one per CPU at start, more for the first driver); a
# service that has no index yet keeps them idle for good (~55 MiB PSS each, issue 20). Workers
# start when an actor or a task needs one instead.
NO_PRESTARTED_WORKERS = {"enable_worker_prestart": False, "prestart_worker_first_driver": False}


def start_ray(address: str | None = None, *, num_cpus: int | None = None,
              object_store_mb: int | None = None, quiet: bool = True,
              token_dir: str | None = None, token_file: str | None = None) -> dict[str, Any]:
    """Start a private local Ray (``address`` None) or join the cluster at ``address``.

    Ray's token authentication is always on (see ``raytoken``): a private Ray's token is kept in
    ``token_dir`` (the data folder; default the user's state folder); joining a cluster uses
    ``token_file`` or Ray's own lookup. Returns a dict describing what happened. Safe to call
    when Ray is already initialised.
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    install_lazy_addons()
    if ray.is_initialized():
        return {"address": ray.get_runtime_context().gcs_address, "started": False}
    address = address or os.environ.get("SHARDSEARCH_RAY_ADDRESS") or None
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    kwargs: dict[str, Any] = {"namespace": "shardsearch", "logging_level": "ERROR",
                              "log_to_driver": not quiet}
    try:
        if address is None:
            use_private_token(token_dir or state_dir())
            cpus = num_cpus if num_cpus is not None else max(2, os.cpu_count() or 2)
            kwargs.update(address="local", include_dashboard=False, num_cpus=cpus,
                          _system_config=dict(NO_PRESTARTED_WORKERS))   # Ray adds to it
            if object_store_mb:
                kwargs["object_store_memory"] = object_store_mb * 1024 * 1024
            started = True
        else:
            use_cluster_token(token_file)
            kwargs.update(address=address)
            started = False
        _reload_ray_auth_config()
        with lean_head(log_to_driver=not quiet) if started else nullcontext():
            ctx = ray.init(**kwargs)
    finally:
        for sig, h in handlers.items():
            if h is not None:
                signal.signal(sig, h)
    return {"address": getattr(ctx, "address_info", {}).get("gcs_address"), "started": started}


def _reload_ray_auth_config() -> None:
    """Make an already imported Ray see the auth settings just put in the environment (it
    caches its config and token at import)."""
    from ray._raylet import AuthenticationTokenLoader, Config
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def coordinator_actor(build, create: bool = True, data_dir: str | None = None):
    """The named coordinator actor of this Ray namespace (created on first use, around the
    coordinator ``build(data_dir)`` returns).

    With ``data_dir`` indices persist there (and are reopened now); the coordinator then also
    restarts by itself if its process dies. It runs on the head node (Ray's
    ``node:__internal_head__`` resource), where ``shardsearch serve`` runs, so stopping another
    node of a cluster never takes it down.
    """
    import ray

    from .coordinator_actor import COORDINATOR_NAME, NAMESPACE, coordinator_actor_class

    if not create:
        return ray.get_actor(COORDINATOR_NAME, namespace=NAMESPACE)
    cls = coordinator_actor_class()
    return cls.options(name=COORDINATOR_NAME, namespace=NAMESPACE, get_if_exists=True,
                       lifetime=None, resources={"node:__internal_head__": 0.001},
                       max_restarts=-1 if data_dir else 0).remote(
        build, None if data_dir is None else str(data_dir))


def stop_ray() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()
