"""Bounded ``terms`` over HTTP (the ``elasticsearch`` client, real uvicorn and Ray shards): a
high-cardinality field answers exactly while each shard ships a few dozen of its keys, and a
whole shipping beyond ``search.aggs.max_shard_terms`` is refused with a 400 naming it.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import elasticsearch
import httpx
import pytest
from elasticsearch import Elasticsearch

DOCS = 2_000
UNIQUE_PER_DOC = 100          # 200,000 distinct keys that occur once
HEAVY = 20                    # "h{j}" in every (j + 1)-th document


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=300)
    yield client
    client.close()


def _doc(i: int) -> dict[str, Any]:
    tags = [f"u{i:04d}_{j:03d}" for j in range(UNIQUE_PER_DOC)]
    tags += [f"h{j:02d}" for j in range(HEAVY) if i % (j + 1) == 0]
    return {"tags": tags, "n": i % 7}


def _load(esc: Elasticsearch) -> list[dict[str, Any]]:
    esc.indices.create(index="wide", settings={"number_of_shards": 3},
                       mappings={"properties": {"tags": {"type": "keyword"},
                                                "n": {"type": "long"}}})
    docs = [_doc(i) for i in range(DOCS)]
    for start in range(0, DOCS, 250):
        ops: list[dict[str, Any]] = []
        for i in range(start, min(DOCS, start + 250)):
            ops += [{"index": {"_index": "wide", "_id": str(i)}}, docs[i]]
        assert not esc.bulk(operations=ops).body["errors"]
    esc.indices.refresh(index="wide")
    return docs


def test_a_high_cardinality_terms_is_exact_with_bounded_transfer(esc):
    docs = _load(esc)
    counts = Counter(t for d in docs for t in d["tags"])
    ranked = sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))
    resp = esc.search(index="wide", size=0, profile=True, aggs={
        "top": {"terms": {"field": "tags", "size": 10},
                "aggs": {"n_sum": {"sum": {"field": "n"}}}}}).body
    top = resp["aggregations"]["top"]
    assert [(b["key"], b["doc_count"]) for b in top["buckets"]] == ranked[:10]
    assert top["doc_count_error_upper_bound"] == 0
    assert top["sum_other_doc_count"] == sum(counts.values()) - sum(c for _, c in ranked[:10])
    by_key = {b["key"]: b["n_sum"]["value"] for b in top["buckets"]}
    for j in range(10):   # the final keys' sub-aggregations, computed in the last round
        assert by_key[f"h{j:02d}"] == sum(i % 7 for i in range(0, DOCS, j + 1))
    debug = [a["debug"] for sh in resp["profile"]["shards"] for a in sh["aggregations"]
             if a["description"] == "top"]
    assert len(debug) == 3
    distinct = sum(d["distinct_keys"] for d in debug)
    shipped = sum(d["keys_shipped"] for d in debug)
    assert distinct >= DOCS * UNIQUE_PER_DOC
    assert shipped <= 3 * 25, debug   # round 1's shard_size each; nothing else reaches T


def test_key_order_ships_the_first_size_keys(esc):
    docs = _load(esc)
    keys = sorted({t for d in docs for t in d["tags"]}, reverse=True)[:5]
    resp = esc.search(index="wide", size=0, profile=True, aggs={
        "last": {"terms": {"field": "tags", "size": 5, "order": {"_key": "desc"}}}}).body
    assert [b["key"] for b in resp["aggregations"]["last"]["buckets"]] == keys
    debug = [a["debug"] for sh in resp["profile"]["shards"] for a in sh["aggregations"]]
    assert all(d["keys_shipped"] <= 5 and d["rounds"] == 1 for d in debug)


def test_whole_shipping_beyond_the_limit_is_refused(esc):
    _load(esc)
    esc.cluster.put_settings(transient={"search.aggs.max_shard_terms": 10_000})
    try:
        with pytest.raises(elasticsearch.BadRequestError) as err:   # by count asc: whole
            esc.search(index="wide", size=0, aggs={
                "low": {"terms": {"field": "tags", "order": {"_count": "asc"}}}})
        cause = err.value.body["error"]["root_cause"][0]
        assert cause["type"] == "too_many_buckets_exception"
        assert "[search.aggs.max_shard_terms]" in cause["reason"]
        ok = esc.search(index="wide", size=0, aggs={"top": {"terms": {"field": "tags"}}}).body
        assert ok["aggregations"]["top"]["buckets"][0] == {"key": "h00", "doc_count": DOCS}
    finally:
        esc.cluster.put_settings(transient={"search.aggs.max_shard_terms": None})
    with pytest.raises(elasticsearch.BadRequestError):
        esc.cluster.put_settings(transient={"search.aggs.max_shard_terms": 0})
