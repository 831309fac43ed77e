"""``_cat/nodes`` metrics and the ``_cat`` time columns: Elasticsearch's columns, default set,
aliases and units, with values measured on the real server's processes (uvicorn + Ray), and
the pure rendering of ``TimeValue`` text and the per-node sums without Ray."""
from __future__ import annotations

import os
import time

import httpx
import psutil
import pytest
from elasticsearch import Elasticsearch
from opensearchpy import OpenSearch

from shardsearch.api.cat_table import human_time, time_in
from shardsearch.cluster.indices.node_metrics import assign, node_metrics, sample

DEFAULT = ["ip", "heap.percent", "ram.percent", "cpu", "load_1m", "load_5m", "load_15m",
           "node.role", "master", "name"]


@pytest.mark.parametrize("ms, text", [(0, "0s"), (0.5, "500micros"), (500, "500ms"),
                                      (1299, "1.2s"), (60_000, "1m"), (90_000, "1.5m"),
                                      (12_600_000, "3.5h"), (172_800_000, "2d"), (-1, "-1")])
def test_time_values_render_as_elasticsearchs_timevalue(ms: float, text: str) -> None:
    assert human_time(ms) == text


@pytest.mark.parametrize("unit, whole", [("d", "0"), ("h", "1"), ("m", "61"), ("s", "3661"),
                                         ("ms", "3661500"), ("micros", "3661500000"),
                                         ("nanos", "3661500000000")])
def test_time_columns_under_time_param_are_whole_units_truncated(unit: str, whole: str) -> None:
    assert time_in(3_661_500, unit) == whole


def test_a_nodes_processes_are_summed_and_its_machine_read_once() -> None:
    me = sample()
    other = {**me, "pid": me["pid"] + 1, "rss": 1000, "fds": 3, "started": me["started"] - 10}
    out = node_metrics([me, other, me], heap_max=4 * me["rss"], now=me["started"] + 20)
    assert out["heap.current"] == me["rss"] + 1000          # the duplicate counted once
    assert out["heap.percent"] == int(100 * (me["rss"] + 1000) / (4 * me["rss"]))
    assert out["ram.max"] == psutil.virtual_memory().total
    assert out["uptime"] == 30_000                           # from the oldest process
    assert out["file_desc.current"] == me["fds"] + 3
    assert out["load_1m"] == f"{os.getloadavg()[0]:.2f}" or float(out["load_1m"]) >= 0
    assert node_metrics([], None) == {}


def test_a_sample_without_a_node_goes_to_the_node_on_its_machine() -> None:
    me = sample()
    far = {**me, "machine": "elsewhere:1", "pid": 1}
    nodes = [{"id": "a"}, {"id": "b"}]
    by = assign(nodes, [("b", me), ("a", far), (None, {**me, "pid": 2})])
    assert [s["pid"] for s in by["b"]] == [me["pid"], 2] and by["a"] == [far]


def test_cat_nodes_shows_elasticsearchs_default_columns(es: httpx.Client,
                                                        base_url: str) -> None:
    esc = Elasticsearch(base_url, request_timeout=60)
    rows = esc.cat.nodes(format="json")
    assert rows and list(rows[0]) == DEFAULT
    for row in rows:
        assert 0 <= int(row["heap.percent"]) <= 100 and 0 < int(row["ram.percent"]) <= 100
        assert 0 <= int(row["cpu"]) <= 100 and float(row["load_1m"]) >= 0
    osc = OpenSearch(hosts=[base_url], timeout=60)
    text = osc.cat.nodes(v=True)
    assert text.splitlines()[0].split() == DEFAULT


def test_cat_nodes_metric_columns_take_aliases_units_and_sorting(es: httpx.Client) -> None:
    es.put("/catn", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    try:
        r = es.get("/_cat/nodes", params={"format": "json", "bytes": "b", "time": "ms",
                                          "h": "hc,hm,rc,rm,u,fdc,dt,da,dup,pid,id",
                                          "full_id": "true"})
        assert r.status_code == 200, r.text
        row = r.json()[0]
        assert list(row) == ["heap.current", "heap.max", "ram.current", "ram.max", "uptime",
                             "file_desc.current", "disk.total", "disk.avail",
                             "disk.used_percent", "pid", "id"]
        assert int(row["ram.max"]) == psutil.virtual_memory().total
        assert 0 < int(row["heap.current"]) <= int(row["heap.max"])
        started = time.time() - psutil.Process(int(row["pid"])).create_time()
        assert 0 <= int(row["uptime"]) <= started * 1000 + 5_000
        assert int(row["disk.avail"]) <= int(row["disk.total"])
        assert len(row["id"]) > 4
        human = es.get("/_cat/nodes", params={"h": "uptime,heap.max,id"}).text.split()
        assert human[0][-1] in "smhd" and human[1][-2:] in ("kb", "mb", "gb", "tb")
        assert len(human[2]) == 4                       # without full_id, as Elasticsearch
        secs = es.get("/_cat/nodes", params={"h": "u", "time": "s"}).text.split()
        assert all(s.isdigit() for s in secs)
        assert es.get("/_cat/nodes", params={"s": "heap.percent:desc"}).status_code == 200
        assert "heap.current" in es.get("/_cat/nodes", params={"help": "true"}).text
        assert es.get("/_cat/nodes", params={"h": "*"}).status_code == 200
        os_cols = es.get("/_cat/nodes", params={"h": "cm,rs", "format": "json"}).json()[0]
        assert os_cols["cluster_manager"] in "*-" and "master" in os_cols["node.roles"]
        bad = es.get("/_cat/nodes", params={"h": "query_cache.memory_size"})
        assert bad.status_code == 400 and "query_cache.memory_size" in bad.text
    finally:
        es.delete("/catn")


def test_cat_nodes_marks_the_master_node_with_a_star(base_url: str) -> None:
    """Elasticsearch's ``master`` column is ``*`` on the elected master, ``-`` elsewhere; ours
    marks the node ``_nodes/_master`` names (OpenSearch's ``cluster_manager`` likewise)."""
    esc = Elasticsearch(base_url, request_timeout=60)
    rows = esc.cat.nodes(format="json", h="id,master,cm", full_id=True)
    master_ids = list(esc.nodes.info(node_id="_master")["nodes"])
    assert [r["id"] for r in rows if r["master"] == "*"] == master_ids
    assert len(master_ids) == 1
    assert all(r["master"] == "-" for r in rows if r["id"] not in master_ids)
    assert [r["cluster_manager"] for r in rows] == [r["master"] for r in rows]


def test_cat_nodes_role_letters_are_the_roles_nodes_reports(es: httpx.Client) -> None:
    letters = {"data": "d", "ingest": "i", "master": "m"}
    roles = {n["name"]: n["roles"] for n in es.get("/_nodes").json()["nodes"].values()}
    for row in es.get("/_cat/nodes", params={"h": "name,r", "format": "json"}).json():
        assert row["node.role"] == "".join(sorted(letters[r] for r in roles[row["name"]]))


def test_cat_indices_statistic_columns_are_counts_and_time_columns(es: httpx.Client,
                                                                   base_url: str) -> None:
    es.put("/cati", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    try:
        for i in range(3):
            es.put(f"/cati/_doc/{i}", json={"n": i})
        es.post("/cati/_refresh")
        assert es.post("/cati/_search", json={"query": {"match_all": {}}}).status_code == 200
        osc = OpenSearch(hosts=[base_url], timeout=60)
        row = osc.cat.indices(index="cati", format="json", time="micros",
                              h="iito,pri.indexing.index_total,sqto,iiti,sqti,rti")[0]
        assert row["indexing.index_total"] == row["pri.indexing.index_total"] == "3"
        assert int(row["search.query_total"]) == 2          # one query phase per shard
        for col in ("indexing.index_time", "search.query_time", "refresh.time"):
            assert row[col].isdigit(), row
        text = es.get("/_cat/indices/cati", params={"h": "indexing.index_time"}).text.strip()
        assert text[-1] in "smhd" and text[0].isdigit(), text   # 1.2ms, 340micros, 0s
        stats = es.get("/cati/_stats/indexing").json()["_all"]["total"]["indexing"]
        ms = es.get("/_cat/indices/cati", params={"h": "iiti", "time": "ms"}).text.strip()
        assert int(ms) == stats["index_time_in_millis"]
    finally:
        es.delete("/cati")
