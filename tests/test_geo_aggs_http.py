"""Geo aggregations, queries and the ``_geo_distance`` sort over HTTP (the ``elasticsearch``
client, real uvicorn + Ray shards), checked against the answers Elasticsearch's reference
documents for its ``museums`` example, and for the same answers with 1 and 3 shards."""
from __future__ import annotations

from collections.abc import Iterator

import elasticsearch
import httpx
import pytest
from elasticsearch import Elasticsearch

MUSEUMS = [
    ("POINT (4.912350 52.374081)", "NEMO Science Museum", "Amsterdam"),
    ("POINT (4.901618 52.369219)", "Museum Het Rembrandthuis", "Amsterdam"),
    ("POINT (4.914722 52.371667)", "Nederlands Scheepvaartmuseum", "Amsterdam"),
    ("POINT (4.405200 51.222900)", "Letterenhuis", "Antwerp"),
    ("POINT (2.336389 48.861111)", "Musée du Louvre", "Paris"),
    ("POINT (2.327000 48.860000)", "Musée d'Orsay", "Paris"),
]


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    yield client
    client.close()


def _museums(esc: Elasticsearch, index: str, shards: int) -> None:
    esc.indices.create(index=index, settings={"number_of_shards": shards}, mappings={
        "properties": {"location": {"type": "geo_point"}, "name": {"type": "text"},
                       "city": {"type": "keyword"}}})
    for i, (loc, name, city) in enumerate(MUSEUMS):
        esc.index(index=index, id=str(i), document={"location": loc, "name": name,
                                                    "city": city})
    esc.indices.refresh(index=index)


def test_geo_aggregations_answer_as_elasticsearchs_reference_and_for_any_shard_count(
        esc) -> None:
    _museums(esc, "museums", 3)
    _museums(esc, "museums1", 1)
    aggs = {"hash": {"geohash_grid": {"field": "location", "precision": 3}},
            "tile": {"geotile_grid": {"field": "location", "precision": 8}},
            "centroid": {"geo_centroid": {"field": "location"}},
            "cities": {"terms": {"field": "city"},
                       "aggs": {"c": {"geo_centroid": {"field": "location"}}}},
            "cells": {"geohash_grid": {"field": "location", "precision": 5},
                      "aggs": {"c": {"geo_centroid": {"field": "location"}},
                               "far": {"geo_distance": {"field": "location", "unit": "km",
                                                        "origin": "52.37,4.9",
                                                        "ranges": [{"from": 100}]}}}},
            "paris": {"geotile_grid": {"field": "location", "precision": 8, "bounds": {
                "top_left": [2, 49], "bottom_right": [3, 48]}}},
            "fullest": {"max_bucket": {"buckets_path": "hash>_count"}}}
    got = esc.search(index="museums", size=0, aggs=aggs)["aggregations"]
    assert got == esc.search(index="museums1", size=0, aggs=aggs)["aggregations"]
    assert got["hash"]["buckets"] == [{"key": "u17", "doc_count": 3},
                                      {"key": "u09", "doc_count": 2},
                                      {"key": "u15", "doc_count": 1}]
    assert got["tile"]["buckets"] == [{"key": "8/131/84", "doc_count": 3},
                                      {"key": "8/129/88", "doc_count": 2},
                                      {"key": "8/131/85", "doc_count": 1}]
    assert got["centroid"]["count"] == 6
    assert got["centroid"]["location"] == pytest.approx(
        {"lat": 51.00982965203002, "lon": 3.9662131341174245}, abs=1e-9)
    assert got["paris"]["buckets"] == [{"key": "8/129/88", "doc_count": 2}]
    assert got["fullest"] == {"value": 3.0, "keys": ["u17"]}
    cells = [(b["key"], b["doc_count"], b["c"]["count"], b["far"]["buckets"][0]["doc_count"])
             for b in got["cells"]["buckets"]]      # ties: the larger cell code first, as ES
    assert cells == [("u173z", 3, 3, 0), ("u155k", 1, 1, 1), ("u09tv", 1, 1, 1),
                     ("u09tu", 1, 1, 1)]
    paris = next(b for b in got["cities"]["buckets"] if b["key"] == "Paris")
    assert paris["c"]["location"] == pytest.approx(
        {"lat": 48.86055548675358, "lon": 2.3316944623366}, abs=1e-9)


def test_geo_bounds_are_the_quantized_extremes_and_wrap_the_dateline(esc) -> None:
    _museums(esc, "museums", 2)
    got = esc.search(index="museums", size=0, query={"match": {"name": "musée"}},
                     aggs={"b": {"geo_bounds": {"field": "location"}}})["aggregations"]["b"]
    assert got["bounds"]["top_left"] == pytest.approx(
        {"lat": 48.86111099738628, "lon": 2.3269999679178}, abs=1e-12)
    assert got["bounds"]["bottom_right"] == pytest.approx(
        {"lat": 48.85999997612089, "lon": 2.3363889567553997}, abs=1e-12)
    esc.index(index="museums", id="fiji", document={"location": {"lat": -17.8, "lon": 178.1}},
              refresh=True)
    esc.index(index="museums", id="samoa", document={"location": [-172.1, -13.8]},
              refresh=True)
    q = {"ids": {"values": ["fiji", "samoa"]}}
    wrapped = esc.search(index="museums", size=0, query=q,
                         aggs={"b": {"geo_bounds": {"field": "location"}}})
    assert wrapped["aggregations"]["b"]["bounds"]["top_left"]["lon"] == pytest.approx(178.1,
                                                                                       abs=1e-6)
    flat = esc.search(index="museums", size=0, query=q, aggs={"b": {"geo_bounds": {
        "field": "location", "wrap_longitude": False}}})
    assert flat["aggregations"]["b"]["bounds"]["top_left"]["lon"] == pytest.approx(-172.1,
                                                                                   abs=1e-6)
    empty = esc.search(index="museums", size=0, query={"match_none": {}},
                       aggs={"b": {"geo_bounds": {"field": "location"}}})
    assert empty["aggregations"]["b"] == {}


def test_grid_size_keeps_the_most_populated_cells(esc) -> None:
    _museums(esc, "museums", 3)
    got = esc.search(index="museums", size=0, aggs={"g": {"geohash_grid": {
        "field": "location", "precision": 3, "size": 2}}})["aggregations"]["g"]["buckets"]
    assert [b["key"] for b in got] == ["u17", "u09"]


@pytest.mark.parametrize("agg,reason", [
    ({"geohash_grid": {"field": "location", "precision": 13}},
     "Invalid geohash aggregation precision of 13. Must be between 1 and 12."),
    ({"geotile_grid": {"field": "location", "precision": 30}},
     "Invalid geotile_grid precision of 30. Must be between 0 and 29."),
    ({"geo_distance": {"field": "location", "ranges": [{"to": 1}]}}, "Missing [origin]"),
    ({"geo_centroid": {"field": "city"}}, "is not supported for aggregation [geo_centroid]"),
    ({"geo_bounds": {"field": "location", "bogus": 1}}, "unknown field [bogus]"),
])
def test_bad_geo_aggregations_are_refused_by_name(esc, agg, reason) -> None:
    _museums(esc, "museums", 2)
    with pytest.raises(elasticsearch.BadRequestError) as err:
        esc.search(index="museums", size=0, aggs={"a": agg})
    assert reason in str(err.value.body)


def test_geo_queries_and_distance_sort_through_the_client(esc) -> None:
    _museums(esc, "museums", 3)
    near = esc.search(index="museums", query={"geo_distance": {
        "distance": "10km", "location": "52.37,4.9"}})
    assert sorted(h["_source"]["name"] for h in near["hits"]["hits"]) == sorted(
        n for _, n, c in MUSEUMS if c == "Amsterdam")
    box = esc.search(index="museums", query={"geo_bounding_box": {"location": {
        "wkt": "BBOX (2, 3, 49, 48)"}}})
    assert {h["_id"] for h in box["hits"]["hits"]} == {"4", "5"}
    ranked = esc.search(index="museums", sort=[{"_geo_distance": {
        "location": [2.33, 48.86], "unit": "km"}}])["hits"]["hits"]
    assert [h["_id"] for h in ranked][:2] in (["5", "4"], ["4", "5"])
    assert ranked[0]["sort"][0] < ranked[-1]["sort"][0]
    assert ranked[-1]["_source"]["city"] == "Amsterdam"


def test_top_hits_sort_by_geo_distance_and_geo_queries_explain(esc) -> None:
    _museums(esc, "museums", 2)
    got = esc.search(index="museums", size=0, aggs={"cities": {
        "terms": {"field": "city"}, "aggs": {"nearest": {"top_hits": {"size": 1, "sort": [
            {"_geo_distance": {"location": [4.9, 52.37], "unit": "km"}}]}}}}})
    nearest = {b["key"]: b["nearest"]["hits"]["hits"][0]["_id"]
               for b in got["aggregations"]["cities"]["buckets"]}
    assert nearest == {"Amsterdam": "1", "Paris": "4", "Antwerp": "3"}
    esc.index(index="museums", id="lost", document={"city": "Paris"}, refresh=True)
    farthest = esc.search(index="museums", size=0, query={"term": {"city": "Paris"}}, aggs={
        "far": {"top_hits": {"size": 1, "sort": [{"_geo_distance": {
            "location": [4.9, 52.37], "order": "desc"}}]}}})["aggregations"]["far"]
    assert farthest["hits"]["hits"][0]["sort"] == ["Infinity"]   # no point: +Infinity
    explained = esc.search(index="museums", explain=True, query={"geo_distance": {
        "distance": "1000km", "location": [4.9, 52.37], "_name": "ring"}})
    hits = explained["hits"]["hits"]
    assert len(hits) == 6 and all(h["matched_queries"] == ["ring"] for h in hits)
    assert all(h["_explanation"]["value"] == 1.0 for h in hits)


def test_a_scroll_sorted_by_geo_distance_pages_through_the_same_order(esc) -> None:
    _museums(esc, "museums", 3)
    esc.index(index="museums", id="nowhere", document={"name": "no point"}, refresh=True)
    sort = [{"_geo_distance": {"location": "48.86,2.33", "order": "desc", "unit": "mi"}}]
    full = [h["_id"] for h in esc.search(index="museums", sort=sort, size=20)["hits"]["hits"]]
    assert full[0] == "nowhere"          # +Infinity: first when descending, as Elasticsearch
    page = esc.search(index="museums", sort=sort, size=2, scroll="1m")
    seen = [h["_id"] for h in page["hits"]["hits"]]
    while True:
        page = esc.scroll(scroll_id=page["_scroll_id"], scroll="1m")
        if not page["hits"]["hits"]:
            break
        seen += [h["_id"] for h in page["hits"]["hits"]]
    esc.clear_scroll(scroll_id=page["_scroll_id"])
    assert seen == full


def test_geo_queries_and_sorts_reach_points_in_nested_documents(esc) -> None:
    esc.indices.create(index="trips", settings={"number_of_shards": 2}, mappings={
        "properties": {"stops": {"type": "nested",
                                 "properties": {"at": {"type": "geo_point"}}}}})
    esc.index(index="trips", id="ams", document={"stops": [{"at": "52.37,4.9"},
                                                           {"at": "51.22,4.40"}]})
    esc.index(index="trips", id="par", document={"stops": [{"at": "48.86,2.33"}]})
    esc.indices.refresh(index="trips")
    got = esc.search(index="trips", query={"nested": {"path": "stops", "query": {
        "geo_distance": {"distance": "20km", "stops.at": [4.4, 51.2]}},
        "inner_hits": {"sort": [{"_geo_distance": {"stops.at": [4.4, 51.2], "unit": "km"}}]}}})
    hits = got["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["ams"]
    inner = hits[0]["inner_hits"]["stops"]["hits"]["hits"]
    assert len(inner) == 1 and inner[0]["sort"][0] < 20
