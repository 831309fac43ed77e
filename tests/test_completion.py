"""The ``completion`` field and suggester: analysed inputs, prefix / regex / fuzzy lookups,
the order of options, ``skip_duplicates``, deleted documents — the pure logic without Ray, and
whole searches through the in-process cluster (over several shards)."""
from __future__ import annotations

import numpy as np
import pytest

from inprocess import LocalCluster
from shardsearch.cluster.engine.completion import (NO_CONTEXT, SEP, CompletionSpec, analysed,
                                                   best_per_document, build_column,
                                                   document_inputs, matching)
from shardsearch.cluster.engine.completion_fuzzy import FuzzyOptions, accepted_prefix, boost
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

SIMPLE = CompletionSpec()


def test_inputs_are_analysed_by_the_simple_analyzer_joined_by_separators() -> None:
    assert analysed("Nevermind Nirvana 2", SIMPLE) == f"nevermind{SEP}nirvana"
    assert analysed("Nevermind Nirvana", CompletionSpec(preserve_separators=False)) == \
        "nevermindnirvana"


@pytest.mark.parametrize("value, inputs", [
    ("a", [("a", 1)]), (["a", "b"], [("a", 1), ("b", 1)]),
    ({"input": ["a", "b"], "weight": 3}, [("a", 3), ("b", 3)]),
    ([{"input": "a", "weight": "7"}, {"input": "b"}], [("a", 7), ("b", 1)])])
def test_document_values_take_every_elasticsearch_form(value, inputs) -> None:
    assert document_inputs(value) == [(t, w, []) for t, w in inputs]


def test_inputs_of_a_context_field_carry_their_contexts_and_need_some() -> None:
    got = document_inputs({"input": "a", "contexts": {"g": ["x", 1]}}, ("k", "g"), "s")
    assert got == [("a", 1, [(1, "x"), (1, "1")])]
    with pytest.raises(SearchError, match=r"Contexts are mandatory in context enabled "
                                          r"completion field \[s\]"):
        document_inputs("a", ("g",), "s")


@pytest.mark.parametrize("value, reason", [
    ({"input": "a", "weight": 1.5}, "weight must be an integer, but was [1.5]"),
    ({"input": "a", "weight": -1}, "weight must be in the interval [0..2147483647], but was [-1]"),
    ({"input": "a", "foo": 1}, "unknown field name [foo], must be one of [input, weight, contexts]"),
    (12, "failed to parse [completion]: expected text or object, but got VALUE_NUMBER")])
def test_bad_document_values_fail_with_elasticsearch_texts(value, reason) -> None:
    with pytest.raises(SearchError) as e:
        document_inputs(value)
    assert e.value.reason == "failed to parse" and e.value.extra["caused_by"]["reason"] == reason


def _column():
    entries = [(analysed(t, SIMPLE), w, t, row, NO_CONTEXT) for t, w, row in [
        ("Nirvana", 34, 0), ("Nevermind Nirvana", 34, 0), ("nine inch", 1, 1),
        ("Nirvana Band", 1, 1), ("nirvana x", 5, 2), ("zed", 50, 2)]]
    return build_column(entries)


def test_a_prefix_is_a_range_of_the_sorted_analysed_forms() -> None:
    col = _column()
    assert col.keys == sorted(col.keys)
    got = [col.texts[i] for i in matching(col, "nir", None)]
    assert got == ["Nirvana", "Nirvana Band", "nirvana x"]


def test_each_document_is_suggested_once_by_its_best_input_and_only_when_visible() -> None:
    col = _column()
    best = best_per_document(col, matching(col, "n", None), np.array([True, True, False]))
    assert sorted((row, key[2]) for key, row, _ in best) == [(0, "Nevermind Nirvana"),
                                                             (1, "nine inch")]


@pytest.mark.parametrize("query, key, opts, expected", [
    ("nir", "nirvana", FuzzyOptions(), 2),           # one deletion accepts "ni"
    ("nrv", "nevermind", FuzzyOptions(), 3),         # "nev": one substitution
    ("nivrana", "nirvana", FuzzyOptions(), 7),        # a transposition is one edit
    ("nivrana", "nirvana", FuzzyOptions(transpositions=False), None),
    ("irvana", "nirvana", FuzzyOptions(), None),       # the first character is exact
    ("irvana", "nirvana", FuzzyOptions(prefix_length=0), 7),
    ("ni", "nirvana", FuzzyOptions(), 2)])             # shorter than min_length: exact
def test_fuzzy_prefixes_accept_as_lucenes_automaton(query, key, opts, expected) -> None:
    assert accepted_prefix(query, key, opts) == expected


def test_the_fuzzy_boost_is_the_common_prefix_with_the_smallest_accepted_path() -> None:
    assert boost("nrv", "nev") == 1 and boost("nevermind", "nevermin") == 8
    assert boost("abc", None) == 0


PROPS = {"s": {"type": "completion"}, "sa": {"type": "alias", "path": "s"},
         "n": {"type": "completion", "preserve_separators": False, "max_input_length": 5}}
DOCS = {"1": {"s": {"input": ["Nevermind Nirvana", "Nirvana"], "weight": 34}},
        "2": {"s": ["Nirvana Band", "nine inch"]},
        "3": {"s": [{"input": "nirvana x", "weight": 5}, {"input": "zed", "weight": 50}]},
        "4": {"s": "nirvana", "n": "Nevermind Nirvana"}, "5": {"s": "nirvana"}}


@pytest.fixture(scope="module")
def c() -> LocalCluster:
    cl = LocalCluster().create("c", shards=3, mappings={"properties": PROPS})
    cl.index("c", DOCS)
    return cl


def options(cl: LocalCluster, spec: dict, **kw) -> list[tuple[str, str, float]]:
    body = {"_source": False, "suggest": {"x": {**kw, "completion": spec}}}
    entry = cl.search("c", body)["suggest"]["x"][0]
    return [(o["_id"], o["text"], o["_score"]) for o in entry["options"]]


def test_options_come_by_weight_then_analysed_form_then_document_order(c) -> None:
    assert options(c, {"field": "s"}, prefix="nir") == [
        ("1", "Nirvana", 34.0), ("3", "nirvana x", 5.0), ("4", "nirvana", 1.0),
        ("5", "nirvana", 1.0), ("2", "Nirvana Band", 1.0)]


def test_skip_duplicates_and_size(c) -> None:
    got = options(c, {"field": "s", "skip_duplicates": True, "size": 4}, prefix="nir")
    assert [t for _, t, _ in got] == ["Nirvana", "nirvana x", "nirvana", "Nirvana Band"]
    assert len(options(c, {"field": "s", "size": 2}, text="n")) == 2


def test_regex_alias_and_mapping_parameters(c) -> None:
    assert [i for i, _, _ in options(c, {"field": "sa"}, regex="n[ei]v")] == ["1"]
    assert options(c, {"field": "n"}, prefix="never") == [("4", "Never", 1.0)]


def test_fuzzy_scores_scale_the_weight_by_the_boost(c) -> None:
    got = options(c, {"field": "s", "fuzzy": {}}, prefix="nir")
    assert got[:2] == [("1", "Nirvana", 68.0), ("3", "nirvana x", 10.0)]


def test_a_deleted_document_is_never_suggested() -> None:
    cl = LocalCluster().create("d", shards=2, mappings={"properties": PROPS})
    cl.index("d", {"1": {"s": "alpha"}, "2": {"s": "alps"}})
    cl.bulk([{"action": "delete", "index": "d", "id": "1"}])
    got = cl.search("d", {"suggest": {"x": {"prefix": "al", "completion": {"field": "s"}}}})
    assert [o["_id"] for o in got["suggest"]["x"][0]["options"]] == ["2"]


@pytest.mark.parametrize("spec, text", [
    ({"field": "s", "contexts": {"g": "x"}}, "[contexts] applies to a completion field with"),
    ({"field": "zz"}, "no mapping found for field [zz]"),
    ({"field": "s", "size": 100_000}, "[size] of a completion suggester must be at most"),
    ({"field": "s", "fuzzy": {"fuzziness": 3}}, "[fuzziness] must be AUTO, 0, 1 or 2")])
def test_what_is_not_built_or_bounded_is_refused_by_name(c, spec, text) -> None:
    with pytest.raises(SearchError) as e:
        c.search("c", {"suggest": {"x": {"prefix": "n", "completion": spec}}})
    assert text in e.value.reason


@pytest.mark.parametrize("spec, text", [
    ({"type": "completion", "contexts": [{"name": "g", "type": "geo"}]}, "[geo] contexts"),
    ({"type": "completion", "contexts": [{"name": "g", "type": "category", "path": "p"}]},
     "[path] of a completion context is not supported"),
    ({"type": "completion", "fields": {"k": {"type": "keyword"}}}, "unknown parameter [fields]")])
def test_unbuilt_completion_mapping_parameters_are_refused(spec, text) -> None:
    with pytest.raises(SearchError) as e:
        LocalCluster().create("m", mappings={"properties": {"s": spec}})
    assert text in e.value.reason


@pytest.mark.parametrize("body, text", [
    ({"query": {"term": {"s": "nirvana"}}}, "[term] queries on the completion field [s]"),
    ({"query": {"exists": {"field": "s"}}}, "[exists] queries on the completion field [s]"),
    ({"query": {"query_string": {"query": "s:nirvana"}}}, "the completion field [s]"),
    ({"query": {"span_term": {"sa": "nirvana"}}}, "the completion field [s]")])
def test_queries_on_a_completion_field_are_refused_never_answered_empty(c, body, text) -> None:
    with pytest.raises(SearchError) as e:
        c.search("c", body)
    assert text in e.value.reason


@pytest.mark.parametrize("body", [{"sort": ["s"]}, {"aggs": {"a": {"terms": {"field": "s"}}}}])
def test_sorts_and_aggregations_on_a_completion_field_fail_as_in_elasticsearch(c, body) -> None:
    with pytest.raises(SearchError) as e:
        c.search("c", body)
    assert "Fielddata is not supported on field [s] of type [completion]" in str(e.value.extra)


CTX = {"s": {"type": "completion", "contexts": [{"name": "pt", "type": "category"},
                                                {"name": "c2", "type": "category"}]}}


@pytest.fixture(scope="module")
def cx() -> LocalCluster:
    cl = LocalCluster().create("cx", shards=2, mappings={"properties": CTX})
    cl.index("cx", {"1": {"s": {"input": ["apple pie", "apricot"], "weight": 5,
                                "contexts": {"pt": ["food", "cafe"], "c2": ["x", "y"]}}},
                    "2": {"s": {"input": "apple store", "weight": 5, "contexts": {"pt": "shop"}}}})
    return cl


@pytest.mark.parametrize("contexts, expected", [
    ({"pt": ["cafe"]}, [("1", "apple pie", 5.0, {"pt": ["cafe"]})]),
    ({"pt": [{"context": "sh", "prefix": True, "boost": 3}, "food"]},
     [("2", "apple store", 15.0, {"pt": ["shop"]}), ("1", "apple pie", 5.0, {"pt": ["food"]})]),
    ({"pt": "food", "c2": "y"}, [("1", "apple pie", 5.0, {"pt": ["food"], "c2": ["y"]})]),
    ({"pt": ["food", "cafe"]}, [("1", "apple pie", 5.0, {"pt": ["cafe", "food"]})])])
def test_category_contexts_filter_boost_and_are_reported(cx, contexts, expected) -> None:
    body = {"_source": False, "suggest": {"x": {"prefix": "ap", "completion": {
        "field": "s", "contexts": contexts}}}}
    got = cx.search("cx", body)["suggest"]["x"][0]["options"]
    assert [(o["_id"], o["text"], o["_score"], o.get("contexts")) for o in got] == expected


@pytest.mark.parametrize("completion, text", [
    ({"field": "s"}, "Missing mandatory contexts in context query"),
    ({"field": "s", "contexts": {"zz": "x"}}, "Unknown context name [zz], must be one of [c2, pt]")])
def test_context_queries_fail_as_in_elasticsearch(cx, completion, text) -> None:
    with pytest.raises(SearchError) as e:
        cx.search("cx", {"suggest": {"x": {"prefix": "ap", "completion": completion}}})
    assert text in e.value.reason


def test_inputs_under_arrays_of_objects_are_suggested() -> None:
    cl = LocalCluster().create("o", mappings={"properties": {"o": {"properties": {
        "s": {"type": "completion"}}}}})
    cl.index("o", {"1": {"o": [{"s": "alpha"}, {"s": {"input": "alps", "weight": 3}}]}})
    got = cl.search("o", {"suggest": {"x": {"prefix": "al", "completion": {"field": "o.s"}}}})
    assert [(o["text"], o["_score"]) for o in got["suggest"]["x"][0]["options"]] == [
        ("alps", 3.0)]


def test_an_index_without_source_suggests_without_it() -> None:
    cl = LocalCluster().create("ns", mappings={"_source": {"enabled": False},
                                               "properties": {"s": {"type": "completion"}}})
    cl.index("ns", {"1": {"s": "alpha"}})
    got = cl.search("ns", {"suggest": {"x": {"prefix": "al", "completion": {"field": "s"}}}})
    assert got["suggest"]["x"][0]["options"] == [
        {"text": "alpha", "_index": "ns", "_id": "1", "_score": 1.0}]
