"""Sliced scroll and sliced point in time (``slice``): the slices of one snapshot partition it.

Pure rules first (Elasticsearch's per-shard slice rule covers every shard's documents once, the
parse and validation texts), then the real server (Ray + uvicorn): a Hypothesis property over
1–8 slices and 1–6 shards while a writer keeps indexing, the official client's ``helpers.scan``
with one slice per thread, and ``_shards.total`` of a slice that maps onto whole shards.
"""
from __future__ import annotations

import itertools
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from elasticsearch import helpers as es_helpers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardsearch.cluster.engine.query.nodes import MatchAll, Slice
from shardsearch.cluster.engine.query.slicing import id_slices
from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.search.slicing import SliceSpec, parse_slice, shard_part


# --------------------------------------------------------------------------- pure rules

@pytest.mark.parametrize("shards", range(1, 7))
@pytest.mark.parametrize("max_", range(2, 10))
def test_every_document_of_every_shard_is_in_exactly_one_slice(shards: int, max_: int) -> None:
    ids = [f"doc-{i}" for i in range(200)]
    for shard in range(shards):
        owners = []
        for doc_id in ids:
            holders = []
            for i in range(max_):
                part = shard_part(SliceSpec(i, max_), shard, shards)
                if isinstance(part, MatchAll) or (
                        isinstance(part, Slice) and id_slices([doc_id], part.max)[0] == part.id):
                    holders.append(i)
            owners.append(len(holders))
        assert owners == [1] * len(ids)


def test_a_slice_reads_only_its_shards_when_slices_and_shards_divide() -> None:
    assert [s for s in range(4) if shard_part(SliceSpec(1, 2), s, 4) is not None] == [1, 3]
    assert [s for s in range(2) if shard_part(SliceSpec(3, 4), s, 2) is not None] == [1]


def test_the_id_hash_is_stable_and_not_pythons_hash() -> None:
    assert id_slices(["1", "2", "abc"], 1024).tolist() == id_slices(["1", "2", "abc"], 1024).tolist()
    assert all(0 <= s < 7 for s in id_slices([str(i) for i in range(100)], 7))


@pytest.mark.parametrize("value,reason", [
    ({"id": 2, "max": 2}, "max must be greater than id"),
    ({"id": 0, "max": 1}, "max must be greater than 1"),
    ({"id": -1, "max": 2}, "id must be greater than or equal to 0"),
])
def test_slice_arguments_are_checked_with_elasticsearchs_texts(value: dict, reason: str) -> None:
    with pytest.raises(IllegalArgument, match=reason):
        parse_slice(value)


# --------------------------------------------------------------------------- the server

def _make_index(c: httpx.Client, name: str, shards: int, ids: list[str]) -> None:
    c.delete(f"/{name}")
    r = c.put(f"/{name}", json={"settings": {"number_of_shards": shards},
                                "mappings": {"properties": {"n": {"type": "long"},
                                                            "t": {"type": "keyword"}}}})
    assert r.status_code == 200, r.text
    _bulk(c, name, ids)


def _bulk(c: httpx.Client, name: str, ids: list[str]) -> None:
    if not ids:
        return
    lines = []
    for i in ids:
        lines += [json.dumps({"index": {"_index": name, "_id": i}}),
                  json.dumps({"n": int(i.split("-")[-1]), "t": i})]
    r = c.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
               headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"], r.text


def _scroll_ids(c: httpx.Client, name: str, body: dict[str, Any]) -> list[str]:
    r = c.post(f"/{name}/_search?scroll=1m", json={"size": 7, **body})
    assert r.status_code == 200, r.text
    out, data = [], r.json()
    while data["hits"]["hits"]:
        out += [h["_id"] for h in data["hits"]["hits"]]
        data = c.post("/_search/scroll", json={"scroll": "1m",
                                               "scroll_id": data["_scroll_id"]}).json()
    c.request("DELETE", "/_search/scroll", json={"scroll_id": data["_scroll_id"]})
    return out


def _pit_ids(c: httpx.Client, pit: str, body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    after = None
    while True:
        b = {"size": 7, "pit": {"id": pit}, "sort": [{"n": "asc"}], **body}
        if after is not None:
            b["search_after"] = after
        r = c.post("/_search", json=b)
        assert r.status_code == 200, r.text
        hits = r.json()["hits"]["hits"]
        if not hits:
            return out
        out += [h["_id"] for h in hits]
        after = hits[-1]["sort"]


class _Writer:
    """Indexes new documents (with refresh) in a thread until stopped."""

    def __init__(self, base_url: str, name: str) -> None:
        self.base_url, self.name = base_url, name
        self.stop = threading.Event()
        self.written: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=60) as c:
            for k in itertools.count(1000):
                if self.stop.is_set():
                    return
                ids = [f"w-{k}{j}" for j in range(3)]
                _bulk(c, self.name, ids)
                self.written += ids

    def __enter__(self) -> _Writer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=60)


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(shards=st.integers(1, 6), slices=st.integers(1, 8), n=st.integers(0, 40),
       by_field=st.booleans())
def test_sliced_scroll_and_pit_partition_the_snapshot_while_documents_are_written(
        es: httpx.Client, base_url: str, shards: int, slices: int, n: int,
        by_field: bool) -> None:
    name = "slices"
    before = [f"d-{i}" for i in range(n)]
    _make_index(es, name, shards, before)
    pit = es.post(f"/{name}/_pit?keep_alive=1m").json()["id"]
    field = {"field": "n"} if by_field else {}
    with _Writer(base_url, name) as writer:
        whole = _pit_ids(es, pit, {})
        parts = [_pit_ids(es, pit, {"slice": {"id": i, "max": slices, **field}})
                 if slices > 1 else whole for i in range(slices)]
        scrolls = [_scroll_ids(es, name, {"slice": {"id": i, "max": slices, **field}})
                   if slices > 1 else _scroll_ids(es, name, {}) for i in range(slices)]
    es.request("DELETE", "/_pit", json={"id": pit})
    # the point in time: its slices are its snapshot, each document once
    assert sorted(itertools.chain(*parts)) == sorted(whole)
    assert set(before) <= set(whole)
    # the scrolls (each its own snapshot, opened one after another while the writer writes):
    # no document twice, nothing older missing, nothing that was never written
    seen = list(itertools.chain(*scrolls))
    assert len(seen) == len(set(seen))
    assert set(before) <= set(seen) <= set(before) | set(writer.written)


def test_helpers_scan_with_one_slice_per_thread_reads_every_document_once(
        es: httpx.Client, base_url: str) -> None:
    ids = [f"d-{i}" for i in range(120)]
    _make_index(es, "scan", 3, ids)
    client = Elasticsearch(base_url, request_timeout=60)

    def read(i: int) -> list[str]:
        return [h["_id"] for h in es_helpers.scan(
            client, index="scan", size=11, scroll="1m",
            query={"slice": {"id": i, "max": 4}, "query": {"match_all": {}}})]

    try:
        with ThreadPoolExecutor(4) as pool:
            parts = list(pool.map(read, range(4)))
    finally:
        client.close()
    assert sorted(itertools.chain(*parts)) == sorted(ids)
    assert all(parts)


def test_a_slice_that_maps_onto_shards_asks_only_those_shards(es: httpx.Client) -> None:
    _make_index(es, "four", 4, [f"d-{i}" for i in range(40)])
    whole = es.post("/four/_search?scroll=1m", json={"size": 100}).json()
    part = es.post("/four/_search?scroll=1m", json={"size": 100, "slice": {"id": 1, "max": 2}})
    assert whole["_shards"]["total"] == 4
    assert part.json()["_shards"]["total"] == 2
    pit = es.post("/four/_pit?keep_alive=1m").json()["id"]
    r = es.post("/_search", json={"pit": {"id": pit}, "slice": {"id": 5, "max": 8}})
    assert r.json()["_shards"]["total"] == 1


@pytest.mark.parametrize("body,params,reason", [
    ({"slice": {"id": 0, "max": 2}}, {}, "`slice` cannot be used outside of a scroll context"),
    ({"slice": {"id": 0, "max": 1025}}, {"scroll": "1m"},
     "The number of slices [1025] is too large. It must be less than [1024]"),
    ({"slice": {"id": 0, "max": 2, "field": "t"}}, {"scroll": "1m"},
     "cannot load numeric doc values on t"),
    ({"slice": {"id": 0, "max": 2, "field": "nope"}}, {"scroll": "1m"}, "field nope not found"),
    ({"slice": {"id": 3, "max": 2}}, {"scroll": "1m"}, "max must be greater than id"),
])
def test_a_bad_slice_is_a_400_with_elasticsearchs_text(es: httpx.Client, body: dict,
                                                       params: dict, reason: str) -> None:
    _make_index(es, "bad", 2, ["d-1"])
    r = es.post("/bad/_search", params=params, json=body)
    assert r.status_code == 400, r.text
    assert reason in r.json()["error"]["reason"]
