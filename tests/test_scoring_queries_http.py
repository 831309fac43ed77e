"""``function_score``, ``script_score`` and ``_script`` sorts through the official
``elasticsearch`` client, on real Ray shards behind real uvicorn: the scores Elasticsearch's
formulas give, pages walked with ``search_after`` that agree with one big page, explanations
whose top value is the hit's score, and bad requests refused with 400s in Elasticsearch's
envelope."""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import elasticsearch
import httpx
import pytest
from elasticsearch import Elasticsearch

MAPPINGS = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                           "n": {"type": "integer"}, "price": {"type": "double"},
                           "day": {"type": "date"}}}


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    """The client on an index ``shop`` of 3 shards holding 12 documents."""
    client = Elasticsearch(base_url, request_timeout=60)
    client.indices.create(index="shop", settings={"number_of_shards": 3}, mappings=MAPPINGS)
    ops: list[dict[str, Any]] = []
    for i in range(12):
        doc: dict[str, Any] = {"title": "red apple" if i % 2 else "green pear", "n": i,
                               "tag": f"t{i % 3}", "day": f"2024-01-{i + 1:02d}"}
        if i % 4:
            doc["price"] = float(i * 10)
        ops += [{"index": {"_index": "shop", "_id": str(i)}}, doc]
    client.bulk(operations=ops, refresh=True)
    yield client
    client.close()


def _scores(resp: Any) -> dict[str, float]:
    return {h["_id"]: h["_score"] for h in resp["hits"]["hits"]}


def test_field_value_factor_scores_are_modifier_of_factor_times_value(esc) -> None:
    r = esc.search(index="shop", size=20, query={"function_score": {
        "field_value_factor": {"field": "n", "factor": 2, "modifier": "sqrt"},
        "boost_mode": "replace"}})
    got = _scores(r)
    assert len(got) == 12
    for i in range(12):
        assert got[str(i)] == pytest.approx(math.sqrt(2 * i), rel=1e-6)


def test_filtered_weights_combine_by_score_mode_and_the_query_by_boost_mode(esc) -> None:
    fs = {"query": {"match": {"title": "apple"}}, "score_mode": "sum", "boost_mode": "replace",
          "functions": [{"filter": {"term": {"tag": "t0"}}, "weight": 3},
                        {"filter": {"range": {"n": {"gte": 6}}}, "weight": 2}]}
    got = _scores(esc.search(index="shop", size=20, query={"function_score": fs}))
    assert set(got) == {"1", "3", "5", "7", "9", "11"}
    assert got["3"] == 3.0 and got["9"] == 5.0 and got["7"] == 2.0 and got["1"] == 1.0


def test_a_date_decay_is_one_at_origin_and_decay_at_scale(esc) -> None:
    got = _scores(esc.search(index="shop", size=20, query={"function_score": {
        "exp": {"day": {"origin": "2024-01-05", "scale": "3d", "decay": 0.25}},
        "boost_mode": "replace"}}))
    assert got["4"] == 1.0
    assert got["7"] == pytest.approx(0.25) and got["1"] == pytest.approx(0.25)


def test_min_score_drops_documents_and_the_total_counts_the_rest(esc) -> None:
    r = esc.search(index="shop", query={"function_score": {
        "field_value_factor": {"field": "n"}, "boost_mode": "replace", "min_score": 9}})
    assert r["hits"]["total"]["value"] == 3
    assert sorted(_scores(r)) == ["10", "11", "9"]


def test_random_score_is_the_same_for_a_seed_whatever_the_shard_count(esc) -> None:
    esc.indices.create(index="one", settings={"number_of_shards": 1}, mappings=MAPPINGS)
    ops: list[dict[str, Any]] = []
    for h in esc.search(index="shop", size=20)["hits"]["hits"]:
        ops += [{"index": {"_index": "one", "_id": h["_id"]}}, h["_source"]]
    esc.bulk(operations=ops, refresh=True)
    q = {"function_score": {"random_score": {"seed": 11, "field": "tag"}}}
    many = esc.search(index="shop", size=20, query=q)["hits"]["hits"]
    one = esc.search(index="one", size=20, query=q)["hits"]["hits"]
    assert [(h["_id"], h["_score"]) for h in many] == [(h["_id"], h["_score"]) for h in one]
    other = esc.search(index="shop", size=20, query={"function_score": {
        "random_score": {"seed": 12, "field": "tag"}}})["hits"]["hits"]
    assert [h["_score"] for h in other] != [h["_score"] for h in many]


def test_script_score_sees_the_query_score_doc_values_and_params(esc) -> None:
    plain = _scores(esc.search(index="shop", query={"match": {"title": "apple"}}))
    got = _scores(esc.search(index="shop", query={"script_score": {
        "query": {"match": {"title": "apple"}},
        "script": {"source": "_score * params.k + doc['n'].value", "params": {"k": 10}}}}))
    for doc_id, score in plain.items():
        assert got[doc_id] == pytest.approx(score * 10 + int(doc_id), rel=1e-6)


def test_script_sort_pages_with_search_after_agree_with_one_page(esc) -> None:
    sort = [{"_script": {"type": "number", "order": "desc", "script": {
        "source": "doc['price'].size() == 0 ? -1 : doc['price'].value % 30"}}}, {"n": "asc"}]
    whole = esc.search(index="shop", size=12, sort=sort)["hits"]["hits"]
    walked, after = [], None
    while True:
        page = esc.search(index="shop", size=5, sort=sort,
                          **({"search_after": after} if after else {}))["hits"]["hits"]
        walked += page
        if len(page) < 5:
            break
        after = page[-1]["sort"]
    assert [h["_id"] for h in walked] == [h["_id"] for h in whole]
    keys = [h["sort"][0] for h in whole]
    assert keys == sorted(keys, reverse=True) and keys[-1] == -1.0


def test_explain_top_value_is_the_score(esc) -> None:
    r = esc.search(index="shop", explain=True, query={"function_score": {
        "query": {"match": {"title": "apple"}}, "boost_mode": "sum", "functions": [
            {"filter": {"term": {"tag": "t1"}}, "weight": 2},
            {"field_value_factor": {"field": "n", "modifier": "ln1p"}}]}})
    for h in r["hits"]["hits"]:
        x = h["_explanation"]
        assert x["value"] == pytest.approx(h["_score"], rel=1e-6)
        assert x["description"] == "sum of"
        assert x["details"][1]["details"][0]["description"].startswith(
            "function score, score mode [multiply]")


@pytest.mark.parametrize(("query", "error_type", "reason"), [
    ({"function_score": {"field_value_factor": {"field": "n"}, "gauss": {"n": {}}}},
     "parsing_exception", "already found function [field_value_factor]"),
    ({"function_score": {"functions": [{"filter": {"match_all": {}}}]}},
     "parsing_exception", "an entry in functions list is missing a function"),
    ({"function_score": {"score_mode": "median"}}, "illegal_argument_exception",
     "Illegal score mode [median]"),
    ({"script_score": {"query": {"match_all": {}}, "script": {"source": "-doc['n'].value"}}},
     "search_phase_execution_exception", "Must be a non-negative score!"),
    ({"script_score": {"script": {"source": "1"}}}, "illegal_argument_exception",
     "Required [query]"),
    ({"script_score": {"query": {"match_all": {}}, "script": "1"}}, "x_content_parse_exception",
     "script doesn't support values of type: VALUE_STRING"),
])
def test_bad_scoring_queries_are_400s_in_the_es_envelope(esc, query, error_type,
                                                         reason) -> None:
    with pytest.raises(elasticsearch.BadRequestError) as err:
        esc.search(index="shop", query=query)
    assert err.value.meta.status == 400
    assert err.value.body["error"]["type"] == error_type
    assert reason in str(err.value.body)


def test_a_missing_factor_value_fails_the_shards_that_hold_such_a_document(esc) -> None:
    r = esc.search(index="shop", size=20, query={"function_score": {
        "field_value_factor": {"field": "price"}}}, allow_partial_search_results=True)
    failures = r["_shards"].get("failures", [])
    assert r["_shards"]["failed"] == len(failures) >= 1
    assert {f["reason"]["reason"] for f in failures} == {"Missing value for field [price]"}
    assert all("price" in h["_source"] for h in r["hits"]["hits"])
    ok = esc.search(index="shop", size=20, query={"function_score": {
        "field_value_factor": {"field": "price", "missing": 1}}})
    assert ok["hits"]["total"]["value"] == 12 and ok["_shards"]["failed"] == 0


def test_distance_feature_scores_by_pivot_over_pivot_plus_distance(esc) -> None:
    got = _scores(esc.search(index="shop", size=20, query={"distance_feature": {
        "field": "day", "origin": "2024-01-05T00:00:00.000Z", "pivot": "2d", "boost": 3}}))
    assert got["4"] == 3.0
    assert got["2"] == pytest.approx(3 * 2 / (2 + 2)) and got["8"] == pytest.approx(3 * 2 / 6)
    with pytest.raises(elasticsearch.BadRequestError) as err:
        esc.search(index="shop", query={"distance_feature": {
            "field": "tag", "origin": "now", "pivot": "1d"}})
    assert "can only be run on a date, date_nanos or geo_point field type" in str(err.value.body)


def test_terms_lookup_reads_the_values_at_path_of_another_document(esc) -> None:
    esc.index(index="prefs", id="u1", routing="r", document={"likes": {"tags": ["t1", "t2"]}},
              refresh=True)
    lookup = {"index": "prefs", "id": "u1", "path": "likes.tags", "routing": "r"}
    r = esc.search(index="shop", size=20, query={"terms": {"tag": lookup}})
    assert sorted(int(h["_id"]) for h in r["hits"]["hits"]) == [
        i for i in range(12) if i % 3 in (1, 2)]
    counted = esc.count(index="shop", query={"terms": {"tag": lookup}})
    assert counted["count"] == 8
    aggs = esc.search(index="shop", size=0, aggs={"f": {"filter": {"terms": {"tag": lookup}}}})
    assert aggs["aggregations"]["f"]["doc_count"] == 8
    missing = esc.search(index="shop", query={"terms": {"tag": {**lookup, "id": "nobody"}}})
    assert missing["hits"]["total"]["value"] == 0
    with pytest.raises(elasticsearch.NotFoundError):
        esc.search(index="shop", query={"terms": {"tag": {**lookup, "index": "nope"}}})
    esc.indices.create(index="small", settings={"max_terms_count": 1}, mappings=MAPPINGS)
    with pytest.raises(elasticsearch.BadRequestError) as err:
        esc.search(index="small", query={"terms": {"tag": lookup}})
    assert "The number of terms [2] used in the Terms Query request has exceeded the allowed " \
           "maximum of [1]" in str(err.value.body)


def test_geo_point_decays_and_distance_features_are_refused_by_name(esc) -> None:
    esc.indices.create(index="places", mappings={"properties": {"at": {"type": "geo_point"}}})
    esc.index(index="places", id="1", document={"at": {"lat": 1.0, "lon": 2.0}}, refresh=True)
    for query in ({"distance_feature": {"field": "at", "origin": [2, 1], "pivot": "1km"}},
                  {"function_score": {"gauss": {"at": {"origin": "1,2", "scale": "2km"}}}}):
        with pytest.raises(elasticsearch.BadRequestError) as err:
            esc.search(index="places", query=query)
        assert "on [geo_point] field [at] is not supported by this server" in str(err.value.body)


def test_min_score_and_score_reading_sorts_see_real_scores_when_sorted_by_a_field(esc) -> None:
    # "apple" scores ~0.69 (global statistics); documents tagged t1 twice that
    q = {"function_score": {"query": {"match": {"title": "apple"}}, "min_score": 0.8,
                            "functions": [{"filter": {"term": {"tag": "t1"}}, "weight": 2}]}}
    by_score = _scores(esc.search(index="shop", size=20, query=q))
    by_field = esc.search(index="shop", size=20, query=q, sort=[{"n": "asc"}])["hits"]["hits"]
    assert sorted(by_score) == sorted(h["_id"] for h in by_field)
    assert set(by_score) == {"1", "7"}
    ranked = esc.search(index="shop", size=20, query={"match": {"title": "apple"}},
                        sort=[{"_script": {"type": "number", "order": "desc",
                                           "script": {"source": "_score"}}}])["hits"]["hits"]
    plain = _scores(esc.search(index="shop", query={"match": {"title": "apple"}}))
    assert [h["sort"][0] for h in ranked] == pytest.approx([plain[h["_id"]] for h in ranked])
