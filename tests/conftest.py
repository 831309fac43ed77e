"""Shared fixtures: one real local Ray per test session, and a real uvicorn server on loopback.

Ray is small and private (``address="local"``, 2 CPUs, a 100 MiB object store, no dashboard);
the HTTP server runs in a thread of the test process and talks to the real coordinator actor.
"""
from __future__ import annotations

import gc
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch
    from opensearchpy import OpenSearch

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Ray's token auth stays on in tests too; tokens of in-memory services go to a private folder
os.environ.setdefault("SHARDSEARCH_STATE_DIR",
                      os.path.join(tempfile.gettempdir(), f"shardsearch-test-state-{os.getuid()}"))

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARDSEARCH_SHARED", ROOT.parent / "shared"))
CONFORMANCE_DIR = Path(os.environ.get("CONFORMANCE_DIR", SHARED / "conformance"))
CORPORA_DIR = Path(os.environ.get("CORPORA_DIR", SHARED / "corpora"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """A private Ray for the whole session (one init: each costs seconds)."""
    from shardsearch.cluster.distribution.runtime import start_ray, stop_ray
    start_ray(None, num_cpus=2, object_store_mb=100)
    yield
    stop_ray()


@pytest.fixture(scope="session")
def coordinator(ray_session):
    from shardsearch.cluster.coordinator import get_coordinator
    return get_coordinator()


class ServerThread:
    """uvicorn serving the real app in a background thread, on 127.0.0.1."""

    def __init__(self, app) -> None:
        import uvicorn

        from shardsearch.api.guards import ESHttpToolsProtocol
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off", access_log=False, http=ESHttpToolsProtocol)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def server(coordinator) -> Iterator[ServerThread]:
    from shardsearch.api.app import create_app
    from shardsearch.api.deps import RayCoordinator
    srv = ServerThread(create_app(RayCoordinator(coordinator)))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def base_url(server) -> str:
    return server.url


def _delete_all(client: httpx.Client) -> None:
    names = [row["index"] for row in client.get("/_cat/indices?format=json").json()]
    for n in names:
        client.delete(f"/{n}")


@pytest.fixture
def es(base_url) -> Iterator[httpx.Client]:
    """An HTTP client on the real server; every index is deleted after the test."""
    with httpx.Client(base_url=base_url, timeout=60) as client:
        _delete_all(client)
        yield client
        _delete_all(client)


@pytest.fixture(scope="session")
def cluster(coordinator):
    """The Python API handle on the session's Ray (does not own Ray)."""
    from shardsearch.cluster.client.handle import Cluster
    return Cluster(coordinator, owns_ray=False)


pytest_plugins = ["conformance_plugin"]


class _YoungCollections:
    """The ``gc`` module as the engine's ``gcpause`` sees it under ``young_collections``: a
    full collection collects the two young generations only, where a refresh's garbage is."""

    def __getattr__(self, name: str):
        return getattr(gc, name)

    @staticmethod
    def collect(generation: int = 2) -> int:
        return gc.collect(min(generation, 1))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Tests marked ``young_collections`` (in-process tests of answers, not of memory) run the
    engine's refresh without its full collection: in the test process that walks the whole
    heap (pytest, Hypothesis, every imported module: 30-100 ms each on a loaded 2-core box) and
    a property example at 8 shards runs ~20. The collection itself is checked by the tests
    that are about it (test_segment_merge's refresh test, test_heap_release): unmarked."""
    if item.get_closest_marker("young_collections") is None:
        return (yield)
    from shardsearch.cluster.engine import gcpause
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gcpause, "gc", _YoungCollections())
        return (yield)


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    """The official ``elasticsearch`` client on the real server (``es`` clears indices around it)."""
    from elasticsearch import Elasticsearch
    client = Elasticsearch(base_url, request_timeout=60)
    yield client
    client.close()


@pytest.fixture
def osc(es: httpx.Client, base_url: str) -> Iterator[OpenSearch]:
    """The ``opensearch-py`` client on the real server (``es`` clears indices around it)."""
    from opensearchpy import OpenSearch
    client = OpenSearch(hosts=[base_url], timeout=60)
    yield client
    client.close()
