"""OpenSearch as the benchmark's peer: it takes the benchmark's index, bulk bodies and every
search body it sends (``from`` pages past the default window, ``search_after`` with the ``_doc``
tie-break) unchanged, as ``shardsearch bench --peers opensearch`` relies on.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import httpx
import orjson
import pytest

from shardsearch.benchmarks import bench

PEER_PY = Path(__file__).resolve().parents[2] / "benchmarks" / "peers" / "opensearch" / "peer.py"

pytestmark = pytest.mark.slow


def _peer():
    spec = importlib.util.spec_from_file_location("opensearch_bench_peer", PEER_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_peer_command_serves_the_given_loopback_port(opensearch_url: str) -> None:
    cmd = _peer().command(9299)
    assert cmd[1].endswith("node.py") and cmd[cmd.index("--port") + 1] == "9299"


def test_opensearch_answers_every_benchmark_request(opensearch_url: str) -> None:
    corpus = bench.load_corpus(None, 300, synthetic=True)
    with httpx.Client(base_url=opensearch_url, timeout=60) as c:
        c.delete("/bench_peer")
        settings = {"number_of_shards": 1, "number_of_replicas": 0, "max_result_window": 20_000,
                    "refresh_interval": "-1"}
        assert c.put("/bench_peer", json=_peer().create_body(settings, corpus.mapping)
                     ).status_code == 200
        for body in bench.bulk_bodies(corpus, 100):
            r = c.post("/bench_peer/_bulk", content=body,
                       headers={"content-type": "application/x-ndjson"})
            assert r.status_code == 200 and not r.json()["errors"], r.text[:500]
        assert c.post("/bench_peer/_refresh").status_code == 200
        try:
            for query in ("match", "sort", "match_all"):
                first = c.post("/bench_peer/_search", json=bench.query_body(corpus, query, 0))
                assert first.status_code == 200 and first.json()["hits"]["hits"], first.text
                prev = c.post("/bench_peer/_search", json=bench.query_body(
                    corpus, query, frm=99, size=1, tiebreak=True)).json()
                after = prev["hits"]["hits"][0]["sort"]
                page = c.post("/bench_peer/_search", content=orjson.dumps(bench.query_body(
                    corpus, query, search_after=after, tiebreak=True)),
                    headers={"content-type": "application/json"})
                deep = c.post("/bench_peer/_search", json=bench.query_body(corpus, query, 100))
                assert page.status_code == 200 and deep.status_code == 200
                # search_after from hit 99 is the page at from 100
                assert [h["_id"] for h in page.json()["hits"]["hits"]] == \
                    [h["_id"] for h in deep.json()["hits"]["hits"]], query
        finally:
            c.delete("/bench_peer")
