"""Ray's extra serializers (pydantic, starlette, pyarrow) are registered when their library is
imported, not by importing them all in every process (issue 20: process overhead). Real local
Ray; a real ``shardsearch serve`` for the processes of the service."""
from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import httpx
import numpy as np
import psutil
import ray
from ray import cloudpickle

from conftest import free_port
from service_proc import ServeProcess, session_pids

LAZY_LIBRARIES = ("pyarrow", "pydantic_core")


def _mapped(pid: int) -> set[str]:
    """Which of the lazily registered libraries' native code process ``pid`` has loaded."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {lib for lib in LAZY_LIBRARIES if f"/{lib}/" in maps}


def _actor_pids(sid: int, actor: str) -> list[int]:
    out = []
    for pid in session_pids(sid):
        try:
            if psutil.Process(pid).cmdline()[:1] == [f"ray::{actor}"]:
                out.append(pid)
        except (psutil.Error, IndexError):
            continue
    return out


def test_shard_copies_and_the_coordinator_load_neither_pyarrow_nor_pydantic() -> None:
    data = tempfile.mkdtemp(prefix="lazy-addons-")
    serve = ServeProcess(free_port(), ["--data-dir", data], log=Path(data) / "serve.log")
    try:
        serve.wait_up()
        with httpx.Client(base_url=serve.url, timeout=60) as c:
            assert c.put("/lazy", json={"settings": {"number_of_shards": 1}}).status_code == 200
            assert c.post("/lazy/_search", json={"size": 0}).status_code == 200
            copy = c.get("/_cat/shards/lazy?format=json&h=pid").json()[0]["pid"]
            coordinator = _actor_pids(serve.proc.pid, "CoordinatorService")
            assert len(coordinator) == 1
            assert _mapped(int(copy)) == set() and _mapped(coordinator[0]) == set()
            # a refresh builds a segment with NumPy alone (``term_ids.py``): still no pyarrow
            r = c.put("/lazy/_doc/1?refresh=true", json={"title": "lazy arrow"})
            assert r.status_code == 201, r.text
            hits = c.post("/lazy/_search", json={"query": {"match": {"title": "arrow"}}}).json()
            assert [h["_id"] for h in hits["hits"]["hits"]] == ["1"]
            assert "pyarrow" not in _mapped(int(copy))
    finally:
        serve.stop()


def test_ray_s_arrow_serializer_is_registered_once_pyarrow_is_imported(ray_session) -> None:
    context = ray._private.worker.global_worker.get_serialization_context()
    pa = importlib.import_module("pyarrow")
    from ray._private.arrow_serialization import _arrow_table_reduce
    assert cloudpickle.CloudPickler.dispatch.get(pa.Table) is _arrow_table_reduce
    big = pa.table({"x": np.arange(1_000_000, dtype=np.int64)})
    part = big.slice(10, 5)
    assert ray.get(ray.put(part)).column("x").to_pylist() == [10, 11, 12, 13, 14]
    # Ray's reducer sends the slice only (Arrow's own pickling would send the 8 MB buffer)
    assert context.serialize(part).total_bytes < 64 * 1024


def test_ray_s_pydantic_and_starlette_serializers_are_registered_once_imported(
        ray_session) -> None:
    ray._private.worker.global_worker.get_serialization_context()
    importlib.import_module("pydantic")
    datastructures = importlib.import_module("starlette.datastructures")
    from ray._common.pydantic_compat import _iter_model_field_types
    dispatch = cloudpickle.CloudPickler.dispatch
    assert all(t in dispatch for t in _iter_model_field_types())
    state = datastructures.State({"answer": 42})
    assert datastructures.State in dispatch
    assert ray.get(ray.put(state)).answer == 42


def _run_python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_a_fresh_process_registers_the_arrow_serializer_only_when_pyarrow_arrives() -> None:
    out = _run_python("""
        import sys, ray
        from shardsearch.cluster.distribution.lazy_addons import install_lazy_addons
        from shardsearch.cluster.distribution.runtime import start_ray, stop_ray
        assert install_lazy_addons()
        start_ray(None, num_cpus=1, object_store_mb=80)
        ray._private.worker.global_worker.get_serialization_context()
        print("before", "pyarrow" in sys.modules)
        import pyarrow as pa
        from ray import cloudpickle
        from ray._private.arrow_serialization import _arrow_table_reduce
        print("after", cloudpickle.CloudPickler.dispatch.get(pa.Table) is _arrow_table_reduce)
        stop_ray()
    """)
    assert "before False" in out and "after True" in out


def test_a_failing_registration_does_not_fail_the_librarys_import(tmp_path: Path) -> None:
    (tmp_path / "lazy_probe_lib.py").write_text("VALUE = 7\n")
    out = _run_python(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from shardsearch.cluster.distribution import lazy_addons
        sys.meta_path.insert(0, lazy_addons._after_import)
        def broken():
            raise RuntimeError("registration failed")
        lazy_addons._after_import.when_imported("lazy_probe_lib", broken)
        import lazy_probe_lib
        print("value", lazy_probe_lib.VALUE, "lazy_probe_lib" in sys.modules)
    """)
    assert "value 7 True" in out
