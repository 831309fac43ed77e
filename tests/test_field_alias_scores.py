"""A query through a field alias scores exactly as the same query on its target, for every
scoring query whose statistics the coordinator gathers (match, phrase prefix, cross_fields,
more_like_this, fuzzy and friends): an alias is only another name, never other statistics."""
from __future__ import annotations

from typing import Any

import pytest
from elasticsearch import Elasticsearch

TEXTS = ["the quick brown fox jumps", "a quick brown dog", "brown bread and quick jam",
         "lazy dogs sleep all day", "the fox and the hound", "quick quick quicker quickest",
         "brownie points for the quick", "a fox in socks", "jumping jacks and brown foxes"]


def _pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(query on the alias names, the same query on the targets)."""
    return [
        ({"match": {"t": "quick fox"}}, {"match": {"text": "quick fox"}}),
        ({"match_phrase_prefix": {"t": "quick bro"}}, {"match_phrase_prefix": {"text": "quick bro"}}),
        ({"multi_match": {"query": "quick fox", "type": "cross_fields", "fields": ["t", "s"]}},
         {"multi_match": {"query": "quick fox", "type": "cross_fields",
                          "fields": ["text", "summary"]}}),
        ({"more_like_this": {"fields": ["t"], "like": "quick brown fox", "min_term_freq": 1,
                             "min_doc_freq": 1}},
         {"more_like_this": {"fields": ["text"], "like": "quick brown fox", "min_term_freq": 1,
                             "min_doc_freq": 1}}),
        ({"query_string": {"query": "t:quick AND t:bro*"}},
         {"query_string": {"query": "text:quick AND text:bro*"}}),
    ]


@pytest.mark.parametrize("i", range(len(_pairs())))
def test_a_query_through_an_alias_scores_as_on_its_target(esc: Elasticsearch, i: int) -> None:
    esc.indices.create(index="words", settings={"number_of_shards": 3}, mappings={"properties": {
        "text": {"type": "text"}, "summary": {"type": "text"},
        "t": {"type": "alias", "path": "text"}, "s": {"type": "alias", "path": "summary"}}})
    for n, text in enumerate(TEXTS):
        esc.index(index="words", id=str(n), document={"text": text, "summary": TEXTS[-1 - n]})
    esc.indices.refresh(index="words")
    on_alias, on_target = _pairs()[i]
    got = esc.search(index="words", query=on_alias, size=20)["hits"]["hits"]
    want = esc.search(index="words", query=on_target, size=20)["hits"]["hits"]
    assert want, "the query on the target must match something for the check to mean anything"
    assert [(h["_id"], h["_score"]) for h in got] == [(h["_id"], h["_score"]) for h in want]
