"""Position-aware queries over HTTP through the official ``elasticsearch`` client, on a real
server with real Ray shard actors: the answer, the same scores for 1 and 3 shards, and a
refusal arriving as the client's usual exception carrying our error body."""
from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from elasticsearch import BadRequestError, Elasticsearch, helpers

TEXTS = ["Its cold outside, theres no kind of atmosphere", "Baby its cold there outside",
         "Outside it is cold and wet", "cold rain makes it wet", "that is some cold cold rain"]


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    for name, shards in (("one", 1), ("three", 3)):
        client.indices.create(index=name, settings={"number_of_shards": shards},
                              mappings={"properties": {"text": {"type": "text"},
                                                       "tag": {"type": "keyword"}}})
        helpers.bulk(client, ({"_index": name, "_id": str(i), "text": t, "tag": "x"}
                              for i, t in enumerate(TEXTS)), refresh=True)
    yield client
    client.close()


def test_intervals_through_the_client_score_alike_on_one_and_three_shards(esc) -> None:
    query = {"intervals": {"text": {"all_of": {"intervals": [
        {"match": {"query": "cold"}}, {"prefix": {"prefix": "out"}}], "mode": "ordered"}}}}
    pages = [esc.search(index=name, query=query)["hits"]["hits"] for name in ("one", "three")]
    assert [h["_id"] for h in pages[0]] == ["0", "1"]
    assert [(h["_id"], h["_score"]) for h in pages[0]] == \
        [(h["_id"], h["_score"]) for h in pages[1]]


def test_intervals_on_a_keyword_field_is_a_client_error(esc) -> None:
    with pytest.raises(BadRequestError) as e:
        esc.search(index="three", query={"intervals": {"tag": {"match": {"query": "x"}}}})
    assert "Can only use interval queries on text fields" in str(e.value.body)
