"""Field aliases and the completion suggester over HTTP (real uvicorn, real Ray), through the
official ``elasticsearch`` client used as its documentation shows."""
from __future__ import annotations

from collections.abc import Iterator

import elasticsearch
import httpx
import pytest
from elasticsearch import Elasticsearch


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    yield client
    client.close()


def test_an_alias_field_is_searched_sorted_aggregated_and_shown(esc: Elasticsearch) -> None:
    esc.indices.create(index="songs", mappings={"properties": {
        "year": {"type": "integer"}, "released": {"type": "alias", "path": "year"},
        "name": {"type": "text"}, "title": {"type": "alias", "path": "name"}}},
        settings={"number_of_shards": 2})
    for i, (name, year) in enumerate([("come as you are", 1991), ("lithium", 1992),
                                      ("all apologies", 1993)]):
        esc.index(index="songs", id=str(i), document={"name": name, "year": year})
    esc.indices.refresh(index="songs")
    resp = esc.search(index="songs", query={"range": {"released": {"gte": 1992}}},
                      sort=[{"released": "desc"}], fields=["released"],
                      aggs={"y": {"max": {"field": "released"}}})
    assert [h["fields"]["released"] for h in resp["hits"]["hits"]] == [[1993], [1992]]
    assert resp["aggregations"]["y"]["value"] == 1993
    assert esc.search(index="songs", query={"match": {"title": "lithium"}})["hits"]["hits"][0][
        "_id"] == "1"
    got = esc.indices.get_field_mapping(index="songs", fields="released")
    assert got["songs"]["mappings"]["released"]["mapping"]["released"] == {
        "type": "alias", "path": "year"}
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.index(index="songs", id="x", document={"released": 2000})
    assert e.value.body["error"]["caused_by"]["reason"] == \
        "Cannot write to a field alias [released]."


def test_the_completion_suggester_answers_through_the_client(esc: Elasticsearch) -> None:
    esc.indices.create(index="bands", mappings={"properties": {"suggest": {"type": "completion"}}},
                       settings={"number_of_shards": 3})
    for i, (inputs, weight) in enumerate([(["Nirvana", "Nevermind"], 34), (["Nine Inch Nails"], 12),
                                          (["Nirvana Tribute"], 2)]):
        esc.index(index="bands", id=str(i), document={"suggest": {"input": inputs,
                                                                  "weight": weight}})
    esc.indices.refresh(index="bands")
    resp = esc.search(index="bands", suggest={"s": {"prefix": "ni", "completion": {
        "field": "suggest", "size": 2}}}, source=False)
    options = resp["suggest"]["s"][0]["options"]
    assert [(o["_id"], o["text"], o["_score"]) for o in options] == [
        ("0", "Nirvana", 34.0), ("1", "Nine Inch Nails", 12.0)]
    fuzzy = esc.search(index="bands", suggest={"s": {"prefix": "nirvanna", "completion": {
        "field": "suggest", "fuzzy": {"fuzziness": 1}}}})
    assert [o["_id"] for o in fuzzy["suggest"]["s"][0]["options"]] == ["0", "2"]
