"""``more_like_this``, ``multi_match`` ``cross_fields`` and ``match_phrase_prefix`` sent to
shardsearch (3 shards) and to a real OpenSearch node (1 shard): the same hits in the same
order, scores within the suite's tolerance. Each row is a rule of its own.
"""
from __future__ import annotations

import pytest

from .corpus import INDEX
from .test_differential import check

pytestmark = pytest.mark.slow

PHRASE_PREFIX = {
    "two_terms": {"match_phrase_prefix": {"body": "apple b"}},
    "three_terms": {"match_phrase_prefix": {"body": "banana apple c"}},
    "single_term": {"match_phrase_prefix": {"title": "ch"}},
    "slop": {"match_phrase_prefix": {"body": {"query": "apple c", "slop": 2}}},
    "max_expansions": {"match_phrase_prefix": {"body": {"query": "apple ", "max_expansions": 1}}},
    "boost": {"match_phrase_prefix": {"title": {"query": "apple b", "boost": 3}}},
    "in_filter": {"bool": {"filter": [{"match_phrase_prefix": {"body": "apple b"}}]}},
    "multi_match": {"multi_match": {"query": "apple b", "type": "phrase_prefix",
                                    "fields": ["title^2", "body"]}},
}


@pytest.mark.parametrize("name", sorted(PHRASE_PREFIX))
def test_match_phrase_prefix_agrees_with_opensearch(pair, name):
    check(pair, "POST", f"/{INDEX}/_search", {"query": PHRASE_PREFIX[name], "size": 50})


def _cross(query: str, **opts: object) -> dict:
    return {"multi_match": {"query": query, "type": "cross_fields",
                            "fields": ["title", "body"], **opts}}


CROSS_FIELDS = {
    "or": _cross("apple cherry delta"),
    "and": _cross("apple cherry", operator="and"),
    "tie_breaker": _cross("apple banana cherry", tie_breaker=0.3),
    "boosts": _cross("apple banana", fields=["title^3", "body"]),
    "boosts_and_tie": _cross("banana delta", fields=["title^2", "body^0.5"], tie_breaker=1.0),
    "minimum_should_match": _cross("apple banana cherry delta", minimum_should_match="75%"),
    "with_keyword": _cross("alpha apple", fields=["title", "tag"]),
    "query_boost": _cross("cherry echo", boost=2.0),
    "analyzer": _cross("Apple Cherry", analyzer="whitespace"),
    "single_field": _cross("apple fox", fields=["body^2"]),
    "keyword_boosted_and": _cross("alpha", fields=["title^2", "body", "tag^3"],
                                  operator="and", tie_breaker=0.5),
}


@pytest.mark.parametrize("name", sorted(CROSS_FIELDS))
def test_cross_fields_agrees_with_opensearch(pair, name):
    check(pair, "POST", f"/{INDEX}/_search", {"query": CROSS_FIELDS[name], "size": 50})


def _mlt(**opts: object) -> dict:
    return {"more_like_this": {"fields": ["title", "body"], "min_term_freq": 1,
                               "min_doc_freq": 1, **opts}}


MORE_LIKE_THIS = {
    "text": _mlt(like="apple banana cherry delta echo"),
    "text_defaults": {"more_like_this": {"fields": ["body"],
                                         "like": "apple apple banana banana cherry fox fox"}},
    "document": _mlt(like=[{"_index": INDEX, "_id": "d007"}]),
    "document_include": _mlt(like=[{"_index": INDEX, "_id": "d007"}], include=True),
    "two_documents": _mlt(like=[{"_id": "d003"}, {"_id": "d011"}], max_query_terms=4),
    "artificial": _mlt(like=[{"doc": {"title": "golf hotel", "body": "india juliet golf"}}]),
    "unlike_text": _mlt(like="apple banana cherry delta", unlike="banana"),
    "unlike_document": _mlt(like=[{"_id": "d007"}], unlike=[{"_id": "d008"}]),
    "mixed_like": _mlt(like=["fox golf", {"_id": "d020"}]),
    "max_query_terms": _mlt(like="apple banana cherry delta echo fox", max_query_terms=2),
    "minimum_should_match": _mlt(like="apple banana cherry delta", minimum_should_match="75%"),
    "max_doc_freq": _mlt(like="apple banana cherry delta echo", max_doc_freq=40),
    "word_length": _mlt(like="apple fox golf kilo", min_word_length=4, max_word_length=5),
    "stop_words": _mlt(like="apple banana cherry", stop_words=["banana"]),
    "boost_terms": _mlt(like="apple banana cherry delta", boost_terms=2.0),
    "boost": _mlt(like="cherry delta", boost=3.0),
    "keyword": {"more_like_this": {"fields": ["tag"], "like": [{"_id": "d001"}],
                                   "min_term_freq": 1, "min_doc_freq": 1}},
    "document_default_fields": {"more_like_this": {"like": [{"_id": "d012"}],
                                                   "min_term_freq": 1, "min_doc_freq": 2}},
    "missing_document": _mlt(like=[{"_id": "nope"}, "cherry fox"]),
    "artificial_unlike_document": _mlt(like=[{"doc": {"body": "apple banana cherry delta"}}],
                                       unlike=[{"doc": {"body": "banana"}}]),
    "in_filter": {"bool": {"filter": [_mlt(like="golf hotel india")]}},
    "analyzer": _mlt(like="Apple APPLE banana", analyzer="whitespace"),
}


@pytest.mark.parametrize("name", sorted(MORE_LIKE_THIS))
def test_more_like_this_agrees_with_opensearch(pair, name):
    check(pair, "POST", f"/{INDEX}/_search", {"query": MORE_LIKE_THIS[name], "size": 50})


@pytest.mark.parametrize("query", [_mlt(like="golf hotel india apple"),
                                   {"match_phrase_prefix": {"body": "apple b"}}])
def test_unscored_matches_agree_with_opensearch(pair, query):
    """Sorted by a field (nothing scored): the same documents still match."""
    check(pair, "POST", f"/{INDEX}/_search", {"query": query, "sort": ["uid"], "size": 100})


REFUSALS = {
    "text_without_fields": {"more_like_this": {"like": "apple"}},
    "unknown_key": {"more_like_this": {"fields": ["body"], "like": "apple", "bogus": 1}},
    "no_like": {"more_like_this": {"fields": ["body"]}},
    "numeric_field": {"more_like_this": {"fields": ["n"], "like": "apple"}},
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_more_like_this_errors_agree_with_opensearch(pair, name):
    check(pair, "POST", f"/{INDEX}/_search", {"query": REFUSALS[name]})


def test_more_like_this_reads_multi_fields_as_opensearch_does(pair):
    """A liked document's ``title.raw`` (a keyword multi-field) gives terms too, when the
    query names no fields."""
    import orjson
    mapping = {"properties": {"title": {"type": "text",
                                        "fields": {"raw": {"type": "keyword"}}}}}
    titles = ["red fox", "red fox", "red dog", "blue fox", "red fox", "green cat", "red"]
    lines = []
    for i, t in enumerate(titles):
        lines += [orjson.dumps({"index": {"_index": "mltmf", "_id": str(i)}}),
                  orjson.dumps({"title": t})]
    for client in (pair.ours, pair.theirs):
        client.delete("/mltmf")
        assert client.put("/mltmf", json={"mappings": mapping,
                                          "settings": {"number_of_replicas": 0}}).status_code == 200
        r = client.post("/_bulk", params={"refresh": "true"},
                        content=b"\n".join(lines) + b"\n",
                        headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200 and not r.json()["errors"]
    try:
        check(pair, "POST", "/mltmf/_search", {"query": {"more_like_this": {
            "like": [{"_id": "0"}], "min_term_freq": 1, "min_doc_freq": 1}}})
    finally:
        for client in (pair.ours, pair.theirs):
            client.delete("/mltmf")
