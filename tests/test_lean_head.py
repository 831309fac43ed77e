"""A private Ray starts without the helper processes it never uses (issue 20: process overhead),
and what those helpers could matter for still works: workers' logs in the session's files,
``runtime_env``, and Ray's own defaults for any later ``ray.init``. Real local Ray."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import psutil
import ray

UNUSED_HELPERS = ("autoscaler/_private/monitor.py", "_private/log_monitor.py",
                  "dashboard/dashboard.py")


def _ray_processes() -> list[str]:
    """Command lines of every process this test process started (Ray's head and workers)."""
    out = []
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            out.append(" ".join(p.cmdline()))
        except psutil.Error:
            continue
    return out


def test_a_private_ray_runs_no_autoscaler_monitor_log_monitor_or_dashboard_api_server(
        ray_session) -> None:
    cmdlines = _ray_processes()
    assert any(c.endswith("gcs_server") or "/gcs_server " in c for c in cmdlines), cmdlines
    assert any("/raylet " in c for c in cmdlines), cmdlines
    for helper in UNUSED_HELPERS:
        assert not [c for c in cmdlines if helper in c], helper


@ray.remote
def _say(marker: str) -> str:
    print(marker, flush=True)
    return os.environ.get("SHARDSEARCH_LEAN_HEAD_PROBE", "")


def test_workers_logs_still_reach_the_session_log_files(ray_session) -> None:
    marker = f"lean-head-{uuid.uuid4().hex}"
    ray.get(_say.remote(marker))
    logs = Path(ray._private.worker.global_worker.node.get_logs_dir_path())
    assert any(marker in f.read_text(errors="replace") for f in logs.glob("worker-*.out"))


def test_runtime_env_still_reaches_the_workers(ray_session) -> None:
    probe = uuid.uuid4().hex
    task = _say.options(runtime_env={"env_vars": {"SHARDSEARCH_LEAN_HEAD_PROBE": probe}})
    assert ray.get(task.remote("runtime-env")) == probe


def test_ray_s_own_defaults_are_back_after_the_private_start(ray_session) -> None:
    import ray._private.node as node
    import ray._private.parameter as parameter
    assert parameter.RayParams.__name__ == "RayParams"
    assert node.Node.__name__ == "Node"
    assert parameter.RayParams().no_monitor is False


def test_a_private_ray_prestarts_no_idle_workers(ray_session) -> None:
    from shardsearch.cluster.distribution.runtime import NO_PRESTARTED_WORKERS
    config = ray._private.worker.global_worker.node._ray_params._system_config
    assert {k: config.get(k) for k in NO_PRESTARTED_WORKERS} == NO_PRESTARTED_WORKERS
    assert not any(NO_PRESTARTED_WORKERS.values())
