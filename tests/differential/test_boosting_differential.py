"""``boosting`` against a real OpenSearch node: the positive query's hits, scores multiplied by
``negative_boost`` where the negative query matches (0, below 1, above 1, with ``boost``), and
its parse errors (a missing clause, a negative or missing ``negative_boost``, an unknown key).
Same hits, same scores, same error types (ours on 3 shards, OpenSearch on 1)."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from .loading import load_index
from .test_differential import check

pytestmark = pytest.mark.slow

INDEX = "boosting"
WORDS = "quick brown fox lazy dog red jumps".split()
MAPPING = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                          "n": {"type": "integer"}}}


def _documents() -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(7)
    return [(f"b{i:02d}", {"title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))),
                           "tag": rng.choice(("a", "b", "c")), "n": i}) for i in range(40)]


@pytest.fixture(scope="module")
def b_pair(pair: Any) -> Iterator[Any]:
    load_index(pair.theirs, INDEX, 1, MAPPING, _documents())
    load_index(pair.ours, INDEX, 3, MAPPING, _documents())
    yield pair
    pair.ours.delete(f"/{INDEX}")
    pair.theirs.delete(f"/{INDEX}")


def _b(negative_boost: Any = 0.5, **extra: Any) -> dict[str, Any]:
    return {"boosting": {"positive": {"match": {"title": "quick fox"}},
                         "negative": {"term": {"tag": "a"}},
                         "negative_boost": negative_boost, **extra}}


CASES = [
    _b(), _b(0), _b(0.2), _b(2), _b(0.5, boost=3), _b("0.3"),
    {"boosting": {"positive": {"range": {"n": {"gte": 10}}},
                  "negative": {"match": {"title": "dog"}}, "negative_boost": 0.1}},
    {"bool": {"should": [_b(0.25), {"match": {"title": "lazy"}}]}},
    {"constant_score": {"filter": _b(0.25)}},
]


@pytest.mark.parametrize("query", CASES)
def test_boosting_scores_as_opensearch(b_pair: Any, query: Any) -> None:
    check(b_pair, "POST", f"/{INDEX}/_search", {"query": query, "size": 100})


ERRORS = [
    {"boosting": {"negative": {"term": {"tag": "a"}}, "negative_boost": 0.5}},
    {"boosting": {"positive": {"term": {"tag": "a"}}, "negative_boost": 0.5}},
    {"boosting": {"positive": {"term": {"tag": "a"}}, "negative": {"term": {"tag": "b"}}}},
    _b(-1), _b(0.5, x=1), _b(0.5, x={"match_all": {}}),
]


@pytest.mark.parametrize("query", ERRORS)
def test_bad_boosting_fails_as_opensearch(b_pair: Any, query: Any) -> None:
    check(b_pair, "POST", f"/{INDEX}/_search", {"query": query})
