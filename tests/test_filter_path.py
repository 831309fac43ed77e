"""``filter_path``: Elasticsearch's response filtering, as a pure function."""
from __future__ import annotations

import pytest

from shardsearch.api.filter_path import filter_response

RESP = {"took": 3, "timed_out": False,
        "hits": {"total": {"value": 2, "relation": "eq"},
                 "hits": [{"_id": "1", "_source": {"a": 1, "b": {"c": 2}}},
                          {"_id": "2", "_source": {"a": 3}}]}}


@pytest.mark.parametrize("spec,expected", [
    ("took", {"took": 3}),
    ("hits.total.value", {"hits": {"total": {"value": 2}}}),
    ("hits.hits._id", {"hits": {"hits": [{"_id": "1"}, {"_id": "2"}]}}),
    ("hits.hits._source.b", {"hits": {"hits": [{"_source": {"b": {"c": 2}}}]}}),
    ("t*", {"took": 3, "timed_out": False}),
    ("**.c", {"hits": {"hits": [{"_source": {"b": {"c": 2}}}]}}),
    ("**._id", {"hits": {"hits": [{"_id": "1"}, {"_id": "2"}]}}),
    ("nothing", {}),
    ("took,hits.total.relation", {"took": 3, "hits": {"total": {"relation": "eq"}}}),
])
def test_an_include_keeps_only_matching_paths(spec, expected) -> None:
    assert filter_response(RESP, spec) == expected


def test_an_exclude_drops_matching_paths_and_keeps_the_rest() -> None:
    out = filter_response(RESP, "-hits.hits._source,-took")
    assert out == {"timed_out": False, "hits": {"total": {"value": 2, "relation": "eq"},
                                                "hits": [{"_id": "1"}, {"_id": "2"}]}}


def test_includes_then_excludes() -> None:
    assert filter_response(RESP, "hits.hits,-**.a") == \
        {"hits": {"hits": [{"_id": "1", "_source": {"b": {"c": 2}}}, {"_id": "2"}]}}


def test_an_exclude_keeps_empty_arrays_it_did_not_name() -> None:
    assert filter_response({"hits": {"hits": []}, "x": 1}, "-x") == {"hits": {"hits": []}}
