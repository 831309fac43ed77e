"""``query_string`` rules checked against Elasticsearch (OpenSearch) behaviour: an explicit
``lenient: false`` holds over ``*`` too; words side by side on one field that is not text are
one value (``42 7`` on a long fails); a leading wildcard is refused only where a mapped field
is searched (on an unmapped field: no hits, no error)."""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import ParsingError, SearchError
from shardsearch.cluster.engine.query.nodes import Match, QueryString, Wildcard
from shardsearch.cluster.engine.query.query_string import expand_query_string

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPINGS = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                           "n": {"type": "long"}}}
DOCS = {"1": {"title": "quick brown fox", "tag": "quick", "n": 42},
        "2": {"title": "lazy dog", "tag": "lazy", "n": 7}}


def _qs(text: str, field: str, **opts) -> object:
    return expand_query_string(QueryString(query=text, fields=((field, 1.0),), **opts), (),
                               is_mapped=lambda f: f in ("title", "n"),
                               is_whole_value=lambda f: f == "n")


def test_words_side_by_side_on_a_field_that_is_not_text_are_one_value() -> None:
    assert _qs("42 7", "n") == Match(field="n", text="42 7")


def test_words_side_by_side_on_a_text_field_stay_apart() -> None:
    assert _qs("42 7", "title") != Match(field="title", text="42 7")


def test_a_leading_wildcard_on_an_unmapped_field_is_not_refused() -> None:
    assert _qs("*ox", "nope", allow_leading_wildcard=False) == Wildcard(field="nope",
                                                                         pattern="*ox")
    with pytest.raises(ParsingError):
        _qs("*ox", "title", allow_leading_wildcard=False)


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def c(request) -> LocalCluster:
    c = LocalCluster().create("qsl", request.param, MAPPINGS)
    assert c.index("qsl", DOCS)["errors"] is False
    return c


def _search(c: LocalCluster, **qs) -> list[str]:
    return sorted(c.ids("qsl", {"query": {"query_string": qs}}))


def _failure(c: LocalCluster, **qs) -> str:
    """The shards' reason for refusing the query string."""
    with pytest.raises(SearchError) as info:
        _search(c, **qs)
    return str(info.value.extra)


def test_lenient_false_holds_over_every_field(c) -> None:
    assert _search(c, query="quick") == ["1"]                 # lenient by default over *
    for fields in ({}, {"fields": ["*"]}, {"default_field": "*"}):
        assert 'For input string: "quick"' in _failure(c, query="quick", lenient=False,
                                                       **fields)
    assert "Can only use prefix queries" in _failure(c, query="qu*", fields=["*"],
                                                     lenient=False)


def test_a_run_of_numbers_on_a_long_field_fails_or_matches_nothing_leniently(c) -> None:
    assert 'For input string: "42 7"' in _failure(c, query="42 7", default_field="n")
    assert _search(c, query="42 7", default_field="n", lenient=True) == []
    assert _search(c, query="n:(42 7)") == []                  # lenient over * by default
    assert _search(c, query="n:(42 OR 7)") == ["1", "2"]


def test_leading_wildcards_on_unmapped_fields_find_nothing(c) -> None:
    assert _search(c, query="nope:*ox", allow_leading_wildcard=False) == []
    assert _search(c, query="?ox OR quick", default_field="nope",
                   allow_leading_wildcard=False) == []
    assert "not allowed as first character" in _failure(c, query="n:*ox",
                                                        allow_leading_wildcard=False)
