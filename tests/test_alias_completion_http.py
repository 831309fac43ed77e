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


def _options(resp: dict, name: str = "s") -> list[tuple[str, str]]:
    return [(o["_index"], o["_id"]) for o in resp["suggest"][name][0]["options"]]


def test_each_index_answers_a_completion_suggester_with_its_own_mapping(
        esc: Elasticsearch) -> None:
    """Elasticsearch builds a suggester on each shard from its own mapping: an index whose
    completion field drops separators matches ``nevermindn``, the other does not, whichever
    index comes first and whatever field the first suggester names."""
    esc.indices.create(index="glued", settings={"number_of_shards": 2}, mappings={"properties": {
        "s": {"type": "completion", "preserve_separators": False}}})
    esc.indices.create(index="spaced", settings={"number_of_shards": 2}, mappings={"properties": {
        "s": {"type": "completion"}, "t": {"type": "text"}}})
    for index in ("glued", "spaced"):
        esc.index(index=index, id="1", document={"s": "Nevermind Nirvana", "t": "nevermind"})
    esc.indices.refresh(index="glued,spaced")
    for indices in ("glued,spaced", "spaced,glued"):
        resp = esc.search(index=indices, suggest={
            "t": {"text": "nevermnd", "term": {"field": "t"}},
            "s": {"prefix": "nevermindn", "completion": {"field": "s"}}})
        assert _options(resp) == [("glued", "1")], indices
        assert resp["_shards"]["failed"] == 0
        resp = esc.search(index=indices, suggest={"s": {"prefix": "nevermind n",
                                                        "completion": {"field": "s"}}})
        assert sorted(_options(resp)) == [("glued", "1"), ("spaced", "1")], indices


def test_a_completion_suggester_fails_only_the_shards_of_an_index_without_the_field(
        esc: Elasticsearch) -> None:
    """An index whose field is no completion field fails its shards with Elasticsearch's
    text; the others answer (a partial result), and alone it is a 400."""
    esc.indices.create(index="bands2", settings={"number_of_shards": 2},
                       mappings={"properties": {"s": {"type": "completion"}}})
    esc.indices.create(index="plain", settings={"number_of_shards": 3},
                       mappings={"properties": {"s": {"type": "keyword"}}})
    esc.index(index="bands2", id="1", document={"s": "Nirvana"})
    esc.index(index="plain", id="1", document={"s": "Nirvana"})
    esc.indices.refresh(index="bands2,plain")
    body = {"s": {"prefix": "nir", "completion": {"field": "s"}}}
    resp = esc.search(index="bands2,plain", suggest=body)
    assert _options(resp) == [("bands2", "1")]
    assert resp["_shards"]["failed"] == 3 and resp["_shards"]["successful"] == 2
    reasons = {(f["index"], f["reason"]["type"], f["reason"]["reason"])
               for f in resp["_shards"]["failures"]}
    assert reasons == {("plain", "illegal_argument_exception",
                        "Field [s] is not a completion suggest field")}
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="plain", suggest=body)
    assert "Field [s] is not a completion suggest field" in str(e.value.body)


def test_a_term_suggester_over_indices_that_analyse_its_text_differently_is_refused(
        esc: Elasticsearch) -> None:
    """The response has one entry per token of the text: indices that cut the text into other
    tokens cannot share it, so the request is refused naming the suggester (never answered by
    one index's analysis)."""
    esc.indices.create(index="words", mappings={"properties": {"t": {"type": "text"}}})
    esc.indices.create(index="whole", mappings={"properties": {"t": {"type": "keyword"}}})
    esc.index(index="words", id="1", document={"t": "hello world"}, refresh=True)
    esc.index(index="whole", id="1", document={"t": "hello world"}, refresh=True)
    body = {"mine": {"text": "helo world", "term": {"field": "t"}}}
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="words,whole", suggest=body)
    err = e.value.body["error"]
    assert err["type"] == "illegal_argument_exception"
    assert "[mine]" in err["reason"] and "field [t]" in err["reason"]
    resp = esc.search(index="words", suggest=body)
    assert [entry["text"] for entry in resp["suggest"]["mine"]] == ["helo", "world"]
