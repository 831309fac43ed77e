"""``bench --scale``'s copies, judged by a real OpenSearch: each copy of a document keeps its
terms, frequencies and length, so the ranked query matches N times as many documents and a
copy scores exactly as its original does, on OpenSearch as on us.
"""
from __future__ import annotations

import httpx
import orjson
import pytest

from shardsearch.benchmarks import bench, scale

pytestmark = pytest.mark.slow

INDEX = "bench_scale_peer"
FACTOR = 3


def _load(client: httpx.Client, corpus: bench.Corpus, shards: int) -> None:
    client.delete(f"/{INDEX}")
    r = client.put(f"/{INDEX}", json={"settings": {"number_of_shards": shards,
                                                   "number_of_replicas": 0},
                                      "mappings": corpus.mapping})
    assert r.status_code == 200, r.text
    for body in bench.bulk_bodies(corpus, 100):
        r = client.post(f"/{INDEX}/_bulk", content=body,
                        headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200 and not r.json()["errors"], r.text[:500]
    assert client.post(f"/{INDEX}/_refresh").status_code == 200


def _scores(client: httpx.Client, corpus: bench.Corpus) -> tuple[int, dict[str, float]]:
    body = dict(bench.query_body(corpus, "match", size=500), track_total_hits=True)
    r = client.post(f"/{INDEX}/_search", content=orjson.dumps(body),
                    headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    return hits["total"]["value"], {h["_id"]: h["_score"] for h in hits["hits"]}


def test_copies_match_and_score_as_their_originals_on_opensearch_and_on_us(
        opensearch_url: str, base_url: str) -> None:
    corpus = bench.load_corpus(None, 80, synthetic=True)
    big = scale.scaled_corpus(corpus, FACTOR)
    results = {}
    for name, url, shards in (("opensearch", opensearch_url, 1), ("ours", base_url, 2)):
        with httpx.Client(base_url=url, timeout=60) as c:
            _load(c, big, shards)
            try:
                results[name] = _scores(c, big)
            finally:
                c.delete(f"/{INDEX}")
    base_total = sum("webster" in orjson.loads(x)["text"].lower().split()
                     for x in corpus.lines)
    (t_total, theirs), (o_total, ours) = results["opensearch"], results["ours"]
    assert t_total == o_total == FACTOR * base_total
    for doc_id, score in theirs.items():
        original = doc_id.rsplit("-", 1)[0] if doc_id.count("-") == 2 else doc_id
        assert score == pytest.approx(theirs[original], rel=1e-6), doc_id
        assert ours[doc_id] == pytest.approx(score, rel=1e-4), doc_id
