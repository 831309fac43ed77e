"""Highlight ``matched_fields`` (unified): the marks the query makes on fields sharing the
same text — multi-fields with other analyzers — are added to the field's own."""
from __future__ import annotations

import pytest

from inprocess import LocalCluster
from shardsearch.cluster.search.request import parse_search

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPING = {"properties": {"t": {"type": "text", "analyzer": "whitespace", "fields": {
    "plain": {"type": "text", "analyzer": "standard"},
    "kw": {"type": "keyword"}}}}}
TEXT = "What jumps over The lazy dog?"   # by whitespace: "The", "dog?"


@pytest.fixture(scope="module")
def c() -> LocalCluster:
    out = LocalCluster().create("i", shards=2, mappings=MAPPING)
    out.index("i", [{"t": TEXT}, {"t": "the dog sleeps. Another sentence without it."}])
    return out


def _highlight(c: LocalCluster, field_opts: dict) -> list[str] | None:
    body = {"query": {"multi_match": {"query": "the dog", "fields": ["t", "t.plain"]}},
            "highlight": {"fields": {"t": field_opts}}}
    hits = c.search("i", body)["hits"]["hits"]
    return next(h.get("highlight", {}).get("t") for h in hits if h["_id"] == "0")


def test_matched_fields_add_the_marks_of_the_other_analyzer(c) -> None:
    assert _highlight(c, {}) is None
    assert _highlight(c, {"matched_fields": ["t.plain"]}) == \
        ["What jumps over <em>The</em> lazy <em>dog</em>?"]


def test_matched_fields_mark_only_what_the_query_asks_of_them(c) -> None:
    # the query says nothing about t.kw: listing it adds no mark
    assert _highlight(c, {"matched_fields": ["t.kw"]}) is None
    assert _highlight(c, {"matched_fields": ["t.plain", "nope"]}) == \
        ["What jumps over <em>The</em> lazy <em>dog</em>?"]
    # without require_field_match every clause marks: the field's own tokens too
    assert _highlight(c, {"matched_fields": ["t.plain"], "require_field_match": False}) == \
        ["What jumps over <em>The</em> lazy <em>dog</em>?"]


def test_matched_fields_are_refused_for_the_plain_highlighter() -> None:
    body = {"highlight": {"fields": {"t": {"type": "plain", "matched_fields": ["t.plain"]}}}}
    with pytest.raises(Exception) as e:
        parse_search(("i",), {}, body)
    assert "[matched_fields]" in str(e.value) and "[plain]" in str(e.value)
    with pytest.raises(Exception) as e:
        parse_search(("i",), {}, {"highlight": {"matched_fields": ["t.plain"],
                                                "fields": {"t": {}}}})
    assert "matched_fields" in str(e.value)


def test_matched_fields_read_an_alias_as_its_target() -> None:
    mapping = {"properties": {**MAPPING["properties"],
                              "p": {"type": "alias", "path": "t.plain"}}}
    c = LocalCluster().create("a", shards=1, mappings=mapping)
    c.index("a", [{"t": TEXT}])
    body = {"query": {"multi_match": {"query": "the dog", "fields": ["t", "p"]}},
            "highlight": {"fields": {"t": {"matched_fields": ["p"]}}}}
    hit = c.search("a", body)["hits"]["hits"][0]
    assert hit["highlight"]["t"] == ["What jumps over <em>The</em> lazy <em>dog</em>?"]
