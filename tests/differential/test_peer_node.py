"""The OpenSearch launcher: loopback only, and a clear reason to skip where it cannot run."""
from __future__ import annotations

import os

import httpx
import pytest

from .conftest import _node_module


def test_the_node_listens_on_loopback_only(opensearch_url: str) -> None:
    info = httpx.get(f"{opensearch_url}/_nodes/_local/http,transport", timeout=30).json()
    (node,) = info["nodes"].values()
    bound = node["http"]["bound_address"] + node["transport"]["bound_address"]
    assert bound and all(a.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:")) for a in bound), bound


def test_without_java_the_launcher_says_so(tmp_path, monkeypatch) -> None:
    node = _node_module()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(node.PeerUnavailable, match="`java` is not on PATH"):
        node.build()


def test_the_build_is_skipped_while_it_is_newer_than_its_sources(opensearch_url: str) -> None:
    node = _node_module()
    assert node.is_built()
    newest_source = max(p.stat().st_mtime for p in node._sources() if p.is_file())
    assert os.stat(node.JAR).st_mtime >= newest_source
