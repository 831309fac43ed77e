"""The pure parts of ``more_like_this``, ``cross_fields`` and phrase-prefix statistics, without
Ray: Lucene's blended document frequencies, the merge of prefix expansions over shards, the
``more_like_this`` parser's refusals and its term choice from given statistics."""
from __future__ import annotations

import numpy as np
import pytest

from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query import nodes as Q
from shardsearch.cluster.engine.query.cross_fields import blended_doc_freqs
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.query.mlt_terms import candidates, mlt_query
from shardsearch.cluster.engine.query.more_like_this import LikeItem, MoreLikeThis
from shardsearch.cluster.engine.scoring import PrefixTerms, Stats
from shardsearch.cluster.errors import SearchError

MAPPING = Mapping.from_body({"properties": {"title": {"type": "text"},
                                            "body": {"type": "text"},
                                            "tag": {"type": "keyword"},
                                            "n": {"type": "integer"}}})


# --- cross_fields: BlendedTermQuery.blend ------------------------------------------------------

def test_blended_frequency_is_the_largest_plus_one_per_step_down() -> None:
    assert blended_doc_freqs([10, 3, 7], max_doc=100) == [10, 12, 11]


def test_blended_frequency_ties_share_a_value_and_absent_fields_keep_zero() -> None:
    assert blended_doc_freqs([5, 5, 0, 2], max_doc=100) == [5, 5, 0, 6]


def test_blended_frequency_never_exceeds_max_doc() -> None:
    assert blended_doc_freqs([9, 4], max_doc=9) == [9, 9]


def test_a_single_field_is_not_blended() -> None:
    assert blended_doc_freqs([4], max_doc=100) == [4]


# --- phrase prefix: expansions over shards ---------------------------------------------------

def test_prefix_expansions_merge_to_the_first_terms_over_every_shard() -> None:
    req = PrefixTerms("body", "ap", 2)
    one, two = Stats(), Stats()
    one.expansions[req] = {"apple": 3, "apricot": 1}
    two.expansions[req] = {"apex": 2, "apple": 4}
    total = Stats()
    total.add(one)
    total.add(two)
    assert total.expansion(req) == [("apex", 2), ("apple", 7)]


def test_max_expansions_is_parsed_and_negative_refused() -> None:
    q = parse_query({"match_phrase_prefix": {"body": {"query": "a b", "max_expansions": 3}}})
    assert isinstance(q, Q.MatchPhrase) and q.max_expansions == 3
    with pytest.raises(SearchError, match="No negative maxExpansions allowed"):
        parse_query({"match_phrase_prefix": {"body": {"query": "a", "max_expansions": -1}}})
    with pytest.raises(SearchError, match=r"\[match_phrase\] query does not support "
                                          r"\[max_expansions\]"):
        parse_query({"match_phrase": {"body": {"query": "a", "max_expansions": 3}}})


def test_match_phrase_zero_terms_query_is_parsed() -> None:
    q = parse_query({"match_phrase": {"body": {"query": "the", "zero_terms_query": "all"}}})
    assert isinstance(q, Q.MatchPhrase) and q.zero_terms_query == "all"
    with pytest.raises(SearchError, match="Unsupported zero_terms_query value"):
        parse_query({"match_phrase": {"body": {"query": "a", "zero_terms_query": "some"}}})


# --- more_like_this: parsing -----------------------------------------------------------------

def test_more_like_this_defaults_are_elasticsearchs() -> None:
    q = parse_query({"more_like_this": {"fields": ["body"], "like": "x"}})
    assert isinstance(q, MoreLikeThis)
    assert (q.max_query_terms, q.min_term_freq, q.min_doc_freq, q.minimum_should_match,
            q.include, q.fail_on_unsupported_field) == (25, 2, 5, "30%", False, True)


@pytest.mark.parametrize("body, text", [
    ({"fields": ["body"]}, "more_like_this requires 'like' to be specified"),
    ({"fields": [], "like": "x"}, "more_like_this requires 'fields' to be non-empty"),
    ({"like": "x", "max_query_terms": 0}, "requires 'maxQueryTerms' to be greater than 0"),
    ({"like": "x", "bogus": 1}, r"\[mlt\] query does not support \[bogus\]"),
    ({"like": {"_id": "1", "doc": {}}}, "either \\[id\\] or \\[doc\\] can be specified"),
    ({"like": {"_index": "i"}}, "neither \\[id\\] nor \\[doc\\] is specified"),
    ({"like": {"_id": "1", "colour": 1}}, "unknown field \\[colour\\]"),
    ({"like": {"_id": "1", "per_field_analyzer": {}}},
     r"item \[per_field_analyzer\] is not supported"),
    ({"like": [{"_id": str(i)} for i in range(101)]}, "more than 100 like and unlike items"),
    ({"like": None}, "Content of 'like' parameter should either be a string or an object"),
    ({"like": [["x"]]}, "Content of 'like' parameter should either be a string or an object"),
    ({"like": "x", "min_term_freq": "abc"}, r"failed to parse field \[min_term_freq\]"),
    ({"like": "x", "fields": "body"}, r"\[mlt\] query does not support \[fields\]"),
    ({"like": {"doc": 5}}, r"\[doc\] must be an object"),
    ({"like": {"_id": ["a"]}}, r"item \[_id\] must be a value"),
])
def test_more_like_this_refuses_what_it_cannot_do(body, text) -> None:
    with pytest.raises(SearchError, match=text) as e:
        parse_query({"more_like_this": body})
    assert e.value.status == 400


# --- more_like_this: the term choice ---------------------------------------------------------

def _stats(dfs: dict[tuple[str, str], int], num_docs: int = 100) -> Stats:
    return Stats(doc_count={"title": num_docs, "body": num_docs}, doc_freq=dict(dfs),
                 sum_ttf={"title": 3 * num_docs, "body": 10 * num_docs}, num_docs=num_docs)


def _chosen(q: Q.Query) -> list[tuple[str, str, float]]:
    return sorted((n.field, n.value, n.boost) for n in _walk(q) if isinstance(n, Q.Term))


def _walk(q: Q.Query) -> list[Q.Query]:
    out = [q]
    if isinstance(q, Q.Bool):
        for sub in q.must + q.should + q.must_not:
            out += _walk(sub)
    return out


def test_text_terms_below_min_term_freq_or_min_doc_freq_are_dropped() -> None:
    q = MoreLikeThis(fields=("body",), like_texts=("apple apple banana cherry cherry",))
    stats = _stats({("body", "apple"): 10, ("body", "banana"): 10, ("body", "cherry"): 3})
    assert _chosen(mlt_query(q, MAPPING, stats)) == [("body", "apple", 1.0)]


def test_the_best_terms_by_tf_idf_are_kept_and_ties_go_to_the_smaller_word() -> None:
    q = MoreLikeThis(fields=("body",), like_texts=("d c b a",), min_term_freq=1,
                     min_doc_freq=1, max_query_terms=2)
    stats = _stats({("body", "a"): 50, ("body", "b"): 5, ("body", "c"): 5, ("body", "d"): 5})
    assert [t for _, t, _ in _chosen(mlt_query(q, MAPPING, stats))] == ["b", "c"]


def test_a_text_word_goes_to_the_field_where_it_is_most_frequent() -> None:
    q = MoreLikeThis(fields=("title", "body"), like_texts=("apple",), min_term_freq=1,
                     min_doc_freq=1)
    stats = _stats({("title", "apple"): 4, ("body", "apple"): 9})
    assert _chosen(mlt_query(q, MAPPING, stats)) == [("body", "apple", 1.0)]


def test_unlike_terms_are_never_chosen() -> None:
    q = MoreLikeThis(fields=("body",), like_texts=("apple banana",), unlike_texts=("banana",),
                     min_term_freq=1, min_doc_freq=1)
    stats = _stats({("body", "apple"): 3, ("body", "banana"): 3})
    assert [t for _, t, _ in _chosen(mlt_query(q, MAPPING, stats))] == ["apple"]


def test_boost_terms_scale_by_score_over_the_lowest_chosen_score() -> None:
    q = MoreLikeThis(fields=("body",), like_texts=("rare common",), min_term_freq=1,
                     min_doc_freq=1, boost_terms=2.0)
    stats = _stats({("body", "rare"): 1, ("body", "common"): 60})
    boosts = {t: b for _, t, b in _chosen(mlt_query(q, MAPPING, stats))}
    idf = {w: np.float32(np.log(101 / (df + 1)) + 1) for w, df in (("rare", 1), ("common", 60))}
    assert boosts["common"] == pytest.approx(2.0)
    assert boosts["rare"] == pytest.approx(2.0 * idf["rare"] / idf["common"], rel=1e-6)


def test_liked_documents_choose_per_field_and_are_excluded_unless_include() -> None:
    doc = LikeItem(id="7", doc='{"title": "apple", "body": "apple banana", "n": 3}',
                   fetched=True)
    q = MoreLikeThis(fields=None, like_items=(doc,), min_term_freq=1, min_doc_freq=1)
    stats = _stats({("title", "apple"): 2, ("body", "apple"): 5, ("body", "banana"): 4})
    built = mlt_query(q, MAPPING, stats)
    assert [t[:2] for t in _chosen(built)] == [("body", "apple"), ("body", "banana"),
                                               ("title", "apple")]
    assert any(isinstance(n, Q.Ids) for b in _walk(built) if isinstance(b, Q.Bool)
               for n in b.must_not)
    kept = mlt_query(MoreLikeThis(fields=None, like_items=(doc,), min_term_freq=1,
                                  min_doc_freq=1, include=True), MAPPING, stats)
    assert not any(b.must_not for b in _walk(kept) if isinstance(b, Q.Bool))


def test_a_liked_documents_multi_fields_give_terms_too() -> None:
    mapping = Mapping.from_body({"properties": {"title": {
        "type": "text", "fields": {"raw": {"type": "keyword"}}}}})
    doc = LikeItem(doc='{"title": "Red Fox"}')
    q = MoreLikeThis(like_items=(doc,), min_term_freq=1)
    assert candidates(q, mapping) == {("title", "red"), ("title", "fox"),
                                      ("title.raw", "Red Fox")}


def test_candidates_name_every_field_a_text_word_may_go_to() -> None:
    q = MoreLikeThis(fields=("title", "body"), like_texts=("apple",), min_term_freq=1)
    assert candidates(q, MAPPING) == {("title", "apple"), ("body", "apple")}


def test_free_text_without_fields_and_numeric_fields_are_refused_by_the_shard() -> None:
    with pytest.raises(SearchError, match="cannot infer the field"):
        mlt_query(MoreLikeThis(like_texts=("x",)), MAPPING, Stats())
    with pytest.raises(SearchError, match=r"only supports text/keyword fields: \[n\]"):
        mlt_query(MoreLikeThis(fields=("n",), like_texts=("x",)), MAPPING, Stats())
    skipped = MoreLikeThis(fields=("n",), like_texts=("x",), fail_on_unsupported_field=False)
    assert isinstance(mlt_query(skipped, MAPPING, Stats()), Q.MatchNone)
