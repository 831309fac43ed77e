"""The ``alias`` field type: a second name of a concrete field, resolved wherever a search reads
a field, checked as Elasticsearch's ``FieldAliasMapper`` checks it, never written to."""
from __future__ import annotations

import json
import re

import pytest

from inprocess import LocalCluster
from shardsearch.cluster.engine.field_alias import alias_targets, resolve_query
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query import nodes as Q
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

PROPS = {"n": {"type": "long"}, "al": {"type": "alias", "path": "n"},
         "title": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
         "t": {"type": "alias", "path": "title"}, "tr": {"type": "alias", "path": "title.raw"}}
DOCS = {"1": {"n": 3, "title": "red fox"}, "2": {"n": 1, "title": "blue fox"},
        "3": {"n": 2, "title": "red hen"}}


@pytest.fixture(scope="module")
def c() -> LocalCluster:
    cl = LocalCluster().create("al", shards=2, mappings={"properties": PROPS})
    cl.index("al", DOCS)
    return cl


def ids(cl: LocalCluster, body: dict) -> list[str]:
    return [h["_id"] for h in cl.search("al", body)["hits"]["hits"]]


def test_alias_targets_are_read_from_the_properties_tree() -> None:
    props = {"o": {"properties": {"a": {"type": "alias", "path": "o.b"}, "b": {"type": "long"}}}}
    assert alias_targets(props) == {"o.a": "o.b"}


def test_resolve_query_replaces_alias_names_and_keeps_other_nodes() -> None:
    q = Q.Bool(must=(Q.Term(field="al", value=1),), filter=(Q.Exists(field="n"),))
    out = resolve_query(q, {"al": "n"})
    assert out.must[0].field == "n" and out.filter[0] is q.filter[0]


def test_mapping_get_gives_the_target_type() -> None:
    m = Mapping.from_body({"properties": PROPS})
    assert m.get("al").type == "long" and m.get("al").path == "n"
    assert m.fields["al"].type == "alias" and m.resolve("tr") == "title.raw"


@pytest.mark.parametrize("props, reason", [
    ({"x": {"type": "alias", "path": "nope"}},
     "Invalid [path] value [nope] for field alias [x]: an alias must refer to an existing "
     "field in the mappings."),
    ({"x": {"type": "alias", "path": "o"}, "o": {"properties": {"k": {"type": "keyword"}}}},
     "Invalid [path] value [o] for field alias [x]: an alias must refer to an existing "
     "field in the mappings."),
    ({"x": {"type": "alias", "path": "y"}, "y": {"type": "alias", "path": "k"},
      "k": {"type": "keyword"}},
     "Invalid [path] value [y] for field alias [x]: an alias cannot refer to another alias."),
    ({"x": {"type": "alias", "path": "x"}},
     "Invalid [path] value [x] for field alias [x]: an alias cannot refer to itself."),
    ({"x": {"type": "alias", "path": "n.k"},
      "n": {"type": "nested", "properties": {"k": {"type": "keyword"}}}},
     "Invalid [path] value [n.k] for field alias [x]: an alias must have the same nested "
     "scope as its target. The alias is not nested, but the target's nested scope is [n]."),
    ({"x": {"type": "alias"}},
     "Failed to parse mapping [_doc]: The [path] property must be specified for field [x]."),
    ({"x": {"type": "alias", "path": "k", "foo": 1}, "k": {"type": "keyword"}},
     "Failed to parse mapping [_doc]: Mapping definition for [x] has unsupported "
     "parameters:  [foo : 1]")])
def test_invalid_aliases_are_refused_with_elasticsearch_texts(props, reason) -> None:
    with pytest.raises(SearchError) as e:
        Mapping.from_body({"properties": props})
    assert e.value.reason == reason and e.value.status == 400


def test_changing_an_alias_path_is_checked_and_applied() -> None:
    m = Mapping.from_body({"properties": PROPS})
    with pytest.raises(SearchError, match="an alias must refer to an existing field"):
        m.merge({"properties": {"al": {"type": "alias", "path": "zz"}}})
    assert m.resolve("al") == "n"
    m.merge({"properties": {"al": {"type": "alias", "path": "title"}}})
    assert m.resolve("al") == "title"


def test_a_document_writing_to_an_alias_is_refused() -> None:
    cl = LocalCluster().create("w", mappings={"properties": PROPS})
    out = cl.index("w", {"1": {"al": 5}})
    err = out["items"][0]["index"]["error"] if "items" in out else out["error"]
    assert err["type"] == "mapper_parsing_exception"
    assert err["caused_by"]["reason"] == "Cannot write to a field alias [al]."


@pytest.mark.parametrize("query", [
    {"term": {"al": 3}}, {"range": {"al": {"gte": 3}}}, {"match": {"t": {"query": "red fox", "operator": "and"}}},
    {"query_string": {"query": "al:3"}}, {"prefix": {"tr": "red f"}},
    {"wildcard": {"tr": "red f*"}}, {"terms": {"al": [3]}}])
def test_queries_through_an_alias_match_as_on_the_target(c, query) -> None:
    got = ids(c, {"query": query})
    assert "1" in got and "2" not in got


def test_exists_and_match_scores_through_an_alias_equal_the_targets(c) -> None:
    a = c.search("al", {"query": {"match": {"t": "red fox"}}})["hits"]["hits"]
    b = c.search("al", {"query": {"match": {"title": "red fox"}}})["hits"]["hits"]
    assert [(h["_id"], h["_score"]) for h in a] == [(h["_id"], h["_score"]) for h in b]
    assert sorted(ids(c, {"query": {"exists": {"field": "al"}}})) == ["1", "2", "3"]


def test_wildcard_field_patterns_match_alias_names(c) -> None:
    body = {"query": {"query_string": {"query": "3", "fields": ["a*"]}}}
    assert ids(c, body) == ["1"]


def test_sort_aggregations_and_collapse_read_the_target(c) -> None:
    assert ids(c, {"sort": [{"al": "desc"}]}) == ["1", "3", "2"]
    aggs = c.search("al", {"size": 0, "aggs": {"m": {"max": {"field": "al"}},
                                              "k": {"terms": {"field": "tr"}}}})
    assert aggs["aggregations"]["m"]["value"] == 3
    assert [b["key"] for b in aggs["aggregations"]["k"]["buckets"]] == [
        "blue fox", "red fox", "red hen"]
    hits = c.search("al", {"collapse": {"field": "al"}, "sort": ["n"]})["hits"]["hits"]
    assert [h["fields"]["al"] for h in hits] == [[1], [2], [3]]


def test_fields_and_docvalue_fields_show_the_alias_name_with_target_values(c) -> None:
    hit = c.search("al", {"query": {"ids": {"values": ["1"]}}, "fields": ["al", "tr"],
                          "docvalue_fields": ["t*"]})["hits"]["hits"][0]
    assert hit["fields"]["al"] == [3] and hit["fields"]["tr"] == ["red fox"]


def test_highlight_on_an_alias_is_keyed_by_the_alias(c) -> None:
    hit = c.search("al", {"query": {"match": {"t": "hen"}},
                          "highlight": {"fields": {"t": {}}}})["hits"]["hits"][0]
    assert hit["highlight"] == {"t": ["red <em>hen</em>"]}


def test_script_doc_values_read_through_an_alias(c) -> None:
    body = {"query": {"script_score": {"query": {"match_all": {}},
                                       "script": {"source": "doc['al'].value"}}}}
    assert ids(c, body) == ["1", "3", "2"]


def _on(template: dict, field: str) -> dict:
    """``template`` with the placeholder ``F`` (names, values, query text) replaced."""
    return json.loads(re.sub(r"\bF\b", field, json.dumps(template)))


@pytest.mark.parametrize("template", [
    {"match_phrase": {"F": "red fox"}}, {"match_phrase_prefix": {"F": "red f"}},
    {"match_bool_prefix": {"F": "red f"}},
    {"simple_query_string": {"query": "red -hen", "fields": ["F"]}},
    {"multi_match": {"query": "red fox", "fields": ["F^2"], "type": "most_fields"}},
    {"query_string": {"query": "F:(red AND fox)"}},
    {"query_string": {"query": "fox", "default_field": "F"}},
    {"span_term": {"F": "red"}}, {"regexp": {"F": "re.*"}},
    {"intervals": {"F": {"match": {"query": "red fox", "ordered": True}}}},
    {"combined_fields": {"query": "red fox", "fields": ["F"]}},
    {"bool": {"should": [{"term": {"F": "red"}}], "filter": [{"exists": {"field": "F"}}]}},
    {"function_score": {"query": {"match": {"F": "fox"}}, "boost_mode": "sum"}}])
def test_every_query_through_an_alias_answers_as_on_its_target(c, template) -> None:
    def hits(field: str) -> list:
        resp = c.search("al", {"query": _on(template, field)})
        return [(h["_id"], h["_score"]) for h in resp["hits"]["hits"]]
    assert hits("t") == hits("title") and hits("title")
