"""The ``phrase`` suggester: noisy-channel corrections of a whole text, scored from
collection-wide frequencies, so the same for any shard count; every option acts or is refused.
In-process cluster (no Ray) for the rules, the official client over HTTP for the shape."""
from __future__ import annotations

import math
from typing import Any

import pytest
from elasticsearch import BadRequestError, Elasticsearch

from shardsearch.cluster.search.request import parse_search
from inprocess import LocalCluster

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

DOCS = ["the quick brown fox jumps over the lazy dog", "quick brown foxes leap over fences",
        "a lazy dog sleeps in the sun", "the brown dog barks at the quick cat",
        "quick thinking saves the day", "noble warriors fight for the kingdom",
        "the kingdom of the brown bears", "quack quick quirk"]
MAPPING = {"properties": {"t": {"type": "text"}, "k": {"type": "keyword"}}}


@pytest.fixture(scope="module")
def clusters() -> dict[int, LocalCluster]:
    out = {}
    for shards in (1, 3, 5):
        c = LocalCluster().create("i", shards=shards, mappings=MAPPING)
        c.index("i", [{"t": d, "k": d} for d in DOCS])
        out[shards] = c
    return out


def _suggest(c: LocalCluster, text: str, **spec: Any) -> list[dict[str, Any]]:
    body = {"size": 0, "suggest": {"s": {"text": text, "phrase": {"field": "t", **spec}}}}
    entry, = c.search("i", body)["suggest"]["s"]
    assert (entry["text"], entry["offset"], entry["length"]) == (text, 0, len(text))
    return entry["options"]


def _unigram(term: str, distance: float) -> float:
    """The expected ``channel * (1 + ttf) / (tokens + documents)`` of one term."""
    ttf = sum(d.split().count(term) for d in DOCS)
    tokens = sum(len(d.split()) for d in DOCS)
    return distance * (1 + ttf) / (tokens + len(DOCS))


def test_phrase_corrections_are_the_same_for_any_shard_count(clusters) -> None:
    for spec in ({}, {"max_errors": 2, "confidence": 0, "size": 10},
                 {"smoothing": {"laplace": {"alpha": 0.7}}, "max_errors": 0.7}):
        answers = [_suggest(c, "quikc brwn fox", **spec) for c in clusters.values()]
        assert answers[0] and all(a == answers[0] for a in answers)


def test_phrase_score_is_the_noisy_channel_product_of_unigrams(clusters) -> None:
    best = _suggest(clusters[3], "quikc brwn fox", max_errors=1)[0]
    assert best["text"] == "quick brwn fox"
    # Elasticsearch sums log10 of each term's score, then takes exp of the sum
    logs = [math.log10(_unigram("quick", 0.8)), math.log10(_unigram("brwn", 0.95)),
            math.log10(_unigram("fox", 0.95))]
    assert best["score"] == pytest.approx(math.exp(sum(logs)), rel=1e-6)


def test_phrase_max_errors_bounds_the_corrected_terms(clusters) -> None:
    one = _suggest(clusters[3], "quikc brwn fox", max_errors=1, confidence=0, size=20)
    two = _suggest(clusters[3], "quikc brwn fox", max_errors=2, confidence=0, size=20)
    assert all(_changed(o["text"]) <= 1 for o in one)
    assert any(_changed(o["text"]) == 2 for o in two)
    # the default (0.5 of three tokens, rounded) allows two
    assert _suggest(clusters[3], "quikc brwn fox")[0]["text"] == "quick brown fox"


def _changed(text: str) -> int:
    return sum(a != b for a, b in zip(text.split(), "quikc brwn fox".split()))


def test_phrase_confidence_keeps_corrections_scoring_above_the_input(clusters) -> None:
    strict = _suggest(clusters[3], "quikc brwn fox", confidence=1, size=20)
    loose = _suggest(clusters[3], "quikc brwn fox", confidence=0, size=20)
    assert "quikc brwn fox" in [o["text"] for o in loose]
    assert "quikc brwn fox" not in [o["text"] for o in strict]
    assert len(_suggest(clusters[3], "quikc brwn fox", confidence=100)) == 0


def test_phrase_highlight_tags_each_run_of_corrected_terms(clusters) -> None:
    got = _suggest(clusters[3], "quikc brwn fox",
                   highlight={"pre_tag": "<b>", "post_tag": "</b>"})
    assert got[0]["highlighted"] == "<b>quick brown</b> fox"
    assert all("highlighted" not in o for o in _suggest(clusters[3], "quikc brwn fox"))


def test_phrase_generator_options_change_the_candidates(clusters) -> None:
    base = _suggest(clusters[3], "kingdon warriers", max_errors=2)
    assert base[0]["text"] == "kingdom warriors"
    assert _suggest(clusters[3], "kngdm warriors")[0]["text"] == "kingdom warriors"
    assert _suggest(clusters[3], "kngdm warriors",
                    direct_generator=[{"field": "t", "max_edits": 1}]) == []
    no_short = _suggest(clusters[3], "dgo", direct_generator=[{"field": "t"}])
    short = _suggest(clusters[3], "dgo", direct_generator=[{"field": "t",
                                                            "min_word_length": 3}])
    assert no_short == [] and short[0]["text"] == "dog"
    always = _suggest(clusters[3], "quick", direct_generator=[
        {"field": "t", "suggest_mode": "always", "max_term_freq": 100}], confidence=0)
    assert "quack" in [o["text"] for o in always]
    by_freq = _suggest(clusters[3], "quirc", confidence=0, direct_generator=[
        {"field": "t", "size": 1, "sort": "frequency", "prefix_length": 0}])
    by_score = _suggest(clusters[3], "quirc", confidence=0, direct_generator=[
        {"field": "t", "size": 1, "prefix_length": 0}])
    assert by_freq[0]["text"] == "quick" and by_score[0]["text"] == "quirk"
    # quick and quack tie on distance to "quuck"; one inspection keeps the earlier term only
    wide = _suggest(clusters[3], "quuck", confidence=0, max_errors=1, direct_generator=[
        {"field": "t", "size": 1, "max_term_freq": 100}])
    narrow = _suggest(clusters[3], "quuck", confidence=0, max_errors=1, direct_generator=[
        {"field": "t", "size": 1, "max_inspections": 1, "max_term_freq": 100}])
    assert wide[0]["text"] == "quick" and narrow[0]["text"] == "quack"


def test_phrase_text_with_too_many_tokens_has_no_options(clusters) -> None:
    assert _suggest(clusters[3], "quikc " * 10) == []
    assert _suggest(clusters[3], "quikc " * 10, token_limit=11) != []


def test_phrase_on_a_keyword_field_corrects_whole_values(clusters) -> None:
    body = {"size": 0, "suggest": {"s": {"text": "quack quick quirx", "phrase": {
        "field": "k", "confidence": 0}}}}
    options = clusters[3].search("i", body)["suggest"]["s"][0]["options"]
    assert options[0]["text"] == "quack quick quirk"


@pytest.mark.parametrize("spec,needle", [
    ({"collate": {"query": {"source": "{}"}}}, "[collate]"),
    ({"gram_size": 2}, "[gram_size]"),
    ({"gram_size": 0}, "gram_size must be >= 1"),
    ({"direct_generator": [{"field": "t", "pre_filter": "standard"}]}, "[pre_filter]"),
    ({"direct_generator": [{"field": "t", "post_filter": "standard"}]}, "[post_filter]"),
    ({"direct_generator": [{"field": "k"}]}, "[k]"),
    ({"direct_generator": [{"field": "t", "nope": 1}]}, "[nope]"),
    ({"direct_generator": [{}]}, "Required [field]"),
    ({"highlight": {"pre_tag": "<b>"}}, "Pre and post tag"),
    ({"smoothing": {"linear": {"trigram_lambda": 1, "bigram_lambda": 1,
                               "unigram_lambda": 1}}}, "must sum to 1"),
    ({"smoothing": {"good_turing": {}}}, "[good_turing]"),
    ({"real_word_error_likelihood": 0}, "real_word_error_likelihood must be > 0.0"),
    ({"max_errors": -1}, "max_errors must be > 0.0"),
    ({"confidence": -1}, "confidence must be >= 0.0"),
    ({"token_limit": 0}, "token_limit must be >= 1"),
    ({"size": 10**6}, "[size]"),
    ({"unknown": 1}, "[unknown]"),
])
def test_phrase_options_not_built_or_invalid_are_refused_naming_them(spec, needle) -> None:
    body = {"suggest": {"s": {"text": "x", "phrase": {"field": "t", **spec}}}}
    with pytest.raises(Exception) as e:
        parse_search(("i",), {}, body)
    assert needle in str(e.value) and getattr(e.value, "status", 400) == 400


def test_phrase_suggester_over_http_with_the_official_client(es, base_url) -> None:
    es.put("/p", json={"settings": {"number_of_shards": 2}, "mappings": MAPPING})
    for i, d in enumerate(DOCS):
        es.put(f"/p/_doc/{i}", json={"t": d})
    es.post("/p/_refresh")
    client = Elasticsearch(base_url)
    resp = client.search(index="p", size=0, suggest={
        "text": "quikc brwn fox", "fix": {"phrase": {"field": "t"}}}, typed_keys=True)
    entry, = resp["suggest"]["phrase#fix"]
    assert entry["options"][0]["text"] == "quick brown fox"
    with pytest.raises(BadRequestError) as e:
        client.search(index="p", suggest={"s": {"text": "x", "phrase": {"field": "nope"}}})
    assert "no mapping found for field [nope]" in str(e.value)


def test_phrase_corrections_scored_are_bounded(clusters) -> None:
    from shardsearch.cluster.errors import IllegalArgument
    with pytest.raises(IllegalArgument, match="more than"):
        _suggest(clusters[3], "quikc " * 12, token_limit=20, max_errors=12)
