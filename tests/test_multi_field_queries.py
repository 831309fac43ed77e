"""``match_bool_prefix`` and the ``multi_match`` types: what each builds, how it scores, and
Elasticsearch's refusals of parameters a type does not allow. In process, 1 and 3 shards.

Documents: ``title`` and ``body`` are text::

    1  title "quick brown fox"      body "the fox jumps"
    2  title "quick brown dog"      body "lazy dog"
    3  title "brownie recipes"      body "quick quick brown"
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

DOCS = {"1": {"title": "quick brown fox", "body": "the fox jumps"},
        "2": {"title": "quick brown dog", "body": "lazy dog"},
        "3": {"title": "brownie recipes", "body": "quick quick brown"}}


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def idx(request) -> LocalCluster:
    c = LocalCluster().create("mf", request.param, {"properties": {
        "title": {"type": "text"}, "body": {"type": "text"}}})
    c.index("mf", DOCS)
    return c


def scores(c: LocalCluster, query: dict) -> dict[str, float]:
    return {h["_id"]: h["_score"] for h in c.search("mf", {"query": query})["hits"]["hits"]}


def test_match_bool_prefix_makes_the_last_term_a_prefix(idx) -> None:
    assert set(scores(idx, {"match_bool_prefix": {"title": "quick bro"}})) == {"1", "2", "3"}
    assert set(scores(idx, {"match_bool_prefix": {"title": {
        "query": "quick bro", "operator": "and"}}})) == {"1", "2"}
    # alone, the prefix clause scores a constant 1 (times boost)
    assert scores(idx, {"match_bool_prefix": {"title": {"query": "rec", "boost": 2}}}) \
        == {"3": 2.0}


def test_match_bool_prefix_fuzziness_applies_to_the_term_clauses_not_the_prefix(idx) -> None:
    fuzzy = scores(idx, {"match_bool_prefix": {"title": {
        "query": "quikc bro", "fuzziness": 1, "operator": "and"}}})
    exact = scores(idx, {"match_bool_prefix": {"title": {"query": "quick bro",
                                                         "operator": "and"}}})
    # "quikc" is one transposition from "quick": found, with Lucene's boost 1 - 1/5
    assert set(fuzzy) == set(exact) == {"1", "2"}
    assert all(fuzzy[d] < exact[d] for d in exact)
    # the last (prefix) clause is never fuzzy: "brx" is no prefix of "brown"
    assert scores(idx, {"match_bool_prefix": {"title": {
        "query": "quick brx", "fuzziness": 1, "operator": "and"}}}) == {}


def test_bool_prefix_type_sums_the_fields_like_most_fields(idx) -> None:
    mm = scores(idx, {"multi_match": {"query": "quick bro", "type": "bool_prefix",
                                      "fields": ["title", "body"]}})
    per_field = [scores(idx, {"match_bool_prefix": {f: "quick bro"}}) for f in ("title", "body")]
    for doc, s in mm.items():
        assert s == pytest.approx(sum(p.get(doc, 0.0) for p in per_field), rel=1e-6)


def test_most_fields_with_a_tie_breaker_is_a_dis_max(idx) -> None:
    q = {"query": "fox", "fields": ["title", "body"]}
    summed = scores(idx, {"multi_match": {**q, "type": "most_fields"}})
    tied = scores(idx, {"multi_match": {**q, "type": "most_fields", "tie_breaker": 0.0}})
    best = scores(idx, {"multi_match": {**q, "type": "best_fields"}})
    assert tied == best and summed["1"] > best["1"]


def test_phrase_type_uses_slop(idx) -> None:
    q = {"query": "quick fox", "type": "phrase", "fields": ["title", "body"]}
    assert scores(idx, {"multi_match": q}) == {}
    assert set(scores(idx, {"multi_match": {**q, "slop": 1}})) == {"1"}


@pytest.mark.parametrize("body, text", [
    ({"type": "bool_prefix", "slop": 1}, "[slop] not allowed for type [bool_prefix]"),
    ({"type": "phrase", "fuzziness": 1}, "Fuzziness not allowed for type [phrase]"),
    ({"type": "phrase_prefix", "fuzziness": 1},
     "Fuzziness not allowed for type [phrase_prefix]"),
    ({"type": "cross_fields", "fuzziness": 1}, "Fuzziness not allowed for type [cross_fields]"),
    ({"type": "phrase", "zero_terms_query": "all"}, "[zero_terms_query] all with type [phrase]"),
])
def test_parameters_a_type_does_not_allow_are_refused(idx, body, text) -> None:
    with pytest.raises(SearchError) as e:
        scores(idx, {"multi_match": {"query": "quick", "fields": ["title"], **body}})
    assert text in str(e.value) and e.value.status == 400


# --------------------------------------------------------------------------- combined_fields

CF_DOCS = {"1": {"a": "quick brown fox", "b": "fox"}, "2": {"a": "brown", "b": "quick quick dog"},
           "3": {"a": "dog"}, "4": {"b": "lazy fox jumps over"}}


def cf_index(shards: int) -> LocalCluster:
    c = LocalCluster().create("cf", shards, {"properties": {
        "a": {"type": "text"}, "b": {"type": "text"}, "n": {"type": "long"},
        "w": {"type": "text", "analyzer": "whitespace"}}})
    c.index("cf", CF_DOCS)
    return c


def cf(c: LocalCluster, **body: object) -> dict[str, float]:
    r = c.search("cf", {"query": {"combined_fields": body}})
    return {h["_id"]: h["_score"] for h in r["hits"]["hits"]}


def test_combined_fields_scores_the_fields_as_one_bm25f_field() -> None:
    # fox in doc 4: df = max(1 in a, 2 in b) = 2, N = max(3, 3) = 3; lengths a*2 + b:
    # sum 2*5 + 8 = 18 over 3 docs -> avgdl 6; doc 4 has length 4 and freq 1
    idf = __import__("math").log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    tf = 1 / (1 + 1.2 * (0.25 + 0.75 * 4 / 6))
    got = cf(cf_index(1), query="fox", fields=["a^2", "b"])
    assert got["4"] == pytest.approx(2.2 * idf * tf, rel=1e-5)
    assert list(got) == ["1", "4"]


def test_combined_fields_is_shard_invariant_and_honours_operator() -> None:
    one, three = cf_index(1), cf_index(3)
    for body in ({"query": "quick fox", "fields": ["a^2", "b"]},
                 {"query": "quick fox", "fields": ["a", "b"], "operator": "and"},
                 {"query": "quick brown dog", "fields": ["a", "b"],
                  "minimum_should_match": 2}):
        assert cf(one, **body) == cf(three, **body)
    assert set(cf(one, query="quick fox", fields=["a", "b"], operator="and")) == {"1"}


@pytest.mark.parametrize("body, text", [
    ({"query": "x", "fields": ["a^0.5"]}, "requires field boosts >= 1.0"),
    ({"query": "x", "fields": ["a", "n"]}, "Field [n] of type [long] does not support"),
    ({"query": "x", "fields": ["a", "w"]}, "must have the same search analyzer"),
    ({"query": "x", "fields": ["a"], "fuzziness": 1}, "[combined_fields] unknown field"),
    ({"fields": ["a"]}, "requires 'query' field"),
])
def test_combined_fields_refusals(body, text) -> None:
    with pytest.raises(SearchError) as e:
        cf(cf_index(1), **body)
    assert text in str(e.value) + repr(e.value.__dict__) and e.value.status == 400
