"""Requests Elasticsearch refuses are refused here too, with its texts (issue 19, item 6):
``index.max_terms_count``, empty field names, ``collapse`` in a scroll, an empty ``_id`` in a
bulk. Pure parsing where the rule is pure; real Ray and uvicorn where it needs an index.
"""
from __future__ import annotations

import json

import httpx
import pytest

from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.engine.query.validation import check_clause_limits
from shardsearch.cluster.errors import ActionRequestValidation, IllegalArgument, SearchError
from shardsearch.cluster.search.request import parse_search

MAPPING = Mapping.from_body({"properties": {"tag": {"type": "keyword"}}})


def test_a_terms_query_over_max_terms_count_is_refused_with_elasticsearchs_text() -> None:
    q = parse_query({"terms": {"tag": [str(i) for i in range(65_537)]}})
    with pytest.raises(IllegalArgument) as e:
        check_clause_limits(q, MAPPING)
    assert str(e.value).startswith("The number of terms [65537] used in the Terms Query request "
                                   "has exceeded the allowed maximum of [65536].")
    check_clause_limits(q, MAPPING, max_clauses=10**6, max_terms_count=70_000)


@pytest.mark.parametrize("query", [{"terms": {"": ["x"]}}, {"term": {"": "x"}},
                                   {"match": {"": "x"}}, {"exists": {"field": ""}},
                                   {"prefix": {"": "x"}}, {"range": {"": {"gte": 1}}}])
def test_an_empty_field_name_is_refused(query) -> None:
    with pytest.raises(SearchError) as e:
        parse_query(query)
    assert e.value.status == 400


@pytest.mark.parametrize("body", [{"highlight": {"fields": {"": {}}}},
                                  {"collapse": {"field": ""}}])
def test_an_empty_field_name_in_highlight_or_collapse_is_refused(body) -> None:
    with pytest.raises(SearchError) as e:
        parse_search(("i",), {}, body)
    assert e.value.status == 400


def test_collapse_in_a_scroll_is_a_validation_error() -> None:
    with pytest.raises(ActionRequestValidation) as e:
        parse_search(("i",), {"scroll": "1m"}, {"collapse": {"field": "tag"}})
    assert "cannot use `collapse` in a scroll context" in str(e.value)


def test_index_max_terms_count_is_read_from_the_index(es: httpx.Client) -> None:
    es.put("/mtc", json={"settings": {"index.max_terms_count": 2},
                         "mappings": {"properties": {"tag": {"type": "keyword"}}}})
    r = es.post("/mtc/_search", json={"query": {"terms": {"tag": ["a", "b", "c"]}}})
    assert r.status_code == 400
    assert "allowed maximum of [2]" in r.text
    assert es.post("/mtc/_search", json={"query": {"terms": {"tag": ["a", "b"]}}}
                   ).status_code == 200


def test_an_empty_id_in_a_bulk_item_is_refused_and_the_others_are_written(es) -> None:
    lines = [{"index": {"_index": "b", "_id": ""}}, {"x": 1},
             {"index": {"_index": "b", "_id": "ok"}}, {"x": 2}]
    r = es.post("/_bulk?refresh=true", content="\n".join(map(json.dumps, lines)) + "\n",
                headers={"content-type": "application/x-ndjson"})
    items = r.json()["items"]
    assert r.json()["errors"] is True
    assert items[0]["index"]["status"] == 400
    assert items[0]["index"]["error"]["reason"] == \
        "Validation Failed: 1: if _id is specified it must not be empty;"
    assert items[1]["index"]["status"] == 201


def test_a_suggester_option_of_the_wrong_type_is_a_400_not_a_500() -> None:
    with pytest.raises(IllegalArgument):
        parse_search(("i",), {}, {"suggest": {"s": {"text": "x", "term": {
            "field": "f", "min_doc_freq": "many"}}}})


def test_a_suggester_text_with_too_many_tokens_is_refused() -> None:
    from shardsearch.cluster.search.suggest import shard_plan
    req = parse_search(("i",), {}, {"suggest": {"s": {"text": "w " * 300,
                                                      "term": {"field": "tag"}}}})
    with pytest.raises(IllegalArgument):
        shard_plan(req.suggest, Mapping.from_body({"properties": {"tag": {"type": "text"}}}))
