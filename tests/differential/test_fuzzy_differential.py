"""Fuzzy matching against a real OpenSearch node: the ``fuzzy`` query, ``match`` /
``multi_match`` / ``match_bool_prefix`` with ``fuzziness``, ``term~N`` in both query strings
and the ``intervals`` fuzzy rule find the same documents with the same scores (ours on 3
shards, OpenSearch on 1), on a corpus of near-identical words where the choice of the top
``max_expansions`` terms, their boosts and their blended frequencies all show; bad options
fail as OpenSearch fails them."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from .test_differential import check
from .loading import load_index

pytestmark = pytest.mark.slow

INDEX = "fuzzydiff"
WORDS = ("cat cats cut cot coat act bat bats cart carts chat cast cost coast cab cap "
         "catalog catalogs category dog dogs dig dot doge dodge fog frog from form farm "
         "quick quack quirk quickly brown brow brawn crown").split()
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                          "tag": {"type": "keyword"}, "n": {"type": "integer"}}}


def _documents() -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(19)
    docs = []
    for i in range(90):
        src: dict[str, Any] = {"title": " ".join(rng.choice(WORDS)
                                                 for _ in range(rng.randint(1, 4))),
                               "n": i % 7}
        if rng.random() < 0.8:
            src["body"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        if rng.random() < 0.7:
            src["tag"] = rng.choice(("Alpha", "alpha", "alpah", "beta", "betas", "gamma"))
        docs.append((f"f{i:03d}", src))
    return docs


def _load(client: Any, shards: int) -> None:
    load_index(client, INDEX, shards, MAPPING, _documents())


@pytest.fixture(scope="module")
def fuzzy_pair(pair: Any) -> Iterator[Any]:
    _load(pair.theirs, 1)
    _load(pair.ours, 3)
    yield pair
    pair.ours.delete(f"/{INDEX}")
    pair.theirs.delete(f"/{INDEX}")


FUZZY = [
    {"fuzzy": {"title": "cat"}},
    {"fuzzy": {"title": {"value": "cats", "fuzziness": 2}}},
    {"fuzzy": {"title": {"value": "cats", "fuzziness": 2, "max_expansions": 3}}},
    {"fuzzy": {"title": {"value": "catalgo", "fuzziness": "AUTO"}}},
    {"fuzzy": {"title": {"value": "dgo", "transpositions": False, "fuzziness": 2}}},
    {"fuzzy": {"title": {"value": "dgo", "transpositions": True, "fuzziness": 1}}},
    {"fuzzy": {"title": {"value": "coast", "prefix_length": 2, "fuzziness": 2}}},
    {"fuzzy": {"title": {"value": "frm", "fuzziness": "AUTO:2,4", "boost": 3}}},
    {"fuzzy": {"title": {"value": "cats", "fuzziness": 2, "rewrite": "constant_score"}}},
    {"fuzzy": {"title": {"value": "cats", "fuzziness": 2, "rewrite": "top_terms_4"}}},
    {"fuzzy": {"title": {"value": "cats", "fuzziness": 2,
                         "rewrite": "top_terms_blended_freqs_2"}}},
    {"fuzzy": {"title": {"value": "cats", "fuzziness": 2, "rewrite": "top_terms_boost_5"}}},
    {"fuzzy": {"tag": {"value": "alpha", "fuzziness": 1}}},
    {"fuzzy": {"tag": "alpha"}},
]
MATCH = [
    {"match": {"title": {"query": "quikc brwn", "fuzziness": "AUTO"}}},
    {"match": {"title": {"query": "dgo cst", "fuzziness": 1, "operator": "and"}}},
    {"match": {"body": {"query": "cat dog frog", "fuzziness": 1,
                        "minimum_should_match": 2}}},
    {"match": {"body": {"query": "catalgo", "fuzziness": "AUTO", "prefix_length": 3,
                        "max_expansions": 2, "fuzzy_transpositions": False}}},
    {"match": {"title": {"query": "cats", "fuzziness": 2, "fuzzy_rewrite": "top_terms_3"}}},
    {"match": {"tag": {"query": "alpah", "fuzziness": 1}}},
    {"multi_match": {"query": "quikc dgo", "fields": ["title", "body^2"], "fuzziness": 1}},
    {"multi_match": {"query": "quikc dgo", "fields": ["title", "body"], "fuzziness": 1,
                     "type": "most_fields"}},
    {"multi_match": {"query": "quikc bro", "fields": ["title", "body"], "fuzziness": 1,
                     "type": "bool_prefix"}},
    {"match_bool_prefix": {"title": {"query": "quikc cro", "fuzziness": 2}}},
]
QUERY_STRING = [
    {"query_string": {"query": "dgo~1", "default_field": "title"}},
    {"query_string": {"query": "title:catalgo~ OR body:frgo~2"}},
    {"query_string": {"query": "Quikc~", "fields": ["title", "body"],
                      "fuzzy_prefix_length": 1, "fuzzy_max_expansions": 3}},
    {"query_string": {"query": "cast~ AND dog", "default_field": "body", "fuzziness": 1,
                      "fuzzy_transpositions": False}},
    {"simple_query_string": {"query": "dgo~1 quikc~", "fields": ["title"]}},
    {"simple_query_string": {"query": "catalgo~2", "fields": ["title", "body"],
                             "fuzzy_max_expansions": 2, "fuzzy_prefix_length": 2}},
    {"simple_query_string": {"query": "dgo~1 cat~1", "fields": ["title"], "flags": "ALL"}},
    {"simple_query_string": {"query": "dgo~1 cat~1", "fields": ["title"],
                             "flags": "AND|OR|NOT|PREFIX|PHRASE|PRECEDENCE|ESCAPE|WHITESPACE|"
                                      "NEAR|SLOP"}},
    {"query_string": {"query": "quikc~1 OR dgo~", "fields": ["title", "body"]}},
    {"simple_query_string": {"query": "quikc~3 dgo~", "fields": ["title", "body"]}},
    {"intervals": {"body": {"fuzzy": {"term": "dgo", "fuzziness": 1}}}},
]


@pytest.mark.parametrize("query", FUZZY + MATCH + QUERY_STRING)
def test_fuzzy_queries_rank_and_score_as_opensearch(fuzzy_pair: Any, query: Any) -> None:
    check(fuzzy_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


def test_fuzzy_terms_highlight_as_opensearch(fuzzy_pair: Any) -> None:
    body = {"query": {"match": {"title": {"query": "quikc dgo", "fuzziness": 1}}},
            "highlight": {"fields": {"title": {}}}, "size": 100}
    check(fuzzy_pair, "POST", f"/{INDEX}/_search", body)


ERRORS = [
    {"fuzzy": {"n": {"value": 3}}},
    {"match": {"n": {"query": 3, "fuzziness": 1}}},
    {"fuzzy": {"title": {"value": "cat", "fuzziness": 3}}},
    {"fuzzy": {"title": {"value": "cat", "fuzziness": "abc"}}},
    {"fuzzy": {"title": {"value": "cat", "max_expansions": 0}}},
    {"fuzzy": {"title": {"value": "cat", "prefix_length": -1}}},
    {"fuzzy": {"title": {"value": "cat", "rewrite": "nope"}}},
    {"fuzzy": {"title": {"value": "cat", "unknown": 1}}},
    {"multi_match": {"query": "cat", "fields": ["title"], "type": "phrase", "fuzziness": 1}},
    {"multi_match": {"query": "cat", "fields": ["title"], "type": "cross_fields",
                     "fuzziness": 1}},
]


@pytest.mark.parametrize("query", ERRORS)
def test_bad_fuzzy_queries_fail_as_opensearch(fuzzy_pair: Any, query: Any) -> None:
    check(fuzzy_pair, "POST", f"/{INDEX}/_search", {"query": query})


OPTION_ERRORS = [
    {"fuzzy": {"title": {"value": "cat", "fuzziness": "AUTO:5,2"}}},
    {"fuzzy": {"title": {"value": "cat", "fuzziness": "AUTO:x"}}},
    {"fuzzy": {"title": {"value": "cat", "fuzziness": "-1"}}},
    {"match": {"title": {"query": "cat", "fuzziness": 1, "max_expansions": 0}}},
    {"match": {"title": {"query": "cat", "prefix_length": -2}}},
    {"query_string": {"query": "n:3~1"}},
    {"simple_query_string": {"query": "cat~1.5 dgo~3", "fields": ["title"]}},
    {"query_string": {"query": "dgo~0.5 cta~7", "fields": ["title"]}},
]


@pytest.mark.parametrize("query", OPTION_ERRORS)
def test_fuzziness_edge_values_answer_as_opensearch(fuzzy_pair: Any, query: Any) -> None:
    check(fuzzy_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


@pytest.mark.parametrize("query", [
    {"fuzzy": {"_index": {"value": INDEX}}},
    {"fuzzy": {"title": {"value": "cat", "rewrite": "top_terms_x"}}},
    {"fuzzy": {"titl*": {"value": "cat"}}},
])
def test_fuzzy_fields_and_rewrites_answer_as_opensearch(fuzzy_pair: Any, query: Any) -> None:
    check(fuzzy_pair, "POST", f"/{INDEX}/_search", {"query": query})
