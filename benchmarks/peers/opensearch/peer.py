"""OpenSearch as a peer of ``shardsearch bench``: a real node speaks the API the benchmark sends.

Unlike the Tantivy and SQLite peers (``bench_peers.py``), nothing is translated: the benchmark's
``PUT /{index}``, ``_bulk``, ``_refresh`` and ``_search`` (``from``/``size``, ``sort``,
``search_after`` with a ``_doc`` tie-break, ``index.max_result_window`` raised) go to OpenSearch
as they are. The node runs as a child process tree (``node.py``, which starts the JVM), so the
benchmark's memory figures are the JVM's RSS/PSS plus a small Python launcher.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

NODE_PY = Path(__file__).resolve().parent / "node.py"
HEAP_MB = 512
SUPPORTS_SEARCH_AFTER = True


def _node() -> Any:
    spec = importlib.util.spec_from_file_location("opensearch_peer_node", NODE_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def command(port: int) -> list[str]:
    """The command that serves one node on ``127.0.0.1:port``, building it first (Maven, once).

    Raises ``PeerUnavailable`` (from ``node.py``) when Java or Maven is missing or the build
    fails: the benchmark then skips this peer and says why.
    """
    _node().build()
    return [sys.executable, str(NODE_PY), "--port", str(port), "--heap-mb", str(HEAP_MB)]


def create_body(settings: dict[str, Any], mappings: dict[str, Any]) -> dict[str, Any]:
    """The index creation body: settings and mappings as Elasticsearch takes them."""
    return {"settings": settings, "mappings": mappings}
