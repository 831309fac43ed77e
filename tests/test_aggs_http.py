"""Aggregations over HTTP: the ``elasticsearch`` client against real uvicorn + Ray shards.

Each test states one rule of the aggregation contract as a client sees it: the answer is the
same on 1 and 3 shards, ``post_filter`` narrows hits but not aggregations, aggregations under a
point in time see its snapshot, and what is not implemented is refused with a 400 naming it.
"""
from __future__ import annotations

import elasticsearch
import pytest
from elasticsearch import Elasticsearch

MAPPINGS = {"properties": {"tag": {"type": "keyword"}, "n": {"type": "long"},
                           "day": {"type": "date"}, "title": {"type": "text"}}}
DOCS = [{"tag": ["red", "blue"][i % 2] if i % 5 else "green", "n": i,
         "day": f"2024-0{1 + i % 3}-0{1 + i % 7}", "title": f"doc {i}"} for i in range(30)]
AGGS = {"tags": {"terms": {"field": "tag"}, "aggs": {"avg_n": {"avg": {"field": "n"}}}},
        "months": {"date_histogram": {"field": "day", "calendar_interval": "month"},
                   "aggs": {"top": {"max": {"field": "n"}}}},
        "n_hist": {"histogram": {"field": "n", "interval": 10}},
        "low": {"range": {"field": "n", "ranges": [{"to": 10}, {"from": 10}]}},
        "distinct": {"cardinality": {"field": "tag"}}}


def _load(esc: Elasticsearch, index: str, shards: int) -> None:
    esc.indices.create(index=index, settings={"number_of_shards": shards}, mappings=MAPPINGS)
    for i, d in enumerate(DOCS):
        esc.index(index=index, id=str(i), document=d)
    esc.indices.refresh(index=index)


def test_one_and_three_shards_answer_the_same_aggregations(esc):
    _load(esc, "one", 1)
    _load(esc, "three", 3)
    one = esc.search(index="one", size=0, aggs=AGGS).body["aggregations"]
    three = esc.search(index="three", size=0, aggs=AGGS).body["aggregations"]
    assert one == three
    counts = {b["key"]: b["doc_count"] for b in one["tags"]["buckets"]}
    assert counts == {"red": 12, "blue": 12, "green": 6}
    assert one["tags"]["doc_count_error_upper_bound"] == 0
    assert [b["key_as_string"] for b in one["months"]["buckets"]] == [
        "2024-01-01T00:00:00.000Z", "2024-02-01T00:00:00.000Z", "2024-03-01T00:00:00.000Z"]
    assert one["distinct"]["value"] == 3


def test_post_filter_narrows_hits_but_not_aggregations(esc):
    _load(esc, "pf", 3)
    resp = esc.search(index="pf", size=100, aggs={"tags": {"terms": {"field": "tag"}}},
                      post_filter={"term": {"tag": "green"}}).body
    assert {h["_source"]["tag"] for h in resp["hits"]["hits"]} == {"green"}
    assert resp["hits"]["total"]["value"] == 6
    assert sum(b["doc_count"] for b in resp["aggregations"]["tags"]["buckets"]) == 30


def test_typed_keys_prefix_names_with_their_type(esc):
    _load(esc, "tk", 2)
    aggs = esc.search(index="tk", size=0, typed_keys=True, aggs=AGGS).body["aggregations"]
    assert set(aggs) == {"sterms#tags", "date_histogram#months", "histogram#n_hist",
                         "range#low", "cardinality#distinct"}
    assert "avg#avg_n" in aggs["sterms#tags"]["buckets"][0]


def test_aggregations_under_a_point_in_time_see_its_snapshot(esc):
    _load(esc, "snap", 2)
    pit = esc.open_point_in_time(index="snap", keep_alive="1m").body["id"]
    esc.index(index="snap", id="new", document={"tag": "purple", "n": 99}, refresh=True)
    body = {"size": 0, "pit": {"id": pit}, "aggs": {"tags": {"terms": {"field": "tag"}}}}
    keys = {b["key"] for b in esc.search(body=body).body["aggregations"]["tags"]["buckets"]}
    assert "purple" not in keys
    now = esc.search(index="snap", size=0, aggs={"tags": {"terms": {"field": "tag"}}}).body
    assert "purple" in {b["key"] for b in now["aggregations"]["tags"]["buckets"]}
    esc.close_point_in_time(id=pit)


def test_an_unknown_aggregation_type_is_a_parsing_error(esc):
    _load(esc, "bad", 1)
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="bad", aggs={"x": {"no_such_agg": {"field": "n"}}})
    assert e.value.body["error"]["type"] == "parsing_exception"
    assert "Unknown aggregation type [no_such_agg]" in e.value.body["error"]["reason"]


def test_an_aggregation_not_implemented_is_refused_by_name(esc):
    _load(esc, "nyi", 1)
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="nyi", aggs={"p": {"significant_terms": {"field": "tag"}}})
    assert "[significant_terms]" in e.value.body["error"]["reason"]


def test_an_unknown_parameter_of_an_aggregation_is_refused(esc):
    _load(esc, "param", 1)
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="param", aggs={"t": {"terms": {"field": "tag", "bogus": 1}}})
    assert "[terms] unknown field [bogus]" in e.value.body["error"]["reason"]


def test_too_many_buckets_is_refused_with_the_limit(esc, es):
    _load(esc, "many", 1)
    es.put("/_cluster/settings", json={"transient": {"search.max_buckets": 3}})
    try:
        with pytest.raises(elasticsearch.BadRequestError) as e:
            esc.search(index="many", size=0, aggs={"h": {"histogram": {"field": "n",
                                                                        "interval": 1}}})
        assert e.value.body["error"]["type"] == "too_many_buckets_exception"
        assert "Trying to create too many buckets" in e.value.body["error"]["reason"]
    finally:
        es.put("/_cluster/settings", json={"transient": {"search.max_buckets": None}})


def test_elasticsearch_dsl_search_aggs_round_trip(esc):
    from elasticsearch.dsl import Search
    _load(esc, "dsl", 2)
    s = Search(using=esc, index="dsl").extra(size=0)
    s.aggs.bucket("tags", "terms", field="tag").metric("avg_n", "avg", field="n")
    s.aggs.bucket("months", "date_histogram", field="day", calendar_interval="month")
    r = s.execute()
    assert {b.key: b.doc_count for b in r.aggregations.tags.buckets} == {
        "red": 12, "blue": 12, "green": 6}
    assert [b.doc_count for b in r.aggregations.months.buckets] == [10, 10, 10]
    assert r.aggregations.tags.buckets[0].avg_n.value is not None
