"""Field-name patterns: ``query_string`` / ``simple_query_string`` (and ``exists``,
``multi_match``) expand ``title*`` to the matching fields; every other direct-DSL query takes
its field name literally, as Elasticsearch does (a field named ``title*`` is unmapped: no hits).
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query import nodes as Q
from shardsearch.cluster.engine.query.field_patterns import expand_string_patterns

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPINGS = {"properties": {"title": {"type": "text", "fields": {"kw": {"type": "keyword"}}},
                           "tag": {"type": "keyword"}, "n": {"type": "long"}}}
DOCS = {"1": {"title": "quick brown fox", "tag": "quick", "n": 42},
        "2": {"title": "lazy dog", "tag": "lazy", "n": 7}}


def _mapping() -> Mapping:
    return Mapping.from_body(MAPPINGS)


def test_a_query_string_prefix_on_a_pattern_becomes_one_per_term_field() -> None:
    out = expand_string_patterns(Q.Prefix(field="t*", value="qu"), _mapping())
    assert out == Q.DisMax(queries=(Q.Prefix(field="title", value="qu"),
                                    Q.Prefix(field="title.kw", value="qu"),
                                    Q.Prefix(field="tag", value="qu")))


def test_a_query_string_match_on_star_searches_every_searchable_field() -> None:
    out = expand_string_patterns(Q.Bool(should=(Q.Match(field="*", text="x"),)), _mapping())
    assert isinstance(out, Q.Bool) and isinstance(out.should[0], Q.DisMax)
    assert [m.field for m in out.should[0].queries] == ["title", "title.kw", "tag", "n"]


def test_a_strict_query_string_prefix_keeps_the_fields_without_terms() -> None:
    out = expand_string_patterns(Q.Prefix(field="*", value="qu"), _mapping(), lenient=False)
    assert [p.field for p in out.queries] == ["title", "title.kw", "tag", "n"]


def test_a_pattern_matching_no_field_matches_nothing() -> None:
    assert expand_string_patterns(Q.Range(field="zz*", gte=1), _mapping()) == Q.MatchNone()


def test_literal_field_names_and_exists_are_left_alone() -> None:
    m = _mapping()
    for q in (Q.Prefix(field="title", value="qu"), Q.Exists(field="t*")):
        assert expand_string_patterns(q, m) is q


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def c(request) -> LocalCluster:
    c = LocalCluster().create("fp", request.param, MAPPINGS)
    assert c.index("fp", DOCS)["errors"] is False
    return c


LITERAL = [{"prefix": {"title*": "qu"}}, {"wildcard": {"title*": "qu*"}},
           {"regexp": {"title*": "qu.*"}}, {"range": {"n*": {"gte": 0}}},
           {"match_phrase": {"title*": "quick"}}, {"match_phrase_prefix": {"title*": "qui"}},
           {"term": {"tag*": "quick"}}, {"terms": {"tag*": ["quick"]}},
           {"fuzzy": {"title*": "quack"}}, {"match": {"title*": "quick"}},
           {"match": {"*": "quick"}}, {"match_bool_prefix": {"title*": "qui"}},
           {"span_term": {"title*": "quick"}}]


@pytest.mark.parametrize("query", LITERAL, ids=lambda q: next(iter(q)))
def test_direct_dsl_field_names_are_literal(c, query) -> None:
    assert c.ids("fp", {"query": query}) == []


def test_query_string_and_exists_still_expand_field_patterns(c) -> None:
    assert c.ids("fp", {"query": {"query_string": {"query": "qu*", "fields": ["title*"]}}}) == ["1"]
    assert c.ids("fp", {"query": {"query_string": {"query": "title\\*:quick"}}}) == ["1"]
    assert sorted(c.ids("fp", {"query": {"exists": {"field": "ti*"}}})) == ["1", "2"]
