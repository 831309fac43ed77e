"""Fuzzy expansion as pure functions (``cluster/engine/query/fuzzy.py``), without Ray: the
``fuzziness`` spellings, which dictionary terms are candidates, Lucene's boosts and the order
of the kept terms, and the global choice the statistics round makes from each shard's best."""
from __future__ import annotations

import random

import pytest

from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.postings import TermDict
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.query.fuzzy import (FuzzySpec, blended_doc_freq, boost,
                                                    candidates, fuzzy_edits, top_terms, within)
from shardsearch.cluster.engine.query.fuzzy_query import keep_local_top
from shardsearch.cluster.engine.query.nodes import DisMax
from shardsearch.cluster.engine.query.rewrite import expand
from shardsearch.cluster.engine.scoring import Stats
from shardsearch.cluster.errors import SearchError


@pytest.mark.parametrize("term, edits", [("", 0), ("ab", 0), ("abc", 1), ("abcde", 1),
                                         ("abcdef", 2), ("abcdefghij", 2)])
def test_auto_allows_no_edit_below_three_characters_one_below_six_then_two(term, edits):
    assert fuzzy_edits("AUTO", term) == edits
    assert fuzzy_edits("auto", term) == edits


def test_auto_with_bounds_moves_the_thresholds():
    assert [fuzzy_edits("AUTO:2,4", "x" * n) for n in range(1, 6)] == [0, 1, 1, 2, 2]


@pytest.mark.parametrize("value, edits", [(0, 0), (1, 1), (2, 2), ("1", 1), ("1.7", 1),
                                          ("7", 2)])
def test_a_number_is_its_integer_part_and_a_string_is_capped_at_two(value, edits):
    assert fuzzy_edits(value, "whatever") == edits


@pytest.mark.parametrize("value, reason", [
    (3, "Valid edit distances are [0, 1, 2] but was [3]"),
    ("abc", "Invalid fuzziness value [abc]"),
    ("-1", "maxEdits must be between 0 and 2"),
    ("AUTO:5,2", "fuzziness wrongly configured"),
    ("AUTO:x", "failed to find low and high distance values"),
])
def test_malformed_fuzziness_is_refused_naming_it(value, reason):
    with pytest.raises(SearchError) as e:
        fuzzy_edits(value, "term")
    assert e.value.status == 400 and reason in str(e.value)


TERMS = TermDict(sorted(["act", "bat", "cast", "cat", "cats", "coat", "cot", "cut", "dog",
                         "scat", "tac", "tca"]))


def test_candidates_are_the_terms_within_the_distance_with_their_edits():
    assert candidates(TERMS, FuzzySpec("f", "cat", 1)) == {
        "act": 1, "bat": 1, "cast": 1, "cat": 0, "cats": 1, "coat": 1, "cot": 1, "cut": 1,
        "scat": 1}


def test_a_swap_of_neighbours_is_one_edit_only_with_transpositions():
    assert candidates(TERMS, FuzzySpec("f", "cta", 1))["cat"] == 1
    assert "cat" not in candidates(TERMS, FuzzySpec("f", "cta", 1, transpositions=False))
    assert candidates(TERMS, FuzzySpec("f", "cta", 2, transpositions=False))["cat"] == 2


def test_the_prefix_length_must_match_exactly():
    assert set(candidates(TERMS, FuzzySpec("f", "cat", 1, prefix_length=2))) == \
        {"cast", "cat", "cats"}
    # a prefix as long as the term: the term alone (Lucene's SingleTermsEnum)
    assert candidates(TERMS, FuzzySpec("f", "cat", 2, prefix_length=3)) == {"cat": 0}
    assert candidates(TERMS, FuzzySpec("f", "cax", 2, prefix_length=3)) == {}


def test_zero_edits_is_the_exact_term():
    assert candidates(TERMS, FuzzySpec("f", "cat", 0)) == {"cat": 0}
    assert candidates(TERMS, FuzzySpec("f", "kat", 0)) == {}


def test_the_boost_is_one_minus_edits_over_the_shorter_length():
    assert boost("cat", "cat", 0) == 1.0
    assert boost("cat", "cats", 1) == pytest.approx(1 - 1 / 3)
    assert boost("catalog", "catalogs", 1) == pytest.approx(1 - 1 / 7)


def test_kept_terms_are_the_best_boosts_ties_to_the_smaller_term_listed_in_term_order():
    found = candidates(TERMS, FuzzySpec("f", "cat", 1))
    kept = top_terms("cat", found, 3)
    # the exact term first (boost 1); then every 1-edit term of length >= 3 ties at 2/3:
    # the smallest terms win the tie
    assert [t for t, _ in kept] == ["act", "bat", "cat"]
    assert dict(kept)["cat"] == 1.0
    assert len(top_terms("cat", found, 0)) == len(found)


def test_blended_frequency_is_the_largest_of_the_kept_terms():
    assert blended_doc_freq([("a", 1.0), ("b", 0.5)], {"a": 3, "b": 9, "c": 50}) == 9


def test_within_is_what_a_highlighter_marks():
    spec = FuzzySpec("f", "quikc", 1)
    assert within(spec, "quick") and within(spec, "quikc")
    assert not within(spec, "quack") and not within(FuzzySpec("f", "quikc", 1, 1), "xuikc")


def _shard_stats(spec: FuzzySpec, shard_terms: dict[str, int]) -> Stats:
    """One shard's statistics round answer: its candidates with document counts, cut to its
    own best."""
    st = Stats()
    found = candidates(TermDict(sorted(shard_terms)), spec)
    st.fuzzy[spec] = {t: (ed, shard_terms[t]) for t, ed in found.items()}
    keep_local_top(st)
    return st


@pytest.mark.parametrize("seed", range(20))
def test_the_union_of_each_shards_best_holds_the_global_best_with_exact_frequencies(seed):
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abc") for _ in range(rng.randint(2, 5))) for _ in range(60)]
    spec = FuzzySpec("f", "abca", 2, max_expansions=rng.randint(1, 6))
    shards = [{t: rng.randint(1, 4) for t in rng.sample(vocab, 25)} for _ in range(3)]
    everything: dict[str, int] = {}
    for sh in shards:
        for t, df in sh.items():
            everything[t] = everything.get(t, 0) + df
    total = Stats()
    for sh in shards:
        total.add(_shard_stats(spec, sh))
    merged = total.fuzzy[spec]
    want = top_terms(spec.term, candidates(TermDict(sorted(everything)), spec),
                     spec.max_expansions)
    got = top_terms(spec.term, {t: v[0] for t, v in merged.items()}, spec.max_expansions)
    assert got == want
    assert all(merged[t][1] == everything[t] for t, _ in got)


MAPPING = Mapping.from_body({"properties": {"t": {"type": "text"}, "k": {"type": "keyword"},
                                            "n": {"type": "long"}}})


def test_a_query_string_fuzzy_term_goes_to_every_string_field_of_its_pattern():
    got = expand(parse_query({"simple_query_string": {"query": "Quikc~1"}}), MAPPING)
    assert isinstance(got, DisMax)
    assert sorted((q.field, q.value) for q in got.queries) == [("k", "Quikc"), ("t", "quikc")]


def test_the_fuzzy_query_names_one_field_never_a_pattern():
    q = parse_query({"fuzzy": {"t*": "quikc"}})
    assert expand(q, MAPPING) == q
