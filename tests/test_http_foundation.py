"""The foundation over HTTP: real uvicorn on loopback, real coordinator and shard actors.

Each test is one rule of the foundation issue, checked the way a client sees it.
"""
from __future__ import annotations

import orjson
import pytest


def bulk_body(index: str, docs: list[tuple[str, dict]]) -> bytes:
    lines = []
    for doc_id, src in docs:
        lines.append(orjson.dumps({"index": {"_index": index, "_id": doc_id}}))
        lines.append(orjson.dumps(src))
    return b"\n".join(lines) + b"\n"


def load(es, index: str, n: int, shards: int = 3, **extra) -> None:
    r = es.put(f"/{index}", json={"settings": {"number_of_shards": shards}})
    assert r.status_code == 200, r.text
    docs = [(str(i), {"title": f"doc {i}", "n": i, "group": f"g{i % 3}", **extra})
            for i in range(n)]
    r = es.post("/_bulk?refresh=true", content=bulk_body(index, docs),
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"], r.text


def ids(resp) -> list[str]:
    return [h["_id"] for h in resp.json()["hits"]["hits"]]


# --- cluster and indices ----------------------------------------------------------------------

def test_root_reports_name_version_and_tagline(es) -> None:
    body = es.get("/").json()
    assert body["version"]["number"].startswith("8.")
    assert body["tagline"] == "You Know, for Search"
    assert es.head("/").status_code == 200


def test_every_response_carries_the_elastic_product_header(es) -> None:
    assert es.get("/").headers["x-elastic-product"] == "Elasticsearch"
    assert es.get("/missing/_search").headers["x-elastic-product"] == "Elasticsearch"


def test_cluster_health_is_green_with_live_shards(es) -> None:
    es.put("/h", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    body = es.get("/_cluster/health").json()
    assert body["status"] == "green"
    assert body["active_primary_shards"] >= 2


def test_cluster_health_is_yellow_when_replicas_have_no_other_node(es) -> None:
    """One Ray node: a replica may not share its primary's node (Elasticsearch's rule), so the
    default replica stays unassigned and health is yellow, not green."""
    es.put("/h", json={"settings": {"number_of_shards": 2}})
    body = es.get("/_cluster/health").json()
    assert body["status"] == "yellow"
    assert body["active_primary_shards"] == 2 and body["unassigned_shards"] == 2


def test_create_index_defaults_to_one_shard_and_accepts_replicas(es) -> None:
    assert es.put("/one").json() == {"acknowledged": True, "shards_acknowledged": True,
                                      "index": "one"}
    es.put("/two", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    settings = es.get("/one").json()["one"]["settings"]["index"]
    assert settings["number_of_shards"] == "1"
    assert es.get("/two").json()["two"]["settings"]["index"]["number_of_shards"] == "2"


def test_creating_an_existing_index_is_a_400(es) -> None:
    es.put("/dup")
    r = es.put("/dup")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "resource_already_exists_exception"


def test_invalid_index_names_are_rejected(es) -> None:
    r = es.put("/UPPER")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_index_name_exception"


def test_head_and_delete_index(es) -> None:
    es.put("/gone")
    assert es.head("/gone").status_code == 200
    assert es.delete("/gone").json() == {"acknowledged": True}
    assert es.head("/gone").status_code == 404
    r = es.delete("/gone")
    assert r.status_code == 404 and r.json()["error"]["type"] == "index_not_found_exception"


def test_cat_indices_as_text_and_json(es) -> None:
    load(es, "cat", 4, shards=2)
    rows = es.get("/_cat/indices?format=json").json()
    row = next(r for r in rows if r["index"] == "cat")
    # one node: the default replica is unassigned, so the index is yellow (as Elasticsearch)
    assert row["docs.count"] == "4" and row["pri"] == "2" and row["health"] == "yellow"
    text = es.get("/_cat/indices?v").text
    assert text.splitlines()[0].split()[:3] == ["health", "status", "index"]
    assert any(line.split()[2] == "cat" for line in text.splitlines()[1:])


# --- documents --------------------------------------------------------------------------------

def test_index_get_and_delete_a_document(es) -> None:
    r = es.put("/docs/_doc/1", json={"title": "hello"})
    assert r.status_code == 201 and r.json()["result"] == "created"
    assert r.json()["_version"] == 1
    r = es.put("/docs/_doc/1", json={"title": "hello again"})
    assert r.status_code == 200 and r.json()["result"] == "updated" and r.json()["_version"] == 2
    got = es.get("/docs/_doc/1").json()
    assert got["found"] is True and got["_source"] == {"title": "hello again"}
    assert es.head("/docs/_doc/1").status_code == 200
    assert es.delete("/docs/_doc/1").json()["result"] == "deleted"
    r = es.get("/docs/_doc/1")
    assert r.status_code == 404 and r.json() == {"_index": "docs", "_id": "1", "found": False}
    assert es.head("/docs/_doc/1").status_code == 404
    assert es.delete("/docs/_doc/1").status_code == 404


def test_post_without_id_generates_one(es) -> None:
    r = es.post("/auto/_doc", json={"a": 1})
    assert r.status_code == 201
    doc_id = r.json()["_id"]
    assert len(doc_id) == 20
    assert es.get(f"/auto/_doc/{doc_id}").json()["_source"] == {"a": 1}


def test_create_conflicts_when_the_document_exists(es) -> None:
    assert es.put("/c/_create/1", json={"a": 1}).status_code == 201
    r = es.put("/c/_create/1", json={"a": 2})
    assert r.status_code == 409
    assert r.json()["error"]["type"] == "version_conflict_engine_exception"
    assert es.get("/c/_doc/1").json()["_source"] == {"a": 1}


def test_writing_to_a_missing_index_creates_it_with_a_dynamic_mapping(es) -> None:
    es.put("/fresh/_doc/1", json={"title": "x", "n": 1})
    props = es.get("/fresh/_mapping").json()["fresh"]["mappings"]["properties"]
    assert props["n"] == {"type": "long"}
    assert props["title"]["type"] == "text"


def test_documents_are_searchable_after_refresh_only(es) -> None:
    es.put("/nrt", json={"settings": {"refresh_interval": "-1"}})
    es.put("/nrt/_doc/1", json={"a": 1})
    assert es.get("/nrt/_search").json()["hits"]["total"]["value"] == 0
    assert es.get("/nrt/_doc/1").json()["found"] is True  # get is real-time
    es.post("/nrt/_refresh")
    assert es.get("/nrt/_search").json()["hits"]["total"]["value"] == 1
    es.put("/nrt/_doc/2?refresh=true", json={"a": 2})
    assert es.get("/nrt/_search").json()["hits"]["total"]["value"] == 2
    es.put("/nrt/_doc/3?refresh=wait_for", json={"a": 3})
    assert es.get("/nrt/_count").json()["count"] == 3


def test_bulk_reports_each_item_and_one_bad_item_fails_alone(es) -> None:
    es.put("/b", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    body = b"\n".join([
        b'{"index":{"_index":"b","_id":"1"}}', b'{"n":1}',
        b'{"create":{"_index":"b","_id":"2"}}', b'{"n":2}',
        b'{"index":{"_index":"b","_id":"3"}}', b'{"n":"not a number"}',
        b'{"index":{"_index":"b","_id":"4"}}', b'{not json',
        b'{"update":{"_index":"b","_id":"1"}}', b'{"doc":{"extra":true}}',
        b'{"delete":{"_index":"b","_id":"2"}}',
        b'{"create":{"_index":"b","_id":"1"}}', b'{"n":9}',
    ]) + b"\n"
    r = es.post("/_bulk?refresh=true", content=body,
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200
    out = r.json()
    assert out["errors"] is True
    statuses = [next(iter(i.values()))["status"] for i in out["items"]]
    assert statuses == [201, 201, 400, 400, 200, 200, 409]
    assert out["items"][2]["index"]["error"]["type"] == "mapper_parsing_exception"
    hits = es.get("/b/_search").json()["hits"]
    assert hits["total"]["value"] == 1
    assert hits["hits"][0]["_source"] == {"n": 1, "extra": True}


def test_bulk_with_index_in_path(es) -> None:
    body = b'{"index":{"_id":"1"}}\n{"a":1}\n{"index":{"_id":"2"}}\n{"a":2}\n'
    r = es.post("/p/_bulk?refresh=true", content=body,
                headers={"content-type": "application/x-ndjson"})
    assert r.json()["errors"] is False
    assert es.get("/p/_count").json()["count"] == 2


def test_malformed_bulk_action_line_fails_the_request_and_applies_nothing(es) -> None:
    body = b'{"index":{"_index":"m","_id":"1"}}\n{"a":1}\n["oops"]\n{"a":2}\n'
    r = es.post("/_bulk", content=body, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "illegal_argument_exception"
    assert es.head("/m").status_code == 404


def test_update_api_merges_partial_documents(es) -> None:
    es.put("/u/_doc/1", json={"a": 1, "o": {"x": 1}})
    r = es.post("/u/_update/1", json={"doc": {"b": 2, "o": {"y": 2}}})
    assert r.status_code == 200 and r.json()["result"] == "updated"
    assert es.get("/u/_doc/1").json()["_source"] == {"a": 1, "o": {"x": 1, "y": 2}, "b": 2}
    r = es.post("/u/_update/404", json={"doc": {"b": 2}})
    assert r.status_code == 404 and r.json()["error"]["type"] == "document_missing_exception"


# --- search and pagination ---------------------------------------------------------------------

def test_empty_query_matches_all_and_reports_the_total(es) -> None:
    load(es, "all", 23)
    body = es.get("/_search").json()
    assert body["hits"]["total"] == {"value": 23, "relation": "eq"}
    assert len(body["hits"]["hits"]) == 10  # size defaults to 10
    assert body["_shards"] == {"total": 3, "successful": 3, "skipped": 0, "failed": 0}
    assert body["timed_out"] is False and isinstance(body["took"], int)
    hit = body["hits"]["hits"][0]
    assert set(hit) >= {"_index", "_id", "_score", "_source"} and hit["_score"] == 1.0


def test_consecutive_pages_follow_one_order(es) -> None:
    load(es, "pages", 23)
    p1 = ids(es.get("/_search?size=5"))
    p2 = ids(es.get("/_search?size=5&from=5"))
    p3 = ids(es.get("/_search?size=5&from=10"))
    everything = ids(es.get("/_search?size=100"))
    assert p1 + p2 + p3 == everything[:15]
    assert len(set(everything)) == 23
    # with equal scores, documents come in the order they were written
    assert everything == [str(i) for i in range(23)]


def test_the_order_does_not_depend_on_the_number_of_shards(es) -> None:
    for shards in (1, 8):
        load(es, f"s{shards}", 40, shards=shards)
    for q in ("", "&sort=group.keyword:desc", "&q=title:doc"):
        one = ids(es.get(f"/s1/_search?size=40{q}"))
        eight = ids(es.get(f"/s8/_search?size=40{q}"))
        assert one == eight and len(one) == 40


def test_query_string_from_and_size_win_over_the_body(es) -> None:
    load(es, "prec", 20)
    r = es.post("/prec/_search?size=2&from=4", json={"size": 7, "from": 0})
    assert ids(r) == ["4", "5"]
    r = es.post("/prec/_search", json={"size": 3, "from": 1})
    assert ids(r) == ["1", "2", "3"]


def test_sort_in_body_and_in_url_with_sort_values_in_hits(es) -> None:
    load(es, "srt", 10)
    r = es.post("/srt/_search", json={"sort": [{"n": "desc"}], "size": 3}).json()
    assert [h["sort"] for h in r["hits"]["hits"]] == [[9], [8], [7]]
    assert r["hits"]["hits"][0]["_score"] is None and r["hits"]["max_score"] is None
    r2 = es.get("/srt/_search?sort=group.keyword:asc,n:desc&size=4").json()
    assert [h["sort"] for h in r2["hits"]["hits"]] == [["g0", 9], ["g0", 6], ["g0", 3],
                                                        ["g0", 0]]


def test_term_and_match_queries(es) -> None:
    load(es, "q", 9)
    r = es.post("/q/_search", json={"query": {"term": {"group.keyword": "g1"}}}).json()
    assert sorted(h["_id"] for h in r["hits"]["hits"]) == ["1", "4", "7"]
    r = es.post("/q/_search", json={"query": {"match": {"title": "doc 4"}}}).json()
    assert r["hits"]["hits"][0]["_id"] == "4"
    assert r["hits"]["total"]["value"] == 9


def test_total_can_exceed_the_page(es) -> None:
    load(es, "tot", 15)
    r = es.get("/tot/_search?size=2").json()
    assert r["hits"]["total"]["value"] == 15 and len(r["hits"]["hits"]) == 2


def test_index_lists_and_wildcards(es) -> None:
    load(es, "logs-a", 3, shards=1)
    load(es, "logs-b", 4, shards=2)
    load(es, "other", 5, shards=1)
    assert es.get("/logs-*/_search").json()["hits"]["total"]["value"] == 7
    assert es.get("/logs-a,other/_search").json()["hits"]["total"]["value"] == 8
    assert es.get("/_all/_search").json()["hits"]["total"]["value"] == 12
    assert es.get("/nomatch-*/_search").json()["hits"]["total"]["value"] == 0
    # ties across indices are broken by index name, then write order
    hits = es.get("/_search?size=12").json()["hits"]["hits"]
    assert [h["_index"] for h in hits] == ["logs-a"] * 3 + ["logs-b"] * 4 + ["other"] * 5


def test_count_with_and_without_a_query(es) -> None:
    load(es, "cnt", 12)
    assert es.get("/cnt/_count").json()["count"] == 12
    r = es.post("/cnt/_count", json={"query": {"term": {"group.keyword": "g2"}}})
    assert r.json()["count"] == 4
    assert es.post("/_count", json={"query": {"match_all": {}}}).json()["count"] == 12


# --- limits and errors -------------------------------------------------------------------------

def _err(r, status: int, etype: str) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == status
    assert body["error"]["type"] == etype
    assert body["error"]["root_cause"] and "reason" in body["error"]
    return body


def test_result_window_too_large(es) -> None:
    load(es, "win", 3)
    # each shard refuses the window: all shards failed, the window error as root cause
    body = _err(es.get("/win/_search?from=9995&size=10"), 400, "search_phase_execution_exception")
    assert body["error"]["root_cause"][0]["type"] == "illegal_argument_exception"
    assert body["error"]["root_cause"][0]["reason"].startswith(
        "Result window is too large, from + size must be less than or equal to: [10000] but was "
        "[10005].")


@pytest.mark.parametrize("query,reason", [
    ("from=-1", "[from] parameter cannot be negative, found [-1]"),
    ("size=-5", "[size] parameter cannot be negative, found [-5]"),
    ("size=abc", "Failed to parse int parameter [size] with value [abc]"),
    ("from=1.5", "Failed to parse int parameter [from] with value [1.5]"),
    ("bogus=1", "request [/_search] contains unrecognized parameter: [bogus]"),
])
def test_bad_parameters_are_400s(es, query, reason) -> None:
    body = _err(es.get(f"/_search?{query}"), 400, "illegal_argument_exception")
    assert body["error"]["reason"] == reason


def test_negative_from_in_the_body(es) -> None:
    _err(es.post("/_search", json={"from": -3}), 400, "illegal_argument_exception")


def test_malformed_json_is_a_400(es) -> None:
    r = es.post("/_search", content=b'{"query": {', headers={"content-type": "application/json"})
    _err(r, 400, "x_content_parse_exception")
    r = es.put("/j/_doc/1", content=b"{nope", headers={"content-type": "application/json"})
    _err(r, 400, "x_content_parse_exception")


def test_unknown_query_type_is_a_parsing_exception(es) -> None:
    body = _err(es.post("/_search", json={"query": {"fuzzy_wuzzy": {"a": 1}}}), 400,
                "parsing_exception")
    assert "fuzzy_wuzzy" in body["error"]["reason"]


def test_unknown_body_key_is_a_parsing_exception(es) -> None:
    _err(es.post("/_search", json={"query": {"match_all": {}}, "bogus": 1}), 400,
         "parsing_exception")


def test_body_over_100mb_is_413(es) -> None:
    big = b" " * (100 * 1024 * 1024 + 10)
    r = es.post("/_search", content=big, headers={"content-type": "application/json"})
    _err(r, 413, "content_too_long_exception")


def test_missing_index_is_404(es) -> None:
    body = _err(es.get("/nope/_search"), 404, "index_not_found_exception")
    assert body["error"]["reason"] == "no such index [nope]"
    _err(es.get("/nope/_doc/1"), 404, "index_not_found_exception")


def test_unknown_route_is_an_error_envelope_not_a_500(es) -> None:
    r = es.get("/a/b/c/d")
    assert r.status_code == 400 and r.json()["error"]["type"] == "illegal_argument_exception"


def test_sorting_on_a_text_field_is_a_400(es) -> None:
    load(es, "txt", 3)
    r = es.post("/txt/_search", json={"sort": ["title"]})
    assert r.status_code == 400
    assert "Fielddata is disabled on [title]" in r.text


def test_writes_become_searchable_within_the_refresh_interval(es) -> None:
    import time
    es.put("/auto", json={"settings": {"refresh_interval": "200ms"}})
    es.put("/auto/_doc/1", json={"a": 1})
    deadline = time.monotonic() + 10
    while es.get("/auto/_count").json()["count"] == 0:
        assert time.monotonic() < deadline, "never refreshed"
        time.sleep(0.1)


def test_cat_shards_names_nodes_and_their_address(es):
    """`_cat/shards` shows a node's name and ip, as Elasticsearch does, not a raw Ray node id."""
    es.put("/catnodes", json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    try:
        rows = es.get("/_cat/shards/catnodes?format=json&h=shard,node,ip,id").json()
        assert len(rows) == 2
        for r in rows:
            assert r["node"] and r["node"] != r["id"] and r["ip"], rows
    finally:
        es.delete("/catnodes")
