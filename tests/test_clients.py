"""The official Python clients work unchanged against a real server.

``elasticsearch`` (9.x) and ``opensearch-py`` are driven against the real uvicorn + Ray server
(fixture ``base_url``). Each client is used the way its own documentation shows: the
``elasticsearch`` client puts ``from``/``size``/``sort`` in the body and sends
``application/vnd.elasticsearch+json; compatible-with=9``; ``opensearch-py`` sends plain JSON and
passes ``from``/``size``/``sort`` as URL parameters. Errors must arrive as each client's own
exception classes, carrying our Elasticsearch error envelope.

Scroll / point-in-time / ``search_after`` tests probe the server first and are skipped until it
serves those APIs.
"""
from __future__ import annotations

from typing import Any

import elasticsearch
import httpx
import opensearchpy
import pytest
from elasticsearch import Elasticsearch
from elasticsearch import helpers as es_helpers
from opensearchpy import OpenSearch
from opensearchpy import helpers as os_helpers

MAPPINGS = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                           "n": {"type": "integer"}}}
DOCS = [{"_id": str(i), "title": f"quick brown fox {i}" if i % 2 else f"lazy dog {i}",
         "tag": "odd" if i % 2 else "even", "n": i} for i in range(1, 13)]


def _no_handler(resp: httpx.Response) -> bool:
    """Whether the server has no route for the request (the API is not implemented yet)."""
    return resp.status_code in (400, 404, 405) and ("no handler found" in resp.text
                                                   or "Incorrect HTTP method" in resp.text)


@pytest.fixture
def scroll_supported(es: httpx.Client) -> None:
    """Skip until ``/_search/scroll`` is served (scroll is being built separately)."""
    if _no_handler(es.post("/_search/scroll", json={"scroll_id": "bogus", "scroll": "1m"})):
        pytest.skip("scroll is not served yet (POST /_search/scroll: no handler)")


@pytest.fixture
def es_pit_supported(es: httpx.Client) -> None:
    """Skip until Elasticsearch's ``POST /{index}/_pit`` is served."""
    if _no_handler(es.post("/probe-missing/_pit?keep_alive=1m")):
        pytest.skip("point in time is not served yet (POST /{index}/_pit: no handler)")


@pytest.fixture
def os_pit_supported(es: httpx.Client) -> None:
    """Skip until OpenSearch's ``POST /{index}/_search/point_in_time`` is served."""
    if _no_handler(es.post("/probe-missing/_search/point_in_time?keep_alive=1m")):
        pytest.skip("OpenSearch point in time is not served yet "
                    "(POST /{index}/_search/point_in_time: no handler)")


@pytest.fixture
def search_after_supported(es: httpx.Client) -> None:
    """Skip until ``search_after`` is accepted by ``_search``."""
    es.put("/probe", json={"mappings": {"properties": {"n": {"type": "integer"}}}})
    resp = es.post("/probe/_search", json={"sort": [{"n": "asc"}], "search_after": [1]})
    es.delete("/probe")
    if resp.status_code != 200:
        pytest.skip(f"search_after is not served yet: {resp.text[:200]}")


def _actions(index: str) -> list[dict[str, Any]]:
    return [{"_index": index, "_id": d["_id"], "_source": {k: v for k, v in d.items()
                                                          if k != "_id"}} for d in DOCS]


def _ids(resp: Any) -> list[str]:
    return [h["_id"] for h in resp["hits"]["hits"]]


def _assert_envelope(info: Any, es_type: str, status: int) -> None:
    """Our error payload as Elasticsearch writes it: root_cause, type, reason, status."""
    assert isinstance(info, dict), info
    assert info["status"] == status
    assert info["error"]["type"] == es_type
    assert info["error"]["root_cause"][0]["type"] == es_type
    assert info["error"]["reason"]


# --------------------------------------------------------------------------- elasticsearch (9.x)


class TestElasticsearchClient:
    def test_info_passes_product_check(self, esc: Elasticsearch) -> None:
        info = esc.info()
        assert info["tagline"] == "You Know, for Search"
        assert info["version"]["number"]
        assert info.meta.headers["x-elastic-product"] == "Elasticsearch"

    def test_ping_is_true(self, esc: Elasticsearch) -> None:
        assert esc.ping() is True

    def test_compatible_media_type_is_echoed(self, esc: Elasticsearch) -> None:
        """Asked for ``vnd.elasticsearch+json; compatible-with=9``, the server answers in it."""
        resp = esc.info()
        assert resp.meta.mimetype == "application/vnd.elasticsearch+json"
        assert "compatible-with=9" in resp.meta.headers["content-type"]

    def test_index_lifecycle(self, esc: Elasticsearch) -> None:
        assert not esc.indices.exists(index="books")
        created = esc.indices.create(index="books", mappings=MAPPINGS,
                                     settings={"number_of_shards": 2})
        assert created["acknowledged"] is True and created["index"] == "books"
        assert esc.indices.exists(index="books")
        mapping = esc.indices.get_mapping(index="books")
        assert mapping["books"]["mappings"]["properties"]["tag"] == {"type": "keyword"}
        assert esc.indices.delete(index="books")["acknowledged"] is True
        assert not esc.indices.exists(index="books")

    def test_document_crud(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS)
        resp = esc.index(index="books", id="1", document={"title": "dune", "n": 1},
                         refresh=True)
        assert resp["result"] == "created" and resp["_id"] == "1"
        assert esc.index(index="books", id="1", document={"title": "dune", "n": 2})[
            "result"] == "updated"
        got = esc.get(index="books", id="1")
        assert got["found"] is True and got["_source"] == {"title": "dune", "n": 2}
        assert esc.exists(index="books", id="1")
        assert not esc.exists(index="books", id="nope")
        assert esc.delete(index="books", id="1")["result"] == "deleted"
        assert not esc.exists(index="books", id="1")

    def test_index_without_id_generates_one(self, esc: Elasticsearch) -> None:
        resp = esc.index(index="books", document={"title": "x"}, refresh="wait_for")
        assert resp["result"] == "created"
        assert esc.get(index="books", id=resp["_id"])["_source"] == {"title": "x"}

    def test_helpers_bulk_indexes_everything(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS, settings={"number_of_shards": 3})
        ok, errors = es_helpers.bulk(esc, _actions("books"), refresh=True)
        assert (ok, errors) == (len(DOCS), [])
        assert esc.count(index="books")["count"] == len(DOCS)

    def test_helpers_bulk_reports_item_errors(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS)
        es_helpers.bulk(esc, _actions("books")[:1], refresh=True)
        with pytest.raises(es_helpers.BulkIndexError) as exc:
            es_helpers.bulk(esc, [{"_op_type": "create", "_index": "books", "_id": "1",
                                   "_source": {"n": 5}}])
        (item,) = exc.value.errors
        assert item["create"]["status"] == 409
        assert item["create"]["error"]["type"] == "version_conflict_engine_exception"

    def test_search_from_size_query_sort_in_body(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS, settings={"number_of_shards": 3})
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        resp = esc.search(index="books", query={"term": {"tag": "even"}},
                          sort=[{"n": {"order": "desc"}}], from_=1, size=2)
        assert resp["hits"]["total"] == {"value": 6, "relation": "eq"}
        assert _ids(resp) == ["10", "8"]
        assert [h["sort"] for h in resp["hits"]["hits"]] == [[10], [8]]
        scored = esc.search(index="books", query={"match": {"title": "fox"}}, size=3)
        assert scored["hits"]["total"]["value"] == 6
        assert all(int(i) % 2 for i in _ids(scored))
        assert scored["hits"]["max_score"] > 0

    def test_search_url_parameters_and_source_filtering(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS)
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        resp = esc.search(index="books", q="tag:even", size=1, sort="n:asc",
                          source_includes=["n"], track_total_hits=True)
        assert resp["hits"]["total"] == {"value": 6, "relation": "eq"}
        assert [h["_source"] for h in resp["hits"]["hits"]] == [{"n": 2}]
        assert esc.count(index="books", q="title:fox")["count"] == 6

    def test_count_with_query(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS)
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        assert esc.count(index="books", query={"range": {"n": {"gte": 10}}})["count"] == 3
        assert esc.count(index="books")["count"] == len(DOCS)

    def test_refresh_makes_writes_visible(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS)
        esc.index(index="books", id="1", document={"n": 1})
        assert esc.indices.refresh(index="books")["_shards"]["failed"] == 0
        assert esc.count(index="books")["count"] == 1

    def test_cat_indices_text_and_json(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS)
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        rows = esc.cat.indices(format="json")
        assert [(r["index"], r["docs.count"]) for r in rows] == [("books", str(len(DOCS)))]
        text = esc.cat.indices(v=True)
        assert isinstance(text.body, str)
        assert text.body.splitlines()[0].split()[:3] == ["health", "status", "index"]
        assert "books" in text.body

    def test_missing_document_raises_not_found(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books")
        with pytest.raises(elasticsearch.NotFoundError) as exc:
            esc.get(index="books", id="nope")
        assert exc.value.status_code == 404
        assert exc.value.info == {"_index": "books", "_id": "nope", "found": False}

    def test_missing_index_raises_not_found_with_envelope(self, esc: Elasticsearch) -> None:
        with pytest.raises(elasticsearch.NotFoundError) as exc:
            esc.search(index="missing")
        assert exc.value.status_code == 404
        assert exc.value.error == "index_not_found_exception"
        _assert_envelope(exc.value.info, "index_not_found_exception", 404)
        assert exc.value.info["error"]["index"] == "missing"
        with pytest.raises(elasticsearch.NotFoundError):
            esc.indices.delete(index="missing")

    def test_existing_index_raises_bad_request(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books")
        with pytest.raises(elasticsearch.BadRequestError) as exc:
            esc.indices.create(index="books")
        assert exc.value.status_code == 400
        assert exc.value.error == "resource_already_exists_exception"
        _assert_envelope(exc.value.info, "resource_already_exists_exception", 400)

    def test_malformed_query_raises_bad_request(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books")
        with pytest.raises(elasticsearch.BadRequestError) as exc:
            esc.search(index="books", query={"no_such_query": {}})
        assert exc.value.status_code == 400
        assert exc.value.info["status"] == 400
        assert exc.value.info["error"]["root_cause"][0]["reason"]

    def test_create_existing_document_raises_conflict(self, esc: Elasticsearch) -> None:
        esc.index(index="books", id="1", document={"n": 1})
        with pytest.raises(elasticsearch.ConflictError) as exc:
            esc.create(index="books", id="1", document={"n": 2})
        assert exc.value.status_code == 409
        assert exc.value.error == "version_conflict_engine_exception"
        _assert_envelope(exc.value.info, "version_conflict_engine_exception", 409)

    def test_delete_missing_document_raises_not_found(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books")
        with pytest.raises(elasticsearch.NotFoundError) as exc:
            esc.delete(index="books", id="nope")
        assert exc.value.info["result"] == "not_found"

    def test_ignore_status_returns_the_error_body(self, esc: Elasticsearch) -> None:
        resp = esc.options(ignore_status=404).get(index="missing", id="1")
        assert resp.meta.status == 404
        assert resp["error"]["type"] == "index_not_found_exception"

    def test_update_and_get_index(self, esc: Elasticsearch) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS, settings={"number_of_shards": 2})
        esc.index(index="books", id="1", document={"title": "dune", "n": 1})
        assert esc.update(index="books", id="1", doc={"n": 7})["result"] == "updated"
        assert esc.get(index="books", id="1")["_source"] == {"title": "dune", "n": 7}
        got = esc.indices.get(index="books")
        assert got["books"]["settings"]["index"]["number_of_shards"] == "2"

    def test_cluster_health(self, esc: Elasticsearch) -> None:
        assert esc.cluster.health()["status"] in ("green", "yellow")

    def test_bulk_api_with_ndjson_operations(self, esc: Elasticsearch) -> None:
        """``client.bulk`` sends ``application/vnd.elasticsearch+x-ndjson; compatible-with=9``."""
        resp = esc.bulk(operations=[{"index": {"_index": "books", "_id": "1"}}, {"n": 1},
                                    {"delete": {"_index": "books", "_id": "2"}}], refresh=True)
        assert resp["errors"] is False
        assert [next(iter(i.values()))["status"] for i in resp["items"]] == [201, 404]

    def test_search_after_pages_through_everything(self, esc: Elasticsearch,
                                                   search_after_supported: None) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS, settings={"number_of_shards": 3})
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        seen: list[str] = []
        after = None
        while True:
            kwargs: dict[str, Any] = {"search_after": after} if after else {}
            resp = esc.search(index="books", sort=[{"n": "asc"}], size=5, **kwargs)
            hits = resp["hits"]["hits"]
            if not hits:
                break
            seen += [h["_id"] for h in hits]
            after = hits[-1]["sort"]
        assert seen == [d["_id"] for d in DOCS]

    def test_helpers_scan_returns_every_document(self, esc: Elasticsearch,
                                                 scroll_supported: None) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS, settings={"number_of_shards": 3})
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        ids = [h["_id"] for h in es_helpers.scan(esc, index="books", size=5,
                                                 query={"query": {"term": {"tag": "odd"}}})]
        assert sorted(ids, key=int) == [d["_id"] for d in DOCS if int(d["_id"]) % 2]
        ordered = [h["_id"] for h in es_helpers.scan(esc, index="books", size=5,
                                                     preserve_order=True,
                                                     query={"sort": [{"n": "desc"}]})]
        assert ordered == [d["_id"] for d in reversed(DOCS)]

    def test_point_in_time_with_search_after(self, esc: Elasticsearch,
                                             es_pit_supported: None) -> None:
        esc.indices.create(index="books", mappings=MAPPINGS, settings={"number_of_shards": 2})
        es_helpers.bulk(esc, _actions("books"), refresh=True)
        pit = esc.open_point_in_time(index="books", keep_alive="1m")["id"]
        esc.index(index="books", id="99", document={"n": 99}, refresh=True)
        seen: list[str] = []
        after = None
        while True:
            kwargs: dict[str, Any] = {"search_after": after} if after else {}
            resp = esc.search(pit={"id": pit, "keep_alive": "1m"}, sort=[{"n": "asc"}],
                              size=5, **kwargs)
            hits = resp["hits"]["hits"]
            if not hits:
                break
            pit = resp.get("pit_id", pit)
            seen += [h["_id"] for h in hits]
            after = hits[-1]["sort"]
        assert seen == [d["_id"] for d in DOCS]  # the document indexed after opening is not seen
        assert esc.close_point_in_time(id=pit)["succeeded"] is True


# --------------------------------------------------------------------------- opensearch-py


class TestOpenSearchClient:
    def test_info(self, osc: OpenSearch) -> None:
        info = osc.info()
        assert info["tagline"] == "You Know, for Search"
        assert info["version"]["number"]

    def test_ping_is_true(self, osc: OpenSearch) -> None:
        assert osc.ping() is True

    def test_index_lifecycle(self, osc: OpenSearch) -> None:
        assert osc.indices.exists(index="books") is False
        created = osc.indices.create(index="books", body={"mappings": MAPPINGS,
                                                          "settings": {"number_of_shards": 2}})
        assert created["acknowledged"] is True
        assert osc.indices.exists(index="books") is True
        mapping = osc.indices.get_mapping(index="books")
        assert mapping["books"]["mappings"]["properties"]["n"] == {"type": "integer"}
        assert osc.indices.delete(index="books")["acknowledged"] is True
        assert osc.indices.exists(index="books") is False

    def test_document_crud(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS})
        resp = osc.index(index="books", id="1", body={"title": "dune"}, refresh=True)
        assert resp["result"] == "created"
        got = osc.get(index="books", id="1")
        assert got["_source"] == {"title": "dune"} and got["_version"] == 1
        assert osc.exists(index="books", id="1") is True
        assert osc.exists(index="books", id="nope") is False
        assert osc.delete(index="books", id="1")["result"] == "deleted"
        assert osc.exists(index="books", id="1") is False

    def test_helpers_bulk_indexes_everything(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS,
                                                "settings": {"number_of_shards": 3}})
        ok, errors = os_helpers.bulk(osc, _actions("books"), refresh=True)
        assert (ok, errors) == (len(DOCS), [])
        assert osc.count(index="books")["count"] == len(DOCS)

    def test_search_from_size_sort_as_url_params(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS,
                                                "settings": {"number_of_shards": 3}})
        os_helpers.bulk(osc, _actions("books"), refresh=True)
        resp = osc.search(index="books", body={"query": {"term": {"tag": "odd"}}},
                          from_=2, size=2, sort="n:asc")
        assert resp["hits"]["total"]["value"] == 6
        assert _ids(resp) == ["5", "7"]

    def test_search_from_size_sort_in_body(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS,
                                                "settings": {"number_of_shards": 2}})
        os_helpers.bulk(osc, _actions("books"), refresh=True)
        resp = osc.search(index="books", body={"query": {"match_all": {}}, "from": 3,
                                               "size": 3, "sort": [{"n": "desc"}]})
        assert _ids(resp) == ["9", "8", "7"]

    def test_count_with_query(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS})
        os_helpers.bulk(osc, _actions("books"), refresh=True)
        assert osc.count(index="books", body={"query": {"term": {"tag": "even"}}})["count"] == 6

    def test_refresh_makes_writes_visible(self, osc: OpenSearch) -> None:
        osc.index(index="books", id="1", body={"n": 1})
        osc.indices.refresh(index="books")
        assert osc.count(index="books")["count"] == 1

    def test_cat_indices_text_and_json(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS})
        os_helpers.bulk(osc, _actions("books"), refresh=True)
        rows = osc.cat.indices(format="json")
        assert [(r["index"], r["docs.count"]) for r in rows] == [("books", str(len(DOCS)))]
        text = osc.cat.indices(v=True)
        assert isinstance(text, str)
        assert text.splitlines()[0].split()[:3] == ["health", "status", "index"]

    def test_missing_document_raises_not_found(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books")
        with pytest.raises(opensearchpy.NotFoundError) as exc:
            osc.get(index="books", id="nope")
        assert exc.value.status_code == 404
        assert exc.value.info == {"_index": "books", "_id": "nope", "found": False}

    def test_missing_index_raises_not_found_with_envelope(self, osc: OpenSearch) -> None:
        with pytest.raises(opensearchpy.NotFoundError) as exc:
            osc.search(index="missing", body={"query": {"match_all": {}}})
        assert exc.value.status_code == 404
        assert exc.value.error == "index_not_found_exception"
        _assert_envelope(exc.value.info, "index_not_found_exception", 404)

    def test_existing_index_raises_request_error(self, osc: OpenSearch) -> None:
        osc.indices.create(index="books")
        with pytest.raises(opensearchpy.RequestError) as exc:
            osc.indices.create(index="books")
        assert exc.value.status_code == 400
        assert exc.value.error == "resource_already_exists_exception"
        _assert_envelope(exc.value.info, "resource_already_exists_exception", 400)

    def test_create_existing_document_raises_conflict(self, osc: OpenSearch) -> None:
        osc.index(index="books", id="1", body={"n": 1})
        with pytest.raises(opensearchpy.ConflictError) as exc:
            osc.create(index="books", id="1", body={"n": 2})
        assert exc.value.status_code == 409
        assert exc.value.error == "version_conflict_engine_exception"
        _assert_envelope(exc.value.info, "version_conflict_engine_exception", 409)

    def test_helpers_bulk_reports_item_errors(self, osc: OpenSearch) -> None:
        os_helpers.bulk(osc, _actions("books")[:1], refresh=True)
        with pytest.raises(os_helpers.BulkIndexError) as exc:
            os_helpers.bulk(osc, [{"_op_type": "create", "_index": "books", "_id": "1",
                                   "_source": {"n": 5}}])
        (item,) = exc.value.errors
        assert item["create"]["status"] == 409

    def test_ignore_returns_the_error_body(self, osc: OpenSearch) -> None:
        resp = osc.get(index="missing", id="1", ignore=404)
        assert resp["error"]["type"] == "index_not_found_exception"

    def test_helpers_scan_returns_every_document(self, osc: OpenSearch,
                                                 scroll_supported: None) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS,
                                                "settings": {"number_of_shards": 3}})
        os_helpers.bulk(osc, _actions("books"), refresh=True)
        ids = [h["_id"] for h in os_helpers.scan(osc, index="books", size=5,
                                                 query={"query": {"term": {"tag": "even"}}})]
        assert sorted(ids, key=int) == [d["_id"] for d in DOCS if int(d["_id"]) % 2 == 0]

    def test_point_in_time_with_search_after(self, osc: OpenSearch,
                                             os_pit_supported: None) -> None:
        osc.indices.create(index="books", body={"mappings": MAPPINGS})
        os_helpers.bulk(osc, _actions("books"), refresh=True)
        pit = osc.create_pit(index="books", params={"keep_alive": "1m"})["pit_id"]
        resp = osc.search(body={"pit": {"id": pit, "keep_alive": "1m"}, "size": 5,
                                "sort": [{"n": "asc"}]})
        first = _ids(resp)
        resp = osc.search(body={"pit": {"id": pit}, "size": 5, "sort": [{"n": "asc"}],
                                "search_after": resp["hits"]["hits"][-1]["sort"]})
        assert first + _ids(resp) == [d["_id"] for d in DOCS[:10]]
        osc.delete_pit(body={"pit_id": [pit]})
