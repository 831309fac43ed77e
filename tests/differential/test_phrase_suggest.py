"""The ``phrase`` suggester against a real OpenSearch node: the same corrections in the same
order, with the same scores.

OpenSearch gets one shard whose documents are refreshed one by one (several segments, so Lucene
reports the number of distinct terms as unknown, as our shard-invariant statistics take it);
ours gets three shards.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .test_search_features import _rounded

pytestmark = pytest.mark.slow

INDEX = "phrase_diff"
DOCS = ["the quick brown fox jumps over the lazy dog", "quick brown foxes leap over fences",
        "a lazy dog sleeps in the sun", "the brown dog barks at the quick cat",
        "quick thinking saves the day", "noble warriors fight for the kingdom",
        "the kingdom of the brown bears", "quack quick quirk"]


@pytest.fixture(scope="module")
def phrase_pair(pair: Any) -> Iterator[Any]:
    mapping = {"properties": {"t": {"type": "text"}, "k": {"type": "keyword"}}}
    pair.send("DELETE", f"/{INDEX}")
    (s1, r1), (s2, r2) = pair.send(
        "PUT", f"/{INDEX}", {"settings": {"number_of_shards": 3}, "mappings": mapping},
        their_body={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                    "mappings": mapping})
    assert s1 == s2 == 200, (r1, r2)
    for i, text in enumerate(DOCS):
        (s1, r1), (s2, r2) = pair.send("PUT", f"/{INDEX}/_doc/{i}", {"t": text, "k": text},
                                       {"refresh": "true"})
        assert s1 in (200, 201) and s2 in (200, 201), (r1, r2)
    yield pair
    pair.send("DELETE", f"/{INDEX}")


@pytest.mark.parametrize("text,spec", [
    ("quikc brwn fox", {"field": "t"}),
    ("quikc brwn fox", {"field": "t", "max_errors": 2, "confidence": 0, "size": 10}),
    ("quikc brwn fox", {"field": "t", "highlight": {"pre_tag": "<b>", "post_tag": "</b>"},
                        "real_word_error_likelihood": 0.5}),
    ("the lazzy dgo", {"field": "t", "max_errors": 0.7, "smoothing": {"laplace": {"alpha": 0.7}}}),
    ("quick brown", {"field": "t", "confidence": 0.5,
                     "direct_generator": [{"field": "t", "suggest_mode": "always",
                                           "min_word_length": 3}]}),
    ("kingdon warriers", {"field": "t", "max_errors": 2,
                          "direct_generator": [{"field": "t", "max_edits": 1},
                                               {"field": "t", "prefix_length": 0, "size": 3}]}),
    ("brwn", {"field": "t", "smoothing": {"linear": {
        "trigram_lambda": 0.2, "bigram_lambda": 0.3, "unigram_lambda": 0.5}}}),
    ("quikc", {"field": "k", "confidence": 0}),
    ("quirc", {"field": "t", "confidence": 0, "direct_generator": [
        {"field": "t", "size": 1, "sort": "frequency", "prefix_length": 0}]}),
    ("quuck", {"field": "t", "confidence": 0, "direct_generator": [
        {"field": "t", "size": 1, "max_inspections": 1}]}),
    ("quuck", {"field": "t", "confidence": 0, "direct_generator": [{"field": "t", "size": 1}]}),
    ("quack brwn dogs", {"field": "t", "confidence": 0, "max_errors": 3, "direct_generator": [
        {"field": "t", "suggest_mode": "popular", "max_term_freq": 100, "min_word_length": 3}]}),
    ("quikc brwn fox", {"field": "t", "confidence": 0, "direct_generator": [
        {"field": "t", "min_doc_freq": 2}]}),
    ("quikc brwn fox", {"field": "t", "confidence": 0, "direct_generator": [
        {"field": "t", "min_doc_freq": 0.3, "suggest_mode": "always"}]}),
])
def test_phrase_suggestions_agree_with_opensearch(phrase_pair: Any, text: str,
                                                  spec: dict[str, Any]) -> None:
    body = {"size": 0, "suggest": {"s": {"text": text, "phrase": spec}}}
    (s1, ours), (s2, theirs) = phrase_pair.send("POST", f"/{INDEX}/_search", body)
    assert s1 == s2 == 200, (ours, theirs)
    assert _rounded(ours["suggest"]) == _rounded(theirs["suggest"])


@pytest.mark.parametrize("spec", [
    {"field": "nope"},
    {"field": "t", "smoothing": {"linear": {"trigram_lambda": 0.5, "bigram_lambda": 0.5,
                                            "unigram_lambda": 0.5}}},
    {"field": "t", "smoothing": {"linear_interpolation": {}}},
    {"field": "t", "highlight": {"pre_tag": "<b>"}},
    {"field": "t", "max_errors": -1},
])
def test_phrase_requests_opensearch_refuses_are_refused(phrase_pair: Any,
                                                        spec: dict[str, Any]) -> None:
    body = {"size": 0, "suggest": {"s": {"text": "quikc", "phrase": spec}}}
    (s1, ours), (s2, theirs) = phrase_pair.send("POST", f"/{INDEX}/_search", body)
    assert s2 == 400 and s1 == 400, (ours, theirs)
