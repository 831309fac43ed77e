"""Every query type, against five small documents whose expected results
are worked out by hand in each test.

The documents (``title`` is ``text``, ``tag`` a ``keyword``; positions count from 0)::

    1  "The quick brown fox"       tag animal  views 5   price 9.5    2021-03-04      available  ratings [3, 9]
    2  "Quick quick fox jumps"     tag Animal  views 10  price 20.25  2022-01-01T10Z  unavailable ratings [1]
    3  "lazy dog sleeps"           tag pet     views -1               2020-12-31      author.name "Ann Lee"
    4  "brown dog and brown fox"               views 7   price 1.0
    5  (no title; body "no title here")

The real coordinator and shard code run in process (``LocalCluster``), with one shard and with
three, which must answer identically.
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import SearchError
from hypothesis import given, settings, strategies as st
from shardsearch.cluster.engine.query.phrase_freq import (_ascending_unique, _kept_if_in,
                                                        sloppy_phrase_freq)

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPINGS = {"properties": {
    "title": {"type": "text"},
    "tag": {"type": "keyword"},
    "views": {"type": "long"},
    "price": {"type": "double"},
    "published": {"type": "date"},
    "available": {"type": "boolean"},
    "ratings": {"type": "long"},
    "author": {"properties": {"name": {"type": "text",
                                       "fields": {"raw": {"type": "keyword"}}}}},
    "body": {"type": "text"},
}}

DOCS = {
    "1": {"title": "The quick brown fox", "tag": "animal", "views": 5, "price": 9.5,
          "published": "2021-03-04", "available": True, "ratings": [3, 9]},
    "2": {"title": "Quick quick fox jumps", "tag": "Animal", "views": 10, "price": 20.25,
          "published": "2022-01-01T10:00:00Z", "available": False, "ratings": [1]},
    "3": {"title": "lazy dog sleeps", "tag": "pet", "views": -1, "published": "2020-12-31",
          "author": {"name": "Ann Lee"}},
    "4": {"title": "brown dog and brown fox", "views": 7, "price": 1.0},
    "5": {"body": "no title here"},
}


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def books(request) -> LocalCluster:
    c = LocalCluster().create("books", request.param, MAPPINGS)
    assert c.index("books", DOCS)["errors"] is False
    return c


def ids(c: LocalCluster, query: dict, **body) -> list[str]:
    return c.ids("books", {"query": query, **body})


def id_set(c: LocalCluster, query: dict) -> set[str]:
    return set(c.ids("books", {"query": query, "size": 100}))


def scores(c: LocalCluster, query: dict) -> dict[str, float]:
    return {h["_id"]: h["_score"] for h in c.search("books", {"query": query})["hits"]["hits"]}


# --------------------------------------------------------------------------- match_all / none

def test_match_all_matches_every_document_with_score_one(books) -> None:
    r = books.search("books", {"query": {"match_all": {}}})
    assert r["hits"]["total"] == {"value": 5, "relation": "eq"}
    assert [h["_score"] for h in r["hits"]["hits"]] == [1.0] * 5
    assert scores(books, {"match_all": {"boost": 2}}) == {d: 2.0 for d in DOCS}


def test_match_none_matches_nothing(books) -> None:
    r = books.search("books", {"query": {"match_none": {}}})
    assert r["hits"]["total"]["value"] == 0 and r["hits"]["hits"] == []
    assert r["hits"]["max_score"] is None


# --------------------------------------------------------------------------- match

def test_match_is_an_or_of_the_analyzed_terms(books) -> None:
    # quick: 1, 2 (twice); fox: 1, 2, 4. Doc 2 has quick twice; 1 beats 4 (both terms, shorter)
    assert ids(books, {"match": {"title": "Quick FOX"}}) == ["2", "1", "4"]


def test_match_operator_and_needs_every_term(books) -> None:
    assert id_set(books, {"match": {"title": {"query": "quick fox", "operator": "and"}}}) \
        == {"1", "2"}
    assert id_set(books, {"match": {"title": {"query": "quick fox", "operator": "AND"}}}) \
        == {"1", "2"}


def test_match_minimum_should_match_counts_terms(books) -> None:
    # quick brown dog: 1 has quick+brown, 2 quick, 3 dog, 4 brown+dog
    def msm(spec):
        return id_set(books, {"match": {"title": {"query": "quick brown dog",
                                                  "minimum_should_match": spec}}})
    assert msm(2) == {"1", "4"}
    assert msm("2") == {"1", "4"}
    assert msm("-1") == {"1", "4"}
    assert msm("100%") == set()
    assert msm(1) == {"1", "2", "3", "4"}
    assert msm(4) == set()                # more than there are terms matches nothing, as in ES


def test_match_minimum_should_match_percentages_round_down(books) -> None:
    # 3 terms: 66% -> 1.98 -> 1 term; 67% -> 2.01 -> 2 terms; -34% -> 3 - 1.02 -> 2 terms
    q = lambda spec: id_set(books, {"match": {"title": {"query": "quick brown dog",
                                                        "minimum_should_match": spec}}})
    assert q("66%") == {"1", "2", "3", "4"}
    assert q("67%") == {"1", "4"}
    assert q("-34%") == {"1", "4"}
    assert q("2<67%") == {"1", "4"}      # 3 > 2 terms: 67% applies


def test_match_on_keyword_is_exact_and_on_numbers_is_a_term(books) -> None:
    assert id_set(books, {"match": {"tag": "animal"}}) == {"1"}
    assert id_set(books, {"match": {"tag": "Animal"}}) == {"2"}
    assert id_set(books, {"match": {"views": "10"}}) == {"2"}
    assert id_set(books, {"match": {"author.name": "ann"}}) == {"3"}
    assert id_set(books, {"match": {"author.name.raw": "Ann Lee"}}) == {"3"}


def test_match_with_no_terms_follows_zero_terms_query(books) -> None:
    assert id_set(books, {"match": {"title": "..."}}) == set()
    assert id_set(books, {"match": {"title": {"query": "...", "zero_terms_query": "all"}}}) \
        == set(DOCS)


def test_match_on_an_unmapped_field_matches_nothing(books) -> None:
    assert id_set(books, {"match": {"nope": "fox"}}) == set()


# --------------------------------------------------------------------------- match_phrase

def test_match_phrase_needs_the_terms_next_to_each_other(books) -> None:
    assert id_set(books, {"match_phrase": {"title": "brown fox"}}) == {"1", "4"}
    assert id_set(books, {"match_phrase": {"title": "quick fox"}}) == {"2"}
    assert id_set(books, {"match_phrase": {"title": "fox brown"}}) == set()


def test_match_phrase_slop_allows_moves(books) -> None:
    # doc 1: quick@1 fox@3 -> one extra position: slop 1. Doc 2 matches exactly.
    assert ids(books, {"match_phrase": {"title": {"query": "quick fox", "slop": 1}}}) == ["2", "1"]
    # reversed terms cost 2 moves: doc 2 (fox@2, quick@1) needs slop 2, doc 1 (fox@3, quick@1) 3
    assert id_set(books, {"match_phrase": {"title": {"query": "fox quick", "slop": 1}}}) == set()
    assert id_set(books, {"match_phrase": {"title": {"query": "fox quick", "slop": 2}}}) == {"2"}
    assert id_set(books, {"match_phrase": {"title": {"query": "fox quick", "slop": 3}}}) \
        == {"1", "2"}


def test_sloppy_phrase_frequency_is_lucenes() -> None:
    # one match of length 1 -> 1/(1+1); "quick quick fox": the best match (length 0) counts once
    assert sloppy_phrase_freq([[1], [3]], slop=1) == 0.5
    assert sloppy_phrase_freq([[0, 1], [2]], slop=1) == 1.0
    assert sloppy_phrase_freq([[0, 10], [1, 11]], slop=2) == 2.0
    assert sloppy_phrase_freq([[3], [1]], slop=1) == 0.0


_KEYS = st.lists(st.integers(0, 40), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_KEYS, _KEYS, st.booleans())
def test_phrase_key_intersection_is_numpys(a: list[int], b: list[int], b_sorted: bool) -> None:
    """Postings come sorted, so the phrase's key intersection walks them instead of sorting
    their union; whatever the input's order or repeats, the answer is ``np.intersect1d``'s."""
    import numpy as np
    keys = _ascending_unique(np.sort(np.asarray(a, dtype=np.int64)))
    assert keys.tolist() == sorted(set(a))
    other = np.asarray(sorted(b) if b_sorted else b, dtype=np.int64)
    assert _kept_if_in(keys, other).tolist() == np.intersect1d(keys, other).tolist()
    assert _ascending_unique(np.asarray(b, dtype=np.int64)).tolist() == sorted(set(b))


def test_a_phrase_repeating_a_term_needs_it_twice(books) -> None:
    assert id_set(books, {"match_phrase": {"title": {"query": "quick quick", "slop": 2}}}) \
        == {"2"}
    assert id_set(books, {"match_phrase": {"title": {"query": "brown brown", "slop": 3}}}) \
        == {"4"}
    assert id_set(books, {"match_phrase": {"title": "quick quick fox"}}) == {"2"}


def test_match_phrase_scores_exact_above_sloppy(books) -> None:
    s = scores(books, {"match_phrase": {"title": {"query": "quick fox", "slop": 1}}})
    assert s["2"] > s["1"] > 0


# --------------------------------------------------------------------------- multi_match

def test_multi_match_best_fields_takes_the_best_field(books) -> None:
    c = LocalCluster().create("mm", 1, {"properties": {"a": {"type": "text"},
                                                       "b": {"type": "text"}}})
    c.index("mm", {"x": {"a": "dog", "b": "dog dog"}, "y": {"a": "cat", "b": "dog"},
                   "z": {"a": "cat", "b": "cat"}})
    per_field = {f: {h["_id"]: h["_score"] for h in
                     c.search("mm", {"query": {"match": {f: "dog"}}})["hits"]["hits"]}
                 for f in ("a", "b")}
    best = {h["_id"]: h["_score"] for h in c.search("mm", {"query": {"multi_match": {
        "query": "dog", "fields": ["a", "b"]}}})["hits"]["hits"]}
    assert best == {"x": max(per_field["a"]["x"], per_field["b"]["x"]), "y": per_field["b"]["y"]}
    most = {h["_id"]: h["_score"] for h in c.search("mm", {"query": {"multi_match": {
        "query": "dog", "fields": ["a", "b"], "type": "most_fields"}}})["hits"]["hits"]}
    assert most["x"] == pytest.approx(per_field["a"]["x"] + per_field["b"]["x"], rel=1e-6)
    assert most["y"] == per_field["b"]["y"]
    tb = {h["_id"]: h["_score"] for h in c.search("mm", {"query": {"multi_match": {
        "query": "dog", "fields": ["a", "b"], "tie_breaker": 0.5}}})["hits"]["hits"]}
    lo, hi = sorted((per_field["a"]["x"], per_field["b"]["x"]))
    assert tb["x"] == pytest.approx(hi + 0.5 * lo, rel=1e-6)
    boosted = {h["_id"]: h["_score"] for h in c.search("mm", {"query": {"multi_match": {
        "query": "dog", "fields": ["a^3", "b"]}}})["hits"]["hits"]}
    assert boosted["x"] == pytest.approx(max(3 * per_field["a"]["x"], per_field["b"]["x"]),
                                         rel=1e-6)


def test_multi_match_over_the_documents(books) -> None:
    assert id_set(books, {"multi_match": {"query": "dog here", "fields": ["title", "body"]}}) \
        == {"3", "4", "5"}
    assert id_set(books, {"multi_match": {"query": "quick fox", "fields": ["title", "body"],
                                          "operator": "and"}}) == {"1", "2"}
    assert id_set(books, {"multi_match": {"query": "ann", "fields": ["author.*"]}}) == {"3"}


# --------------------------------------------------------------------------- term / terms

def test_term_is_not_analyzed(books) -> None:
    assert id_set(books, {"term": {"tag": "animal"}}) == {"1"}
    assert id_set(books, {"term": {"tag": {"value": "Animal"}}}) == {"2"}
    assert id_set(books, {"term": {"tag": {"value": "ANIMAL", "case_insensitive": True}}}) \
        == {"1", "2"}
    assert id_set(books, {"term": {"title": "quick"}}) == {"1", "2"}   # indexed lowercase
    assert id_set(books, {"term": {"title": "Quick"}}) == set()


def test_term_on_numbers_booleans_and_dates(books) -> None:
    assert id_set(books, {"term": {"views": 7}}) == {"4"}
    assert id_set(books, {"term": {"views": "7"}}) == {"4"}
    assert id_set(books, {"term": {"price": 9.5}}) == {"1"}
    assert id_set(books, {"term": {"ratings": 9}}) == {"1"}
    assert id_set(books, {"term": {"available": True}}) == {"1"}
    assert id_set(books, {"term": {"available": "false"}}) == {"2"}
    assert id_set(books, {"term": {"published": "2020-12-31"}}) == {"3"}
    assert id_set(books, {"term": {"published": "2022-01-01"}}) == {"2"}  # the whole day


def test_terms_matches_any_value_with_a_constant_score(books) -> None:
    assert scores(books, {"terms": {"tag": ["animal", "pet", "zzz"]}}) == {"1": 1.0, "3": 1.0}
    assert id_set(books, {"terms": {"views": [5, 7, 99]}}) == {"1", "4"}
    assert id_set(books, {"terms": {"_id": ["2", "5"]}}) == {"2", "5"}
    assert id_set(books, {"terms": {"tag": []}}) == set()


# --------------------------------------------------------------------------- range

def test_range_on_numbers(books) -> None:
    # views: 1->5, 2->10, 3->-1, 4->7
    assert id_set(books, {"range": {"views": {"gt": 5, "lte": 10}}}) == {"2", "4"}
    assert id_set(books, {"range": {"views": {"gte": 5, "lt": 10}}}) == {"1", "4"}
    assert id_set(books, {"range": {"views": {"lt": 0}}}) == {"3"}
    assert id_set(books, {"range": {"views": {"gt": 6.5}}}) == {"2", "4"}
    assert id_set(books, {"range": {"views": {"gte": "5"}}}) == {"1", "2", "4"}
    assert id_set(books, {"range": {"price": {"gte": 9.5}}}) == {"1", "2"}
    assert id_set(books, {"range": {"views": {}}}) == {"1", "2", "3", "4"}
    assert scores(books, {"range": {"views": {"gt": 5, "boost": 2}}}) == {"2": 2.0, "4": 2.0}


def test_range_on_an_array_matches_when_one_value_is_inside(books) -> None:
    # ratings: 1 -> [3, 9], 2 -> [1]
    assert id_set(books, {"range": {"ratings": {"gt": 8}}}) == {"1"}
    assert id_set(books, {"range": {"ratings": {"gte": 4, "lte": 8}}}) == set()
    assert id_set(books, {"range": {"ratings": {"lte": 3}}}) == {"1", "2"}


def test_range_on_dates(books) -> None:
    # published: 3 -> 2020-12-31, 1 -> 2021-03-04, 2 -> 2022-01-01T10:00Z
    def r(**bounds):
        return id_set(books, {"range": {"published": bounds}})
    assert r(gte="2021-01-01", lt="2022-01-01") == {"1"}
    assert r(gt="2021-03-04") == {"2"}                 # gt a day excludes the whole day
    assert r(lte="2021-03-04") == {"1", "3"}           # lte a day includes the whole day
    assert r(lt="2021-03-04") == {"3"}
    assert r(gte="2022-01-01T10:00:00Z") == {"2"}
    assert r(gt="2022-01-01T10:00:00Z") == set()
    assert r(gte=1609459200000) == {"1", "2"}          # epoch millis of 2021-01-01


def test_range_on_dates_with_date_math_format_and_time_zone(books) -> None:
    def r(**bounds):
        return id_set(books, {"range": {"published": bounds}})
    assert r(gte="2022-01-01||-1y") == {"1", "2"}      # from 2021-01-01
    assert r(gte="2021-03-15||/M") == {"1", "2"}       # rounded down to 2021-03-01
    assert r(gt="2021-03-01||/M") == {"2"}             # rounded up: after all of March 2021
    assert r(gte="now-1000y", lt="now+1d") == {"1", "2", "3"}
    assert r(gte="01/01/2021", format="dd/MM/yyyy") == {"1", "2"}
    # 11:00 at +01:00 is 10:00Z, the instant of doc 2 (excluded by lt)
    assert r(lt="2022-01-01T11:00:00", time_zone="+01:00") == {"1", "3"}
    assert r(lte="2022-01-01T11:00:00", time_zone="+01:00") == {"1", "2", "3"}


def test_range_on_keywords_compares_strings(books) -> None:
    # tags: animal, Animal, pet ("A" < "a" < "p")
    assert id_set(books, {"range": {"tag": {"gte": "a", "lt": "b"}}}) == {"1"}
    assert id_set(books, {"range": {"tag": {"gt": "animal"}}}) == {"3"}


# --------------------------------------------------------------------------- exists / ids

def test_exists(books) -> None:
    assert id_set(books, {"exists": {"field": "price"}}) == {"1", "2", "4"}
    assert id_set(books, {"exists": {"field": "title"}}) == {"1", "2", "3", "4"}
    assert id_set(books, {"exists": {"field": "author"}}) == {"3"}          # an object
    assert id_set(books, {"exists": {"field": "author.name.raw"}}) == {"3"}
    assert id_set(books, {"exists": {"field": "nope"}}) == set()


def test_ids(books) -> None:
    assert scores(books, {"ids": {"values": ["1", "3", "99"]}}) == {"1": 1.0, "3": 1.0}
    assert id_set(books, {"ids": {"values": []}}) == set()


# --------------------------------------------------------------------------- prefix / wildcard

def test_prefix(books) -> None:
    assert id_set(books, {"prefix": {"title": "qui"}}) == {"1", "2"}
    assert id_set(books, {"prefix": {"tag": "ani"}}) == {"1"}
    assert id_set(books, {"prefix": {"tag": {"value": "ani", "case_insensitive": True}}}) \
        == {"1", "2"}
    assert scores(books, {"prefix": {"title": {"value": "bro", "boost": 3}}}) \
        == {"1": 3.0, "4": 3.0}


def test_wildcard(books) -> None:
    assert id_set(books, {"wildcard": {"title": "f?x"}}) == {"1", "2", "4"}
    assert id_set(books, {"wildcard": {"title": {"value": "b*n"}}}) == {"1", "4"}
    assert id_set(books, {"wildcard": {"tag": "*nimal"}}) == {"1", "2"}
    assert id_set(books, {"wildcard": {"tag": {"wildcard": "?et"}}}) == {"3"}


def test_regexp_matches_whole_terms_in_lucene_syntax(books) -> None:
    assert id_set(books, {"regexp": {"title": "qu.*k"}}) == {"1", "2"}
    assert id_set(books, {"regexp": {"title": {"value": "b[a-z]{3}n"}}}) == {"1", "4"}
    assert id_set(books, {"regexp": {"title": "qu"}}) == set()               # whole term only
    assert id_set(books, {"regexp": {"tag": "[aA]nimal"}}) == {"1", "2"}
    assert id_set(books, {"regexp": {"tag": {"value": "ANIMAL", "case_insensitive": True}}}) \
        == {"1", "2"}
    assert id_set(books, {"regexp": {"tag": "p@"}}) == {"3"}                # @: any string
    assert id_set(books, {"query_string": {"query": "title:/f.x/"}}) == {"1", "2", "4"}


# --------------------------------------------------------------------------- bool

def test_bool_must_filter_must_not(books) -> None:
    q = {"bool": {"must": [{"match": {"title": "fox"}}],                 # 1, 2, 4
                  "filter": [{"range": {"views": {"gte": 0}}}],          # 1, 2, 4
                  "must_not": [{"term": {"available": False}}]}}         # drops 2
    assert ids(books, q) == ["1", "4"]
    # the filter and must_not do not score: same scores as the must clause alone
    alone = scores(books, {"match": {"title": "fox"}})
    assert scores(books, q) == {"1": alone["1"], "4": alone["4"]}


def test_bool_sums_the_scores_of_scoring_clauses(books) -> None:
    quick = scores(books, {"match": {"title": "quick"}})
    fox = scores(books, {"match": {"title": "fox"}})
    both = scores(books, {"bool": {"must": [{"match": {"title": "quick"}},
                                            {"match": {"title": "fox"}}]}})
    assert set(both) == {"1", "2"}
    for d in both:
        assert both[d] == pytest.approx(quick[d] + fox[d], rel=1e-6)
    boosted = scores(books, {"bool": {"must": [{"match": {"title": "quick"}}], "boost": 2}})
    assert boosted == {d: pytest.approx(2 * s, rel=1e-6) for d, s in quick.items()}


def test_bool_should_and_minimum_should_match(books) -> None:
    should = [{"match": {"title": "fox"}}, {"match": {"title": "dog"}},
              {"match": {"title": "brown"}}]
    # fox: 1 2 4; dog: 3 4; brown: 1 4
    assert id_set(books, {"bool": {"should": should}}) == {"1", "2", "3", "4"}
    assert id_set(books, {"bool": {"should": should, "minimum_should_match": 2}}) == {"1", "4"}
    assert id_set(books, {"bool": {"should": should, "minimum_should_match": 3}}) == {"4"}
    assert id_set(books, {"bool": {"should": should, "minimum_should_match": "-2"}}) \
        == {"1", "2", "3", "4"}
    # with a must clause the should clauses are optional: they only add to the score
    with_must = scores(books, {"bool": {"must": [{"term": {"tag": "pet"}}], "should": should}})
    assert set(with_must) == {"3"}
    # a pure disjunction needs one match even with minimum_should_match 0
    assert id_set(books, {"bool": {"should": should, "minimum_should_match": 0}}) \
        == {"1", "2", "3", "4"}


def test_bool_without_scoring_clauses_scores_zero_and_empty_bool_matches_all(books) -> None:
    assert scores(books, {"bool": {"filter": [{"term": {"tag": "pet"}}]}}) == {"3": 0.0}
    assert scores(books, {"bool": {"must_not": [{"exists": {"field": "title"}}]}}) == {"5": 0.0}
    assert scores(books, {"bool": {}}) == {d: 1.0 for d in DOCS}


def test_bool_clauses_may_be_objects_and_nest(books) -> None:
    q = {"bool": {"must": {"bool": {"should": [{"term": {"tag": "pet"}},
                                               {"term": {"views": 7}}]}},
                  "must_not": {"ids": {"values": ["4"]}}}}
    assert id_set(books, q) == {"3"}


def test_constant_score_gives_the_boost(books) -> None:
    assert scores(books, {"constant_score": {"filter": {"match": {"title": "fox"}},
                                             "boost": 1.5}}) == {"1": 1.5, "2": 1.5, "4": 1.5}
    assert scores(books, {"constant_score": {"filter": {"term": {"tag": "pet"}}}}) == {"3": 1.0}


def test_dis_max_takes_the_best_clause(books) -> None:
    quick = scores(books, {"match": {"title": "quick"}})
    r = scores(books, {"dis_max": {"queries": [{"match": {"title": "quick"}},
                                                {"constant_score": {"filter": {"term": {
                                                    "tag": "pet"}}}}]}})
    assert r == {"1": quick["1"], "2": quick["2"], "3": 1.0}


# --------------------------------------------------------------------------- query strings

def test_query_string_common_syntax(books) -> None:
    def qs(text, **opts):
        return id_set(books, {"query_string": {"query": text, **opts}})
    assert qs("title:quick AND views:[6 TO 20]") == {"2"}
    assert qs("fox -brown", default_field="title") == {"2"}
    assert qs("fox NOT brown", default_field="title") == {"2"}
    assert qs("dog OR jumps", default_field="title") == {"2", "3", "4"}
    assert qs("\"brown fox\"") == {"1", "4"}
    assert qs("\"fox quick\"~2", default_field="title") == {"2"}
    assert qs("qu?ck") == {"1", "2"}
    assert qs("bro*") == {"1", "4"}
    assert qs("views:>6") == {"2", "4"}
    assert qs("views:{5 TO 10]") == {"2", "4"}
    assert qs("published:[2021-01-01 TO *]") == {"1", "2"}
    assert qs("_exists_:price") == {"1", "2", "4"}
    assert qs("tag:Animal") == {"2"}
    assert qs("(dog OR fox) AND NOT brown", default_field="title") == {"2", "3"}
    assert qs("quick fox", default_operator="AND") == {"1", "2"}
    assert qs("quick fox", default_operator="OR") == {"1", "2", "4"}
    assert qs("5") == {"1"}      # the "*" default fields include numbers, leniently


def test_simple_query_string_common_syntax(books) -> None:
    def sqs(text, **opts):
        return id_set(books, {"simple_query_string": {"query": text, "fields": ["title"],
                                                      **opts}})
    assert sqs("fox +dog") == {"4"}
    assert sqs("fox | dog") == {"1", "2", "3", "4"}
    assert sqs("\"quick fox\"") == {"2"}
    assert sqs("bro*") == {"1", "4"}
    assert sqs("fox -brown", default_operator="and") == {"2"}
    # with OR, "-brown" is its own optional clause: everything without brown matches too
    assert sqs("fox -brown") == {"1", "2", "3", "4", "5"}
    assert sqs("fox) AND ((") == {"1", "2", "4"}   # bad syntax is ignored, never an error


def test_uri_search_with_q_df_and_default_operator(books) -> None:
    assert books.ids("books", None, q="quick fox", df="title", default_operator="AND") \
        == ["2", "1"]
    assert set(books.ids("books", None, q="quick fox", df="title")) == {"1", "2", "4"}
    assert set(books.ids("books", None, q="title:dog")) == {"3", "4"}
    assert set(books.ids("books", None, q="fox")) == {"1", "2", "4"}
    assert set(books.ids("books", None, q="views:[0 TO 7]")) == {"1", "4"}


# --------------------------------------------------------------------------- URI search over HTTP

def test_http_uri_search_with_q_df_default_operator_and_count(es) -> None:
    import orjson
    es.put("/books", json={"settings": {"number_of_shards": 2}, "mappings": MAPPINGS})
    lines = []
    for i, d in DOCS.items():
        lines += [orjson.dumps({"index": {"_index": "books", "_id": i}}), orjson.dumps(d)]
    assert es.post("/_bulk?refresh=true", content=b"\n".join(lines) + b"\n",
                   headers={"content-type": "application/x-ndjson"}).json()["errors"] is False

    def q(**params) -> list[str]:
        r = es.get("/books/_search", params=params)
        assert r.status_code == 200, r.text
        return [h["_id"] for h in r.json()["hits"]["hits"]]
    assert q(q="quick fox", df="title", default_operator="AND") == ["2", "1"]
    assert set(q(q="quick fox", df="title", default_operator="OR")) == {"1", "2", "4"}
    assert set(q(q="title:dog")) == {"3", "4"}
    assert set(q(q="title:(dog OR jumps) AND NOT views:7")) == {"2", "3"}
    assert set(q(q="views:[0 TO 7]")) == {"1", "4"}
    assert set(q(q="tag:Animal")) == {"2"}
    assert set(q(q="fox", sort="views:desc")) == {"1", "2", "4"}
    assert q(q="fox", sort="views:desc") == ["2", "4", "1"]
    r = es.get("/books/_count", params={"q": "fox", "df": "title"})
    assert r.json()["count"] == 3
    r = es.get("/books/_search", params={"q": "title:(unclosed"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["root_cause"][0]["type"] == "query_shard_exception"
    assert err["root_cause"][0]["reason"] == "Failed to parse query [title:(unclosed]"


@pytest.mark.parametrize("query, expected", [
    ({"term": {"_index": "books"}}, 5),
    ({"term": {"_index": "bo*"}}, 5),
    ({"term": {"_index": "other"}}, 0),
    ({"terms": {"_index": ["other", "books"]}}, 5),
    ({"match": {"_index": "books"}}, 5),
    ({"prefix": {"_index": "boo"}}, 5),
    ({"prefix": {"_index": "x"}}, 0),
    ({"wildcard": {"_index": "b?oks"}}, 5),
    ({"regexp": {"_index": "b.*s"}}, 5),
    ({"bool": {"must_not": [{"match": {"_index": "books"}}]}}, 0),
])
def test_a_query_on_index_matches_every_document_of_a_matching_index(books, query, expected):
    assert len(id_set(books, query)) == expected


@pytest.mark.parametrize("query, kind", [
    ({"prefix": {"views": "5"}}, "prefix"),
    ({"wildcard": {"published": "2021*"}}, "wildcard"),
    ({"regexp": {"available": "tr.*"}}, "regexp"),
])
def test_a_pattern_query_on_a_field_without_string_terms_is_refused_not_empty(books, query, kind):
    with pytest.raises(SearchError) as err:
        ids(books, query)
    text = str(err.value.to_cause())
    assert err.value.status == 400 and "query_shard_exception" in text
    assert f"Can only use {kind} queries on" in text


def test_match_fuzziness_finds_terms_within_the_edit_distance(books):
    fox = ids(books, {"match": {"title": "fox"}})
    assert fox and ids(books, {"match": {"title": {"query": "fox", "fuzziness": 0}}}) == fox
    assert ids(books, {"match": {"title": {"query": "fxo", "fuzziness": 0}}}) == []
    assert set(ids(books, {"match": {"title": {"query": "fxo", "fuzziness": "AUTO"}}})) \
        >= set(fox)


def test_a_query_analyzer_that_does_not_exist_here_is_refused(books):
    with pytest.raises(SearchError) as err:
        ids(books, {"match": {"title": {"query": "fox", "analyzer": "english"}}})
    assert err.value.status == 400 and "failed to find analyzer [english]" in str(
        err.value.to_cause())
