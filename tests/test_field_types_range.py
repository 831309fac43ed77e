"""Range field types (``integer_range``, ``long_range``, ``float_range``, ``double_range``,
``date_range``): documents, queries with each relation, histograms over ranges, refusals —
through the real coordinator and shards in this process, on 1 and 3 shards."""
from __future__ import annotations

import orjson
import pytest

from inprocess import LocalCluster
from shardsearch.api.errors import envelope

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

JAN1 = 1451606400000          # 2016-01-01T00:00:00Z
DAY = 86_400_000


@pytest.fixture(scope="module", params=[1, 3])
def c(request) -> LocalCluster:
    cl = LocalCluster().create("rg", shards=request.param, mappings={"properties": {
        "r": {"type": "date_range"}, "l": {"type": "long_range"},
        "f": {"type": "float_range"}, "i": {"type": "integer_range"}}})
    docs = {
        "1": {"r": {"gte": "2016-01-01", "lt": "2016-01-02"}, "l": {"gte": 1, "lte": 5}},
        "2": {"r": {"gte": "2016-01-02", "lt": "2016-01-03"},
              "l": [{"gt": 10, "lt": 20}, {"gte": 30}]},
        "3": {"r": {"gte": "2016-02-01", "lt": "2016-02-02"}, "f": {"gte": 1.5, "lt": 2.5}},
        "4": {"r": {"gte": "2016-03-01", "lt": "2016-03-02"}, "i": {"lte": 10}},
    }
    assert cl.index("rg", docs)["errors"] is False
    return cl


def ids(c: LocalCluster, query: dict) -> list[str]:
    return sorted(c.ids("rg", {"query": query, "size": 50}))


def refused(search, *args) -> tuple[int, str]:
    with pytest.raises(Exception) as err:
        search(*args)
    body = envelope(err.value)
    return body["status"], orjson.dumps(body).decode()


def test_a_range_value_must_be_an_object_of_known_bounds_in_order():
    cl = LocalCluster().create("bad", mappings={"properties": {"l": {"type": "long_range"}}})
    cases = {"5": "error parsing field [l], expected an object but got VALUE_NUMBER",
             '{"foo": 1}': "error parsing field [l], with unknown parameter [foo]",
             '{"gte": 5, "lte": 1}': "min value (5) is greater than max value (1)",
             '{"gt": 5, "lt": 6}': "min value (6) is greater than max value (5)"}
    for value, reason in cases.items():
        item = cl.index("bad", {"1": {"l": orjson.loads(value)}})["items"][0]["index"]
        assert item["error"]["type"] == "mapper_parsing_exception"
        assert item["error"]["caused_by"]["reason"] == reason


def test_exclusive_bounds_become_the_next_value_inward(c):
    assert ids(c, {"term": {"l": 10}}) == []          # gt 10
    assert ids(c, {"term": {"l": 11}}) == ["2"]
    assert ids(c, {"term": {"l": 19}}) == ["2"] and ids(c, {"term": {"l": 20}}) == []


def test_a_missing_bound_is_open(c):
    assert ids(c, {"term": {"l": 2**62}}) == ["2"]    # gte 30, no upper bound
    assert ids(c, {"term": {"i": -(2**31)}}) == ["4"]


def test_range_query_relations(c):
    assert ids(c, {"range": {"l": {"gte": 4, "lte": 12}}}) == ["1", "2"]
    assert ids(c, {"range": {"l": {"gte": 4, "lte": 12, "relation": "intersects"}}}) == ["1", "2"]
    assert ids(c, {"range": {"l": {"gte": 0, "lte": 6, "relation": "within"}}}) == ["1"]
    assert ids(c, {"range": {"l": {"gte": 2, "lte": 3, "relation": "contains"}}}) == ["1"]
    assert ids(c, {"range": {"l": {"gt": 5, "lt": 11}}}) == []


def test_date_range_queries_read_dates_and_date_math(c):
    assert ids(c, {"range": {"r": {"gte": "2016-01-02", "lte": "2016-01-31"}}}) == ["2"]
    assert ids(c, {"range": {"r": {"gte": "2016-01-01", "lt": "2016-02-01",
                                   "relation": "within"}}}) == ["1", "2"]
    assert ids(c, {"term": {"r": "2016-03-01T12:00:00Z"}}) == ["4"]
    assert ids(c, {"term": {"r": JAN1 + DAY}}) == ["2"]


def test_float_ranges_terms_and_exists(c):
    assert ids(c, {"term": {"f": 2.4}}) == ["3"] and ids(c, {"term": {"f": 2.5}}) == []
    assert ids(c, {"terms": {"l": [3, 100]}}) == ["1", "2"]
    assert ids(c, {"exists": {"field": "l"}}) == ["1", "2"]


def test_date_histogram_counts_a_document_in_every_bucket_its_range_overlaps(c):
    body = {"size": 0, "aggs": {"h": {"date_histogram": {"field": "r",
                                                         "calendar_interval": "month"}}}}
    got = c.search("rg", body)["aggregations"]["h"]["buckets"]
    assert [(b["key_as_string"], b["doc_count"]) for b in got] == [
        ("2016-01-01T00:00:00.000Z", 2), ("2016-02-01T00:00:00.000Z", 1),
        ("2016-03-01T00:00:00.000Z", 1)]
    body["aggs"]["h"]["date_histogram"]["offset"] = "+1d"
    got = c.search("rg", body)["aggregations"]["h"]["buckets"]
    assert [(b["key_as_string"], b["doc_count"]) for b in got] == [
        ("2015-12-02T00:00:00.000Z", 1), ("2016-01-02T00:00:00.000Z", 2),
        ("2016-02-02T00:00:00.000Z", 1)]


def test_histogram_on_ranges_is_clipped_by_hard_bounds(c):
    body = {"size": 0, "aggs": {"h": {"histogram": {
        "field": "l", "interval": 5, "hard_bounds": {"min": 0, "max": 40}}}}}
    got = c.search("rg", body)["aggregations"]["h"]["buckets"]
    assert [(b["key"], b["doc_count"]) for b in got] == [
        (0.0, 1), (5.0, 1), (10.0, 1), (15.0, 1), (20.0, 0), (25.0, 0), (30.0, 1), (35.0, 1),
        (40.0, 1)]


def test_an_open_range_without_hard_bounds_is_refused_not_expanded(c):
    """The shard holding the open range refuses; the others answer (a partial result with the
    failure listed, or a 400 when every shard failed — as Elasticsearch reports shard errors)."""
    body = {"size": 0, "aggs": {"h": {"histogram": {"field": "l", "interval": 1}}}}
    try:
        resp = c.search("rg", body)
    except Exception as err:
        out = envelope(err)
        assert out["status"] == 400
        text = orjson.dumps(out).decode()
    else:
        assert resp["_shards"]["failed"] == 1
        text = orjson.dumps(resp["_shards"]["failures"]).decode()
    assert "narrow the ranges with [hard_bounds]" in text


def test_other_aggregations_and_sorting_refuse_range_fields(c):
    status, body = refused(c.search, "rg", {"size": 0, "aggs": {"a": {"avg": {"field": "l"}}}})
    assert status == 400
    assert "Field [l] of type [long_range] is not supported for aggregation [avg]" in body
    status, body = refused(c.search, "rg", {"sort": [{"l": "asc"}]})
    assert status == 400 and "Sorting is not supported on field [l]" in body


def test_range_types_are_never_mapped_dynamically():
    cl = LocalCluster().create("dyn")
    cl.index("dyn", {"1": {"span": {"gte": 1, "lte": 2}}})
    props = cl.coord.get_mapping("dyn")["dyn"]["mappings"]["properties"]
    assert props["span"]["properties"]["gte"]["type"] == "long"


def test_the_fields_option_returns_a_range_whole_with_its_bounds_printed(c):
    hits = c.search("rg", {"query": {"ids": {"values": ["1", "2"]}}, "sort": ["_doc"],
                           "fields": ["l", "r"], "_source": False})["hits"]["hits"]
    got = {h["_id"]: h["fields"] for h in hits}
    assert got["1"] == {"l": [{"gte": 1, "lte": 5}],
                        "r": [{"gte": "2016-01-01T00:00:00.000Z", "lt": "2016-01-02T00:00:00.000Z"}]}
    assert got["2"]["l"] == [{"gt": 10, "lt": 20}, {"gte": 30}]
    assert "l.gte" not in got["2"] and "r.gte" not in got["2"]
