"""Loading one index into either system: the same request whatever the test checks."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import orjson


def load_index(client: Any, index: str, shards: int, mapping: dict[str, Any],
               docs: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """(Re)create ``index`` with ``shards`` primaries and no replicas, then bulk-load ``docs``
    (``(id, source)`` pairs) with a refresh, so both systems answer from the same documents."""
    client.delete(f"/{index}")
    r = client.put(f"/{index}", json={"settings": {"number_of_shards": shards,
                                                   "number_of_replicas": 0},
                                      "mappings": mapping})
    assert r.status_code == 200, r.text
    lines = []
    for doc_id, src in docs:
        lines += [orjson.dumps({"index": {"_index": index, "_id": doc_id}}), orjson.dumps(src)]
    r = client.post("/_bulk", params={"refresh": "true"}, content=b"\n".join(lines) + b"\n",
                    headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"], r.text[:2000]


@contextmanager
def loaded_pair(ours_url: str, theirs_url: str, index: str, mapping: dict[str, Any],
                docs: dict[str, dict[str, Any]], shards: int = 3
                ) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """Clients on both systems with ``index`` loaded: ours in ``shards`` shards, OpenSearch in
    one (scores are shard-invariant here, per-shard there); the index is deleted after."""
    with httpx.Client(base_url=ours_url, timeout=60) as ours, \
            httpx.Client(base_url=theirs_url, timeout=60) as theirs:
        load_index(theirs, index, 1, mapping, docs.items())
        load_index(ours, index, shards, mapping, docs.items())
        yield ours, theirs
        ours.delete(f"/{index}")
        theirs.delete(f"/{index}")
