"""Options inside a search that were accepted and ignored, now built or refused by name
(README, "What we refuse"): a sort's ``mode``, ``format`` and ``numeric_type`` on keywords and
numbers, an aggregation's ``format`` on a keyword and ``show_term_doc_count_error``, and the
``format`` and ``pretty`` URL parameters of every route; ``fields``' ``include_unmapped``,
the formats ``fields`` and ``docvalue_fields`` take (each list in Elasticsearch's own words) and
objects mapped ``enabled: false``. Pure checks first, then through the service (real Ray, real
uvicorn).
"""
from __future__ import annotations

import json

import httpx
import pytest

from shardsearch.api.guards import format_refusal
from shardsearch.cluster.engine.field_types import FieldType
from shardsearch.cluster.engine.sorting import (SortField, check_sortable, parse_sort,
                                                sort_value_out)
from shardsearch.cluster.errors import IllegalArgument, SearchError

KEYWORD = FieldType("tag", "keyword")
LONG = FieldType("n", "long")
DOUBLE = FieldType("x", "double")
DATE = FieldType("d", "date")


def _sort(opts: dict) -> SortField:
    (sf,) = parse_sort([{"f": opts}])
    return sf


@pytest.mark.parametrize("mode", ["avg", "sum", "median"])
def test_a_keyword_sort_cannot_average_add_or_take_a_median(mode) -> None:
    with pytest.raises(IllegalArgument, match="only support AVG, MEDIAN and SUM on number"):
        check_sortable(_sort({"mode": mode}), KEYWORD, "i")
    check_sortable(_sort({"mode": mode}), LONG, "i")


def test_a_keyword_sort_refuses_a_format_as_elasticsearch_does() -> None:
    with pytest.raises(IllegalArgument, match=r"Field \[f\] of type \[keyword\] does not "
                                              "support custom formats"):
        check_sortable(_sort({"format": "yyyy"}), KEYWORD, "i")


@pytest.mark.parametrize("nt,ft", [("double", KEYWORD), ("date", LONG), ("long", DOUBLE),
                                   ("double", DATE), ("bogus", LONG)])
def test_a_numeric_type_we_do_not_build_is_refused_naming_it(nt, ft) -> None:
    with pytest.raises(IllegalArgument, match="numeric_type"):
        check_sortable(_sort({"numeric_type": nt}), ft, "i")


@pytest.mark.parametrize("nt,ft", [("double", LONG), ("double", DOUBLE), ("long", LONG),
                                   ("long", DATE), ("date", DATE), ("date_nanos", DATE)])
def test_the_numeric_types_we_build_are_accepted(nt, ft) -> None:
    check_sortable(_sort({"numeric_type": nt}), ft, "i")


def test_numeric_type_double_prints_an_integer_fields_sort_values_as_doubles() -> None:
    assert sort_value_out(_sort({"numeric_type": "double"}), "int", 5, LONG) == 5.0
    assert isinstance(sort_value_out(_sort({"numeric_type": "double"}), "int", 5, LONG), float)
    assert isinstance(sort_value_out(_sort({}), "int", 5, LONG), int)


@pytest.mark.parametrize("path,query,refused", [
    ("/i/_doc/1", b"format=yaml", True), ("/i/_search", b"format=cbor", True),
    ("/_cluster/health", b"format=smile", True), ("/i/_doc/1", b"format=json", False),
    ("/_cat/indices", b"format=yaml", False), ("/i/_doc/1", b"pretty", False),
    ("/i/_doc/1", b"format=YAML", True), ("/i/_doc/1", b"format=JSON", False),
    ("/i/_search", b"format=txt", False)])
def test_only_yaml_cbor_and_smile_are_refused_outside_cat_without_case(path, query,
                                                                       refused) -> None:
    """Elasticsearch's ``XContentType.fromFormat`` ignores case and answers JSON for a name it
    does not know; only its other output formats are refused here."""
    reason = format_refusal(path, query)
    assert (reason is not None) == refused
    if refused:
        assert reason.startswith("[format=")


@pytest.fixture
def opt(es: httpx.Client) -> httpx.Client:
    es.put("/opt", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0},
                         "mappings": {"properties": {"tag": {"type": "keyword"},
                                                     "n": {"type": "long"}}}})
    lines = []
    for i in range(6):
        lines += [json.dumps({"index": {"_index": "opt", "_id": str(i)}}),
                  json.dumps({"tag": f"t{i % 3}", "n": i})]
    r = es.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]
    return es


def test_a_keyword_sort_with_mode_avg_is_a_400_through_the_service(opt) -> None:
    r = opt.post("/opt/_search", json={"sort": [{"tag": {"mode": "avg"}}]})
    assert r.status_code == 400
    assert r.json()["error"]["root_cause"][0]["type"] == "query_shard_exception"


def test_numeric_type_double_sorts_a_long_field_with_double_sort_values(opt) -> None:
    r = opt.post("/opt/_search", json={"sort": [{"n": {"order": "desc",
                                                       "numeric_type": "double"}}],
                                       "size": 2})
    assert [h["sort"] for h in r.json()["hits"]["hits"]] == [[5.0], [4.0]]
    assert r.text.count("[5.0]") == 1


def test_a_format_on_a_keyword_aggregation_is_refused_as_elasticsearch_does(opt) -> None:
    r = opt.post("/opt/_search", json={"size": 0, "aggs": {
        "a": {"terms": {"field": "tag", "format": "0.0"}}}})
    assert r.status_code == 400
    assert "does not support custom formats" in r.json()["error"]["root_cause"][0]["reason"]


def test_show_term_doc_count_error_adds_each_buckets_error_bound(opt) -> None:
    def buckets(flag) -> list:
        aggs = {"a": {"terms": {"field": "tag", "show_term_doc_count_error": flag}}}
        return opt.post("/opt/_search", json={"size": 0, "aggs": aggs}).json()[
            "aggregations"]["a"]["buckets"]
    assert buckets(True)[0] == {"key": "t0", "doc_count": 2, "doc_count_error_upper_bound": 0}
    assert buckets(False)[0] == {"key": "t0", "doc_count": 2}
    assert buckets("false")[0] == {"key": "t0", "doc_count": 2}


def test_format_yaml_on_a_document_get_is_refused_naming_it(opt) -> None:
    r = opt.get("/opt/_doc/1", params={"format": "yaml"})
    assert r.status_code == 400 and "[format=yaml]" in r.json()["error"]["reason"]


@pytest.mark.parametrize("fmt", ["JSON", "txt", "Json"])
def test_format_json_in_any_case_or_an_unknown_name_answers_json(opt, fmt) -> None:
    for path in ("/opt/_doc/1", "/opt/_search", "/_cluster/health"):
        r = opt.get(path, params={"format": fmt})
        assert r.status_code == 200 and r.headers["content-type"].startswith(
            "application/json"), (path, r.text)


@pytest.mark.parametrize("path", ["/opt/_doc/1", "/opt/_mapping", "/_cluster/health",
                                  "/opt/_count", "/nothing/_doc/1"])
def test_pretty_indents_the_answer_of_every_route(opt, path) -> None:
    plain, pretty = opt.get(path), opt.get(path, params={"pretty": "true"})
    assert "\n" not in plain.text and "\n  " in pretty.text
    assert pretty.status_code == plain.status_code
    assert opt.get(path, params={"pretty": "false"}).text.count("\n") == 0


_NDJSON = {"content-type": "application/x-ndjson"}


def _cursor_and_multi_requests(es: httpx.Client) -> list[tuple[str, str, dict]]:
    """One request per route that used to indent on its own (search, scroll, PIT, mget,
    msearch, msearch template, cluster settings): each must follow ``pretty`` as the edge
    reads it."""
    scroll = es.post("/opt/_search", params={"scroll": "1m"}, json={"size": 1}).json()
    pit = es.post("/opt/_pit", params={"keep_alive": "1m"}).json()["id"]
    return [("POST", "/opt/_search", {"json": {"size": 1}}),
            ("POST", "/_search/scroll", {"json": {"scroll_id": scroll["_scroll_id"]}}),
            ("GET", "/_search/point_in_time/_all", {}),
            ("DELETE", "/_pit", {"json": {"id": pit}}),
            ("DELETE", "/_search/scroll", {"json": {"scroll_id": scroll["_scroll_id"]}}),
            ("POST", "/_mget", {"json": {"docs": [{"_index": "opt", "_id": "1"}]}}),
            ("POST", "/_msearch", {"content": '{"index": "opt"}\n{"size": 1}\n',
                                   "headers": _NDJSON}),
            ("POST", "/_msearch/template", {
                "content": '{"index": "opt"}\n{"source": {"size": 1}}\n',
                "headers": _NDJSON}),
            ("GET", "/_cluster/settings", {}),
            ("PUT", "/_cluster/settings", {"json": {"persistent": {}}})]


def test_pretty_false_never_indents_search_cursor_and_multi_routes(opt) -> None:
    for method, path, kw in _cursor_and_multi_requests(opt):
        r = opt.request(method, path, params={"pretty": "false"}, **kw)
        assert r.status_code < 400 and "\n" not in r.text, (method, path, r.text)
    for method, path, kw in _cursor_and_multi_requests(opt):
        r = opt.request(method, path, params={"pretty": "true"}, **kw)
        assert r.status_code < 400 and "\n  " in r.text, (method, path, r.text)


def test_a_pure_negative_bool_without_adjust_pure_negative_matches_nothing() -> None:
    from shardsearch.cluster.engine.query.dsl import parse_query
    from shardsearch.cluster.engine.query.nodes import Bool, MatchNone
    not_t1 = {"must_not": [{"term": {"tag": "t1"}}]}
    assert isinstance(parse_query({"bool": {**not_t1, "adjust_pure_negative": False}}),
                      MatchNone)
    assert isinstance(parse_query({"bool": {**not_t1, "adjust_pure_negative": True}}), Bool)
    assert isinstance(parse_query({"bool": {**not_t1, "filter": [{"match_all": {}}],
                                            "adjust_pure_negative": False}}), Bool)


def test_an_unknown_source_filter_key_is_refused_as_elasticsearch_does() -> None:
    from shardsearch.cluster.engine.source_filter import parse_source
    from shardsearch.cluster.errors import ParsingError
    with pytest.raises(ParsingError, match=r"Unknown key for a START_ARRAY in \[include_all\]"):
        parse_source({"includes": ["n"], "include_all": ["x"]})


@pytest.mark.parametrize("key", ["fields", "docvalue_fields"])
def test_a_field_entry_refuses_unknown_keys_and_reads_include_unmapped_as_a_boolean(key) -> None:
    from shardsearch.cluster.search.request import parse_search
    with pytest.raises(SearchError, match=r"\[fetch_field_and_format\] unknown field"):
        parse_search(("i",), {}, {key: [{"field": "n", "formt": "0.0"}]})
    with pytest.raises(SearchError, match=r"only \[true\] or \[false\] are allowed"):
        parse_search(("i",), {}, {key: [{"field": "n", "include_unmapped": "maybe"}]})
    for flag in (True, "true", False):
        assert parse_search(("i",), {}, {key: [{"field": "*", "include_unmapped": flag}]})


@pytest.fixture
def loose(es: httpx.Client) -> httpx.Client:
    """Fields that are in _source but not mapped: under an enabled=false object, and a new
    top-level field left out by dynamic=false."""
    es.put("/loose", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                           "mappings": {"dynamic": False, "properties": {
                               "tag": {"type": "keyword"}, "n": {"type": "long"},
                               "raw": {"type": "object", "enabled": False}}}})
    r = es.put("/loose/_doc/1", params={"refresh": "true"}, json={
        "tag": "a", "n": 3, "raw": {"x": 1, "y": ["u", "v"], "deep": {"z": True}},
        "extra": "e"})
    assert r.status_code == 201
    return es


def _fields(es: httpx.Client, index: str, body: dict) -> dict:
    r = es.post(f"/{index}/_search", json=body)
    assert r.status_code == 200, r.text
    return r.json()["hits"]["hits"][0].get("fields", {})


def test_the_fields_option_returns_only_mapped_fields_without_include_unmapped(loose) -> None:
    assert _fields(loose, "loose", {"fields": ["*"]}) == {"tag": ["a"], "n": [3]}
    assert _fields(loose, "loose", {"fields": ["extra", "raw.x"]}) == {}
    assert _fields(loose, "loose", {"docvalue_fields": ["extra"]}) == {}


@pytest.mark.parametrize("flag", [True, "true"])
def test_include_unmapped_adds_the_unmapped_source_leaves_a_pattern_matches(loose, flag) -> None:
    """What Kibana Discover sends: the unmapped values come as they are in _source."""
    got = _fields(loose, "loose", {"fields": [{"field": "*", "include_unmapped": flag}]})
    assert got == {"tag": ["a"], "n": [3], "raw.x": [1], "raw.y": ["u", "v"],
                   "raw.deep.z": [True], "extra": ["e"]}
    got = _fields(loose, "loose", {"fields": [{"field": "raw.*", "include_unmapped": flag}]})
    assert got == {"raw.x": [1], "raw.y": ["u", "v"], "raw.deep.z": [True]}
    got = _fields(loose, "loose", {"fields": [{"field": "extra", "include_unmapped": flag}]})
    assert got == {"extra": ["e"]}


def test_include_unmapped_false_or_on_docvalue_fields_adds_nothing(loose) -> None:
    """Unmapped fields have no doc values: Elasticsearch's docvalue_fields never show them."""
    assert _fields(loose, "loose", {"fields": [{"field": "*", "include_unmapped": False}]}) \
        == {"tag": ["a"], "n": [3]}
    assert _fields(loose, "loose", {"docvalue_fields": [{"field": "extra",
                                                         "include_unmapped": True}]}) == {}


def test_adjust_pure_negative_false_through_the_service(opt) -> None:
    not_t1 = {"must_not": [{"term": {"tag": "t1"}}]}
    count = opt.post("/opt/_count", json={"query": {"bool": not_t1}}).json()["count"]
    assert count == 4
    r = opt.post("/opt/_count", json={"query": {"bool": {**not_t1,
                                                         "adjust_pure_negative": False}}})
    assert r.json()["count"] == 0


@pytest.mark.parametrize("field,ftype", [("tag", "keyword"), ("n", "long")])
def test_the_fields_api_refuses_a_format_on_fields_whose_value_fetcher_takes_none(
        opt, field, ftype) -> None:
    """Elasticsearch's value fetchers: only dates and geo points take a format in `fields`."""
    r = opt.post("/opt/_search", json={"fields": [{"field": field, "format": "0.0"}]})
    assert r.status_code == 400
    assert r.json()["error"]["root_cause"][0]["reason"] == (
        f"error fetching [{field}]: Field [{field}] of type [{ftype}] doesn't support formats.")
    r = opt.post("/opt/_search", json={"fields": [{"field": "*", "format": "0.0"}]})
    assert "which matched [*]: Field [" in r.json()["error"]["root_cause"][0]["reason"]


def test_docvalue_fields_refuse_a_format_on_a_keyword_in_their_own_words(opt) -> None:
    r = opt.post("/opt/_search", json={"docvalue_fields": [{"field": "tag", "format": "0.0"}]})
    assert r.status_code == 400
    assert r.json()["error"]["root_cause"][0]["reason"] == (
        "Field [tag] of type [keyword] does not support custom formats")


def test_docvalue_fields_print_a_number_with_a_decimal_format(opt) -> None:
    ok = opt.post("/opt/_search", json={"docvalue_fields": [{"field": "n", "format": "0.0"}],
                                        "size": 1, "sort": ["n"]})
    assert ok.json()["hits"]["hits"][0]["fields"]["n"] == ["0.0"]


def test_a_format_is_refused_even_when_the_hit_has_no_value_for_the_field(opt) -> None:
    opt.put("/opt/_doc/bare", params={"refresh": "true"}, json={"n": 9})
    r = opt.post("/opt/_search", json={"query": {"ids": {"values": ["bare"]}},
                                       "fields": [{"field": "tag", "format": "x"}]})
    assert r.status_code == 400 and "doesn't support formats." in r.text


@pytest.fixture
def places(es: httpx.Client) -> httpx.Client:
    es.put("/places", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                            "mappings": {"properties": {"p": {"type": "geo_point"},
                                                        "tag": {"type": "keyword"}}}})
    r = es.put("/places/_doc/1", params={"refresh": "true"},
               json={"p": [{"lat": 1.5, "lon": 2}, "0.0001,-73.5"], "tag": "a"})
    assert r.status_code == 201
    return es


@pytest.mark.parametrize("key", ["fields", "docvalue_fields"])
def test_a_geo_point_prints_as_geojson_by_default_and_as_wkt_on_request(places, key) -> None:
    geojson = [{"type": "Point", "coordinates": [2.0, 1.5]},
               {"type": "Point", "coordinates": [-73.5, 0.0001]}]
    assert _fields(places, "places", {key: ["p"]}) == {"p": geojson}
    assert _fields(places, "places", {key: [{"field": "p", "format": "geojson"}]}) == {
        "p": geojson}
    assert _fields(places, "places", {key: [{"field": "p", "format": "wkt"}]}) == {
        "p": ["POINT (2.0 1.5)", "POINT (-73.5 1.0E-4)"]}


def test_a_geo_format_elasticsearch_does_not_know_is_refused_naming_it(places) -> None:
    r = places.post("/places/_search", json={"fields": [{"field": "p", "format": "kml"}]})
    assert r.status_code == 400
    assert "Unrecognized geometry format [kml]." in r.json()["error"]["root_cause"][0]["reason"]


def test_a_sort_format_is_for_dates_and_refused_elsewhere_in_elasticsearchs_words() -> None:
    """FieldSortBuilder: a number's DecimalFormat is not a date_time formatter; a boolean
    has no custom format at all."""
    with pytest.raises(IllegalArgument, match=r"require a date_time formatter; got \[decimal\]"):
        check_sortable(_sort({"format": "0.00"}), LONG, "i")
    with pytest.raises(IllegalArgument, match=r"Field \[f\] of type \[boolean\] does not "
                                              "support custom formats"):
        check_sortable(_sort({"format": "0.00"}), FieldType("f", "boolean"), "i")
    check_sortable(_sort({"format": "yyyy"}), DATE, "i")


def test_a_number_sort_with_a_format_is_a_400_through_the_service(opt) -> None:
    r = opt.post("/opt/_search", json={"sort": [{"n": {"format": "0.00"}}]})
    assert r.status_code == 400
    assert "require a date_time formatter" in r.json()["error"]["root_cause"][0]["reason"]


def test_an_object_mapped_enabled_false_stays_in_source_only(es) -> None:
    """Not parsed, mapped or indexed, even with dynamic mapping on; any value is taken."""
    es.put("/off", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                         "mappings": {"properties": {"raw": {"type": "object",
                                                             "enabled": False}}}})
    r = es.post("/off/_bulk", params={"refresh": "true"},
                content='{"index":{"_id":"1"}}\n{"raw":{"x":1,"y":{"z":"a"}}}\n'
                        '{"index":{"_id":"2"}}\n{"raw":"just text"}\n',
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]
    assert es.get("/off/_mapping").json()["off"]["mappings"] == {
        "properties": {"raw": {"type": "object", "enabled": False}}}
    assert es.post("/off/_count", json={"query": {"term": {"raw.x": 1}}}).json()["count"] == 0
    got = _fields(es, "off", {"query": {"ids": {"values": ["1"]}},
                              "fields": [{"field": "raw.*", "include_unmapped": True}]})
    assert got == {"raw.x": [1], "raw.y.z": ["a"]}


def test_a_dotted_name_under_an_object_mapped_enabled_false_stays_in_source_only(es) -> None:
    """``{"d.q": 1}`` is ``d``'s, as Elasticsearch expands dotted names before mapping them."""
    es.put("/offdot", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                            "mappings": {"properties": {"d": {"type": "object", "enabled": False},
                                                        "s": {"properties": {"t": {
                                                            "type": "object",
                                                            "enabled": False}}}}}})
    r = es.post("/offdot/_bulk", params={"refresh": "true"},
                content='{"index":{"_id":"1"}}\n{"d.q":1,"s.t.u":"x","s":{"t.v":"y"}}\n',
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"], r.text
    mapping = es.get("/offdot/_mapping").json()["offdot"]["mappings"]["properties"]
    assert mapping["d"] == {"type": "object", "enabled": False}
    assert mapping["s"]["properties"]["t"] == {"type": "object", "enabled": False}
    for field, value in (("d.q", 1), ("s.t.u", "x"), ("s.t.v", "y")):
        count = es.post("/offdot/_count", json={"query": {"term": {field: value}}})
        assert count.json()["count"] == 0, field


def test_enabled_of_an_existing_object_cannot_be_changed_by_a_mapping_update(es) -> None:
    es.put("/offchg", json={"mappings": {"properties": {
        "o": {"properties": {"a": {"type": "keyword"}}}, "d": {"type": "object", "enabled": False}}}})
    for field, enabled in (("o", False), ("d", True)):
        r = es.put("/offchg/_mapping",
                   json={"properties": {field: {"type": "object", "enabled": enabled}}})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "illegal_argument_exception"
        assert r.json()["error"]["reason"] == (f"the [enabled] parameter can't be updated for "
                                               f"the object mapping [{field}]")
    same = es.put("/offchg/_mapping", json={"properties": {"d": {"type": "object",
                                                                 "enabled": False}}})
    assert same.status_code == 200, same.text
    assert es.get("/offchg/_mapping").json()["offchg"]["mappings"]["properties"]["d"] == {
        "type": "object", "enabled": False}
