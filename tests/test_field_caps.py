"""``_field_caps`` as a plain function over mapping bodies (no Ray), and its refusals over HTTP."""
from __future__ import annotations

import pytest

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.indices.field_caps import field_caps, parse_fields, parse_filters

A = {"properties": {"title": {"type": "text", "fielddata": True,
                              "fields": {"keyword": {"type": "keyword"}}},
                    "n": {"type": "long", "meta": {"unit": "ms"}},
                    "user": {"properties": {"name": {"type": "keyword", "doc_values": False}}},
                    "alias_n": {"type": "alias", "path": "n"}}}
B = {"properties": {"title": {"type": "keyword"}, "n": {"type": "long", "index": False},
                    "user": {"type": "nested", "properties": {"name": {"type": "keyword"}}}}}


def test_one_index_reports_fields_objects_multifields_and_metadata():
    out = field_caps({"a": A}, ["*"])
    assert out["indices"] == ["a"]
    f = out["fields"]
    assert f["title"] == {"text": {"type": "text", "metadata_field": False, "searchable": True,
                                   "aggregatable": False}}
    assert f["title.keyword"]["keyword"]["aggregatable"] is True
    assert f["user"]["object"] == {"type": "object", "metadata_field": False,
                                   "searchable": False, "aggregatable": False}
    assert f["user.name"]["keyword"]["aggregatable"] is False
    assert f["n"]["long"]["meta"] == {"unit": ["ms"]}
    assert f["alias_n"]["long"]["aggregatable"] is True
    assert f["_id"]["_id"] == {"type": "_id", "metadata_field": True, "searchable": True,
                               "aggregatable": False}
    assert set(f) >= {"_id", "_index", "_source"}


def test_conflicts_list_indices_and_disagreements():
    f = field_caps({"a": A, "b": B}, ["title", "n", "user*"])["fields"]
    assert f["title"]["text"]["indices"] == ["a"]
    assert f["title"]["keyword"]["indices"] == ["b"]
    assert f["n"]["long"] == {"type": "long", "metadata_field": False, "searchable": False,
                              "aggregatable": True, "non_searchable_indices": ["b"],
                              "meta": {"unit": ["ms"]}}
    assert f["user"]["nested"]["indices"] == ["b"]
    assert f["user.name"]["keyword"]["non_aggregatable_indices"] == ["a"]
    assert "_id" not in f


def test_include_unmapped_types_and_filters():
    f = field_caps({"a": A, "b": B}, ["title.keyword", "alias_n"], include_unmapped=True)["fields"]
    assert f["title.keyword"]["unmapped"] == {"type": "unmapped", "metadata_field": False,
                                              "searchable": False, "aggregatable": False,
                                              "indices": ["b"]}
    assert list(field_caps({"a": A}, ["*"], types=["keyword"])["fields"]) == ["title.keyword",
                                                                             "user.name"]
    f = field_caps({"a": A}, ["*"], filters=parse_filters("-metadata,-multifield,-parent"))
    assert sorted(f["fields"]) == ["alias_n", "n", "title", "user.name"]
    assert sorted(field_caps({"a": A}, ["*"], filters={"+metadata"})["fields"]) == [
        "_id", "_index", "_source"]


def test_parameters_are_checked():
    assert parse_fields("a, b*") == ["a", "b*"]
    assert parse_fields(["a,b", "c"]) == ["a", "b", "c"]
    with pytest.raises(IllegalArgument, match="specified fields can't be null or empty"):
        parse_fields(None)
    with pytest.raises(IllegalArgument, match="-bogus is not a recognized filter option"):
        parse_filters("-bogus")


@pytest.mark.slow
def test_http_field_caps_and_refusals(es):
    es.put("/fc1", json={"mappings": A})
    r = es.post("/fc1/_field_caps", json={"fields": ["title*"]})
    assert r.status_code == 200, r.text
    assert sorted(r.json()["fields"]) == ["title", "title.keyword"]
    r = es.get("/_field_caps", params={"fields": "n"})
    assert r.json()["fields"]["n"]["long"]["searchable"] is True
    for body, name in (({"fields": "*", "index_filter": {"match_all": {}}}, "index_filter"),
                       ({"fields": "*", "runtime_mappings": {}}, "runtime_mappings")):
        r = es.post("/fc1/_field_caps", json=body)
        assert r.status_code == 400 and name in r.json()["error"]["reason"]
    r = es.get("/fc1/_field_caps", params={"fields": "*", "bogus": "1"})
    assert r.status_code == 400 and "bogus" in r.json()["error"]["reason"]
    r = es.get("/nope/_field_caps", params={"fields": "*"})
    assert r.status_code == 404
    r = es.get("/nope,fc1/_field_caps", params={"fields": "n", "ignore_unavailable": "true"})
    assert r.json()["indices"] == ["fc1"]
    r = es.get("/fc1/_field_caps")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "action_request_validation_exception"
