"""Fuzzy matching over HTTP on the real server: the same hits and scores on 1 and 3 shards
(the kept expansions are chosen over every shard), only the top ``max_expansions`` terms
match, fuzzy terms are highlighted, and what is not built is refused by name."""
from __future__ import annotations

from typing import Any

import pytest

WORDS = ["bat", "cat", "eat", "fat", "hat", "mat", "oat", "pat", "rat", "sat"]
MAPPING = {"properties": {"t": {"type": "text"}, "k": {"type": "keyword"},
                          "n": {"type": "integer"}}}


def _docs() -> list[dict[str, Any]]:
    out = [{"t": w, "k": w.upper(), "n": i} for i, w in enumerate(WORDS)]
    out += [{"t": "the quick brown fox"}, {"t": "quack quick quirk"}, {"t": "quickly brow"},
            {"t": "brown fix foxes"}, {"t": "box of focks cats"}]
    return out


def _index(es: Any, name: str, shards: int) -> None:
    r = es.put(f"/{name}", json={"settings": {"number_of_shards": shards},
                                 "mappings": MAPPING})
    assert r.status_code == 200, r.text
    lines = []
    for i, d in enumerate(_docs()):
        lines += [f'{{"index": {{"_id": "{i}"}}}}', _json(d)]
    r = es.post(f"/{name}/_bulk", params={"refresh": "true"}, content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"], r.text


def _json(d: dict[str, Any]) -> str:
    import orjson
    return orjson.dumps(d).decode()


@pytest.fixture
def both(es: Any) -> Any:
    _index(es, "one", 1)
    _index(es, "three", 3)
    return es


def _hits(es: Any, index: str, body: dict[str, Any]) -> list[tuple[str, float]]:
    r = es.post(f"/{index}/_search", json={"size": 50, **body})
    assert r.status_code == 200, r.text
    return [(h["_id"], h["_score"]) for h in r.json()["hits"]["hits"]]


QUERIES = [
    {"fuzzy": {"t": "zat"}},
    {"fuzzy": {"t": {"value": "zat", "max_expansions": 2}}},
    {"fuzzy": {"t": {"value": "zat", "rewrite": "top_terms_3"}}},
    {"fuzzy": {"k": {"value": "ZAT", "fuzziness": 1}}},
    {"match": {"t": {"query": "quikc brwn zat", "fuzziness": "AUTO", "max_expansions": 3}}},
    {"multi_match": {"query": "quikc", "fields": ["t", "k"], "fuzziness": 2}},
    {"query_string": {"query": "t:quikc~ OR zat~1", "default_field": "t",
                      "fuzzy_max_expansions": 4}},
    {"simple_query_string": {"query": "zat~1 foxs~", "fields": ["t"]}},
]


@pytest.mark.parametrize("query", QUERIES)
def test_fuzzy_hits_and_scores_are_the_same_on_one_and_three_shards(both, query) -> None:
    one = _hits(both, "one", {"query": query})
    assert one, "the query should find something"
    assert _hits(both, "three", {"query": query}) == one


def test_only_the_top_max_expansions_terms_match_over_all_shards(both) -> None:
    # every word is one edit from "zat" with the same boost: the smallest two terms are kept
    for index in ("one", "three"):
        hits = _hits(both, index, {"query": {"fuzzy": {"t": {"value": "zat",
                                                             "max_expansions": 2}}}})
        assert sorted(i for i, _ in hits) == ["0", "1"]


def test_fuzzy_matches_score_below_the_exact_term(both) -> None:
    hits = dict(_hits(both, "three", {"query": {"fuzzy": {"t": {"value": "cat"}}}}))
    assert hits["1"] == max(hits.values()) and all(s < hits["1"] for i, s in hits.items()
                                                    if i != "1")


def test_the_expanded_terms_are_highlighted(both) -> None:
    r = both.post("/three/_search", json={
        "query": {"match": {"t": {"query": "quikc", "fuzziness": 1}}},
        "highlight": {"fields": {"t": {}}}})
    frags = sorted(f for h in r.json()["hits"]["hits"] for f in h["highlight"]["t"])
    assert frags == ["quack <em>quick</em> quirk", "the <em>quick</em> brown fox"]


@pytest.mark.parametrize("query, status, text", [
    ({"fuzzy": {"t": {"value": "cat", "rewrite": "scoring_boolean"}}}, 400,
     "[fuzzy] rewrite [scoring_boolean] is not supported by this server"),
    ({"fuzzy": {"n": {"value": 3}}}, 400,
     "Can only use fuzzy queries on keyword and text fields - not on [n] which is of type "
     "[integer]"),
    ({"match": {"n": {"query": 3, "fuzziness": 1}}}, 400,
     "Can only use fuzzy queries on keyword and text fields - not on [n]"),
    ({"multi_match": {"query": "cat", "fields": ["t"], "type": "phrase", "fuzziness": 1}}, 400,
     "Fuzziness not allowed for type [phrase]"),
    ({"match": {"t": {"query": "cat", "fuzziness": 1, "max_expansions": 0}}}, 400,
     "[match] requires maxExpansions to be positive."),
    ({"fuzzy": {"t": {"value": "c" * 2000}}}, 400, "fuzzy term is longer than 1024"),
    # Lucene fails with a NullPointerException (a 500 in OpenSearch): a client's mistake here
    ({"fuzzy": {"t": {"value": "cat", "rewrite": "top_terms_0"}}}, 400,
     "rewrite_method [top_terms_0] needs a size above 0"),
])
def test_what_is_not_built_or_not_allowed_is_refused_by_name(both, query, status, text) -> None:
    r = both.post("/three/_search", json={"query": query})
    assert r.status_code == status and text in r.text, r.text


def test_a_search_sorted_by_a_field_keeps_the_same_expansions(both) -> None:
    query = {"fuzzy": {"t": {"value": "zat", "max_expansions": 2}}}
    for index in ("one", "three"):
        r = both.post(f"/{index}/_search", json={"query": query, "sort": [{"n": "desc"}]})
        assert [h["_id"] for h in r.json()["hits"]["hits"]] == ["1", "0"]
