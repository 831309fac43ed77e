"""One OpenSearch node for the whole session, started in the background once collection shows a
differential test is to run; both systems loaded with the same corpus; the summary line.

Where Java or Maven is missing, or the node cannot be built or started, every differential test
skips with the reason.
"""
from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from . import exceptions
from .corpus import INDEX, MAPPING, SHARDS, documents
from .loading import load_index

NODE_PY = Path(__file__).resolve().parents[2] / "benchmarks" / "peers" / "opensearch" / "node.py"


def _node_module() -> Any:
    spec = importlib.util.spec_from_file_location("opensearch_peer_node", NODE_PY)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


class _Background:
    """Builds and starts the node in a thread, so Ray and the other fixtures start meanwhile."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.handle: Any = None
        self.error: str | None = None

    def begin(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="opensearch-start", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        node = _node_module()
        try:
            self.handle = node.start(wait=False)
            self.handle.wait_ready()
        except node.PeerUnavailable as e:
            self.error = str(e)

    def url(self) -> str:
        self.begin()
        assert self.thread is not None
        self.thread.join()
        if self.error is not None:
            pytest.skip(f"no OpenSearch peer: {self.error}")
        return self.handle.url

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.join()
        if self.handle is not None:
            self.handle.stop()


_NODE = _Background()
_HERE = Path(__file__).resolve().parent


def pytest_collection_finish(session: Any) -> None:
    """Start the node early, and only when a differential test is to run (after ``-m``/``-k``)."""
    if any(_HERE in Path(str(item.fspath)).parents
           and {"pair", "opensearch_url"} & set(getattr(item, "fixturenames", ()))
           for item in session.items):
        _NODE.begin()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    _NODE.stop()


@dataclass
class Pair:
    """An HTTP client on each system, both holding index ``diff`` with the same documents."""
    ours: httpx.Client
    theirs: httpx.Client

    def send(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None,
             their_body: Any = None) -> tuple[tuple[int, Any], tuple[int, Any]]:
        """The same request to both (``their_body`` to OpenSearch when given):
        ``((status, json) ours, (status, json) OpenSearch)``."""
        headers = {"content-type": "application/json"}
        out = []
        for client, b in ((self.ours, body), (self.theirs, body if their_body is None
                                                  else their_body)):
            content = None if b is None else orjson.dumps(b)
            r = client.request(method, path, content=content, params=params, headers=headers)
            out.append((r.status_code, r.json()))
        return out[0], out[1]


def _load(client: httpx.Client, shards: int) -> None:
    load_index(client, INDEX, shards, MAPPING, documents())


@pytest.fixture(scope="session")
def opensearch_url() -> str:
    return _NODE.url()


@pytest.fixture(scope="session")
def pair(opensearch_url: str, base_url: str) -> Iterator[Pair]:
    """Both systems loaded: ours with several shards, OpenSearch with one (scores comparable)."""
    with httpx.Client(base_url=base_url, timeout=60) as ours, \
            httpx.Client(base_url=opensearch_url, timeout=60) as theirs:
        _load(theirs, 1)
        _load(ours, SHARDS)
        yield Pair(ours, theirs)
        ours.delete(f"/{INDEX}")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """``differential: N generated cases vs OpenSearch; M differences documented exceptions``."""
    line = exceptions.TALLY.summary()
    if line:
        terminalreporter.write_line(line)
