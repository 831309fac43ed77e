"""Ray Data, natively (``shardsearch.data``): an index read as a Dataset with one read task per
shard, straight from the shard actors and from one snapshot, compared with the way the
``ray-elasticsearch`` connector reads over HTTP (N Ray tasks, each a sliced point-in-time
``search_after`` loop with the official client); and a Dataset bulk-loaded back. Real Ray,
real uvicorn, the real ``elasticsearch`` client."""
from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import ray

from shardsearch.data import read_index, write_index

N_DOCS = 300


def _load(es: httpx.Client, name: str, shards: int) -> None:
    es.put(f"/{name}", json={"settings": {"number_of_shards": shards},
                             "mappings": {"properties": {"n": {"type": "long"},
                                                         "tag": {"type": "keyword"}}}})
    lines = []
    for i in range(N_DOCS):
        lines += [json.dumps({"index": {"_index": name, "_id": f"d{i}"}}),
                  json.dumps({"n": i, "tag": f"t{i % 5}"})]
    r = es.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert not r.json()["errors"]


@ray.remote(num_cpus=0)
def _sliced_pit_reader(base_url: str, pit: str, i: int, slices: int) -> list[dict[str, Any]]:
    """What the ray-elasticsearch connector does per task: a sliced PIT search_after loop."""
    from elasticsearch import Elasticsearch
    client = Elasticsearch(base_url, request_timeout=60)
    rows: list[dict[str, Any]] = []
    after = None
    try:
        while True:
            kw: dict[str, Any] = {"search_after": after} if after is not None else {}
            r = client.search(pit={"id": pit, "keep_alive": "1m"}, size=97,
                              slice={"id": i, "max": slices}, sort=["_shard_doc"], **kw)
            hits = r["hits"]["hits"]
            if not hits:
                return rows
            rows += [{"_id": h["_id"], **h["_source"]} for h in hits]
            after = hits[-1]["sort"]
    finally:
        client.close()


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {r["_id"]: r for r in rows}
    assert len(out) == len(rows), "a document was read twice"
    return out


def test_read_index_has_one_read_task_per_shard_and_reads_each_document_once(
        es: httpx.Client, coordinator: Any, base_url: str) -> None:
    _load(es, "rd", 3)
    ds = read_index("rd", batch_size=64, coordinator=coordinator)
    rows = ds.take_all()
    assert sorted(_by_id(rows)) == sorted(f"d{i}" for i in range(N_DOCS))
    assert all(r["n"] == int(r["_id"][1:]) for r in rows)
    assert ds.num_blocks() >= 3          # one read task per shard, a block per batch
    assert es.get("/_search/point_in_time/_all").json().get("pits", []) == []   # released


def test_read_index_equals_parallel_sliced_pit_reads_over_http(
        es: httpx.Client, coordinator: Any, base_url: str) -> None:
    _load(es, "rh", 4)
    ours = _by_id(read_index("rh", query={"range": {"n": {"gte": 100}}},
                             coordinator=coordinator).take_all())
    pit = es.post("/rh/_pit?keep_alive=1m").json()["id"]
    parts = ray.get([_sliced_pit_reader.remote(base_url, pit, i, 3) for i in range(3)])
    es.request("DELETE", "/_pit", json={"id": pit})
    theirs = _by_id([r for p in parts for r in p])
    assert {k: v for k, v in theirs.items() if v["n"] >= 100} == ours


def test_read_index_can_add_the_index_name_and_the_searchs_score(
        es: httpx.Client, coordinator: Any) -> None:
    _load(es, "ri", 2)
    query = {"match": {"tag": "t3"}}
    rows = read_index("ri", query=query, with_index=True, with_score=True,
                      coordinator=coordinator).take_all()
    assert {r["_index"] for r in rows} == {"ri"}
    hits = es.post("/ri/_search", json={"query": query, "size": 100}).json()["hits"]["hits"]
    assert {r["_id"]: r["_score"] for r in rows} == pytest.approx(
        {h["_id"]: h["_score"] for h in hits})


def test_write_index_bulk_loads_a_dataset_and_counts(es: httpx.Client, coordinator: Any) -> None:
    es.put("/wr", json={"settings": {"number_of_shards": 2},
                        "mappings": {"properties": {"n": {"type": "long"}}}})
    ds = ray.data.from_items([{"_id": f"x{i}", "n": i} for i in range(250)])
    out = write_index(ds, "wr", batch_size=40, max_in_flight=2, coordinator=coordinator)
    assert out == {"docs": 250, "errors": 0, "failures": []}
    assert es.get("/wr/_count").json()["count"] == 250
    assert es.get("/wr/_doc/x7").json()["_source"] == {"n": 7}


def test_write_index_surfaces_item_errors(es: httpx.Client, coordinator: Any) -> None:
    es.put("/we", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    ds = ray.data.from_items([{"_id": "a", "n": "not a number"}, {"_id": "b", "n": "2"}])
    out = write_index(ds, "we", coordinator=coordinator)
    assert out["docs"] == 1 and out["errors"] == 1
    assert out["failures"][0]["type"] == "mapper_parsing_exception"


def test_bad_batch_sizes_are_refused(coordinator: Any) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        read_index("rd", batch_size=0, coordinator=coordinator)
