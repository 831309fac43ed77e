"""The pure parts of the search features, without Ray: rescoring a window, highlight
fragments and phrase marks, the term suggester's edit distance, collapse's first-per-group."""
from __future__ import annotations

import orjson
import pytest

from shardsearch.cluster.engine.collapse import first_per_key
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.suggest_terms import edit_distance
from shardsearch.cluster.search.highlight import highlight_hit
from shardsearch.cluster.search.request import parse_search
from shardsearch.cluster.search.rescore import Rescorer, rescore_window

MAPPING = Mapping.from_body({"properties": {"text": {"type": "text"},
                                            "tag": {"type": "keyword"}}})


def _highlight(body: dict, source: dict) -> dict:
    req = parse_search(("i",), {}, body)
    return highlight_hit(req.highlight, req.query, orjson.dumps(source), MAPPING)


def test_rescore_combines_the_window_and_keeps_the_rest_after_it() -> None:
    r = Rescorer(query=None, window_size=2, query_weight=1.0, rescore_query_weight=10.0)
    order, scores = rescore_window((r,), [3.0, 2.0, 1.0], [[None, 0.5, 1.0]])
    assert order == [1, 0, 2] and scores == [7.0, 3.0, 1.0]


def test_rescore_ties_keep_the_previous_order() -> None:
    r = Rescorer(query=None, window_size=3, score_mode="max")
    order, _ = rescore_window((r,), [1.0, 1.0, 1.0], [[None, None, None]])
    assert order == [0, 1, 2]


def test_a_phrase_marks_its_terms_only_where_the_phrase_occurs() -> None:
    got = _highlight({"query": {"match_phrase": {"text": "brown fox"}},
                      "highlight": {"fields": {"text": {"number_of_fragments": 0}}}},
                     {"text": "brown dog and a brown fox"})
    assert got == {"text": ["brown dog and a <em>brown</em> <em>fox</em>"]}


def test_prefix_and_wildcard_queries_mark_the_tokens_they_match() -> None:
    got = _highlight({"query": {"bool": {"should": [{"prefix": {"text": "qui"}},
                                                    {"wildcard": {"text": "f?x"}}]}},
                      "highlight": {"fields": {"text": {}}}},
                     {"text": "The quick fox"})
    assert got == {"text": ["The <em>quick</em> <em>fox</em>"]}


def test_must_not_clauses_mark_nothing_and_keyword_fields_mark_whole_values() -> None:
    got = _highlight({"query": {"bool": {"must": [{"term": {"tag": "A b"}}],
                                         "must_not": [{"match": {"text": "fox"}}]}},
                      "highlight": {"fields": {"*": {}}}},
                     {"text": "fox", "tag": "A b"})
    assert got == {"tag": ["<em>A b</em>"]}


def test_order_score_puts_the_fragment_with_most_terms_first() -> None:
    text = "One fox here. Then a fox and a dog together. End."
    got = _highlight({"query": {"match": {"text": "fox dog"}}, "highlight": {
        "order": "score", "fields": {"text": {"fragment_size": 40}}}}, {"text": text})
    assert got["text"][0] == "Then a <em>fox</em> and a <em>dog</em> together. End."


@pytest.mark.parametrize("a,b,d", [("quick", "quikc", 1), ("fox", "fix", 1), ("abc", "abc", 0),
                                   ("kitten", "sitting", 3)])
def test_edit_distance_counts_adjacent_transpositions_as_one(a, b, d) -> None:
    assert edit_distance(a, b, 5) == d


def test_first_per_key_keeps_the_first_of_each_group_and_one_and_one_point_zero_are_one() -> None:
    assert first_per_key(["a", "b", "a", None, 1, 1.0, None]) == [0, 1, 3, 4]
