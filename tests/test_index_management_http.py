"""Index management through the official clients, on the real server (uvicorn + Ray):
aliases, open/close, ``_stats``, the ``_cat`` tables, ``_cluster/health`` levels, legacy
templates answering 404, and date-math index names. Each API is driven through
``elasticsearch`` and ``opensearch-py`` as their documentation shows it."""
from __future__ import annotations

import elasticsearch
import httpx
import opensearchpy
import pytest
from elasticsearch import Elasticsearch
from elasticsearch import helpers as es_helpers
from opensearchpy import OpenSearch

from shardsearch.cluster.indices.date_math import resolve_date_math

MAPPINGS = {"properties": {"kind": {"type": "keyword"}, "n": {"type": "integer"}}}


def _load(es: httpx.Client, name: str, kinds: list[str], shards: int = 2) -> None:
    es.put(f"/{name}", json={"settings": {"number_of_shards": shards, "number_of_replicas": 0},
                             "mappings": MAPPINGS}).raise_for_status()
    lines = []
    for i, k in enumerate(kinds):
        lines += [f'{{"index":{{"_index":"{name}","_id":"{name}-{i}"}}}}',
                  f'{{"kind":"{k}","n":{i}}}']
    es.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
            headers={"content-type": "application/x-ndjson"}).raise_for_status()


def test_aliases_through_the_elasticsearch_client(es: httpx.Client, esc: Elasticsearch):
    _load(es, "m1", ["err", "ok", "ok"])
    _load(es, "m2", ["err", "ok"])
    esc.indices.update_aliases(actions=[
        {"add": {"indices": ["m1", "m2"], "alias": "all-m"}},
        {"add": {"index": "m*", "alias": "m-errors", "filter": {"term": {"kind": "err"}}}},
        {"add": {"index": "m2", "alias": "m-write", "is_write_index": True}}])
    assert esc.count(index="all-m")["count"] == 5
    hits = esc.search(index="m-errors", query={"match_all": {}})["hits"]["hits"]
    assert sorted(h["_id"] for h in hits) == ["m1-0", "m2-0"]
    # helpers.scan scrolls: every page keeps the alias's filter
    assert sorted(d["_id"] for d in es_helpers.scan(esc, index="m-errors", size=1)) == \
        ["m1-0", "m2-0"]
    assert esc.indices.exists_alias(name="m-write")
    got = esc.indices.get_alias(name="m-write").body
    assert got == {"m2": {"aliases": {"m-write": {"is_write_index": True}}}}
    esc.index(index="m-write", id="w1", document={"kind": "ok"}, refresh=True)
    assert esc.get(index="m2", id="w1")["found"]
    esc.indices.put_alias(index="m1", name="m1-only", routing="r")
    assert esc.indices.get_alias(index="m1", name="m1-only")["m1"]["aliases"]["m1-only"] == \
        {"index_routing": "r", "search_routing": "r"}
    esc.indices.delete_alias(index="m1", name="m1-only")
    assert not esc.indices.exists_alias(name="m1-only")
    with pytest.raises(elasticsearch.NotFoundError):
        esc.indices.get_alias(name="never")
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.index(index="all-m", id="x", document={})
    assert "no write index is defined for alias [all-m]" in str(e.value)


def test_aliases_through_the_opensearch_client(es: httpx.Client, osc: OpenSearch):
    osc.indices.create(index="o1", body={"aliases": {"o-read": {}},
                                         "settings": {"number_of_replicas": 0}})
    osc.index(index="o1", id="1", body={"kind": "ok"}, refresh=True)
    assert osc.search(index="o-read")["hits"]["total"]["value"] == 1
    assert osc.indices.get(index="o1")["o1"]["aliases"] == {"o-read": {}}
    osc.indices.update_aliases(body={"actions": [
        {"remove": {"index": "o1", "alias": "o-read"}},
        {"add": {"index": "o1", "alias": "o-new"}}]})
    assert osc.indices.exists_alias(name="o-new")
    assert not osc.indices.exists_alias(name="o-read")
    with pytest.raises(opensearchpy.NotFoundError):
        osc.indices.update_aliases(body={"actions": [
            {"remove": {"index": "o1", "alias": "missing", "must_exist": True}}]})
    # all or nothing: the failing action left o-new in place
    assert osc.indices.exists_alias(name="o-new")


def test_a_closed_index_answers_index_closed_exception(es: httpx.Client, esc: Elasticsearch,
                                                       osc: OpenSearch):
    _load(es, "shut", ["a", "b"])
    esc.indices.close(index="shut")
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="shut")
    assert e.value.body["error"]["type"] == "index_closed_exception"
    with pytest.raises(opensearchpy.RequestError) as e2:
        osc.index(index="shut", id="z", body={})
    assert e2.value.error == "index_closed_exception"
    row = esc.cat.indices(index="shut", format="json")[0]
    assert row["status"] == "close"
    osc.indices.open(index="shut")
    assert esc.count(index="shut")["count"] == 2


def test_stats_report_real_counters_and_store_bytes(es: httpx.Client, esc: Elasticsearch,
                                                    osc: OpenSearch):
    _load(es, "st", ["a", "b", "c"])
    esc.search(index="st", query={"match_all": {}})
    body = esc.indices.stats(index="st").body
    prim = body["indices"]["st"]["primaries"]
    assert prim["docs"]["count"] == 3 and prim["indexing"]["index_total"] == 3
    assert prim["store"]["size_in_bytes"] > 0 and prim["search"]["query_total"] >= 2
    assert body["_shards"] == {"total": 2, "successful": 2, "failed": 0}
    store = osc.indices.stats(index="st", metric="store")
    assert set(store["_all"]["total"]) == {"store"}
    with pytest.raises(opensearchpy.RequestError) as e:
        osc.indices.stats(metric="fieldata")
    assert "did you mean [fielddata]?" in str(e.value.info)


def test_cat_tables_take_columns_sort_and_units(es: httpx.Client, esc: Elasticsearch,
                                                osc: OpenSearch):
    _load(es, "c1", ["a"] * 3)
    _load(es, "c2", ["a"])
    esc.indices.put_alias(index="c1", name="cx", filter={"term": {"kind": "a"}})
    rows = esc.cat.aliases(format="json")
    assert rows == [{"alias": "cx", "index": "c1", "filter": "*", "routing.index": "-",
                     "routing.search": "-", "is_write_index": "-"}]
    assert esc.cat.count(index="c*", format="json")[0]["count"] == "4"
    text = osc.cat.indices(index="c*", h="index,docs.count", s="docs.count:desc", v=True)
    assert [line.split() for line in text.splitlines()] == \
        [["index", "docs.count"], ["c1", "3"], ["c2", "1"]]
    b = esc.cat.indices(index="c1", h="store.size", bytes="b", format="json")[0]["store.size"]
    assert int(b) > 0
    assert "alias" in es.get("/_cat/aliases", params={"help": "true"}).text
    assert es.get("/_cat/indices", params={"h": "nope"}).status_code == 400
    assert es.get("/_cat").text.startswith("=^.^=")
    assert esc.cat.health(format="json")[0]["status"] in ("green", "yellow")
    assert esc.cat.nodes(format="json")


def test_cluster_health_by_index_and_shard(es: httpx.Client, esc: Elasticsearch):
    _load(es, "h1", ["a"])
    body = esc.cluster.health(index="h1", level="shards", wait_for_status="green",
                              timeout="10s").body
    assert body["status"] == "green"
    assert body["indices"]["h1"]["shards"]["0"]["primary_active"] is True
    r = es.get("/_cluster/health", params={"wait_for_status": "purple"})
    assert r.status_code == 400


def test_legacy_templates_are_missing_not_refused(es: httpx.Client, esc: Elasticsearch):
    assert es.head("/_template/anything").status_code == 404
    assert es.get("/_template/anything").status_code == 404
    _load(es, "src", ["a", "b"])
    es_helpers.reindex(esc, "src", "dst")
    esc.indices.refresh(index="dst")
    assert esc.count(index="dst")["count"] == 2


def test_date_math_index_names_through_the_clients(es: httpx.Client, esc: Elasticsearch):
    esc.indices.create(index="<day-{now/d}>", settings={"number_of_replicas": 0})
    name = resolve_date_math("<day-{now/d}>")
    esc.index(index="<day-{now/d}>", id="1", document={"n": 1}, refresh=True)
    assert esc.count(index="<day-{now/d}>")["count"] == 1
    assert esc.indices.exists(index=name)


def test_index_templates_through_both_clients(es: httpx.Client, esc: Elasticsearch,
                                              osc: OpenSearch):
    esc.indices.put_index_template(name="tpl", index_patterns=["tpl-*"], priority=3,
                                   template={"settings": {"number_of_shards": 2},
                                             "aliases": {"tpl-all": {}}})
    assert esc.indices.exists_index_template(name="tpl")
    osc.index(index="tpl-a", id="1", body={"n": 1}, refresh=True)   # created automatically
    assert esc.indices.get_settings(index="tpl-a")["tpl-a"]["settings"]["index"][
        "number_of_shards"] == "2"
    assert osc.count(index="tpl-all")["count"] == 1
    got = osc.indices.get_index_template(name="tpl")["index_templates"][0]
    assert got["name"] == "tpl" and got["index_template"]["priority"] == 3
    with pytest.raises(elasticsearch.BadRequestError):
        esc.indices.put_index_template(name="tpl2", index_patterns=["tpl-x*"], priority=3)
    esc.indices.delete_index_template(name="tpl")
    assert not esc.indices.exists_index_template(name="tpl")
    with pytest.raises(opensearchpy.NotFoundError):
        osc.indices.get_index_template(name="tpl")


def test_cluster_state_metadata_and_routing(es: httpx.Client, esc: Elasticsearch,
                                            osc: OpenSearch):
    _load(es, "cs", ["a"], shards=2)
    esc.indices.put_alias(index="cs", name="cs-alias")
    state = esc.cluster.state(metric="metadata,routing_table", index="cs").body
    meta = state["metadata"]["indices"]["cs"]
    assert meta["state"] == "open" and meta["aliases"] == ["cs-alias"]
    assert meta["settings"]["index"]["number_of_shards"] == "2"
    assert sorted(state["routing_table"]["indices"]["cs"]["shards"]) == ["0", "1"]
    assert "metadata" in osc.cluster.state(metric="metadata")
    with pytest.raises(opensearchpy.RequestError):
        osc.cluster.state(metric="blocks")


def test_analyze_shows_tokens_with_offsets(es: httpx.Client, esc: Elasticsearch,
                                           osc: OpenSearch):
    out = esc.indices.analyze(analyzer="standard", text="Quick Fox 42")
    assert [(t["token"], t["start_offset"], t["end_offset"], t["type"], t["position"])
            for t in out["tokens"]] == [("quick", 0, 5, "<ALPHANUM>", 0),
                                        ("fox", 6, 9, "<ALPHANUM>", 1),
                                        ("42", 10, 12, "<NUM>", 2)]
    _load(es, "an", ["a"])
    kw = osc.indices.analyze(index="an", body={"field": "kind", "text": "Two Words"})
    assert [t["token"] for t in kw["tokens"]] == ["Two Words"]
    with pytest.raises(elasticsearch.BadRequestError):
        esc.indices.analyze(tokenizer="ngram", text="x")
