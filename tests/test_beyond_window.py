"""Beyond the result window: search_after, point in time, scroll and consistent pages.

End to end on real Ray and a real uvicorn server (fixtures in ``conftest.py``). Each walk covers a
10,000+ document index; the ones marked *during writes* run a concurrent writer that indexes,
updates and deletes documents (refreshing as it goes) and check that the walk returns exactly the
snapshot it started from — every document of it once, in order, with the content it had then.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest
import ray

N_DOCS = 10_240
MAPPINGS = {"properties": {"n": {"type": "long"}, "g": {"type": "integer"},
                           "v": {"type": "integer"}, "tag": {"type": "keyword"}}}
PAGE_TOKEN_HEADER = "X-Shardsearch-Page-Token"


def _doc(i: int) -> dict[str, Any]:
    return {"n": i, "g": i % 97, "v": 0, "tag": f"t{i % 13}"}


@pytest.fixture
def big(es: httpx.Client, cluster) -> str:
    """``big``: N_DOCS documents over 3 shards, loaded through the Python API, refreshed."""
    cluster.create_index("big", shards=3, mappings=MAPPINGS)
    resp = cluster.bulk("big", [_doc(i) for i in range(N_DOCS)],
                        ids=[str(i) for i in range(N_DOCS)], refresh=True)
    assert resp["errors"] is False
    return "big"


@pytest.fixture
def few(es: httpx.Client, cluster) -> str:
    """``big`` with only 50 documents, for the error rules."""
    cluster.create_index("big", shards=3, mappings=MAPPINGS)
    cluster.bulk("big", [_doc(i) for i in range(50)], ids=[str(i) for i in range(50)],
                 refresh=True)
    return "big"


def _hits(resp: httpx.Response) -> list[dict[str, Any]]:
    assert resp.status_code == 200, resp.text
    return resp.json()["hits"]["hits"]


def _error(resp: httpx.Response, status: int, root_type: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["status"] == status
    assert body["error"]["root_cause"][0]["type"] == root_type, body
    return body["error"]


class Writer:
    """Indexes new documents, updates and deletes existing ones, refreshing, until stopped."""

    def __init__(self, base_url: str, index: str) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=60)
        self.index = index
        self.stop = threading.Event()
        self.ops = 0
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            j = 0
            while not self.stop.is_set():
                lines = [
                    {"index": {"_index": self.index, "_id": f"new-{j}"}}, _doc(-1 - j),
                    {"update": {"_index": self.index, "_id": str((j * 37) % N_DOCS)}},
                    {"doc": {"v": j + 1, "g": 0}},
                    {"delete": {"_index": self.index, "_id": str((j * 53 + 11) % N_DOCS)}},
                ]
                body = "\n".join(json.dumps(x) for x in lines) + "\n"
                r = self.client.post("/_bulk?refresh=true", content=body,
                                     headers={"content-type": "application/x-ndjson"})
                assert r.status_code == 200, r.text
                self.ops += 3
                j += 1
        except BaseException as e:  # surfaced by __exit__
            self.error = e

    def __enter__(self) -> Writer:
        self.thread.start()
        while self.ops < 6 and self.error is None:   # writes are really under way
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=60)
        self.client.close()
        if self.error is not None:
            raise self.error


def _snapshot_of(es: httpx.Client, index: str) -> dict[str, int]:
    """``_id -> v`` of every document visible now (through a PIT, so it is one snapshot)."""
    pit = es.post(f"/{index}/_pit?keep_alive=1m").json()["id"]
    out: dict[str, int] = {}
    after = None
    while True:
        body: dict[str, Any] = {"pit": {"id": pit}, "size": 5000, "sort": [{"n": "asc"}]}
        if after is not None:
            body["search_after"] = after
        hits = _hits(es.post("/_search", json=body))
        if not hits:
            break
        out.update({h["_id"]: h["_source"]["v"] for h in hits})
        after = hits[-1]["sort"]
    es.request("DELETE", "/_pit", json={"id": pit})
    return out


# --- search_after ------------------------------------------------------------------------------

def test_search_after_walks_every_document_once_in_sort_order(es, big):
    seen: list[int] = []
    after = None
    pages = 0
    while True:
        body: dict[str, Any] = {"size": 1000, "sort": [{"g": "asc"}, {"n": "desc"}],
                                "_source": ["n"]}
        if after is not None:
            body["search_after"] = after
        hits = _hits(es.post(f"/{big}/_search", json=body))
        if not hits:
            break
        pages += 1
        assert all(h["sort"] == [h["_source"]["n"] % 97, h["_source"]["n"]] for h in hits)
        seen += [h["_source"]["n"] for h in hits]
        after = hits[-1]["sort"]
    assert pages == -(-N_DOCS // 1000)
    assert seen == sorted(range(N_DOCS), key=lambda n: (n % 97, -n))


def test_search_after_requires_from_zero_and_a_sort(es, few):
    big = few
    err = _error(es.post(f"/{big}/_search", json={"from": 5, "sort": ["n"],
                                                  "search_after": [3]}),
                 400, "action_request_validation_exception")
    assert err["reason"] == ("Validation Failed: 1: [from] parameter must be set to 0 when "
                             "[search_after] is used;")
    err = _error(es.post(f"/{big}/_search", json={"search_after": [3]}),
                 400, "illegal_argument_exception")
    assert err["type"] == "search_phase_execution_exception"
    assert err["root_cause"][0]["reason"] == "Sort must contain at least one field."


def test_search_after_value_count_and_types_are_checked_like_elasticsearch(es, few):
    big = few
    err = _error(es.post(f"/{big}/_search", json={"sort": ["n"], "search_after": [1, 2]}),
                 400, "illegal_argument_exception")
    assert err["root_cause"][0]["reason"] == "search_after has 2 value(s) but sort has 1."
    err = _error(es.post(f"/{big}/_search", json={"sort": ["n"], "search_after": ["toto"]}),
                 400, "illegal_argument_exception")
    assert err["root_cause"][0]["reason"] == "Failed to parse search_after value for field [n]."
    err = _error(es.post(f"/{big}/_search", json={"sort": ["n"], "search_after": "1"}),
                 400, "parsing_exception")
    assert err["reason"] == "Unknown key for a VALUE_STRING in [search_after]."


def test_search_after_deep_in_the_index_returns_the_following_documents(es, big, coordinator):
    """Through the Python path too (the coordinator actor), far past the window."""
    from shardsearch.cluster.search.request import parse_search
    deep = parse_search(("big",), {}, {"size": 10, "sort": [{"n": "asc"}],
                                       "search_after": [N_DOCS - 100]})
    resp = ray.get(coordinator.call.remote("search", deep))
    assert [h["sort"][0] for h in resp["hits"]["hits"]] == list(range(N_DOCS - 99, N_DOCS - 89))
    assert resp["hits"]["total"] == {"value": 10_000, "relation": "gte"}


# --- point in time -----------------------------------------------------------------------------

def _pit_walk(es: httpx.Client, pit: str, sort: list[Any], size: int
              ) -> tuple[list[dict[str, Any]], str]:
    hits_all: list[dict[str, Any]] = []
    after = None
    while True:
        body: dict[str, Any] = {"pit": {"id": pit, "keep_alive": "1m"}, "size": size,
                                "sort": sort}
        if after is not None:
            body["search_after"] = after
        resp = es.post("/_search", json=body)
        hits = _hits(resp)
        pit = resp.json()["pit_id"]
        if not hits:
            return hits_all, pit
        hits_all += hits
        after = hits[-1]["sort"]


def test_pit_search_after_walks_every_document_once_with_the_implicit_tiebreaker(es, big):
    pit = es.post(f"/{big}/_pit?keep_alive=1m").json()["id"]
    hits, pit = _pit_walk(es, pit, [{"g": "desc"}], 1000)
    assert len(hits) == N_DOCS
    assert len({h["_id"] for h in hits}) == N_DOCS
    keys = [tuple(h["sort"]) for h in hits]
    assert all(len(k) == 2 for k in keys)                  # g, then _shard_doc
    assert keys == sorted(keys, key=lambda k: (-k[0], k[1]))
    assert es.request("DELETE", "/_pit", json={"id": pit}).json() == {"succeeded": True,
                                                                        "num_freed": 3}


def test_pit_walk_during_writes_sees_exactly_the_snapshot(es, big, base_url):
    # writes before the PIT is opened are part of its snapshot
    es.post(f"/{big}/_update/5?refresh=true", json={"doc": {"v": 42}})
    es.delete(f"/{big}/_doc/6?refresh=true")
    expected = _snapshot_of(es, big)
    pit = es.post(f"/{big}/_pit?keep_alive=1m").json()["id"]
    with Writer(base_url, big) as writer:
        hits, pit = _pit_walk(es, pit, [{"tag": "asc"}, {"g": "asc"}], 700)
    assert writer.ops > 0
    assert [h["_id"] for h in hits].count("5") == 1 and "6" not in {h["_id"] for h in hits}
    assert {h["_id"]: h["_source"]["v"] for h in hits} == expected
    assert len(hits) == len(expected) == N_DOCS - 1
    assert _snapshot_of(es, big) != expected               # the index did change meanwhile


def test_pit_response_carries_pit_id_and_rejects_an_index_in_the_path(es, few):
    big = few
    pit = es.post(f"/{big}/_pit?keep_alive=1m").json()
    assert pit["_shards"] == {"total": 3, "successful": 3, "skipped": 0, "failed": 0}
    resp = es.post("/_search", json={"pit": {"id": pit["id"]}, "size": 1})
    assert resp.json()["pit_id"] == pit["id"]
    err = _error(es.post(f"/{big}/_search", json={"pit": {"id": pit["id"]}}), 400,
                 "action_request_validation_exception")
    assert "[indices] cannot be used with point in time" in err["reason"]
    err = _error(es.post(f"/{big}/_pit"), 400, "action_request_validation_exception")
    assert err["reason"] == "Validation Failed: 1: [keep_alive] is not specified;"
    err = _error(es.post(f"/{big}/_search", json={"sort": ["_shard_doc"]}), 400,
                 "action_request_validation_exception")
    assert err["reason"] == ("Validation Failed: 1: [_shard_doc] sort field cannot be used "
                             "without [point in time];")


def test_pit_keeps_its_index_list_when_new_indices_match_the_pattern(es, cluster):
    cluster.create_index("logs-b", shards=2)
    cluster.bulk("logs-b", [{"n": i} for i in range(5)], refresh=True)
    pit = es.post("/logs-*/_pit?keep_alive=1m").json()["id"]
    cluster.create_index("logs-a", shards=1)           # sorts before logs-b: would shift ranks
    cluster.bulk("logs-a", [{"n": i} for i in range(5)], refresh=True)
    hits, _ = _pit_walk(es, pit, [{"n": "asc"}], 2)
    assert {h["_index"] for h in hits} == {"logs-b"} and len(hits) == 5
    assert [h["sort"][1] >> 40 for h in hits] == [0] * 5   # index rank 0 in the PIT's own list


def _pins(coordinator) -> int:
    return sum(i.get("pins", 0) for i in ray.get(coordinator.call.remote("shard_infos")))


def test_expired_pit_is_404_search_context_missing_and_its_pins_are_released(es, few,
                                                                             coordinator):
    big = few
    pit = es.post(f"/{big}/_pit?keep_alive=1s").json()["id"]
    assert _pins(coordinator) == 3
    assert es.post("/_search", json={"pit": {"id": pit}}).status_code == 200
    time.sleep(1.3)
    err = _error(es.post("/_search", json={"pit": {"id": pit}}), 404,
                 "search_context_missing_exception")
    assert err["type"] == "search_phase_execution_exception"
    deadline = time.monotonic() + 5
    while _pins(coordinator) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pins(coordinator) == 0


def test_closed_pit_is_gone(es, few, coordinator):
    big = few
    pit = es.post(f"/{big}/_pit?keep_alive=5m").json()["id"]
    assert es.request("DELETE", "/_pit", json={"id": pit}).json()["num_freed"] == 3
    assert _pins(coordinator) == 0
    _error(es.post("/_search", json={"pit": {"id": pit}}), 404,
           "search_context_missing_exception")
    again = es.request("DELETE", "/_pit", json={"id": pit})
    assert again.status_code == 200 and again.json() == {"succeeded": True, "num_freed": 0}
    _error(es.post("/_search", json={"pit": {"id": "garbage"}}), 400,
           "illegal_argument_exception")


def test_opensearch_pit_api_lists_and_deletes(es, few):
    big = few
    es.request("DELETE", "/_search/point_in_time/_all")
    created = es.post(f"/{big}/_search/point_in_time?keep_alive=23h").json()
    assert set(created) == {"pit_id", "_shards", "creation_time"}
    other = es.post(f"/{big}/_search/point_in_time?keep_alive=1m").json()["pit_id"]
    pits = es.get("/_search/point_in_time/_all").json()["pits"]
    assert [p["pit_id"] for p in pits] == [created["pit_id"], other]
    assert pits[0]["keep_alive"] == 82_800_000
    resp = es.request("DELETE", "/_search/point_in_time", json={"pit_id": [other]})
    assert resp.json() == {"pits": [{"successful": True, "pit_id": other}]}
    resp = es.request("DELETE", "/_search/point_in_time/_all")
    assert resp.json() == {"pits": [{"successful": True, "pit_id": created["pit_id"]}]}
    assert es.request("DELETE", "/_search/point_in_time/_all").json() == {"pits": []}
    err = _error(es.post(f"/{big}/_search/point_in_time"), 400,
                 "action_request_validation_exception")
    assert err["reason"] == "Validation Failed: 1: keep alive not specified;"


# --- scroll --------------------------------------------------------------------------------------

def _scroll_walk(es: httpx.Client, first: httpx.Response) -> tuple[list[dict[str, Any]], str]:
    body = first.json()
    hits = list(_hits(first))
    scroll_id = body["_scroll_id"]
    while True:
        resp = es.post("/_search/scroll", json={"scroll_id": scroll_id, "scroll": "1m"})
        batch = _hits(resp)
        assert resp.json()["hits"]["total"]["value"] == body["hits"]["total"]["value"]
        scroll_id = resp.json()["_scroll_id"]
        if not batch:
            return hits, scroll_id
        hits += batch


def test_scroll_walks_every_document_once_beyond_the_window(es, big):
    first = es.post(f"/{big}/_search?scroll=1m", json={"size": 1000})
    assert first.json()["hits"]["total"] == {"value": N_DOCS, "relation": "eq"}
    hits, sid = _scroll_walk(es, first)
    assert len(hits) == N_DOCS > 10_000                   # past max_result_window
    assert len({h["_id"] for h in hits}) == N_DOCS
    assert all("sort" not in h for h in hits)
    resp = es.request("DELETE", "/_search/scroll", json={"scroll_id": sid})
    assert resp.json() == {"succeeded": True, "num_freed": 3}


def test_sorted_scroll_keeps_the_order_and_shows_only_the_requested_sort(es, big):
    first = es.post(f"/{big}/_search?scroll=1m",
                    json={"size": 900, "sort": [{"tag": "desc"}], "_source": ["tag"]})
    hits, sid = _scroll_walk(es, first)
    assert len({h["_id"] for h in hits}) == len(hits) == N_DOCS
    tags = [h["sort"] for h in hits]
    assert all(len(t) == 1 for t in tags) and tags == sorted(tags, reverse=True)
    es.request("DELETE", f"/_search/scroll/{sid}")


def test_scroll_during_writes_sees_exactly_the_snapshot(es, big, base_url):
    es.post(f"/{big}/_update/7?refresh=true", json={"doc": {"v": 7}})
    expected = _snapshot_of(es, big)
    first = es.post(f"/{big}/_search?scroll=1m", json={"size": 800, "sort": ["g"]})
    with Writer(base_url, big) as writer:
        hits, _ = _scroll_walk(es, first)
    assert writer.ops > 0
    assert len(hits) == len(expected)
    assert {h["_id"]: h["_source"]["v"] for h in hits} == expected
    assert [h["sort"][0] for h in hits] == sorted(h["sort"][0] for h in hits)


def test_scroll_id_in_query_string_or_path_and_body_wins(es, few):
    big = few
    first = es.post(f"/{big}/_search?scroll=1m&size=2", json={"sort": ["n"]})
    sid = first.json()["_scroll_id"]
    a = es.get("/_search/scroll", params={"scroll_id": sid, "scroll": "1m"})
    assert [h["_id"] for h in _hits(a)] == ["2", "3"]
    b = es.get(f"/_search/scroll/{sid}")
    assert [h["_id"] for h in _hits(b)] == ["4", "5"]
    c = es.post("/_search/scroll?scroll_id=invalid_scroll_id", json={"scroll_id": sid})
    assert [h["_id"] for h in _hits(c)] == ["6", "7"]


def test_scroll_is_not_limited_by_the_window_but_its_batch_size_is(es, cluster):
    cluster.create_index("small", shards=2, settings={"max_result_window": 50})
    cluster.bulk("small", [{"n": i} for i in range(120)], refresh=True)
    _error(es.post("/small/_search", json={"from": 45, "size": 10}), 400,
           "illegal_argument_exception")
    first = es.post("/small/_search?scroll=1m", json={"size": 50})
    hits, _ = _scroll_walk(es, first)
    assert len({h["_id"] for h in hits}) == 120
    err = _error(es.post("/small/_search?scroll=1m", json={"size": 51}), 400,
                 "illegal_argument_exception")
    assert err["reason"].startswith("Batch size is too large, size must be less than or equal "
                                    "to: [50] but was [51].")


def test_scroll_context_errors_match_elasticsearch(es, few):
    big = few
    err = _error(es.post(f"/{big}/_search?scroll=1m", json={"from": 5}), 400,
                 "action_request_validation_exception")
    assert err["reason"] == "Validation Failed: 1: using [from] is not allowed in a scroll context;"
    err = _error(es.post(f"/{big}/_search?scroll=1m&request_cache=true", json={"size": 0}), 400,
                 "action_request_validation_exception")
    assert err["reason"] == ("Validation Failed: 1: [size] cannot be [0] in a scroll context;"
                             "2: [request_cache] cannot be used in a scroll context;")
    err = _error(es.post(f"/{big}/_search?scroll=1m",
                         json={"sort": ["n"], "search_after": [1]}), 400,
                 "action_request_validation_exception")
    assert "[search_after] cannot be used in a scroll context" in err["reason"]
    err = _error(es.post(f"/{big}/_search?scroll=2d"), 400, "illegal_argument_exception")
    assert err["reason"].startswith("Keep alive for request (2d) is too large.")
    _error(es.post("/_search/scroll", json={"scroll_id": "invalid"}), 400,
           "illegal_argument_exception")


def test_expired_and_cleared_scrolls_are_404(es, few, coordinator):
    big = few
    es.request("DELETE", "/_search/scroll/_all")           # scrolls left by other tests
    sid = es.post(f"/{big}/_search?scroll=1s&size=5").json()["_scroll_id"]
    time.sleep(1.3)
    err = _error(es.post("/_search/scroll", json={"scroll_id": sid}), 404,
                 "search_context_missing_exception")
    assert err["root_cause"][0]["reason"].startswith("No search context found for id [")
    ids = [es.post(f"/{big}/_search?scroll=1m&size=5").json()["_scroll_id"] for _ in range(4)]
    assert _pins(coordinator) == 12
    assert es.request("DELETE", "/_search/scroll", json={"scroll_id": ids[0]}).status_code == 200
    resp = es.request("DELETE", "/_search/scroll", json={"scroll_id": ids[1:3]})
    assert resp.json() == {"succeeded": True, "num_freed": 6}
    again = es.request("DELETE", "/_search/scroll", json={"scroll_id": ids[0]})
    assert again.status_code == 404 and again.json() == {"succeeded": True, "num_freed": 0}
    assert es.request("DELETE", "/_search/scroll/_all").json()["num_freed"] == 3
    assert _pins(coordinator) == 0
    for sid in ids:
        _error(es.post("/_search/scroll", json={"scroll_id": sid}), 404,
               "search_context_missing_exception")


# --- client helpers ---------------------------------------------------------------------------------

def test_opensearch_py_helpers_scan_exports_the_whole_index(es, big, base_url):
    from opensearchpy import OpenSearch, helpers
    es.request("DELETE", "/_search/scroll/_all")
    client = OpenSearch(hosts=[base_url], timeout=60)
    try:
        ids = [h["_id"] for h in helpers.scan(client, index=big, size=1000)]
    finally:
        client.close()
    assert len(ids) == N_DOCS and len(set(ids)) == N_DOCS
    assert es.request("DELETE", "/_search/scroll/_all").status_code == 404   # scan cleared it


def test_elasticsearch_py_helpers_scan_exports_the_whole_index(es, big, base_url):
    from elasticsearch import Elasticsearch, helpers
    client = Elasticsearch(base_url, request_timeout=60)
    try:
        rows = list(helpers.scan(client, index=big, size=1000, preserve_order=True,
                                 query={"sort": [{"n": "desc"}]}))
    finally:
        client.close()
    assert [int(h["_id"]) for h in rows] == list(range(N_DOCS - 1, -1, -1))


# --- window setting ---------------------------------------------------------------------------------

def test_max_result_window_is_set_at_creation_and_through_settings(es):
    es.put("/w", json={"settings": {"index": {"max_result_window": 20}}})
    es.post("/w/_doc?refresh=true", json={"n": 1})
    assert es.get("/w/_settings").json()["w"]["settings"]["index"]["max_result_window"] == "20"
    err = _error(es.post("/w/_search", json={"from": 15, "size": 10}), 400,
                 "illegal_argument_exception")
    assert err["type"] == "search_phase_execution_exception"   # raised by each shard, as in ES
    assert err["root_cause"][0]["reason"] == (
        "Result window is too large, from + size must be less than or equal to: [20] but was "
        "[25]. See the scroll api for a more efficient way to request large data sets. This "
        "limit can be set by changing the [index.max_result_window] index level setting.")
    assert es.put("/w/_settings", json={"index": {"max_result_window": 30}}).status_code == 200
    assert es.get("/w/_settings").json()["w"]["settings"]["index"]["max_result_window"] == "30"
    assert es.post("/w/_search", json={"from": 15, "size": 10}).status_code == 200


# --- consistent pages (our extension) ---------------------------------------------------------------

def _page(es: httpx.Client, index: str, from_: int, size: int, token: str | None
          ) -> tuple[list[dict[str, Any]], str]:
    params: dict[str, Any] = {"from": from_, "size": size}
    if token is not None:
        params["consistent_page"] = token
    resp = es.get(f"/{index}/_search", params=params)
    return _hits(resp), resp.headers[PAGE_TOKEN_HEADER]


def _writes_between_pages(es: httpx.Client, index: str, step: int) -> None:
    """Update documents of earlier pages (they move to the end of the default order) and
    delete documents of later pages."""
    lines = []
    for k in range(5):
        lines += [{"update": {"_index": index, "_id": str(step * 300 + k)}}, {"doc": {"v": 9}}]
        lines += [{"delete": {"_index": index, "_id": str(N_DOCS - 1 - step * 5 - k)}}]
    body = "\n".join(json.dumps(x) for x in lines) + "\n"
    r = es.post("/_bulk?refresh=true", content=body,
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and r.json()["errors"] is False


def _wide_window(es: httpx.Client, index: str) -> None:
    resp = es.put(f"/{index}/_settings", json={"index": {"max_result_window": 2 * N_DOCS}})
    assert resp.status_code == 200, resp.text


def test_from_size_paging_during_writes_without_the_token_has_duplicates_or_gaps(es, big):
    _wide_window(es, big)
    seen: list[str] = []
    for step in range(N_DOCS // 1000 + 1):
        hits, _ = _page(es, big, step * 1000, 1000, None)
        seen += [h["_id"] for h in hits]
        _writes_between_pages(es, big, step)
    assert len(seen) != len(set(seen)) or len(set(seen)) != N_DOCS   # what the token prevents


def test_consistent_page_token_pages_one_snapshot_during_writes(es, big):
    _wide_window(es, big)
    expected = _snapshot_of(es, big)
    seen: list[dict[str, Any]] = []
    token = "true"                                          # ask for one on the first page
    step = 0
    while True:
        hits, token = _page(es, big, step * 1000, 1000, token)
        if not hits:
            break
        seen += hits
        _writes_between_pages(es, big, step)
        step += 1
    ids = [h["_id"] for h in seen]
    assert len(ids) == len(set(ids)) == len(expected)     # no duplicates, no gaps
    assert {h["_id"]: h["_source"]["v"] for h in seen} == expected
    now = _snapshot_of(es, big)
    assert now != expected


def test_every_search_offers_a_page_token_and_a_bad_one_is_refused(es, few):
    big = few
    resp = es.get(f"/{big}/_search?size=1")
    assert resp.headers[PAGE_TOKEN_HEADER]
    assert "page_token" not in resp.json()
    asked = es.get(f"/{big}/_search", params={"size": 1, "consistent_page": "true"})
    assert asked.json()["page_token"] == asked.headers[PAGE_TOKEN_HEADER]
    again = es.get(f"/{big}/_search", params={"size": 1, "from": 1,
                                              "consistent_page": asked.json()["page_token"]})
    assert _hits(again)[0]["_id"] == "1"
    _error(es.get(f"/{big}/_search", params={"consistent_page": "garbage"}), 400,
           "illegal_argument_exception")


# --- Python API ------------------------------------------------------------------------------------

def test_python_api_scan_scroll_and_point_in_time(es, cluster):
    cluster.create_index("py", shards=2, mappings=MAPPINGS)
    cluster.bulk("py", [_doc(i) for i in range(300)], ids=[str(i) for i in range(300)],
                 refresh=True)
    ns = [h["_source"]["n"] for h in cluster.scan("py", size=64, sort=[{"n": "desc"}])]
    assert ns == list(range(299, -1, -1))
    first = cluster.search("py", size=100, params={"scroll": "1m"})
    second = cluster.scroll(first["_scroll_id"])
    assert len({h["_id"] for h in first["hits"]["hits"] + second["hits"]["hits"]}) == 200
    assert cluster.clear_scroll(first["_scroll_id"])["num_freed"] == 2
    pit = cluster.open_point_in_time("py", "1m")
    cluster.index("py", _doc(1000), id="1000", refresh=True)
    resp = cluster.search(pit={"id": pit}, size=1000, sort=[{"n": "asc"}])
    assert resp["hits"]["total"]["value"] == 300 and resp["pit_id"] == pit
    assert cluster.close_point_in_time(pit) is True
    assert "_page_token" not in cluster.search("py")


def test_search_max_keep_alive_cluster_setting_limits_cursors(es, few):
    try:
        resp = es.put("/_cluster/settings", json={"persistent": {"search.max_keep_alive": "1m"}})
        assert resp.json() == {"acknowledged": True,
                               "persistent": {"search": {"max_keep_alive": "1m"}},
                               "transient": {}}
        err = _error(es.post("/big/_search?scroll=2m"), 400, "illegal_argument_exception")
        assert err["reason"] == ("Keep alive for request (2m) is too large. It must be less than "
                                 "(1m). This limit can be set by changing the "
                                 "[search.max_keep_alive] cluster level setting.")
        _error(es.post("/big/_pit?keep_alive=1h"), 400, "illegal_argument_exception")
        assert es.post("/big/_search?scroll=1m").status_code == 200
        _error(es.put("/_cluster/settings", json={"persistent": {"search.bogus": "1m"}}), 400,
               "illegal_argument_exception")
    finally:
        es.put("/_cluster/settings", json={"persistent": {"search.max_keep_alive": None}})
    assert es.get("/_cluster/settings").json() == {"persistent": {}, "transient": {}}
    assert es.post("/big/_search?scroll=2m").status_code == 200
