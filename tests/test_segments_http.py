"""Merges through the real service (Ray shard actors, uvicorn): churn stays bounded,
``_forcemerge`` leaves the asked number of segments and the same answers, ``_segments`` and
``_cat/segments`` have Elasticsearch's shapes, unsupported merge settings are refused."""
from __future__ import annotations

SEGMENT_CAP = 10   # index.merge.policy.segments_per_tier: tiny segments are one tier


def _segment_counts(es, index: str) -> dict[str, int]:
    r = es.get(f"/{index}/_segments")
    assert r.status_code == 200, r.text
    shards = r.json()["indices"][index]["shards"]
    return {sid: copies[0]["num_search_segments"] for sid, copies in shards.items()}


def _all_hits(es, index: str, body: dict) -> list:
    r = es.post(f"/{index}/_search", json={"size": 1000, **body})
    assert r.status_code == 200, r.text
    return [(h["_id"], h["_score"], h.get("sort")) for h in r.json()["hits"]["hits"]]


def test_churn_through_the_service_keeps_segments_per_shard_bounded(cluster, es) -> None:
    """300 refresh cycles of one document each through Ray actors (0.1-0.4 s each on a loaded
    2-core machine; the 3,000-cycle figure is `benchmarks/churn.py`'s)."""
    cluster.create_index("churn", shards=2)
    worst = 0
    for i in range(300):
        cluster.index("churn", {"n": i, "text": f"word{i % 7}"}, id=str(i % 200), refresh=True)
        if i % 100 == 99:
            worst = max(worst, *_segment_counts(es, "churn").values())
    assert worst <= SEGMENT_CAP
    assert cluster.count("churn") == 200


def test_forcemerge_to_one_segment_keeps_every_answer(es) -> None:
    assert es.put("/fm", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0},
                               "mappings": {"properties": {"n": {"type": "long"},
                                                           "t": {"type": "text"}}}}
                  ).status_code == 200
    for i in range(40):
        es.put(f"/fm/_doc/{i % 25}", params={"refresh": "true"},
               json={"n": i % 9, "t": "alpha beta" if i % 3 else "gamma alpha"})
    es.delete("/fm/_doc/3", params={"refresh": "true"})
    bodies = [{"query": {"match": {"t": "alpha"}}}, {"sort": [{"n": "desc"}]},
              {"query": {"match": {"t": "gamma"}}, "sort": ["_score", {"n": "asc"}]}]
    before = [_all_hits(es, "fm", b) for b in bodies]
    r = es.post("/fm/_forcemerge", params={"max_num_segments": 1})
    assert r.status_code == 200, r.text
    assert r.json() == {"_shards": {"total": 2, "successful": 2, "failed": 0}}
    assert set(_segment_counts(es, "fm").values()) == {1}
    assert [_all_hits(es, "fm", b) for b in bodies] == before


def test_segments_and_cat_segments_shapes(es) -> None:
    es.put("/sg", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
    nd = "".join(f'{{"index":{{"_id":"{i}"}}}}\n{{"n":{i}}}\n' for i in range(5))
    assert es.post("/sg/_bulk", params={"refresh": "true"}, content=nd,
                   headers={"content-type": "application/x-ndjson"}).status_code == 200
    for i in ("10", "11", "1"):   # 1 of the first segment's 5 versions replaced: 20%, kept
        es.put(f"/sg/_doc/{i}", params={"refresh": "true"}, json={"n": 1})
    body = es.get("/sg/_segments").json()
    assert body["_shards"] == {"total": 1, "successful": 1, "failed": 0}
    copy = body["indices"]["sg"]["shards"]["0"][0]
    assert copy["routing"]["primary"] is True and copy["routing"]["state"] == "STARTED"
    assert copy["num_search_segments"] == len(copy["segments"]) == 4
    segs = list(copy["segments"].values())
    assert all(n.startswith("_") for n in copy["segments"])
    assert sum(s["num_docs"] for s in segs) == 7
    assert sum(s["deleted_docs"] for s in segs) == 1
    assert all(set(s) == {"generation", "num_docs", "deleted_docs", "size_in_bytes",
                          "committed", "search"} for s in segs)
    rows = es.get("/_cat/segments/sg", params={"format": "json"}).json()
    assert len(rows) == 4
    # Elasticsearch's default columns (``id`` only when asked for: ``h=id``)
    assert list(rows[0]) == ["index", "shard", "prirep", "ip", "segment", "generation",
                             "docs.count", "docs.deleted", "size", "size.memory", "committed",
                             "searchable", "version", "compound"]
    assert rows[0]["index"] == "sg" and rows[0]["prirep"] == "p"
    text = es.get("/_cat/segments", params={"v": "true"}).text
    assert text.splitlines()[0].split()[:5] == ["index", "shard", "prirep", "ip", "segment"]
    r = es.post("/sg/_forcemerge", params={"max_num_segments": 1, "only_expunge_deletes": "true"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "action_request_validation_exception"
    assert es.post("/sg/_forcemerge", params={"bogus": 1}).status_code == 400
    assert es.post("/sg/_forcemerge", params={"only_expunge_deletes": "true"}).status_code == 200
    assert es.post("/nope/_forcemerge").status_code == 404


def test_merge_settings_honoured_or_refused_by_name(es) -> None:
    r = es.put("/ms", json={"settings": {"index.merge.policy.segments_per_tier": 4,
                                         "number_of_replicas": 0}})
    assert r.status_code == 200, r.text
    for i in range(12):
        es.put(f"/ms/_doc/{i}", params={"refresh": "true"}, json={"n": i})
    assert max(_segment_counts(es, "ms").values()) <= 4
    r = es.put("/ms2", json={"settings": {"index.merge.scheduler.max_thread_count": 1}})
    assert r.status_code == 400
    assert "index.merge.scheduler.max_thread_count" in r.json()["error"]["reason"]
    r = es.put("/ms/_settings", json={"index.merge.policy.type": "log_byte_size"})
    assert r.status_code == 400
    assert "index.merge.policy.type" in r.json()["error"]["reason"]


def _merging(coordinator, index: str) -> bool:
    import ray
    return any(i.get("merging") for i in ray.get(coordinator.call.remote("shard_infos"))
               if i["index"] == index)


def test_forcemerge_does_not_block_searches_or_writes_on_its_shard(es, base_url,
                                                                    coordinator) -> None:
    """A ``_forcemerge`` held half-way on the shard (``/_sim`` ``hold_merges``: an event the
    merge waits on, no clock): searches and writes to that shard answer meanwhile; the
    force merge answers once the hold is lifted, with the shard merged."""
    import threading

    import httpx
    assert es.put("/fmb", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                                "mappings": {"properties": {"n": {"type": "long"}}}}
                  ).status_code == 200
    for i in range(6):
        es.put(f"/fmb/_doc/{i}", params={"refresh": "true"}, json={"n": i})
    assert es.post("/_sim/shards", json={"index": "fmb", "hold_merges": True}).status_code == 200
    answer: dict = {}

    def force() -> None:
        answer["r"] = httpx.post(f"{base_url}/fmb/_forcemerge",
                                 params={"max_num_segments": 1}, timeout=300)
    t = threading.Thread(target=force)
    t.start()
    try:
        for _ in range(3000):        # until the shard's merge thread reaches the hold
            if _merging(coordinator, "fmb"):
                break
        assert _merging(coordinator, "fmb")
        r = es.put("/fmb/_doc/new", params={"refresh": "true"}, json={"n": 100})
        assert r.status_code == 201, r.text
        r = es.delete("/fmb/_doc/2", params={"refresh": "true"})
        assert r.status_code == 200, r.text
        r = es.post("/fmb/_search", json={"size": 10, "sort": [{"n": "asc"}]})
        assert r.status_code == 200
        assert [h["_id"] for h in r.json()["hits"]["hits"]] == ["0", "1", "3", "4", "5", "new"]
        assert t.is_alive() and "r" not in answer and _merging(coordinator, "fmb")
    finally:
        es.delete("/_sim")
    t.join(300)
    assert answer["r"].status_code == 200, answer["r"].text
    assert answer["r"].json() == {"_shards": {"total": 1, "successful": 1, "failed": 0}}
    assert _segment_counts(es, "fmb") == {"0": 1}
    r = es.post("/fmb/_search", json={"size": 10, "sort": [{"n": "asc"}]})
    assert [h["_id"] for h in r.json()["hits"]["hits"]] == ["0", "1", "3", "4", "5", "new"]


def test_segments_list_a_built_unrefreshed_segment_as_not_searchable(esc) -> None:
    """A full write buffer's segment (``INDEX_BUFFER_DOCS`` documents, ``flushing.py``) is
    listed before the refresh with ``search: false`` / ``searchable`` false, as Elasticsearch
    lists a flushed segment no reader opened yet, and searchable after it (official client)."""
    from shardsearch.cluster.engine.flushing import INDEX_BUFFER_DOCS

    esc.indices.create(index="pend", settings={"number_of_shards": 1, "number_of_replicas": 0,
                                               "refresh_interval": -1},
                       mappings={"properties": {"n": {"type": "long"}}})
    total = INDEX_BUFFER_DOCS + 5
    step = 8192
    for start in range(0, total, step):
        ops: list[dict] = []
        for i in range(start, min(total, start + step)):
            ops += [{"index": {"_id": str(i)}}, {"n": i}]
        assert not esc.bulk(index="pend", operations=ops)["errors"]
    esc.index(index="pend", id="0", document={"n": -1})   # replaces a row of the built one
    copy = esc.indices.segments(index="pend")["indices"]["pend"]["shards"]["0"][0]
    assert copy["num_search_segments"] == 0 and copy["num_committed_segments"] == 0
    (seg,) = copy["segments"].values()
    assert seg["search"] is False and seg["committed"] is False
    assert (seg["num_docs"], seg["deleted_docs"]) == (INDEX_BUFFER_DOCS - 1, 1)
    rows = esc.cat.segments(index="pend", format="json")
    assert [(r["searchable"], r["committed"], r["docs.count"]) for r in rows] == [
        ("false", "false", str(INDEX_BUFFER_DOCS - 1))]
    assert esc.count(index="pend")["count"] == 0
    stats = esc.indices.stats(index="pend")["indices"]["pend"]["primaries"]
    assert stats["segments"]["count"] == 0 and stats["docs"]["deleted"] == 0   # searched ones
    assert stats["store"]["size_in_bytes"] >= seg["size_in_bytes"] > 0         # held ones
    esc.indices.refresh(index="pend")
    copy = esc.indices.segments(index="pend")["indices"]["pend"]["shards"]["0"][0]
    assert copy["num_search_segments"] == len(copy["segments"]) >= 2
    assert all(s["search"] for s in copy["segments"].values())
    assert {r["searchable"] for r in esc.cat.segments(index="pend", format="json")} == {"true"}
    assert esc.count(index="pend")["count"] == total
    stats = esc.indices.stats(index="pend")["indices"]["pend"]["primaries"]
    assert stats["segments"]["count"] == len(copy["segments"]) and stats["docs"]["deleted"] == 1
