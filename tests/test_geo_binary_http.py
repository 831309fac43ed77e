"""``geo_point`` and ``binary`` over HTTP: the ``elasticsearch`` client against real uvicorn +
Ray shards. A bad point fails its document with ES's error, ``exists`` finds points and bytes,
``fields`` shows GeoJSON, and a term query on bytes is a 400 naming the rule."""
from __future__ import annotations

import elasticsearch
import pytest


def test_points_and_bytes_are_validated_found_and_never_searched(esc) -> None:
    esc.indices.create(index="places", settings={"number_of_shards": 2}, mappings={
        "properties": {"loc": {"type": "geo_point"}, "blob": {"type": "binary"}}})
    esc.index(index="places", id="1", document={"loc": "POINT (2 1)", "blob": "YWJj"})
    esc.index(index="places", id="2", document={"loc": "u"})
    with pytest.raises(elasticsearch.BadRequestError) as err:
        esc.index(index="places", id="3", document={"loc": {"lat": 100, "lon": 0}})
    assert err.value.body["error"]["caused_by"]["reason"] == "illegal latitude value [100.0]"
    esc.indices.refresh(index="places")
    got = esc.search(index="places", query={"exists": {"field": "blob"}}, fields=["loc"])
    hits = got.body["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["1"]
    assert hits[0]["fields"]["loc"] == [{"type": "Point", "coordinates": [2.0, 1.0]}]
    assert esc.count(index="places", query={"exists": {"field": "loc"}})["count"] == 2
    with pytest.raises(elasticsearch.BadRequestError) as err:
        esc.search(index="places", query={"term": {"blob": "YWJj"}})
    assert "Binary fields do not support searching" in str(err.value.body)
