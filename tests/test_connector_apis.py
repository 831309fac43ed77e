"""What connectors call before they read: ``_nodes`` (info and stats), ``_search_shards`` and
``_data_stream``, in Elasticsearch's shapes, through both official clients."""
from __future__ import annotations

import pytest
from elasticsearch import NotFoundError
from opensearchpy import NotFoundError as OsNotFoundError


def test_nodes_info_has_elasticsearchs_shape_and_our_http_address(esc, osc, base_url) -> None:
    for client in (esc, osc):
        info = client.nodes.info()
        assert info["_nodes"]["total"] == info["_nodes"]["successful"] == len(info["nodes"]) >= 1
        assert info["_nodes"]["failed"] == 0 and info["cluster_name"]
        for node_id, node in info["nodes"].items():
            assert {"name", "host", "ip", "version", "roles", "transport_address"} <= set(node)
        published = [n["http"]["publish_address"] for n in info["nodes"].values() if "http" in n]
        assert published == [base_url.removeprefix("http://")]


def test_nodes_metrics_and_node_filters(es, esc) -> None:
    everything = es.get("/_nodes").json()
    local = es.get("/_nodes/_local").json()
    assert len(local["nodes"]) == 1 and "http" in next(iter(local["nodes"].values()))
    node_id = next(iter(local["nodes"]))
    assert set(es.get(f"/_nodes/{node_id}/http").json()["nodes"]) == {node_id}
    assert set(es.get("/_nodes/_all/http").json()["nodes"]) == set(everything["nodes"])
    http_only = esc.nodes.info(metric="http")
    assert "http" in http_only["nodes"][node_id]
    flat = es.get("/_nodes/settings?flat_settings=true").json()["nodes"][node_id]["settings"]
    assert flat["cluster.name"] == everything["cluster_name"]


def test_nodes_refuses_metrics_it_does_not_measure(es) -> None:
    resp = es.get("/_nodes/jvm")
    assert resp.status_code == 400 and "[jvm] is not supported" in resp.json()["error"]["reason"]
    resp = es.get("/_nodes/stats/os")
    assert resp.status_code == 400 and "[os] is not supported" in resp.json()["error"]["reason"]
    resp = es.get("/_nodes/hot_threads")
    assert resp.status_code == 400


def test_nodes_stats_counts_the_documents_each_node_holds(es, esc, osc) -> None:
    es.put("/s", json={"settings": {"number_of_shards": 2}})
    for i in range(5):
        es.put(f"/s/_doc/{i}", json={"n": i})
    es.post("/s/_refresh")
    for client in (esc, osc):
        stats = client.nodes.stats()
        assert stats["_nodes"]["total"] == len(stats["nodes"])
        assert sum(n["indices"]["docs"]["count"] for n in stats["nodes"].values()) >= 5


def test_search_shards_lists_each_shards_copies_and_follows_routing(es, esc, osc) -> None:
    es.put("/s", json={"settings": {"number_of_shards": 3}})
    for client in (esc, osc):
        out = client.search_shards(index="s")
        assert out["indices"] == {"s": {}}
        assert [g[0]["shard"] for g in out["shards"]] == [0, 1, 2]
        for group in out["shards"]:
            primary = [c for c in group if c["primary"]]
            assert len(primary) == 1 and primary[0]["index"] == "s"
            assert primary[0]["state"] == "STARTED" and primary[0]["node"] in out["nodes"]
        routed = client.search_shards(index="s", routing="alice")
        assert len(routed["shards"]) == 1
    only = es.get("/s/_search_shards?preference=_shards:0,2").json()
    assert [g[0]["shard"] for g in only["shards"]] == [0, 2]
    missing = es.get("/nope/_search_shards")
    assert missing.status_code == 404


def test_data_streams_do_not_exist_here(es, esc, osc) -> None:
    resp = es.get("/_data_stream/logs")
    assert resp.status_code == 404
    assert resp.json()["error"]["type"] == "index_not_found_exception"
    assert resp.json()["error"]["reason"] == "no such index [logs]"
    assert es.get("/_data_stream").json() == {"data_streams": []}
    assert es.get("/_data_stream/logs-*").json() == {"data_streams": []}
    with pytest.raises(NotFoundError):
        esc.indices.get_data_stream(name="logs")
    with pytest.raises(OsNotFoundError):
        osc.indices.get_data_stream(name="logs")
    assert es.put("/_data_stream/logs").status_code == 400
