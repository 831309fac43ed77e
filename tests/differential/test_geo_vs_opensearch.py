"""Geo queries, the ``_geo_distance`` sort and the geo aggregations against the real OpenSearch
node: the same points in both (OpenSearch in 1 shard, ours in 3), the same requests, and the
same hits, sort values (within 1e-6 relative), buckets, keys and counts, and centroids within
1e-6. (The peer node runs without OpenSearch's ``geo`` module, so ``geohash_grid``,
``geotile_grid`` and ``geo_bounds`` are checked against Elasticsearch's documented answers in
``tests/test_geo_aggs.py`` instead.)"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from .loading import loaded_pair

INDEX = "diff_geo"
MAPPING = {"properties": {"loc": {"type": "geo_point"}, "n": {"type": "long"}}}
DOCS = {
    "amsterdam": {"loc": {"lat": 52.374081, "lon": 4.912350}, "n": 1},
    "antwerp": {"loc": "51.222900,4.405200", "n": 2},
    "paris": {"loc": [2.336389, 48.861111], "n": 3},
    "brussels": {"loc": "POINT (4.351697 50.846557)", "n": 4},
    "ams_museum": {"loc": "u173zy3j0cqv", "n": 5},
    "fiji": {"loc": {"lat": -17.8, "lon": 178.1}, "n": 6},
    "samoa": {"loc": {"lat": -13.8, "lon": -172.1}, "n": 7},
    "two": {"loc": [[4.9, 52.3], [-73.98, 40.75]], "n": 8},
    "ny": {"loc": {"lat": 40.7143528, "lon": -74.0059731}, "n": 9},
    "none": {"n": 10},
    "edge": {"loc": {"lat": 50.0, "lon": 4.0}, "n": 11},
    "cell": {"loc": "u", "n": 12},
}


@pytest.fixture(scope="module")
def both(opensearch_url: str, base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with loaded_pair(base_url, opensearch_url, INDEX, MAPPING, DOCS) as pair:
        yield pair


def search(client: httpx.Client, body: dict[str, Any]) -> tuple[int, Any]:
    r = client.post(f"/{INDEX}/_search", content=orjson.dumps(body),
                    headers={"content-type": "application/json"})
    return r.status_code, r.json()


def ids(resp: Any) -> list[str] | str:
    if "error" in resp:
        return resp["error"]["root_cause"][0]["type"]
    return sorted(h["_id"] for h in resp["hits"]["hits"])


CENTRE_FORMS = [{"lat": 52.0, "lon": 4.5}, [4.5, 52.0], "52.0,4.5", "u15pmus",
                "POINT (4.5 52.0)"]
QUERIES = [
    *({"geo_distance": {"distance": "200km", "loc": c}} for c in CENTRE_FORMS),
    {"geo_distance": {"distance": 120, "unit": "mi", "loc": [4.5, 52.0]}},
    {"geo_distance": {"distance": "100nmi", "loc": [4.5, 52.0], "distance_type": "plane"}},
    {"geo_distance": {"distance": "1000000ft", "loc": [4.5, 52.0], "_name": "n", "boost": 2}},
    {"geo_distance": {"distance": "2000km", "loc": {"lat": -15, "lon": 179}}},
    {"geo_distance": {"distance": "2000km", "loc": {"lat": 95, "lon": 0},
                      "validation_method": "COERCE"}},
    {"geo_distance": {"distance": "1km", "other": [0, 0], "ignore_unmapped": True}},
    {"geo_distance": {"distance": "2000km", "loc": {"lat": 95, "lon": 0},
                      "validation_method": "IGNORE_MALFORMED"}},
    {"geo_distance": {"distance": "2000km", "loc": {"lat": 45, "lon": 190},
                      "validation_method": "IGNORE_MALFORMED"}},
    {"geo_bounding_box": {"loc": {"top": 100, "left": 4, "bottom": 50, "right": 5},
                          "validation_method": "IGNORE_MALFORMED"}},
    {"geo_polygon": {"loc": {"points": [[3, 50], [6, 50], [6, 95]]},
                     "validation_method": "IGNORE_MALFORMED"}},
    {"geo_polygon": {"loc": {"points": [[3, 50], [6, 50], [6, 95]]},
                     "validation_method": "COERCE"}},
    {"geo_bounding_box": {"loc": {"top_left": {"lat": 53, "lon": 4},
                                  "bottom_right": {"lat": 50, "lon": 5}}}},
    {"geo_bounding_box": {"loc": {"top_right": [5, 53], "bottom_left": [4, 50]}}},
    {"geo_bounding_box": {"loc": {"top": 53, "left": 4, "bottom": 50, "right": 5}}},
    {"geo_bounding_box": {"loc": {"wkt": "BBOX (4, 5, 53, 50)"}}},
    {"geo_bounding_box": {"loc": {"top_left": "u1", "bottom_right": "u1"}}},
    {"geo_bounding_box": {"loc": {"top_left": "POINT (170 0)",
                                  "bottom_right": "POINT (-170 -20)"}}},
    {"geo_bounding_box": {"loc": {"top_left": [4.0, 50.0], "bottom_right": [5.0, 49.0]}}},
    {"geo_bounding_box": {"loc": {"top_left": [3.0, 51.0], "bottom_right": [4.0, 50.0]}}},
    {"geo_bounding_box": {"loc": {"top_left": [-200, 53], "bottom_right": [5, 50]},
                          "validation_method": "COERCE"}},
    {"geo_polygon": {"loc": {"points": [[3, 50], [6, 50], [6, 53], [3, 53]]}}},
    {"geo_polygon": {"loc": {"points": [{"lat": 40, "lon": -75}, {"lat": 41, "lon": -73},
                                        {"lat": 40, "lon": -73}]}}},
    {"bool": {"must_not": {"geo_distance": {"distance": "500km", "loc": "52,4.5"}}}},
]


@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
def test_each_geo_query_form_matches_the_same_documents(both, query) -> None:
    ours, theirs = both
    body = {"query": query, "size": 20}
    (s1, a), (s2, b) = search(ours, body), search(theirs, body)
    assert (s1, ids(a)) == (s2, ids(b)), (a, b)


ERRORS = [
    {"geo_distance": {"distance": "10km", "loc": {"lat": 95, "lon": 0}}},
    {"geo_distance": {"distance": "10km", "missing_field": [0, 0]}},
    {"geo_bounding_box": {"loc": {"top_left": [4, 50], "bottom_right": [5, 53]}}},
    {"geo_bounding_box": {"loc": {"top_left": [4, 50], "bottom_right": [5, 50]}}},
    {"geo_bounding_box": {"loc": {"top_left": [4, 51], "bottom_right": [4, 50]}}},
    {"geo_distance": {"distance": "10km", "n": [0, 0]}},
    {"geo_bounding_box": {"loc": {"top": 100, "left": 4, "bottom": 50, "right": 200}}},
    {"geo_polygon": {"loc": {"points": [[0, 0], [1, 100], [2, 0]]}}},
    {"geo_distance": {"loc": [0, 0]}},
    {"geo_bounding_box": {"loc": {"top_left": [4, 50]}}},
    {"geo_polygon": {"loc": {"points": [[0, 0], [1, 1]]}}},
]


@pytest.mark.parametrize("query", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_invalid_geo_queries_fail_with_the_same_status_type_and_reason(both, query) -> None:
    ours, theirs = both
    (s1, a), (s2, b) = search(ours, {"query": query}), search(theirs, {"query": query})
    assert s1 == s2 == 400
    mine, want = a["error"]["root_cause"][0], b["error"]["root_cause"][0]
    assert mine["type"] == want["type"]
    if "Field [n]" not in mine["reason"]:   # OpenSearch prints a Java object there
        assert mine["reason"] == want["reason"]


SORTS = [
    {"loc": [4.5, 52.0], "order": "asc", "unit": "km"},
    {"loc": "52.0,4.5", "order": "desc"},
    {"loc": [[4.5, 52.0], [-74, 40.7]], "unit": "mi", "mode": "max"},
    {"loc": {"lat": 52.0, "lon": 4.5}, "mode": "avg", "distance_type": "plane", "unit": "NM"},
    {"loc": "u15pmus", "mode": "median", "unit": "m"},
    {"loc": [0.0, 45.0], "unit": "km"},
    {"loc": {"lat": 95, "lon": 4.5}, "validation_method": "COERCE"},
]


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return a == b


@pytest.mark.parametrize("sort", SORTS, ids=[str(i) for i in range(len(SORTS))])
def test_geo_distance_sort_gives_the_same_order_and_values(both, sort) -> None:
    ours, theirs = both
    body = {"sort": [{"_geo_distance": sort}, {"n": "asc"}], "size": 20}
    (s1, a), (s2, b) = search(ours, body), search(theirs, body)
    assert s1 == s2 == 200, (a, b)
    got = [(h["_id"], h["sort"]) for h in a["hits"]["hits"]]
    want = [(h["_id"], h["sort"]) for h in b["hits"]["hits"]]
    assert [g[0] for g in got] == [w[0] for w in want]
    assert all(_close(x, y) for g, w in zip(got, want) for x, y in zip(g[1], w[1])), (got, want)


def test_geo_distance_sort_pages_with_search_after(both) -> None:
    ours, _ = both
    sort = [{"_geo_distance": {"loc": [4.5, 52.0], "unit": "km"}}, {"n": "asc"}]
    _, full = search(ours, {"sort": sort, "size": 20})
    seen, after = [], None
    while True:
        body: dict[str, Any] = {"sort": sort, "size": 3}
        if after is not None:
            body["search_after"] = after
        _, page = search(ours, body)
        if not page["hits"]["hits"]:
            break
        seen += [h["_id"] for h in page["hits"]["hits"]]
        after = page["hits"]["hits"][-1]["sort"]
    assert seen == [h["_id"] for h in full["hits"]["hits"]]


AGGS = [
    {"geo_distance": {"field": "loc", "origin": "52.3760, 4.894",
                      "ranges": [{"to": 100000}, {"from": 100000, "to": 300000},
                                 {"from": 300000}]}},
    {"geo_distance": {"field": "loc", "origin": {"lat": 52.376, "lon": 4.894}, "unit": "km",
                      "distance_type": "plane", "keyed": True,
                      "ranges": [{"to": 100, "key": "near"}, {"from": 100, "to": 1000},
                                 {"from": 1000}]}},
    {"geo_centroid": {"field": "loc"}},
    {"terms": {"field": "n", "size": 20}, "aggs": {"c": {"geo_centroid": {"field": "loc"}}}},
    {"geo_distance": {"field": "loc", "origin": [4.894, 52.376], "unit": "mi",
                      "ranges": [{"from": 10, "to": 500}]},
     "aggs": {"c": {"geo_centroid": {"field": "loc"}}}},
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool):
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return a == b


@pytest.mark.parametrize("agg", AGGS, ids=[str(i) for i in range(len(AGGS))])
def test_each_geo_aggregation_gives_the_same_buckets_and_values(both, agg) -> None:
    ours, theirs = both
    body = {"size": 0, "aggs": {"a": agg}}
    (s1, a), (s2, b) = search(ours, body), search(theirs, body)
    assert s1 == s2 == 200, (a, b)
    assert _same(a["aggregations"], b["aggregations"]), (a["aggregations"], b["aggregations"])


def test_geo_aggregations_of_no_points_have_elasticsearchs_empty_shapes(both) -> None:
    ours, theirs = both
    body = {"size": 0, "query": {"ids": {"values": ["none"]}},
            "aggs": {"c": {"geo_centroid": {"field": "loc"}}}}
    (_, a), (_, b) = search(ours, body), search(theirs, body)
    assert a["aggregations"] == b["aggregations"]


BAD_SORTS = [
    {"missing_field": [0, 0]},
    {"n": [0, 0]},
    {"loc": [0, 0], "mode": "sum"},
    {"loc": [0, 0], "unit": "parsecs"},
    {"loc": {"lat": 95, "lon": 0}},
]


@pytest.mark.parametrize("sort", BAD_SORTS, ids=[str(i) for i in range(len(BAD_SORTS))])
def test_bad_geo_distance_sorts_fail_as_client_errors(both, sort) -> None:
    """OpenSearch fails them all; a sort on a ``long`` field it fails with a 500, which we
    answer with a 400 naming the field (no 5xx for what a client sends)."""
    ours, theirs = both
    body = {"sort": [{"_geo_distance": sort}]}
    (s1, a), (s2, b) = search(ours, body), search(theirs, body)
    assert s1 == 400 and s2 >= 400, (a, b)


def test_unmapped_geo_sort_with_ignore_unmapped_sorts_every_document_last(both) -> None:
    ours, theirs = both
    body = {"sort": [{"_geo_distance": {"other": [0, 0], "ignore_unmapped": True}},
                     {"n": "asc"}], "size": 20}
    (s1, a), (s2, b) = search(ours, body), search(theirs, body)
    assert s1 == s2 == 200
    assert [(h["_id"], h["sort"]) for h in a["hits"]["hits"]] == \
        [(h["_id"], h["sort"]) for h in b["hits"]["hits"]]
