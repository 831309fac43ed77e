"""``_delete_by_query``, ``_update_by_query``, ``_reindex`` and ``_tasks`` over real HTTP and
Ray: each works on a snapshot, reports Elasticsearch's counters, counts version conflicts
(never overwrites a document written meanwhile), and runs as a task a client can follow and
cancel."""
from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

N = 12


@pytest.fixture
def books(es: httpx.Client) -> httpx.Client:
    es.put("/books", json={"settings": {"number_of_shards": 3},
                           "mappings": {"properties": {"tag": {"type": "keyword"},
                                                       "n": {"type": "integer"}}}})
    lines = []
    for i in range(N):
        lines += [json.dumps({"index": {"_id": str(i)}}),
                  json.dumps({"n": i, "tag": "odd" if i % 2 else "even", "title": f"t{i}"})]
    r = es.post("/books/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert not r.json()["errors"]
    return es


def _count(es: httpx.Client, index: str, query: dict[str, Any] | None = None) -> int:
    return es.post(f"/{index}/_count", json={"query": query or {"match_all": {}}}).json()["count"]


def _wait_task(es: httpx.Client, task: str) -> dict[str, Any]:
    for _ in range(600):
        out = es.get(f"/_tasks/{task}").json()
        if out["completed"]:
            return out
        time.sleep(0.1)
    raise AssertionError(f"task {task} did not complete")


def test_delete_by_query_deletes_the_matches_and_counts_them(books: httpx.Client) -> None:
    r = books.post("/books/_delete_by_query?refresh=true", json={"query": {"term": {"tag": "odd"}}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == 6 and body["deleted"] == 6 and body["failures"] == []
    assert body["version_conflicts"] == 0 and body["batches"] == 1 and "updated" not in body
    assert _count(books, "books") == 6


def test_delete_by_query_max_docs_and_scroll_size_bound_the_work(books: httpx.Client) -> None:
    r = books.post("/books/_delete_by_query?refresh=true&scroll_size=2", json={"max_docs": 5})
    body = r.json()
    assert body["deleted"] == 5 and body["total"] == 5 and body["batches"] == 3, body
    assert _count(books, "books") == N - 5


def test_update_by_query_without_script_rewrites_each_document(books: httpx.Client) -> None:
    r = books.post("/books/_update_by_query?q=tag:even&refresh=true")
    assert r.json()["updated"] == 6, r.text
    assert books.get("/books/_doc/0").json()["_version"] == 2


def test_update_by_query_with_script_counts_updates_noops_and_deletes(
        books: httpx.Client) -> None:
    script = {"source": "if (ctx._source.n < 3) { ctx.op = 'noop' } "
                        "else if (ctx._source.n > 9) { ctx.op = 'delete' } "
                        "else { ctx._source.n *= params.f }", "params": {"f": 10}}
    r = books.post("/books/_update_by_query?refresh=true", json={"script": script})
    body = r.json()
    assert (body["updated"], body["noops"], body["deleted"]) == (7, 3, 2), body
    assert books.get("/books/_doc/5").json()["_source"]["n"] == 50
    assert books.get("/books/_doc/11").status_code == 404


def test_update_by_query_may_not_change_the_id(books: httpx.Client) -> None:
    r = books.post("/books/_update_by_query", json={"script": "ctx._id = 'x'"})
    assert r.status_code == 400 and "Modifying [_id] not allowed" in r.text


def test_reindex_copies_a_query_with_source_filtering_and_max_docs(books: httpx.Client) -> None:
    r = books.post("/_reindex?refresh=true", json={
        "source": {"index": "books", "query": {"term": {"tag": "even"}}, "_source": ["n"]},
        "dest": {"index": "copy"}, "max_docs": 4})
    body = r.json()
    assert r.status_code == 200 and body["created"] == 4 and body["total"] == 4, body
    hits = books.post("/copy/_search", json={"size": 10}).json()["hits"]["hits"]
    assert len(hits) == 4 and all(set(h["_source"]) == {"n"} for h in hits)
    assert all(h["_source"]["n"] % 2 == 0 for h in hits)


def test_reindex_op_type_create_counts_existing_documents_as_conflicts(
        books: httpx.Client) -> None:
    books.put("/copy/_doc/1?refresh=true", json={"n": -1})
    r = books.post("/_reindex?refresh=true", json={
        "source": {"index": "books"}, "dest": {"index": "copy", "op_type": "create"},
        "conflicts": "proceed"})
    body = r.json()
    assert body["created"] == N - 1 and body["version_conflicts"] == 1, body
    assert books.get("/copy/_doc/1").json()["_source"] == {"n": -1}
    r = books.post("/_reindex", json={"source": {"index": "books"},
                                      "dest": {"index": "copy", "op_type": "create"}})
    assert r.status_code == 409, r.text
    assert r.json()["failures"][0]["cause"]["type"] == "version_conflict_engine_exception"


def test_reindex_with_a_script_may_rename_ids(books: httpx.Client) -> None:
    r = books.post("/_reindex?refresh=true", json={
        "source": {"index": "books"}, "dest": {"index": "copy"},
        "script": {"source": "ctx._id = 'c' + ctx._id; ctx._source.copied = true"}})
    assert r.json()["created"] == N, r.text
    assert books.get("/copy/_doc/c3").json()["_source"]["copied"] is True


def test_reindex_into_its_own_source_is_refused(books: httpx.Client) -> None:
    r = books.post("/_reindex", json={"source": {"index": "books"}, "dest": {"index": "books"}})
    assert r.status_code == 400 and "reindex cannot write into an index its reading from" in r.text


def test_unknown_version_types_and_keys_are_refused_naming_them(books: httpx.Client) -> None:
    r = books.post("/_reindex", json={"source": {"index": "books"},
                                      "dest": {"index": "c", "version_type": "force"}})
    assert r.status_code == 400 and "No version type match [force]" in r.text
    r = books.post("/_reindex", json={"source": {"index": "books", "remote": {}},
                                      "dest": {"index": "c"}})
    assert r.status_code == 400 and "remote" in r.text
    r = books.post("/books/_delete_by_query?search_timeout=1s", json={})
    assert r.status_code == 400 and "search_timeout" in r.text


def test_slices_split_the_work_by_shard_and_report_each_slice(books: httpx.Client) -> None:
    r = books.post("/books/_update_by_query?slices=auto&refresh=true",
                   json={"script": "ctx._source.s = 1"})
    body = r.json()
    assert body["updated"] == N and len(body["slices"]) == 3, body
    assert sum(s["updated"] for s in body["slices"]) == N
    assert [s["slice_id"] for s in body["slices"]] == [0, 1, 2]
    assert _count(books, "books", {"term": {"s": 1}}) == N


def test_a_missing_index_is_a_404(es: httpx.Client) -> None:
    r = es.post("/nope/_delete_by_query", json={})
    assert r.status_code == 404 and r.json()["error"]["type"] == "index_not_found_exception"


def test_wait_for_completion_false_returns_a_task_that_keeps_its_result(
        books: httpx.Client) -> None:
    r = books.post("/books/_delete_by_query?wait_for_completion=false&refresh=true", json={})
    task = r.json()["task"]
    node, _, number = task.partition(":")
    assert node and number.isdigit()
    out = _wait_task(books, task)
    assert out["task"]["action"] == "indices:data/write/delete/byquery"
    assert out["response"]["deleted"] == N and out["task"]["status"]["deleted"] == N
    assert _count(books, "books") == 0


def test_a_throttled_task_is_listed_and_can_be_cancelled(books: httpx.Client) -> None:
    r = books.post("/books/_update_by_query?wait_for_completion=false&scroll_size=1"
                   "&requests_per_second=2", json={})
    task = r.json()["task"]
    listed = books.get("/_tasks?actions=*byquery&detailed=true").json()
    tasks = next(iter(listed["nodes"].values()))["tasks"]
    assert task in tasks and tasks[task]["description"] == "update-by-query [books]"
    assert books.get("/_tasks?actions=*reindex").json() == {"nodes": {}}
    assert books.post(f"/_tasks/{task}/_cancel").status_code == 200
    out = _wait_task(books, task)
    assert out["response"]["canceled"] == "by user request"
    assert out["response"]["updated"] < N
    assert out["task"]["cancelled"] is True


def test_rethrottle_lifts_the_throttle_of_a_running_task(books: httpx.Client) -> None:
    r = books.post("/books/_update_by_query?wait_for_completion=false&scroll_size=1"
                   "&requests_per_second=0.5", json={})
    task = r.json()["task"]
    r = books.post(f"/_update_by_query/{task}/_rethrottle?requests_per_second=-1")
    assert r.status_code == 200, r.text
    assert task in next(iter(r.json()["nodes"].values()))["tasks"]
    out = _wait_task(books, task)["response"]
    assert out["updated"] == N and out["requests_per_second"] == -1.0
    r = books.post(f"/_update_by_query/{task}/_rethrottle?requests_per_second=5")
    assert r.status_code == 400


def test_an_unknown_task_is_a_404(es: httpx.Client) -> None:
    r = es.get("/_tasks/abc:12345")
    assert r.status_code == 404 and r.json()["error"]["type"] == "resource_not_found_exception"
    assert es.get("/_tasks/nocolon").status_code == 400


def test_a_by_query_racing_with_writes_counts_conflicts_and_loses_no_write(
        books: httpx.Client) -> None:
    """The job reads a snapshot, one document a batch, throttled; meanwhile every document is
    updated. Each concurrent write survives; each document the job reached after it was
    written is a version conflict; the job's writes and the conflicts add up to the total."""
    r = books.post("/books/_update_by_query?wait_for_completion=false&scroll_size=1"
                   "&requests_per_second=4&conflicts=proceed",
                   json={"script": "ctx._source.job = true"})
    task = r.json()["task"]
    for i in range(N):
        assert books.post(f"/books/_update/{i}", json={"doc": {"concurrent": True}}
                          ).status_code == 200
    out = _wait_task(books, task)["response"]
    books.post("/books/_refresh")
    assert out["version_conflicts"] >= 1, out
    assert out["updated"] + out["version_conflicts"] == out["total"] == N
    docs = [books.get(f"/books/_doc/{i}").json()["_source"] for i in range(N)]
    assert all(d.get("concurrent") is True for d in docs), docs
    assert sum(1 for d in docs if d.get("job")) == out["updated"]


def test_a_by_query_through_a_filter_alias_touches_only_what_the_filter_lets_through(
        books: httpx.Client) -> None:
    r = books.post("/_aliases", json={"actions": [{"add": {
        "index": "books", "alias": "odd_books", "filter": {"term": {"tag": "odd"}}}}]})
    assert r.status_code == 200, r.text
    r = books.post("/odd_books/_update_by_query?refresh=true",
                   json={"script": {"source": "ctx._source.seen = true"}})
    assert r.status_code == 200 and r.json()["updated"] == N // 2, r.text
    assert _count(books, "books", {"exists": {"field": "seen"}}) == N // 2
    assert _count(books, "books", {"bool": {"must": [{"exists": {"field": "seen"}},
                                                     {"term": {"tag": "even"}}]}}) == 0
    r = books.post("/odd_books/_delete_by_query?refresh=true", json={"query": {"match_all": {}}})
    assert r.status_code == 200 and r.json()["deleted"] == N // 2, r.text
    assert _count(books, "books") == N // 2 and _count(books, "books", {"term": {"tag": "even"}}) == N // 2


def test_reindex_with_external_versions_keeps_the_newer_copy_and_counts_the_older_as_conflicts(
        books: httpx.Client) -> None:
    books.put("/books/_doc/0?refresh=true", json={"n": 0, "tag": "even", "title": "again"})
    books.put("/copy/_doc/0?version=50&version_type=external", json={"n": 100})
    books.put("/copy/_doc/1?version=1&version_type=external&refresh=true", json={"n": 101})
    r = books.post("/_reindex?refresh=true", json={
        "source": {"index": "books"}, "dest": {"index": "copy", "version_type": "external"},
        "conflicts": "proceed"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["version_conflicts"] == 2 and body["created"] == N - 2, body
    assert books.get("/copy/_doc/0").json()["_source"] == {"n": 100}      # newer (50) kept
    assert books.get("/copy/_doc/1").json()["_source"] == {"n": 101}      # same version (1)
    assert books.get("/copy/_doc/3").json()["_version"] == 1              # the source's version
    books.delete("/copy")
