"""``geo_point`` and ``binary`` fields: every point format, ES's errors for bad values,
``exists``, and the queries Elasticsearch refuses on them — through the real coordinator and
shards in this process, on 1 and 3 shards. The pure parsers are tested without any cluster."""
from __future__ import annotations

import orjson
import pytest

from inprocess import LocalCluster
from shardsearch.api.errors import envelope
from shardsearch.cluster.engine.binary import BinaryValueError, binary_value
from shardsearch.cluster.engine.geo import GeoValueError, decode_geohash, parse_point

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


@pytest.mark.parametrize("value", [
    {"lat": 41.12, "lon": -71.34}, "41.12,-71.34", [-71.34, 41.12], "POINT (-71.34 41.12)",
    {"type": "Point", "coordinates": [-71.34, 41.12]}, [-71.34, 41.12, 5.0],
    {"lat": "41.12", "lon": "-71.34"}])
def test_every_point_format_gives_lat_lon(value) -> None:
    assert parse_point(value) == pytest.approx((41.12, -71.34))


def test_geohash_decodes_to_its_cells_south_west_corner() -> None:
    assert decode_geohash("drm3btev3e86") == pytest.approx((41.12, -71.34), abs=1e-6)
    assert parse_point("u") == (45.0, 0.0)


@pytest.mark.parametrize("value,text", [
    ({"lat": 1}, "field [lon] missing"), ({"lon": 1}, "field [lat] missing"),
    ("1,2,3,4", "expected 2 or 3 coordinates but found: [4]"),
    ({"type": "LineString", "coordinates": [1, 2]}, "[type] for geo_point can only be 'Point'"),
    ("!!", "unsupported symbol [!] in geohash [!!]")])
def test_bad_points_fail_with_elasticsearch_texts(value, text) -> None:
    with pytest.raises(GeoValueError, match=__import__("re").escape(text)):
        parse_point(value)


def test_z_value_refused_when_ignore_z_value_is_false() -> None:
    with pytest.raises(GeoValueError, match="ignore_z_value"):
        parse_point([1.0, 2.0, 3.0], ignore_z=False)


def test_binary_values_must_be_base64() -> None:
    assert binary_value("YWJjZGUxMjM0") == "YWJjZGUxMjM0"
    with pytest.raises(BinaryValueError, match="Illegal base64 character 2d"):
        binary_value("a-b")


@pytest.fixture(scope="module", params=[1, 3])
def c(request) -> LocalCluster:
    cl = LocalCluster().create("gb", shards=request.param, mappings={"properties": {
        "loc": {"type": "geo_point"}, "bin": {"type": "binary"},
        "lax": {"type": "geo_point", "ignore_malformed": True},
        "nv": {"type": "geo_point", "null_value": "1,2"}}})
    docs = {"1": {"loc": {"lat": 1, "lon": 2}, "bin": "YWJj"},
            "2": {"loc": ["1,2", [3, 4]], "lax": "nowhere!"},
            "3": {"loc": None, "nv": None, "lax": [10, 20]},
            "4": {"other": 1}}
    assert cl.index("gb", docs)["errors"] is False
    return cl


def ids(c: LocalCluster, query: dict) -> list[str]:
    return sorted(c.ids("gb", {"query": query, "size": 50}))


def test_exists_finds_documents_with_a_point_or_bytes(c) -> None:
    assert ids(c, {"exists": {"field": "loc"}}) == ["1", "2"]
    assert ids(c, {"exists": {"field": "bin"}}) == ["1"]


def test_null_value_stands_for_null_and_ignore_malformed_drops_bad_points(c) -> None:
    assert ids(c, {"exists": {"field": "nv"}}) == ["3"]
    assert ids(c, {"exists": {"field": "lax"}}) == ["3"]


def test_source_keeps_the_value_as_sent(c) -> None:
    hits = c.search("gb", {"query": {"ids": {"values": ["2"]}}})["hits"]["hits"]
    assert hits[0]["_source"]["loc"] == ["1,2", [3, 4]]


def refused(fn, *args) -> tuple[int, str]:
    with pytest.raises(Exception) as err:
        fn(*args)
    body = envelope(err.value)
    return body["status"], orjson.dumps(body).decode()


def test_bad_point_fails_its_document(c) -> None:
    out = c.index("gb", {"9": {"loc": {"lat": 91, "lon": 0}}})
    err = out["items"][0]["index"]["error"]
    assert err["type"] == "mapper_parsing_exception"
    assert err["caused_by"]["reason"] == "illegal latitude value [91.0]"


def test_bad_base64_fails_its_document(c) -> None:
    err = c.index("gb", {"9": {"bin": "not base64!"}})["items"][0]["index"]["error"]
    assert err["type"] == "mapper_parsing_exception"
    assert "Illegal base64 character" in err["caused_by"]["reason"]


@pytest.mark.parametrize("query,text", [
    ({"term": {"bin": "YWJj"}}, "Binary fields do not support searching"),
    ({"match": {"loc": "1,2"}}, "Geometry fields do not support exact searching"),
    ({"range": {"loc": {"gte": 1}}}, "Field [loc] of type [geo_point] does not support range"),
    ({"bool": {"filter": [{"terms": {"bin": ["x"]}}]}}, "Binary fields do not support")])
def test_term_level_queries_on_binary_and_geo_point_are_refused(c, query, text) -> None:
    status, body = refused(c.search, "gb", {"query": query})
    assert status == 400 and text in body and "query_shard_exception" in body


def test_fields_render_points_as_geojson_whatever_their_source_form(c) -> None:
    hits = c.search("gb", {"query": {"ids": {"values": ["1", "2"]}}, "fields": ["loc"],
                           "sort": ["_doc"]})["hits"]["hits"]
    got = {h["_id"]: h["fields"]["loc"] for h in hits}
    assert got["1"] == [{"type": "Point", "coordinates": [2.0, 1.0]}]
    assert got["2"] == [{"type": "Point", "coordinates": [2.0, 1.0]},
                        {"type": "Point", "coordinates": [3.0, 4.0]}]


@pytest.mark.parametrize("body,text", [
    ({"sort": ["loc"]}, "can't sort on geo_point field without using specific sorting"),
    ({"sort": ["bin"]}, "Field [bin] of type [binary] does not support sorting"),
    ({"aggs": {"a": {"terms": {"field": "loc"}}}},
     "Field [loc] of type [geo_point] is not supported for aggregation [terms]"),
    ({"aggs": {"a": {"max": {"field": "bin"}}}},
     "Field [bin] of type [binary] is not supported for aggregation [max]"),
    ({"aggs": {"a": {"geo_bounds": {"field": "bin"}}}},
     "Field [bin] of type [binary] is not supported for aggregation [geo_bounds]"),
    ({"query": {"geo_shape": {"loc": {"shape": {"type": "point", "coordinates": [0, 0]}}}}},
     "[geo_shape] query is not supported")])
def test_sorts_aggregations_and_geo_shape_not_built_are_refused(c, body, text) -> None:
    status, out = refused(c.search, "gb", body)
    assert status == 400 and text in out


def test_value_count_counts_points(c) -> None:
    aggs = c.search("gb", {"size": 0, "aggs": {"n": {"value_count": {"field": "loc"}}}})
    assert aggs["aggregations"]["n"]["value"] == 3
