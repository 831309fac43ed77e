"""A private Ray head without the three helper processes such a head never uses (issue 20).

A head started by ``ray.init`` always runs, besides GCS, raylet and the raylet's two agents:

* the autoscaler monitor (~50 MiB PSS), which scales clusters launched from an autoscaler
  config, which a private one-node Ray never is (``ray start --no-monitor`` skips it);
* the log monitor (~47 MiB PSS), which only forwards the workers' log files to drivers that
  asked for them with ``log_to_driver`` (``ray start --include-log-monitor=false`` skips it);
  workers still write their logs to the session's ``logs`` folder, where operators read them;
* the dashboard's API server (~63 MiB PSS): with ``include_dashboard=False`` Ray starts it with
  its usage-stats module only (``--modules-to-load=UsageStatsHead``: no dashboard, no job or
  state API), and usage stats are off here (``RAY_USAGE_STATS_ENABLED=0``). Ray already runs
  without it when it fails to start (no web UI address); not starting it also frees port 8265.

``ray.init`` passes none of these switches, so while our ``ray.init`` starts a head, its
``RayParams`` and ``Node`` get them. Ray is pinned (pyproject); on a Ray whose ``RayParams`` or
``Node`` lacks what is overridden, the lever is left off.
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Iterator

LEAN_FIELDS = ("no_monitor", "include_log_monitor")


def _applies(parameter: Any, node: Any) -> bool:
    fields = inspect.signature(parameter.RayParams.__init__).parameters
    api = inspect.signature(getattr(node.Node, "start_api_server", lambda: None)).parameters
    return set(LEAN_FIELDS) <= set(fields) and {"include_dashboard", "raise_on_failure"} <= set(api)


@contextmanager
def lean_head(log_to_driver: bool) -> Iterator[bool]:
    """While active, a head ``ray.init`` starts runs no autoscaler monitor, no dashboard API
    server unless the dashboard is asked for, and no log monitor unless ``log_to_driver`` (the
    driver then wants the workers' output). Yields whether the lever applies to this Ray."""
    import ray._private.node as node
    import ray._private.parameter as parameter

    if not _applies(parameter, node):
        yield False
        return
    base_params, base_node = parameter.RayParams, node.Node

    class LeanHeadParams(base_params):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("no_monitor", True)
            if not log_to_driver:
                kwargs.setdefault("include_log_monitor", False)
            super().__init__(*args, **kwargs)

    class LeanHeadNode(base_node):  # type: ignore[misc, valid-type]
        def start_api_server(self, *, include_dashboard: bool | None,
                             raise_on_failure: bool) -> None:
            if include_dashboard is not False:
                super().start_api_server(include_dashboard=include_dashboard,
                                         raise_on_failure=raise_on_failure)

    parameter.RayParams, node.Node = LeanHeadParams, LeanHeadNode
    try:
        yield True
    finally:
        parameter.RayParams, node.Node = base_params, base_node
