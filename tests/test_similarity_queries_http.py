"""``more_like_this``, ``multi_match`` ``cross_fields`` and ``match_phrase_prefix`` through the
official ``elasticsearch`` client, on real Ray shards behind real uvicorn: the same hits and
scores from an index of 1 shard and one of 4 (global statistics), the same hits when nothing
is scored, and refusals as 400s in Elasticsearch's envelope."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import elasticsearch
import httpx
import pytest
from elasticsearch import Elasticsearch

pytestmark = pytest.mark.slow

WORDS = "apple apricot apex banana cherry delta echo fox golf hotel".split()
MAPPINGS = {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                           "tag": {"type": "keyword"}, "n": {"type": "integer"}}}


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    """Indices ``one`` (1 shard) and ``four`` (4 shards) holding the same 60 documents."""
    client = Elasticsearch(base_url, request_timeout=60)
    rng = random.Random(19)
    docs = [{"title": " ".join(rng.choices(WORDS[:6], k=rng.randint(1, 4))),
             "body": " ".join(rng.choices(WORDS, k=rng.randint(3, 12))),
             "tag": rng.choice(["x", "y", "z"]), "n": i} for i in range(60)]
    for name, shards in (("one", 1), ("four", 4)):
        client.indices.create(index=name, settings={"number_of_shards": shards},
                              mappings=MAPPINGS)
        ops: list[dict[str, Any]] = []
        for i, d in enumerate(docs):
            ops += [{"index": {"_index": name, "_id": str(i)}}, d]
        client.bulk(operations=ops, refresh=True)
    yield client
    client.close()


def _hits(resp: Any) -> list[tuple[str, float | None]]:
    return [(h["_id"], h["_score"]) for h in resp["hits"]["hits"]]


def _same_on_one_and_four(esc: Elasticsearch, query: dict[str, Any]) -> list[Any]:
    one = _hits(esc.search(index="one", query=query, size=60))
    four = _hits(esc.search(index="four", query=query, size=60))
    assert [i for i, _ in one] == [i for i, _ in four]
    assert [s for _, s in one] == pytest.approx([s for _, s in four], rel=1e-6)
    assert one
    return one


MLT = {"fields": ["title", "body"], "min_term_freq": 1, "min_doc_freq": 1}


@pytest.mark.parametrize("query", [
    {"more_like_this": {**MLT, "like": "apple banana cherry golf"}},
    {"more_like_this": {**MLT, "like": [{"_id": "3"}, {"_id": "8"}], "max_query_terms": 5}},
    {"more_like_this": {**MLT, "like": [{"doc": {"body": "fox golf hotel"}}],
                        "unlike": "hotel"}},
    {"multi_match": {"query": "apple echo fox", "type": "cross_fields",
                     "fields": ["title^2", "body"], "tie_breaker": 0.2}},
    {"multi_match": {"query": "apple cherry", "type": "cross_fields", "operator": "and",
                     "fields": ["title", "body", "tag"]}},
    {"match_phrase_prefix": {"body": "banana ap"}},
    {"match_phrase_prefix": {"body": {"query": "ap", "max_expansions": 2}}},
])
def test_scores_are_the_same_for_one_and_four_shards(esc, query) -> None:
    _same_on_one_and_four(esc, query)


def test_a_liked_document_is_left_out_unless_include(esc) -> None:
    query = {"more_like_this": {**MLT, "like": [{"_id": "5"}]}}
    assert "5" not in [i for i, _ in _same_on_one_and_four(esc, query)]
    with_it = {"more_like_this": {**MLT, "like": [{"_id": "5"}], "include": True}}
    assert _hits(esc.search(index="four", query=with_it, size=1))[0][0] == "5"


def test_a_missing_liked_document_is_left_out(esc) -> None:
    query = {"more_like_this": {**MLT, "like": [{"_id": "nope"}, "apple"]}}
    assert _same_on_one_and_four(esc, query)


def test_unscored_searches_match_what_scored_ones_match(esc) -> None:
    for query in ({"match_phrase_prefix": {"body": {"query": "ap", "max_expansions": 1}}},
                  {"more_like_this": {**MLT, "like": "apple banana"}}):
        scored = {i for i, _ in _hits(esc.search(index="four", query=query, size=60))}
        by_field = esc.search(index="four", query=query, size=60, sort=["n"])
        filtered = esc.search(index="four", query={"bool": {"filter": [query]}}, size=60)
        assert {h["_id"] for h in by_field["hits"]["hits"]} == scored
        assert {h["_id"] for h in filtered["hits"]["hits"]} == scored
        assert esc.count(index="four", query=query)["count"] == len(scored)


def test_more_like_this_in_a_post_filter_and_named(esc) -> None:
    mlt = {"more_like_this": {**MLT, "like": [{"_id": "2"}], "_name": "similar"}}
    plain = {i for i, _ in _hits(esc.search(index="four", query=mlt, size=60))}
    post = esc.search(index="four", post_filter=mlt, size=60)
    assert {h["_id"] for h in post["hits"]["hits"]} == plain
    assert all(h["matched_queries"] == ["similar"] for h in post["hits"]["hits"])


@pytest.mark.parametrize("query", [
    {"more_like_this": {**MLT, "like": [{"_id": "4"}, "apple fox"]}},
    {"multi_match": {"query": "apple fox", "type": "cross_fields", "fields": ["title", "body"]}},
    {"match_phrase_prefix": {"body": "banana ap"}},
])
def test_explanations_top_value_is_the_score(esc, query) -> None:
    resp = esc.search(index="four", query=query, size=5, explain=True)
    assert resp["hits"]["hits"]
    for h in resp["hits"]["hits"]:
        assert h["_explanation"]["value"] == pytest.approx(h["_score"], rel=1e-6)


def test_a_phrase_of_stop_words_matches_all_with_zero_terms_query_all(esc) -> None:
    esc.indices.create(index="stops", mappings={"properties": {
        "t": {"type": "text", "analyzer": "stop"}}})
    esc.index(index="stops", id="1", document={"t": "red fox"}, refresh=True)
    for kind in ("match_phrase", "match_phrase_prefix"):
        none = esc.search(index="stops", query={kind: {"t": "the a"}})
        every = esc.search(index="stops",
                           query={kind: {"t": {"query": "the a", "zero_terms_query": "all"}}})
        assert none["hits"]["total"]["value"] == 0
        assert [h["_id"] for h in every["hits"]["hits"]] == ["1"]


def test_cross_fields_highlights_its_terms_in_every_field(esc) -> None:
    query = {"multi_match": {"query": "apple fox", "type": "cross_fields",
                             "fields": ["title", "body"]}}
    resp = esc.search(index="four", query=query, size=3,
                      highlight={"fields": {"title": {}, "body": {}}})
    marked = [f for h in resp["hits"]["hits"] for v in h.get("highlight", {}).values()
              for f in v]
    assert marked and all("<em>apple</em>" in f or "<em>fox</em>" in f for f in marked)


@pytest.mark.parametrize("body, text", [
    ({"query": {"more_like_this": {"like": "apple"}}}, "cannot infer the field"),
    ({"query": {"more_like_this": {"fields": ["n"], "like": "apple"}}},
     "more_like_this only supports text/keyword fields: [n]"),
    ({"aggs": {"f": {"filter": {"more_like_this": {**MLT, "like": "apple"}}}}},
     "[more_like_this] inside aggregations is not supported"),
    ({"query": {"more_like_this": {**MLT, "like": "apple"}},
      "highlight": {"fields": {"body": {}}}},
     "[highlight] of a [more_like_this] query is not supported"),
    ({"query": {"match_phrase_prefix": {"body": {"query": "a", "max_expansions": 10001}}}},
     "[max_expansions] above 10000"),
])
def test_refusals_are_400s_that_say_why(esc, body, text) -> None:
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="four", **body)
    assert e.value.meta.status == 400 and text in str(e.value.body)
