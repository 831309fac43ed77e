"""The ``intervals`` query: Lucene's interval iterators on one document, the rules and filters
against a small index (1 and 3 shards answer identically), the score formula, and refusals.

The documents (positions count from 0)::

    1  "Some like hot and dry, some like it cold and wet"
    2  "Its cold outside, theres no kind of atmosphere"
    3  "Baby its cold there outside"
    4  "Outside it is cold and wet"
    5  "cold rain makes it wet"
    6  "that is some cold cold rain"
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.engine.query import interval_iterators as it
from shardsearch.cluster.engine.postings import TermDict
from shardsearch.cluster.engine.query.fuzzy import FuzzySpec, candidates
from shardsearch.cluster.engine.query.intervals import interval_score
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

DOCS = {
    "1": {"text": "Some like hot and dry, some like it cold and wet", "tag": "a"},
    "2": {"text": "Its cold outside, theres no kind of atmosphere"},
    "3": {"text": "Baby its cold there outside"},
    "4": {"text": "Outside it is cold and wet"},
    "5": {"text": "cold rain makes it wet"},
    "6": {"text": "that is some cold cold rain"},
}


def terms(*positions: int) -> list[tuple[int, ...]]:
    return [(p, p, 0) for p in positions]


# ------------------------------------------------------------------ iterators on one document

def test_ordered_yields_minimal_intervals_in_order_without_overlap() -> None:
    assert it.ordered([terms(1, 4), terms(2, 6), terms(3, 7)]) == [(1, 3, 0), (4, 7, 1)]
    assert it.ordered([terms(5), terms(3)]) == []


def test_unordered_yields_minimal_intervals_in_any_order() -> None:
    assert [x[:2] for x in it.unordered([terms(3, 8), terms(5, 9)])] == [(3, 5), (5, 8), (8, 9)]


def test_phrase_needs_each_part_right_after_the_previous() -> None:
    assert it.phrase([terms(3, 8), terms(4, 10)]) == [(3, 4, 0)]


def test_a_disjunction_never_yields_an_interval_holding_an_earlier_one() -> None:
    assert it.disjunction([terms(3, 8), [(2, 9, 0)]]) == [(3, 3, 0), (8, 8, 0)]


def test_a_repeated_source_is_every_run_of_consecutive_intervals() -> None:
    assert [x[:2] for x in it.repeating(terms(1, 4, 5), 2)] == [(1, 4), (4, 5)]


def test_filters_keep_intervals_by_where_the_reference_is() -> None:
    items = [(0, 2, 0), (5, 6, 0)]
    assert it.filtered("containing", items, terms(1)) == [(0, 2, 0)]
    assert it.filtered("not_containing", items, terms(1)) == [(5, 6, 0)]
    assert it.filtered("before", items, terms(4)) == [(0, 2, 0)]
    assert it.filtered("after", items, terms(4)) == [(5, 6, 0)]
    assert it.filtered("contained_by", terms(1), items) == terms(1)
    assert it.filtered("overlapping", items, [(6, 9, 0)]) == [(5, 6, 0)]


def test_score_is_lucenes_saturation_of_the_sloppy_frequency() -> None:
    # one interval as narrow as the source can be: freq 1, score boost * 1 / 2
    assert interval_score(terms(4), 1, 1.0) == pytest.approx(0.5)
    assert interval_score(terms(4), 1, 3.0) == pytest.approx(1.5)
    # a width-3 interval of a two-term source counts 1 / (3 - 2 + 1)
    assert interval_score([(0, 2, 1)], 2, 1.0) == pytest.approx((0.5) / 1.5)


def test_fuzzy_distance_counts_a_transposition_as_one_edit_when_asked() -> None:
    terms = TermDict(["cold"])
    assert candidates(terms, FuzzySpec("f", "cald", 1)) == {"cold": 1}
    assert candidates(terms, FuzzySpec("f", "clod", 1)) == {"cold": 1}
    assert candidates(terms, FuzzySpec("f", "clod", 1, transpositions=False)) == {}


# ------------------------------------------------------------------ the query on an index

@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def idx(request) -> LocalCluster:
    c = LocalCluster().create("iv", request.param, {"properties": {
        "text": {"type": "text"}, "tag": {"type": "keyword"}}})
    assert c.index("iv", DOCS)["errors"] is False
    return c


def hits(c: LocalCluster, rule: dict, field: str = "text") -> dict[str, float]:
    r = c.search("iv", {"query": {"intervals": {field: rule}}})
    return {h["_id"]: h["_score"] for h in r["hits"]["hits"]}


def match(query: str, **opts: object) -> dict:
    return {"match": {"query": query, **opts}}


def test_match_is_unordered_by_default_and_ordered_on_request(idx) -> None:
    assert set(hits(idx, match("cold outside"))) == {"2", "3", "4"}
    assert set(hits(idx, match("cold outside", mode="ordered"))) == {"2", "3"}
    assert set(hits(idx, match("cold outside", ordered=True))) == {"2", "3"}


def test_max_gaps_zero_in_order_is_a_phrase(idx) -> None:
    assert set(hits(idx, match("cold outside", mode="ordered", max_gaps=0))) == {"2"}


def test_unordered_no_overlap_needs_distinct_positions(idx) -> None:
    rule = {"all_of": {"intervals": [{"any_of": {"intervals": [match("cold"), match("hot")]}},
                                     match("cold")], "mode": "unordered_no_overlap"}}
    assert set(hits(idx, rule)) == {"1", "6"}


def test_filters_narrow_a_rule_by_another(idx) -> None:
    assert set(hits(idx, match("cold", filter={"before": match("outside")}))) == {"2", "3"}
    assert set(hits(idx, match("cold", filter={"after": match("outside")}))) == {"4"}
    assert set(hits(idx, match("it", filter={"not_contained_by": match("cold outside")}))) \
        == {"1", "5"}


def test_prefix_wildcard_regexp_and_fuzzy_expand_terms(idx) -> None:
    assert set(hits(idx, {"prefix": {"prefix": "OUT"}})) == {"2", "3", "4"}
    assert set(hits(idx, {"wildcard": {"pattern": "out?ide"}})) == {"2", "3", "4"}
    assert set(hits(idx, {"regexp": {"pattern": "at[a-z]{2,}here"}})) == {"2"}
    assert set(hits(idx, {"fuzzy": {"term": "cald"}})) == {"1", "2", "3", "4", "5", "6"}
    assert hits(idx, {"fuzzy": {"term": "cald", "fuzziness": 0}}) == {}


def test_scores_are_the_same_for_one_and_three_shards() -> None:
    rules = [match("cold outside"), match("cold wet it", mode="unordered_no_overlap"),
             {"all_of": {"intervals": [match("cold"), {"prefix": {"prefix": "out"}}]}}]
    for rule in rules:
        got = []
        for shards in (1, 3):
            c = LocalCluster().create("iv", shards, {"properties": {"text": {"type": "text"}}})
            c.index("iv", {k: {"text": v["text"]} for k, v in DOCS.items()})
            got.append(c.search("iv", {"query": {"intervals": {"text": rule}}})["hits"]["hits"])
        assert [(h["_id"], h["_score"]) for h in got[0]] == \
            [(h["_id"], h["_score"]) for h in got[1]]


def test_boost_multiplies_the_score(idx) -> None:
    plain = hits(idx, match("rain"))
    boosted = hits(idx, {**match("rain"), "boost": 2})
    assert {k: 2 * v for k, v in plain.items()} == pytest.approx(boosted)


def test_an_unmapped_field_matches_nothing(idx) -> None:
    assert hits(idx, match("cold"), field="missing") == {}


@pytest.mark.parametrize("rule, kind, text", [
    ({"match": match("cold")["match"], "prefix": {"prefix": "c"}}, "parsing_exception",
     "Only one interval rule can be specified, found [match] and [prefix]"),
    ({"span": {}}, "parsing_exception", "Unknown interval type [span]"),
    ({}, "parsing_exception", "Missing intervals from interval query definition"),
    (match("cold", slop=2), "x_content_parse_exception", "[match] unknown field [slop]"),
    (match("cold", mode="sideways"), "illegal_argument_exception", "no mode can be parsed"),
    (match("cold", filter={"script": {"source": "true"}}), "illegal_argument_exception",
     "[intervals] filter [script] is not supported by this server"),
    (match("cold", filter={"inside": match("x")}), "parsing_exception",
     "Unknown interval filter type [inside]"),
    ({"fuzzy": {"term": "cold", "fuzziness": 3}}, "illegal_argument_exception",
     "Valid edit distances are [0, 1, 2] but was [3]"),
])
def test_malformed_rules_are_refused_naming_the_problem(idx, rule, kind, text) -> None:
    with pytest.raises(SearchError) as e:
        hits(idx, rule)
    assert e.value.es_type == kind and text in str(e.value)


def test_a_keyword_field_has_no_positions_and_is_refused(idx) -> None:
    with pytest.raises(SearchError) as e:
        hits(idx, match("a"), field="tag")
    cause = str(e.value) + repr(getattr(e.value, "__dict__", ""))
    assert "Can only use interval queries on text fields - not on [tag]" in cause


def test_an_expansion_past_128_terms_is_refused() -> None:
    c = LocalCluster().create("many", 1, {"properties": {"text": {"type": "text"}}})
    c.index("many", {"1": {"text": " ".join(f"w{i:03d}" for i in range(200))}})
    with pytest.raises(SearchError) as e:
        c.search("many", {"query": {"intervals": {"text": {"prefix": {"prefix": "w"}}}}})
    assert "expanded to too many terms (limit 128)" in str(e.value) + repr(e.value.__dict__)


def test_nesting_is_bounded_as_queries_are(idx) -> None:
    rule: dict = match("cold")
    for _ in range(40):
        rule = {"any_of": {"intervals": [rule]}}
    with pytest.raises(SearchError) as e:
        hits(idx, rule)
    assert "max_nested_depth" in str(e.value) and e.value.status == 400


def test_a_bad_pattern_is_refused_even_by_a_shard_without_documents() -> None:
    c = LocalCluster().create("few", 4, {"properties": {"text": {"type": "text"}}})
    c.index("few", {"1": {"text": "cold"}})
    for rule in ({"regexp": {"pattern": "(("}}, {"regexp": {"pattern": "a", "flags": "BOGUS"}}):
        with pytest.raises(SearchError) as e:
            c.search("few", {"query": {"intervals": {"text": rule}}})
        assert e.value.status == 400
