"""``ip``, ``unsigned_long`` and the range types against the real OpenSearch node: the same documents in both,
the same requests, and the answers compared field by field (ids, sort values, bucket keys,
bounds and counts)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from .loading import loaded_pair

INDEX = "diff_ftypes"
MAPPING = {"properties": {"ip": {"type": "ip"}, "u": {"type": "unsigned_long"},
                          "v": {"type": "long"}, "r": {"type": "date_range"},
                          "l": {"type": "long_range"}, "f": {"type": "double_range"}}}
DOCS = {"1": {"ip": "::1", "v": 1}, "2": {"ip": "192.168.0.1", "v": 2},
        "3": {"ip": "192.168.0.7", "v": 3}, "4": {"ip": "10.0.0.5", "v": 4},
        "5": {"ip": "2001:db8::ff00:42:8329", "v": 5}, "6": {"ip": "::ffff:10.0.0.6", "v": 6},
        "7": {"ip": ["10.0.0.200", "fe80::1"], "v": 7},
        "10": {"u": 18446744073709551615}, "11": {"u": 10223372036854775807},
        "12": {"u": 18446744073709551615}, "13": {"u": 5}, "14": {"u": [7, 9223372036854775808]},
        "20": {"r": {"gte": "2016-01-01", "lt": "2016-01-02"}, "l": {"gte": 1, "lte": 5}},
        "21": {"r": {"gte": "2016-01-02", "lt": "2016-02-03"},
               "l": [{"gt": 10, "lt": 20}, {"gte": 30, "lte": 40}]},
        "22": {"r": {"gte": "2016-02-01", "lte": "2016-02-02"}, "f": {"gte": 1.5, "lt": 2.5}},
        "23": {"r": {"gt": "2016-03-01"}, "l": {"lte": 10}, "f": {"gt": -1}}}


@pytest.fixture(scope="module")
def both(opensearch_url: str, base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with loaded_pair(base_url, opensearch_url, INDEX, MAPPING, DOCS) as pair:
        yield pair


def search(client: httpx.Client, body: dict[str, Any]) -> tuple[int, Any]:
    r = client.post(f"/{INDEX}/_search", content=orjson.dumps(body),
                    headers={"content-type": "application/json"})
    return r.status_code, r.json()


def hits(resp: Any) -> list[tuple[str, Any]]:
    return [(h["_id"], h.get("sort")) for h in resp["hits"]["hits"]]


QUERIES = [
    {"term": {"ip": "192.168.0.1"}}, {"term": {"ip": "::ffff:192.168.0.1"}},
    {"term": {"ip": "10.0.0.0/8"}}, {"terms": {"ip": ["::1", "fe80::/10"]}},
    {"range": {"ip": {"gte": "10.0.0.0", "lt": "192.168.0.7"}}},
    {"range": {"ip": {"gt": "::1", "lte": "10.0.0.6"}}}, {"match": {"ip": "fe80::1"}},
    {"exists": {"field": "ip"}},
    {"term": {"u": 18446744073709551615}}, {"range": {"u": {"gt": 9223372036854775807}}},
    {"range": {"u": {"lte": 10223372036854775807}}}, {"terms": {"u": [5, 7]}},
    {"term": {"l": 10}}, {"term": {"l": 11}}, {"term": {"l": -5}}, {"terms": {"l": [3, 35]}},
    {"range": {"l": {"gte": 4, "lte": 12}}}, {"range": {"l": {"gt": 5, "lt": 11}}},
    {"range": {"l": {"gte": 0, "lte": 6, "relation": "within"}}},
    {"range": {"l": {"gte": 2, "lte": 3, "relation": "contains"}}},
    {"range": {"r": {"gte": "2016-01-02", "lte": "2016-01-31"}}},
    {"range": {"r": {"gte": "2016-01-01", "lt": "2016-02-01", "relation": "within"}}},
    {"range": {"r": {"gte": "2016-01-15", "lte": "2016-01-16", "relation": "contains"}}},
    {"term": {"r": "2016-03-01T00:00:00.001Z"}}, {"term": {"r": "2016-03-01"}},
    {"term": {"f": 2.4}}, {"term": {"f": 2.5}}, {"range": {"f": {"gt": 0, "lt": 1}}},
    {"exists": {"field": "l"}},
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: orjson.dumps(q).decode())
def test_queries_on_ip_and_unsigned_long_match_the_same_documents(both, query):
    ours, theirs = (search(c, {"query": query, "size": 50}) for c in both)
    assert ours[0] == theirs[0] == 200
    assert sorted(i for i, _ in hits(ours[1])) == sorted(i for i, _ in hits(theirs[1]))


@pytest.mark.parametrize("field", ["ip", "u"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sorting_gives_the_same_order_and_sort_values(both, field, order):
    body = {"query": {"exists": {"field": field}}, "size": 50,
            "sort": [{field: order}, {"v": "asc"}]}
    ours, theirs = (search(c, body)[1] for c in both)
    assert [s[0] for _, s in hits(ours)] == [s[0] for _, s in hits(theirs)]


@pytest.mark.parametrize("field", ["ip", "u"])
def test_terms_keys_and_counts_agree(both, field):
    body = {"size": 0, "aggs": {"t": {"terms": {"field": field, "size": 20}}}}
    ours, theirs = (search(c, body)[1]["aggregations"]["t"]["buckets"] for c in both)
    assert ours == theirs


def test_ip_range_buckets_agree(both):
    body = {"size": 0, "aggs": {"r": {"ip_range": {"field": "ip", "ranges": [
        {"to": "10.0.0.6"}, {"from": "10.0.0.6", "to": "192.169.0.0"}, {"from": "192.169.0.0"},
        {"mask": "10.0.0.0/25"}, {"mask": "::/24"}, {"mask": "fe80::/10", "key": "link"}]},
        "aggs": {"s": {"sum": {"field": "v"}}}}}}
    ours, theirs = (search(c, body)[1]["aggregations"]["r"]["buckets"] for c in both)
    assert ours == theirs


def test_ip_range_keyed_agrees(both):
    body = {"size": 0, "aggs": {"r": {"ip_range": {"field": "ip", "keyed": True, "ranges": [
        {"to": "10.0.0.6"}, {"mask": "192.168.0.0/16"}]}}}}
    ours, theirs = (search(c, body)[1]["aggregations"]["r"]["buckets"] for c in both)
    assert ours == theirs


def test_composite_on_ip_pages_alike(both):
    spec = {"size": 3, "sources": [{"f": {"terms": {"field": "ip"}}}]}
    ours, theirs = (search(c, {"size": 0, "aggs": {"c": {"composite": spec}}})[1]
                    ["aggregations"]["c"] for c in both)
    assert ours == theirs
    spec["after"] = ours["after_key"]
    ours, theirs = (search(c, {"size": 0, "aggs": {"c": {"composite": spec}}})[1]
                    ["aggregations"]["c"] for c in both)
    assert ours == theirs


def test_fields_render_ip_values_alike(both):
    body = {"query": {"term": {"ip": "10.0.0.6"}}, "fields": ["ip"], "_source": False}
    ours, theirs = (search(c, body)[1]["hits"]["hits"][0]["fields"] for c in both)
    assert ours == theirs


@pytest.mark.parametrize("agg", [
    {"date_histogram": {"field": "r", "calendar_interval": "month",
                        "hard_bounds": {"min": "2015-12-01", "max": "2016-06-01"}}},
    {"date_histogram": {"field": "r", "calendar_interval": "week", "offset": "+1d",
                        "hard_bounds": {"min": "2015-12-01", "max": "2016-04-01"}}},
    {"histogram": {"field": "l", "interval": 5, "hard_bounds": {"min": 0, "max": 50}}},
    {"histogram": {"field": "l", "interval": 3, "offset": 1,
                   "hard_bounds": {"min": -10, "max": 45}}},
], ids=lambda a: orjson.dumps(a).decode())
def test_histograms_over_ranges_agree(both, agg):
    body = {"size": 0, "aggs": {"h": agg}}
    ours, theirs = (search(c, body)[1]["aggregations"]["h"]["buckets"] for c in both)
    assert ours == theirs
