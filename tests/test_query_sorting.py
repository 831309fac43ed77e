"""Sorting search hits: every sort option against six small documents whose expected orders are
worked out by hand in each test (split from ``test_query_dsl.py``). The real coordinator and
shard code run in process (``LocalCluster``), with one shard and with three, which must answer
identically.
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

SORT_DOCS = {
    "a": {"tag": "x", "n": 1, "d": "2020-01-03", "b": True, "r": [3, 9]},
    "b": {"tag": "y", "n": 5, "d": "2020-01-01", "b": False, "r": [1]},
    "c": {"tag": "x", "n": 3, "d": "2020-01-02", "r": [5]},
    "d": {"tag": "y", "n": 2, "b": True},
    "e": {"n": 4, "d": "2020-01-05"},
    "f": {"tag": "z"},
}


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def sortable(request) -> LocalCluster:
    c = LocalCluster().create("s", request.param, {"properties": {
        "tag": {"type": "keyword"}, "n": {"type": "long"}, "d": {"type": "date"},
        "b": {"type": "boolean"}, "r": {"type": "integer"}, "t": {"type": "text"}}})
    assert c.index("s", SORT_DOCS)["errors"] is False
    return c


def sorted_hits(c: LocalCluster, sort, **body) -> list[tuple[str, list]]:
    r = c.search("s", {"sort": sort, "size": 10, **body})
    return [(h["_id"], h["sort"]) for h in r["hits"]["hits"]]


MAX_LONG = 2**63 - 1
MIN_LONG = -(2**63)


def test_sort_on_keyword(sortable) -> None:
    # missing values sort last in both directions and print as null; ties by write order
    assert sorted_hits(sortable, ["tag"]) == [
        ("a", ["x"]), ("c", ["x"]), ("b", ["y"]), ("d", ["y"]), ("f", ["z"]), ("e", [None])]
    assert sorted_hits(sortable, [{"tag": "desc"}]) == [
        ("f", ["z"]), ("b", ["y"]), ("d", ["y"]), ("a", ["x"]), ("c", ["x"]), ("e", [None])]


def test_sort_on_numbers_with_missing_last_by_default(sortable) -> None:
    assert sorted_hits(sortable, [{"n": "asc"}]) == [
        ("a", [1]), ("d", [2]), ("c", [3]), ("e", [4]), ("b", [5]), ("f", [MAX_LONG])]
    assert sorted_hits(sortable, [{"n": {"order": "desc"}}]) == [
        ("b", [5]), ("e", [4]), ("c", [3]), ("d", [2]), ("a", [1]), ("f", [MIN_LONG])]


def test_sort_missing_first_and_missing_value(sortable) -> None:
    assert [i for i, _ in sorted_hits(sortable, [{"n": {"order": "asc", "missing": "_first"}}])] \
        == ["f", "a", "d", "c", "e", "b"]
    assert sorted_hits(sortable, [{"n": {"order": "asc", "missing": 2}}])[:3] == [
        ("a", [1]), ("d", [2]), ("f", [2])]
    assert [i for i, _ in sorted_hits(sortable, [{"tag": {"missing": "_first"}}])][:1] == ["e"]
    assert sorted_hits(sortable, [{"tag": {"order": "asc", "missing": "y"}}]) == [
        ("a", ["x"]), ("c", ["x"]), ("b", ["y"]), ("d", ["y"]), ("e", ["y"]), ("f", ["z"])]


def test_sort_on_dates_and_booleans(sortable) -> None:
    day = 86_400_000
    jan1 = 1_577_836_800_000
    assert sorted_hits(sortable, ["d"]) == [
        ("b", [jan1]), ("c", [jan1 + day]), ("a", [jan1 + 2 * day]), ("e", [jan1 + 4 * day]),
        ("d", [MAX_LONG]), ("f", [MAX_LONG])]
    assert sorted_hits(sortable, [{"b": "desc"}, {"n": "asc"}]) == [
        ("a", [1, 1]), ("d", [1, 2]), ("b", [0, 5]), ("c", [MIN_LONG, 3]),
        ("e", [MIN_LONG, 4]), ("f", [MIN_LONG, MAX_LONG])]


def test_sort_on_several_keys(sortable) -> None:
    assert sorted_hits(sortable, [{"tag": "asc"}, {"n": "desc"}]) == [
        ("c", ["x", 3]), ("a", ["x", 1]), ("b", ["y", 5]), ("d", ["y", 2]), ("f", ["z", MIN_LONG]),
        ("e", [None, 4])]


def test_sort_mode_min_and_max_on_arrays(sortable) -> None:
    # r: a [3, 9], b [1], c [5]
    def order(spec):
        return [i for i, _ in sorted_hits(sortable, [{"r": spec}])][:3]
    assert order({"order": "asc"}) == ["b", "a", "c"]                # asc uses min: 1, 3, 5
    assert order({"order": "asc", "mode": "max"}) == ["b", "c", "a"]  # 1, 5, 9
    assert order({"order": "desc"}) == ["a", "c", "b"]               # desc uses max: 9, 5, 1
    assert order({"order": "desc", "mode": "min"}) == ["c", "a", "b"]  # 5, 3, 1


def test_sort_by_score_and_doc(sortable) -> None:
    c = LocalCluster().create("sc", 1)
    c.index("sc", {"1": {"t": "fox"}, "2": {"t": "fox fox fox"}, "3": {"t": "fox dog"}})
    r = c.search("sc", {"query": {"match": {"t": "fox"}}, "sort": ["_score", "_doc"]})
    hits = r["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["2", "1", "3"]
    assert [h["sort"][0] for h in hits] == [h["_score"] for h in hits]
    # a sorted search reports a max score only with track_scores (as OpenSearch does)
    assert r["hits"]["max_score"] is None
    assert [h["_id"] for h in c.search("sc", {"sort": ["_doc"]})["hits"]["hits"]] \
        == ["1", "2", "3"]
    assert [h["_id"] for h in c.search("sc", {"sort": [{"_doc": "desc"}]})["hits"]["hits"]] \
        == ["3", "2", "1"]
    asc = c.search("sc", {"query": {"match": {"t": "fox"}}, "sort": [{"_score": "asc"}]})
    assert [h["_id"] for h in asc["hits"]["hits"]] == ["3", "1", "2"]


def test_sorting_by_a_field_leaves_score_null_unless_tracked(sortable) -> None:
    r = sortable.search("s", {"query": {"term": {"tag": "x"}}, "sort": ["n"]})
    assert [h["_score"] for h in r["hits"]["hits"]] == [None, None]
    assert r["hits"]["max_score"] is None
    r = sortable.search("s", {"query": {"term": {"tag": "x"}}, "sort": ["n"],
                              "track_scores": True})
    assert all(isinstance(h["_score"], float) and h["_score"] > 0 for h in r["hits"]["hits"])
    assert r["hits"]["max_score"] == max(h["_score"] for h in r["hits"]["hits"])


def test_sorting_on_a_text_field_is_refused_as_elasticsearch_words_it(sortable) -> None:
    with pytest.raises(SearchError) as err:
        sortable.search("s", {"sort": ["t"]})
    e = err.value
    assert e.status == 400
    text = str(e.to_cause())
    assert "Fielddata is disabled on [t] in [s]. Text fields are not optimised for operations " \
           "that require per-document field data like aggregations and sorting, so these " \
           "operations are disabled by default. Please use a keyword field instead." in text
    assert "illegal_argument_exception" in text
