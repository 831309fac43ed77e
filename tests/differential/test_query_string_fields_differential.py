"""``query_string`` and ``simple_query_string`` over several fields against a real OpenSearch
node: with no fields (``index.query.default_field`` = ``*``), field patterns, boosts, every
``type`` and ``tie_breaker``, the per-field queries are combined as Elasticsearch combines them,
on an index with text, keyword, a text field with a ``.keyword`` subfield and a numeric field
(queried leniently). Same hits, same scores (ours on 3 shards, OpenSearch on 1)."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from .test_differential import check
from .loading import load_index

pytestmark = pytest.mark.slow

INDEX = "qsfields"
WORDS = "quick quickly brown fox dog dogs lazy jumps over the red 42 7".split()
MAPPING = {"properties": {
    "title": {"type": "text", "fields": {"keyword": {"type": "keyword"}}},
    "body": {"type": "text"},
    "tag": {"type": "keyword"},
    "n": {"type": "integer"}}}


def _documents() -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(19)
    docs = []
    for i in range(60):
        src: dict[str, Any] = {"title": " ".join(rng.choice(WORDS)
                                                 for _ in range(rng.randint(1, 3))),
                               "n": rng.choice((7, 42, i))}
        if rng.random() < 0.8:
            src["body"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
        if rng.random() < 0.7:
            src["tag"] = rng.choice(("quick", "dog", "brown fox", "lazy", "quickly"))
        docs.append((f"q{i:03d}", src))
    return docs


def _load(client: Any, shards: int) -> None:
    load_index(client, INDEX, shards, MAPPING, _documents())


@pytest.fixture(scope="module")
def qs_pair(pair: Any) -> Iterator[Any]:
    _load(pair.theirs, 1)
    _load(pair.ours, 3)
    yield pair
    pair.ours.delete(f"/{INDEX}")
    pair.theirs.delete(f"/{INDEX}")


TEXTS = ["quick", "quick dog", "quick*", '"quick dog"', "42", "brown fox", "dog~1",
         "quick dog -lazy"]
FIELDS: list[dict[str, Any]] = [
    {}, {"fields": ["*"]}, {"fields": ["title*"]}, {"fields": ["title^2", "body"]},
    {"fields": ["title", "tag", "n"]}, {"default_operator": "AND"},
    {"fields": ["title", "body"], "default_operator": "AND"},
]
TYPES: list[dict[str, Any]] = [
    {"type": t, **extra}
    for t in ("best_fields", "most_fields", "cross_fields", "phrase", "phrase_prefix",
              "bool_prefix")
    for extra in ({}, {"tie_breaker": 0.3})
]


def _cases(kind: str) -> list[dict[str, Any]]:
    out = [{kind: {"query": t, **f}} for t in TEXTS for f in FIELDS]
    if kind == "query_string":
        out += [{kind: {"query": t, "fields": ["title", "body^2"], **ty}}
                for t in ("quick dog", "quick*", '"quick dog"') for ty in TYPES]
        out += [{kind: {"query": t, **ty}} for t in ("quick dog", "42 quick", "quick*")
                for ty in TYPES]
        out += [{kind: {"query": "quick dog", "tie_breaker": 0.5}},
                {kind: {"query": "title:(quick dog) OR body:lazy", "type": "most_fields"}},
                {kind: {"query": "quick dog^2 lazy fox", "fields": ["title*", "body"]}},
                {kind: {"query": "quick dog", "fields": ["title", "body"],
                        "minimum_should_match": 2}},
                {kind: {"query": "lazy AND quick", "fields": ["title*", "body"]}},
                {kind: {"query": "quick dog", "fields": ["title", "tag"], "lenient": True,
                        "type": "cross_fields"}}]
    return out


#: ``AND``/``OR`` without parentheses join flat, as Lucene's ``addClause`` joins them
CONJUNCTIONS = ["quick OR dog AND lazy", "quick AND dog OR lazy", "quick OR dog lazy",
                "quick dog AND lazy", "quick AND NOT dog OR fox", "+quick dog OR lazy",
                "quick OR -dog AND fox", "(quick OR dog) AND lazy"]


@pytest.mark.parametrize("query", [{"query_string": {"query": t, "fields": ["title", "body"],
                                                     "default_operator": op}}
                                   for t in CONJUNCTIONS for op in ("OR", "AND")])
def test_and_or_without_parentheses_join_as_lucene(qs_pair: Any, query: Any) -> None:
    check(qs_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


@pytest.mark.parametrize("query", [
    {"query_string": {"query": "brown fox", "fields": ["tag"]}},
    {"query_string": {"query": "brown fox OR lazy", "fields": ["tag"]}},
    {"query_string": {"query": "brown fox", "default_field": "tag", "default_operator": "AND"}},
    {"query_string": {"query": "lazy dog 7", "fields": ["title.keyword"]}},
    {"query_string": {"query": "brown fox", "fields": ["title"], "minimum_should_match": 2}},
])
def test_words_side_by_side_on_one_keyword_field_are_one_value(qs_pair: Any,
                                                                query: Any) -> None:
    check(qs_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


@pytest.mark.parametrize("query", _cases("query_string") + _cases("simple_query_string"))
def test_query_strings_over_fields_score_as_opensearch(qs_pair: Any, query: Any) -> None:
    check(qs_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


ERRORS = [
    {"query_string": {"query": "quick*", "fields": ["title", "tag", "n"]}},
    {"query_string": {"query": "dog~1", "fields": ["title", "n"]}},
    {"simple_query_string": {"query": "quick*", "fields": ["n"]}},
    {"simple_query_string": {"query": "dog~1", "fields": ["title", "n"]}},
    {"query_string": {"query": "quick", "type": "nope"}},
    {"query_string": {"query": "quick", "type": "PHRASE"}},
    {"query_string": {"query": "n:quick*", "fields": ["title"]}},
    {"query_string": {"query": "quick", "tie_breaker": "x"}},
    {"simple_query_string": {"query": "quick", "type": "best_fields"}},
    {"query_string": {"query": "quick", "default_field": "title", "fields": ["body"]}},
]


@pytest.mark.parametrize("query", ERRORS)
def test_bad_query_strings_over_fields_fail_as_opensearch(qs_pair: Any, query: Any) -> None:
    check(qs_pair, "POST", f"/{INDEX}/_search", {"query": query})


#: field-name patterns in the direct DSL are literal names (unmapped: no hits); ``exists``
#: and ``multi_match`` expand them, as query strings do
LITERAL_FIELDS = [
    {"prefix": {"title*": "qu"}}, {"wildcard": {"title*": "qu*"}},
    {"regexp": {"title*": "qu.*"}}, {"range": {"n*": {"gte": 0}}},
    {"match_phrase": {"title*": "quick"}}, {"match_phrase_prefix": {"title*": "qui"}},
    {"term": {"tag*": "quick"}}, {"terms": {"tag*": ["quick"]}}, {"fuzzy": {"title*": "quack"}},
    {"match": {"title*": "quick"}}, {"match": {"*": "quick"}},
    {"match_bool_prefix": {"title*": "qui"}}, {"span_term": {"title*": "quick"}},
    {"intervals": {"title*": {"match": {"query": "quick"}}}},
    {"exists": {"field": "title*"}}, {"multi_match": {"query": "quick", "fields": ["title*"]}},
]


@pytest.mark.parametrize("query", LITERAL_FIELDS)
def test_direct_dsl_field_names_are_literal_as_opensearch(qs_pair: Any, query: Any) -> None:
    check(qs_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


#: an explicit ``lenient: false`` holds over ``*``; words side by side on one numeric field are
#: one value (which fails, or finds nothing leniently); a leading wildcard is refused on mapped
#: fields only; a field name with an unescaped wildcard is a syntax error
LENIENCY = [
    {"query_string": {"query": "quick", "lenient": False}},
    {"query_string": {"query": "quick", "fields": ["*"], "lenient": False}},
    {"query_string": {"query": "quick", "default_field": "*", "lenient": False}},
    {"simple_query_string": {"query": "quick", "fields": ["*"], "lenient": False}},
    {"query_string": {"query": "quick*", "fields": ["*"], "lenient": False}},
    {"query_string": {"query": "dog~1", "fields": ["*"], "lenient": False}},
    {"query_string": {"query": "quick", "fields": ["*"], "lenient": True}},
    {"query_string": {"query": "42 7", "default_field": "n"}},
    {"query_string": {"query": "42 7", "fields": ["n"]}},
    {"query_string": {"query": "42 7", "fields": ["n"], "lenient": True}},
    {"query_string": {"query": "n:(42 7)"}}, {"query_string": {"query": "n:(42 OR 7)"}},
    {"query_string": {"query": "nope:*ox", "allow_leading_wildcard": False}},
    {"query_string": {"query": "*ox", "default_field": "nope", "allow_leading_wildcard": False}},
    {"query_string": {"query": "?ox OR quick", "default_field": "nope",
                      "allow_leading_wildcard": False}},
    {"query_string": {"query": "n:*ox", "allow_leading_wildcard": False}},
    {"query_string": {"query": "title*:quick"}}, {"query_string": {"query": "nope*:*ox"}},
    {"query_string": {"query": "title\\*:quick"}}, {"query_string": {"query": "*:quick"}},
]


@pytest.mark.parametrize("query", LENIENCY)
def test_query_string_leniency_and_field_names_as_opensearch(qs_pair: Any, query: Any) -> None:
    check(qs_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})
