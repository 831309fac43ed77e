"""Mappings as Elasticsearch makes them: dynamic mapping, explicit ``mappings.properties``,
``GET``/``PUT _mapping``, and a mapping conflict failing only the document that has it."""
from __future__ import annotations

import orjson
import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import MapperParsing, SearchError
from shardsearch.cluster.engine.doc_parsing import parse_document
from shardsearch.cluster.engine.mapping import Mapping

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

TEXT_WITH_KEYWORD = {"type": "text", "fields": {"keyword": {"type": "keyword",
                                                            "ignore_above": 256}}}


# --------------------------------------------------------------------------- dynamic mapping

def test_dynamic_mapping_types_follow_elasticsearch() -> None:
    m = Mapping()
    parse_document({"title": "Hello", "count": 3, "ratio": 0.5, "ok": True,
                    "when": "2021-03-04T05:06:07Z", "day": "2021/03/04",
                    "tags": ["a", "b"], "nums": [1, 2], "nothing": None, "empty": [],
                    "user": {"name": "Ann", "address": {"city": "Oslo"}}}, m, "1")
    assert m.to_body() == {"properties": {
        "title": TEXT_WITH_KEYWORD,
        "count": {"type": "long"},
        "ratio": {"type": "float"},
        "ok": {"type": "boolean"},
        "when": {"type": "date"},
        "day": {"type": "date"},
        "tags": TEXT_WITH_KEYWORD,
        "nums": {"type": "long"},
        "user": {"properties": {"name": TEXT_WITH_KEYWORD,
                                "address": {"properties": {"city": TEXT_WITH_KEYWORD}}}},
    }}
    # objects flatten to dotted paths, with their multi-fields
    assert {"user.name", "user.name.keyword", "user.address.city",
            "user.address.city.keyword"} <= set(m.fields)
    assert "user" in m.objects


def test_dotted_field_names_are_object_paths() -> None:
    m = Mapping()
    parsed, _ = parse_document({"a.b": 1, "a": {"c": "x"}}, m, "1")
    assert m.to_body()["properties"]["a"]["properties"]["b"] == {"type": "long"}
    assert parsed["a.b"] == [1] and parsed["a.c"] == ["x"]


def test_arrays_hold_several_values_and_arrays_of_arrays_flatten() -> None:
    m = Mapping()
    parsed, _ = parse_document({"n": [1, [2, [3]]], "o": [{"x": 1}, {"x": 2}]}, m, "1")
    assert parsed["n"] == [1, 2, 3]
    assert parsed["o.x"] == [1, 2]


def test_long_strings_skip_the_keyword_sub_field() -> None:
    m = Mapping()
    parsed, _ = parse_document({"t": "x" * 300}, m, "1")
    assert "t" in parsed and "t.keyword" not in parsed


def test_a_failing_document_adds_nothing_to_the_mapping() -> None:
    m = Mapping.from_body({"properties": {"n": {"type": "long"}}})
    with pytest.raises(MapperParsing):
        parse_document({"new_field": "x", "n": "not a number"}, m, "7")
    assert "new_field" not in m.fields


@pytest.mark.parametrize("mapping,doc,reason", [
    ({"n": {"type": "long"}}, {"n": "abc"},
     "failed to parse field [n] of type [long] in document with id '7'. "
     "Preview of field's value: 'abc'"),
    ({"d": {"type": "date"}}, {"d": "yesterday"},
     "failed to parse field [d] of type [date] in document with id '7'. "
     "Preview of field's value: 'yesterday'"),
    ({"b": {"type": "boolean"}}, {"b": "yes"},
     "failed to parse field [b] of type [boolean] in document with id '7'. "
     "Preview of field's value: 'yes'"),
    ({"o": {"properties": {"x": {"type": "long"}}}}, {"o": 5},
     "object mapping for [o] tried to parse field [o] as object, but found a concrete value"),
])
def test_a_value_that_does_not_fit_its_field_is_a_mapper_parsing_exception(mapping, doc,
                                                                            reason) -> None:
    m = Mapping.from_body({"properties": mapping})
    with pytest.raises(MapperParsing) as err:
        parse_document(doc, m, "7")
    assert (err.value.es_type, err.value.reason, err.value.status) == (
        "mapper_parsing_exception", reason, 400)


def test_documents_deeper_than_the_mapping_depth_limit_are_refused() -> None:
    doc: dict = {"leaf": 1}
    for _ in range(20):
        doc = {"a": doc}
    with pytest.raises(MapperParsing) as err:
        parse_document(doc, Mapping(), "1")
    assert "Limit of mapping depth [20] has been exceeded" in err.value.reason
    nested: list = []
    for _ in range(500):
        nested = [nested]
    with pytest.raises(MapperParsing):
        parse_document({"x": nested}, Mapping(), "1")


def test_more_than_1000_fields_is_refused() -> None:
    with pytest.raises(SearchError) as err:
        parse_document({f"f{i}": 1 for i in range(1001)}, Mapping(), "1")
    assert err.value.reason == ("Limit of total fields [1000] has been exceeded while adding "
                                "new fields [1001]")


def test_explicit_mapping_types_are_used_for_new_documents() -> None:
    c = LocalCluster().create("e", 2, {"properties": {"code": {"type": "keyword"},
                                                      "n": {"type": "integer"},
                                                      "d": {"type": "date",
                                                            "format": "dd/MM/yyyy"}}})
    assert c.index("e", {"1": {"code": "A-1", "n": "42", "d": "04/03/2021", "extra": "x y"}}
                   )["errors"] is False
    body = c.mapping("e")["properties"]
    assert body["code"] == {"type": "keyword"} and body["n"] == {"type": "integer"}
    assert body["extra"] == TEXT_WITH_KEYWORD         # dynamic fields are still added
    assert c.ids("e", {"query": {"term": {"code": "A-1"}}}) == ["1"]
    assert c.ids("e", {"query": {"term": {"n": 42}}}) == ["1"]
    # bounds are read with the field's format, as Elasticsearch reads them
    assert c.ids("e", {"query": {"range": {"d": {"gte": "04/03/2021", "lte": "04/03/2021"}}}}) \
        == ["1"]
    assert c.ids("e", {"query": {"range": {"d": {"gte": "2021-03-04", "lte": "2021-03-04",
                                                 "format": "strict_date"}}}}) == ["1"]


def test_dynamic_false_and_strict() -> None:
    c = LocalCluster().create("f", 1, {"dynamic": False, "properties": {"a": {"type": "long"}}})
    assert c.index("f", {"1": {"a": 1, "b": "not indexed"}})["errors"] is False
    assert "b" not in c.mapping("f")["properties"]
    assert c.ids("f", {"query": {"match": {"b": "indexed"}}}) == []
    c.create("s", 1, {"dynamic": "strict", "properties": {"a": {"type": "long"}}})
    r = c.index("s", {"1": {"a": 1, "b": 2}})
    assert r["items"][0]["index"]["error"]["type"] == "strict_dynamic_mapping_exception"


# --------------------------------------------------------------------------- over HTTP

def test_http_get_mapping_shows_dynamic_and_explicit_fields(es) -> None:
    r = es.put("/m", json={"mappings": {"properties": {"tag": {"type": "keyword"}}}})
    assert r.json() == {"acknowledged": True, "shards_acknowledged": True, "index": "m"}
    es.put("/m/_doc/1?refresh=true", json={"tag": "a", "title": "Hello", "views": 3,
                                           "rating": 4.5, "at": "2020-01-01",
                                           "owner": {"name": "Ann"}})
    assert es.get("/m/_mapping").json() == {"m": {"mappings": {"properties": {
        "tag": {"type": "keyword"},
        "title": TEXT_WITH_KEYWORD,
        "views": {"type": "long"},
        "rating": {"type": "float"},
        "at": {"type": "date"},
        "owner": {"properties": {"name": TEXT_WITH_KEYWORD}},
    }}}}
    err = es.get("/nope/_mapping")
    assert err.status_code == 404 and err.json()["error"]["type"] == "index_not_found_exception"


def test_http_put_mapping_adds_fields_and_refuses_type_changes(es) -> None:
    es.put("/m", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    r = es.put("/m/_mapping", json={"properties": {"code": {"type": "keyword"},
                                                   "n": {"type": "long"}}})
    assert (r.status_code, r.json()) == (200, {"acknowledged": True})
    props = es.get("/m/_mapping").json()["m"]["mappings"]["properties"]
    assert props == {"n": {"type": "long"}, "code": {"type": "keyword"}}
    es.put("/m/_doc/1?refresh=true", json={"code": "AB-1", "n": 1})
    hits = es.post("/m/_search", json={"query": {"term": {"code": "AB-1"}}}).json()["hits"]
    assert [h["_id"] for h in hits["hits"]] == ["1"]          # keyword: not analyzed
    r = es.put("/m/_mapping", json={"properties": {"n": {"type": "keyword"}}})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "illegal_argument_exception"
    assert err["reason"] == "mapper [n] cannot be changed from type [long] to [keyword]"
    assert es.get("/m/_mapping").json()["m"]["mappings"]["properties"]["n"] == {"type": "long"}


def test_http_a_mapping_conflict_fails_that_document_only(es) -> None:
    es.put("/m", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    assert es.put("/m/_doc/1", json={"n": 1}).status_code == 201
    r = es.put("/m/_doc/2", json={"n": "abc"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "mapper_parsing_exception"
    assert err["reason"] == ("failed to parse field [n] of type [long] in document with id '2'. "
                             "Preview of field's value: 'abc'")
    assert err["caused_by"] == {"type": "illegal_argument_exception",
                                "reason": 'For input string: "abc"'}
    assert es.get("/m/_doc/2").status_code == 404
    lines = [{"index": {"_index": "m", "_id": "3"}}, {"n": 3},
             {"index": {"_index": "m", "_id": "4"}}, {"n": {"nested": "object"}},
             {"index": {"_index": "m", "_id": "5"}}, {"n": 5, "new": "field"},
             {"index": {"_index": "m", "_id": "6"}}, {"new": 6}]
    body = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    r = es.post("/_bulk?refresh=true", content=body,
                headers={"content-type": "application/x-ndjson"}).json()
    assert r["errors"] is True
    statuses = [next(iter(i.values()))["status"] for i in r["items"]]
    assert statuses == [201, 400, 201, 201]      # a number into a text field is fine
    err = r["items"][1]["index"]["error"]
    assert err["type"] == "mapper_parsing_exception"
    assert err["reason"].startswith("failed to parse field [n] of type [long] in document with "
                                    "id '4'")
    hits = es.post("/m/_search", json={"query": {"match_all": {}}, "size": 10}).json()["hits"]
    assert sorted(h["_id"] for h in hits["hits"]) == ["1", "3", "5", "6"]
    assert es.post("/m/_search", json={"query": {"match": {"new": "6"}}}).json()[
        "hits"]["total"]["value"] == 1


def test_http_a_document_too_deep_for_the_mapping_is_a_400(es) -> None:
    doc: dict = {"leaf": 1}
    for _ in range(25):
        doc = {"a": doc}
    r = es.put("/deep/_doc/1", json=doc)
    assert r.status_code == 400 and r.json()["error"]["type"] == "mapper_parsing_exception"
    nested: list = [1]
    for _ in range(400):
        nested = [nested]
    r = es.put("/deep/_doc/2", json={"x": nested})
    assert r.status_code == 400 and r.json()["error"]["type"] == "mapper_parsing_exception"


@pytest.mark.parametrize("root", [
    {"_source": {"includes": ["a"]}}, {"_routing": {"required": True}},
    {"dynamic_templates": [{"s": {"match": "*_s", "mapping": {"type": "keyword"}}}]},
    {"date_detection": False}, {"runtime": {"r": {"type": "long"}}}, {"_meta": {"v": 1}},
])
def test_a_root_mapping_parameter_we_do_not_implement_is_refused_not_ignored(root) -> None:
    with pytest.raises(MapperParsing) as err:
        Mapping.from_body({"properties": {"a": {"type": "keyword"}}, **root})
    assert "Root mapping definition has unsupported parameters:  [" + next(iter(root)) \
        in str(err.value)
    with pytest.raises(MapperParsing):
        Mapping.from_body({}).merge(root)


def test_an_analyzer_that_does_not_exist_here_is_refused_not_replaced_by_standard() -> None:
    with pytest.raises(MapperParsing) as err:
        Mapping.from_body({"properties": {"t": {"type": "text", "analyzer": "english"}}})
    assert "analyzer [english] has not been configured in mappings" in str(err.value)
    Mapping.from_body({"properties": {"t": {"type": "text", "analyzer": "whitespace"}}})


def test_the_stop_analyzer_drops_english_stop_words_as_lucene_does() -> None:
    from shardsearch.cluster.engine.analysis import get_analyzer, term_spans
    assert get_analyzer("stop")("The Quick fox is in the box2") == ["quick", "fox", "box"]
    assert term_spans("stop", "The fox") == [("fox", 4, 7)]
