"""No silent wrong answers: what the service accepts changes the answer, or is refused with a 400
that names it (README, "What we refuse"). Each test is one answer that used to be silently wrong:
``exists`` on metadata fields, ``stored_fields`` dropping an explicitly asked ``_source``,
``routing`` and ``preference=_shards:`` ignored, ``min_score`` on ``_count`` ignored, and the
body keys Elasticsearch defines that we do not implement yet. Real Ray, real uvicorn.
"""
from __future__ import annotations

import httpx
import pytest

from shardsearch.cluster.search.request import UNSUPPORTED_BODY_KEYS
from shardsearch.cluster.indices.routing import selected_shards, shard_for

DOCS = {str(i): {"title": "fox" if i % 2 else "dog", "n": i} for i in range(12)}


@pytest.fixture
def idx(es: httpx.Client) -> httpx.Client:
    es.put("/t", json={"settings": {"number_of_shards": 3, "number_of_replicas": 0}})
    lines = []
    for doc_id, doc in DOCS.items():
        action = {"index": {"_index": "t", "_id": doc_id}}
        if doc_id == "0":
            action["index"]["routing"] = "r0"
        lines += [action, doc]
    body = "\n".join(__import__("json").dumps(x) for x in lines) + "\n"
    r = es.post("/_bulk?refresh=true", content=body,
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]
    return es


def _ids(resp: httpx.Response) -> set[str]:
    assert resp.status_code == 200, resp.text
    return {h["_id"] for h in resp.json()["hits"]["hits"]}


@pytest.mark.parametrize("field", ["_id", "_index", "_seq_no", "_version"])
def test_exists_on_a_metadata_field_every_document_has_matches_all(idx, field) -> None:
    r = idx.post("/t/_search", json={"size": 100, "query": {"exists": {"field": field}}})
    assert _ids(r) == set(DOCS)


def test_exists_on_routing_matches_the_documents_written_with_routing(idx) -> None:
    r = idx.post("/t/_search", json={"query": {"exists": {"field": "_routing"}}})
    assert _ids(r) == {"0"}


def test_exists_on_source_is_a_query_shard_exception(idx) -> None:
    r = idx.post("/t/_search", json={"query": {"exists": {"field": "_source"}}})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "query_shard_exception"


def test_stored_fields_star_keeps_an_explicitly_asked_source(idx) -> None:
    body = {"stored_fields": ["*"], "_source": True, "query": {"ids": {"values": ["3"]}}}
    hit = idx.post("/t/_search", json=body).json()["hits"]["hits"][0]
    assert hit["_source"] == DOCS["3"]


def test_stored_fields_alone_hides_source(idx) -> None:
    body = {"stored_fields": ["*"], "query": {"ids": {"values": ["3"]}}}
    hit = idx.post("/t/_search", json=body).json()["hits"]["hits"][0]
    assert "_source" not in hit


def test_stored_fields_none_with_source_asked_is_refused(idx) -> None:
    r = idx.post("/t/_search", json={"stored_fields": "_none_", "_source": True})
    assert r.status_code == 400
    assert "[stored_fields] cannot be disabled" in r.json()["error"]["reason"]


def test_preference_shards_restricts_the_search_to_those_shards(idx) -> None:
    everything = _ids(idx.get("/t/_search?size=100"))
    parts = []
    for sid in range(3):
        r = idx.get(f"/t/_search?size=100&preference=_shards:{sid}")
        assert r.json()["_shards"]["total"] == 1
        parts.append(_ids(r))
    assert set().union(*parts) == everything
    assert sum(len(p) for p in parts) == len(everything)      # each document once
    both = _ids(idx.get("/t/_search?size=100&preference=_shards:0,2"))
    assert both == parts[0] | parts[2]


def test_preference_shards_restricts_count_too(idx) -> None:
    counts = [idx.get(f"/t/_count?preference=_shards:{s}").json()["count"] for s in range(3)]
    assert sum(counts) == len(DOCS)
    assert idx.get("/t/_count?preference=_shards:1").json()["_shards"]["total"] == 1


def test_routing_restricts_a_search_to_the_routing_values_shard(idx) -> None:
    sid = shard_for("r0", 3)
    expected = _ids(idx.get(f"/t/_search?size=100&preference=_shards:{sid}"))
    r = idx.get("/t/_search?size=100&routing=r0")
    assert r.json()["_shards"]["total"] == 1
    assert _ids(r) == expected and "0" in expected


def test_a_malformed_shards_preference_is_refused(idx) -> None:
    r = idx.get("/t/_search?preference=_shards:x")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "number_format_exception"   # Java's Integer.parseInt


def test_min_score_on_count_counts_only_documents_above_it(idx) -> None:
    assert idx.get("/t/_count?q=title:fox").json()["count"] == 6
    assert idx.get("/t/_count?q=title:fox&min_score=100").json()["count"] == 0


@pytest.mark.parametrize("key", UNSUPPORTED_BODY_KEYS)
def test_a_body_key_we_do_not_implement_is_refused_by_name(idx, key) -> None:
    value = {"x": {"terms": {"field": "n"}}} if key in ("aggs", "aggregations") else \
        {"id": 0, "max": 2} if key == "slice" else \
        {"match_all": {}} if key == "post_filter" \
        else {"f": {"script": "1"}} if key == "script_fields" else {"x": 1}
    r = idx.post("/t/_search", json={key: value})
    assert r.status_code == 400, r.text
    assert f"[{key}]" in r.json()["error"]["reason"]


def test_empty_aggs_is_accepted_because_it_asks_for_nothing(idx) -> None:
    assert idx.post("/t/_search", json={"size": 0, "aggs": {}}).status_code == 200


def test_a_named_query_shows_in_the_matched_queries_of_the_hits_it_matches(idx) -> None:
    query = {"bool": {"_name": "b", "should": [
        {"match": {"title": {"query": "fox", "_name": "q"}}}, {"match_all": {}}]}}
    hits = idx.post("/t/_search", json={"query": query, "size": 12}).json()["hits"]["hits"]
    by_id = {h["_id"]: h["matched_queries"] for h in hits}
    assert by_id == {i: ["b", "q"] if d["title"] == "fox" else ["b"] for i, d in DOCS.items()}


def test_filter_path_keeps_only_the_named_paths(idx) -> None:
    r = idx.get("/t/_search?size=2&sort=n&filter_path=hits.hits._id,took")
    body = r.json()
    assert set(body) == {"hits", "took"}
    assert body["hits"] == {"hits": [{"_id": "0"}, {"_id": "1"}]}


def test_filter_path_leaves_errors_whole(idx) -> None:
    r = idx.get("/nope/_search?filter_path=took")
    assert r.status_code == 404 and r.json()["error"]["type"] == "index_not_found_exception"


# --------------------------------------------------------------------------- pure rules

def test_selected_shards_is_all_without_routing_or_preference() -> None:
    assert selected_shards(4, None, None) == [0, 1, 2, 3]
    assert selected_shards(4, None, "_local") == [0, 1, 2, 3]
    assert selected_shards(4, None, "custom-string") == [0, 1, 2, 3]


def test_selected_shards_intersects_routing_and_preference() -> None:
    sid = shard_for("a", 4)
    assert selected_shards(4, "a", None) == [sid]
    assert selected_shards(4, "a", f"_shards:{sid}|_local") == [sid]
    assert selected_shards(4, "a", f"_shards:{(sid + 1) % 4}") == []
    assert selected_shards(4, None, "_shards:9") == []


@pytest.mark.parametrize("q", ["title:FO*", "title:F?X", "FO*"])
def test_query_string_wildcard_terms_are_lowercased_on_text_fields(idx, q) -> None:
    r = idx.get("/t/_search", params={"q": q, "size": 20})
    assert _ids(r) == {i for i, d in DOCS.items() if d["title"] == "fox"}
    body = {"query": {"query_string": {"query": q}}, "size": 20}
    assert _ids(idx.post("/t/_search", json=body)) == _ids(r)
