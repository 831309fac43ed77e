"""Index management without Ray: aliases (atomic actions, filters, routing, write index),
open/close, ``_stats`` counters and date-math index names, over the real coordinator code
(``tests/inprocess.py``). The HTTP and client side is in ``test_index_management_http.py``."""
from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from inprocess import LocalCluster
from shardsearch.cluster.errors import IllegalArgument, IndexClosed, IndexNotFound, SearchError
from shardsearch.cluster.indices.aliases import AliasesNotFound
from shardsearch.cluster.indices.date_math import resolve_date_math
from shardsearch.cluster.indices.stats import parse_metrics

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


@pytest.fixture()
def two() -> LocalCluster:
    c = LocalCluster()
    c.create("logs-1", shards=2, mappings={"properties": {"kind": {"type": "keyword"}}})
    c.create("logs-2", shards=1, mappings={"properties": {"kind": {"type": "keyword"}}})
    c.index("logs-1", {"a": {"kind": "err"}, "b": {"kind": "ok"}})
    c.index("logs-2", {"c": {"kind": "err"}, "d": {"kind": "ok"}})
    return c


def test_an_alias_names_its_indices_wherever_an_index_name_is_accepted(two: LocalCluster):
    two.coord.update_aliases([{"add": {"indices": ["logs-1", "logs-2"], "alias": "logs"}}])
    assert sorted(two.ids("logs")) == ["a", "b", "c", "d"]
    assert two.coord.resolve("logs") == ["logs-1", "logs-2"]
    assert sorted(two.coord.get_mapping("logs")) == ["logs-1", "logs-2"]


def test_a_filter_alias_filters_searches_and_an_unfiltered_path_wins(two: LocalCluster):
    two.coord.update_aliases([{"add": {"index": "logs-*", "alias": "errors",
                                       "filter": {"term": {"kind": "err"}}}}])
    assert sorted(two.ids("errors")) == ["a", "c"]
    # the same index also named directly: no filter on it
    assert sorted(two.ids("errors,logs-2")) == ["a", "c", "d"]


def test_search_routing_of_an_alias_limits_the_shards_searched(two: LocalCluster):
    two.bulk([{"action": "index", "index": "logs-1", "id": "r", "routing": "x",
               "source": {"kind": "ok"}}])
    two.coord.put_alias("logs-1", "only-x", {"search_routing": "x"})
    resp = two.search("only-x")
    assert resp["_shards"]["total"] == 1
    assert "r" in [h["_id"] for h in resp["hits"]["hits"]]


def test_actions_apply_all_or_nothing(two: LocalCluster):
    with pytest.raises(IndexNotFound):
        two.coord.update_aliases([{"add": {"index": "logs-1", "alias": "x"}},
                                  {"add": {"index": "missing", "alias": "y"}}])
    assert two.coord.get_alias(None, None) == {"logs-1": {"aliases": {}},
                                               "logs-2": {"aliases": {}}}


def test_remove_with_must_exist_names_the_missing_aliases(two: LocalCluster):
    two.coord.put_alias("logs-1", "a1", None)
    with pytest.raises(AliasesNotFound, match=r"aliases \[nope\] missing"):
        two.coord.update_aliases([{"remove": {"index": "logs-1", "aliases": ["a1", "nope"],
                                              "must_exist": True}}])
    assert two.coord.alias_exists(None, "a1")
    two.coord.update_aliases([{"remove": {"index": "logs-1", "aliases": ["a1", "nope"],
                                          "must_exist": False}}])
    assert not two.coord.alias_exists(None, "a1")


def test_remove_index_deletes_the_index_in_the_same_step(two: LocalCluster):
    two.coord.update_aliases([{"add": {"index": "logs-2", "alias": "current"}},
                              {"remove_index": {"index": "logs-1"}}])
    assert sorted(two.coord.indices) == ["logs-2"]
    assert two.coord.get_alias(None, "current") == {"logs-2": {"aliases": {"current": {}}}}


def test_writes_through_an_alias_go_to_its_write_index_with_its_routing(two: LocalCluster):
    two.coord.update_aliases([
        {"add": {"index": "logs-1", "alias": "w", "is_write_index": False}},
        {"add": {"index": "logs-2", "alias": "w", "is_write_index": True,
                 "index_routing": "k"}}])
    out = two.bulk([{"action": "index", "index": "w", "id": "new", "source": {"kind": "ok"}}])
    assert out["items"][0]["index"]["_index"] == "logs-2"
    doc = asyncio.run(two.coord.get_doc("logs-2", "new", routing="k"))
    assert doc["_routing"] == "k"
    with pytest.raises(IllegalArgument, match="more than one index"):   # as Elasticsearch
        asyncio.run(two.coord.get_doc("w", "new"))


def test_an_alias_over_two_indices_without_write_index_refuses_writes(two: LocalCluster):
    two.coord.update_aliases([{"add": {"indices": ["logs-1", "logs-2"], "alias": "both"}}])
    out = two.bulk([{"action": "index", "index": "both", "id": "z", "source": {}}])
    assert out["items"][0]["index"]["error"]["type"] == "illegal_argument_exception"
    assert "no write index is defined for alias [both]" in \
        out["items"][0]["index"]["error"]["reason"]


def test_alias_names_follow_index_rules_and_never_shadow_an_index(two: LocalCluster):
    with pytest.raises(SearchError, match="Invalid alias name"):
        two.coord.put_alias("logs-1", "bad*", None)
    with pytest.raises(SearchError, match="an index or data stream exists"):
        two.coord.put_alias("logs-1", "logs-2", None)
    with pytest.raises(SearchError, match=r"unknown field \[abc\]"):
        two.coord.put_alias("logs-1", "fine", {"abc": 1})


def test_a_closed_index_refuses_searches_and_writes_and_wildcards_skip_it(two: LocalCluster):
    two.coord.close_index("logs-2")
    with pytest.raises(IndexClosed):
        two.search("logs-2")
    assert sorted(two.ids("logs-*")) == ["a", "b"]
    out = two.bulk([{"action": "index", "index": "logs-2", "id": "q", "source": {}}])
    assert out["items"][0]["index"]["error"]["type"] == "index_closed_exception"
    with pytest.raises(IndexClosed):
        asyncio.run(two.coord.stats("logs-2"))
    with pytest.raises(IndexClosed):
        asyncio.run(two.coord.open_pit("logs-2", "1m"))
    two.coord.open_index("logs-*")
    assert sorted(two.ids("logs-2")) == ["c", "d"]


def test_stats_count_what_the_copies_did(two: LocalCluster):
    two.search("logs-1")
    stats = asyncio.run(two.coord.stats("logs-1"))
    prim = stats["indices"]["logs-1"]["primaries"]
    assert prim["docs"]["count"] == 2
    assert prim["indexing"]["index_total"] == 2
    assert prim["search"]["query_total"] == 2          # one query per shard
    assert prim["refresh"]["total"] >= 1
    assert prim["store"]["size_in_bytes"] > 0
    assert stats["_shards"]["total"] == 2 * 2            # shards x (1 + replicas)
    only = asyncio.run(two.coord.stats(None, ["docs"], "cluster"))
    assert set(only["_all"]["total"]) == {"docs"} and "indices" not in only


def test_an_unknown_stats_metric_is_named_with_a_suggestion():
    with pytest.raises(IllegalArgument, match=r"did you mean \[fielddata\]\?"):
        parse_metrics("fieldata", "/_stats/fieldata")
    with pytest.raises(IllegalArgument, match="not kept by this server"):
        parse_metrics("query_cache", "/_stats/query_cache")


def test_date_math_names_resolve_in_utc():
    now = int(dt.datetime(2026, 3, 5, 13, 0, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert resolve_date_math("<logs-{now/d}>", now) == "logs-2026.03.05"
    assert resolve_date_math("<logs-{now/M{yyyy.MM}}>", now) == "logs-2026.03"
    assert resolve_date_math("<logs-{now-1d/d}>", now) == "logs-2026.03.04"
    assert resolve_date_math(r"<a\{b\}-{now/y{yyyy}}>", now) == "a{b}-2026"
    with pytest.raises(IllegalArgument):
        resolve_date_math("<logs-{now/d>", now)


def test_an_index_created_by_date_math_is_found_by_it():
    c = LocalCluster()
    c.coord.create_index("<day-{now/d}>", {"aliases": {"today": {}}})
    name = resolve_date_math("<day-{now/d}>")
    assert c.coord.resolve("<day-{now/d}>") == [name]
    assert c.coord.get_alias(None, "today") == {name: {"aliases": {"today": {}}}}


def test_the_matching_template_of_highest_priority_shapes_a_new_index():
    c = LocalCluster()
    c.coord.put_index_template("low", {"index_patterns": ["logs-*"], "priority": 1,
                                       "template": {"settings": {"number_of_shards": 3}}})
    c.coord.put_index_template("high", {"index_patterns": ["logs-app*"], "priority": 5,
                                        "template": {
                                            "settings": {"number_of_shards": 2},
                                            "mappings": {"properties": {
                                                "kind": {"type": "keyword"}}},
                                            "aliases": {"apps": {}}}})
    c.coord.create_index("logs-app1", {"mappings": {"properties": {"n": {"type": "long"}}}})
    meta = c.coord.indices["logs-app1"]
    assert meta.number_of_shards == 2 and meta.aliases == {"apps": {}}
    assert set(meta.mapping.to_body()["properties"]) == {"kind", "n"}
    c.bulk([{"action": "index", "index": "logs-db", "id": "1", "source": {}}])   # auto-created
    assert c.coord.indices["logs-db"].number_of_shards == 3
    c.coord.create_index("other")
    assert c.coord.indices["other"].number_of_shards == 1


def test_templates_with_overlapping_patterns_need_different_priorities():
    c = LocalCluster()
    c.coord.put_index_template("a", {"index_patterns": ["x*"]})
    with pytest.raises(IllegalArgument, match="have the same priority"):
        c.coord.put_index_template("b", {"index_patterns": ["xy*"]})
    with pytest.raises(IllegalArgument, match=r"specifies component templates \[ct\] that do"):
        c.coord.put_index_template("c", {"index_patterns": ["z*"], "composed_of": ["ct"]})
    with pytest.raises(SearchError, match="not found"):
        c.coord.get_index_template("nope")
    with pytest.raises(SearchError):   # would fail every creation: refused when put
        c.coord.put_index_template("d", {"index_patterns": ["d*"], "template": {
            "mappings": {"properties": {"f": {"type": "no-such-type"}}}}})
    assert [t["name"] for t in c.coord.get_index_template("*")["index_templates"]] == ["a"]
    c.coord.delete_index_template("a")
    assert c.coord.get_index_template(None) == {"index_templates": []}


def test_cat_tables_sort_numbers_as_numbers_and_missing_values_last():
    from shardsearch.api.cat_table import Column, human_bytes, render
    cols = [Column("i"), Column("n", ("num",), kind="number"), Column("b", kind="bytes")]
    rows = [{"i": "a", "n": 10, "b": 2048}, {"i": "b", "n": 9, "b": None},
            {"i": "c", "n": None, "b": 5}]
    text = render(rows, cols, {"s": "num:desc", "h": "i,n,b"}).body.decode()
    assert [line.split()[0] for line in text.splitlines()] == ["a", "b", "c"]
    assert render(rows, cols, {"s": "n", "h": "i", "bytes": "kb"}).body.decode().split() == \
        ["b", "a", "c"]
    assert render(rows[:1], cols, {"h": "b", "bytes": "kb"}).body.decode().strip() == "2"
    assert (human_bytes(225), human_bytes(4608), human_bytes(1 << 30)) == ("225b", "4.5kb",
                                                                           "1gb")
    with pytest.raises(IllegalArgument, match="unknown header"):
        render(rows, cols, {"h": "zzz"})


def test_analyze_continues_positions_and_offsets_across_texts():
    from shardsearch.cluster.indices.analyze import analyze
    out = analyze({"analyzer": "standard", "text": ["Ab cd", "EF"]})["tokens"]
    assert [(t["token"], t["start_offset"], t["position"]) for t in out] == \
        [("ab", 0, 0), ("cd", 3, 1), ("ef", 6, 102)]
    with pytest.raises(IllegalArgument, match="failed to find global analyzer"):
        analyze({"analyzer": "nope", "text": "x"})


def test_scroll_and_point_in_time_through_a_filter_alias_keep_its_filter(two: LocalCluster):
    from shardsearch.cluster.search.request import parse_search
    two.coord.put_alias("logs-*", "errs", {"filter": {"term": {"kind": "err"}}})
    first = asyncio.run(two.coord.search(parse_search(("errs",), {"scroll": "1m", "size": "1"},
                                                      None)))
    ids = [h["_id"] for h in first["hits"]["hits"]]
    page = asyncio.run(two.coord.scroll(first["_scroll_id"], "1m"))
    ids += [h["_id"] for h in page["hits"]["hits"]]
    assert first["hits"]["total"]["value"] == 2 and sorted(ids) == ["a", "c"]
    pit = asyncio.run(two.coord.open_pit("errs", "1m"))
    resp = asyncio.run(two.coord.search(parse_search((), {}, {"pit": {"id": pit["id"]}})))
    assert sorted(h["_id"] for h in resp["hits"]["hits"]) == ["a", "c"]
