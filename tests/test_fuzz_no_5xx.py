"""Zero 5xx for bad input: malformed and wrongly typed requests get a 4xx in Elasticsearch's
error envelope, the keep-alive connection stays usable, and indexed data is unchanged.

Hypothesis sends JSON of any shape (with Elasticsearch's own key names, so the parsers go deep),
broken JSON and NDJSON, and parameters with wrong values to every Elasticsearch route.
Bounded: a fixed number of examples, no shrinking deadline. ``/_sim`` (simulated failures, not
an Elasticsearch API) and ``PUT /_cluster/settings`` (shared by the whole session) are left out.
"""
from __future__ import annotations

import json
import os

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "120"))
SEEDED = "fuzzdata"
DOCS = {str(i): {"title": f"doc number {i}", "n": i, "tag": ["a", "b"][i % 2]} for i in range(6)}

KEYS = ["query", "match", "match_all", "term", "terms", "bool", "must", "should", "filter",
        "must_not", "range", "gte", "lt", "size", "from", "sort", "order", "_source",
        "includes", "excludes", "aggs", "terms", "field", "value", "boost", "prefix", "regexp",
        "wildcard", "query_string", "fields", "highlight", "search_after", "track_total_hits",
        "timeout", "keep_alive", "id", "scroll", "scroll_id", "pit", "settings", "mappings",
        "properties", "type", "number_of_shards", "number_of_replicas", "doc", "upsert",
        "index", "_id", "title", "n", "tag", "minimum_should_match", "ids", "values",
        "exists", "dis_max", "constant_score", "script", "format", "missing", "mode",
        "docvalue_fields", "stored_fields", "collapse", "rescore", "explain", "version"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=False), st.text(max_size=12),
                    st.sampled_from(["1m", "-1", "10000000000000000000d", "title", "*", "_doc",
                                     "nan", "1e400", "", "fuzzdata", "a" * 40, "[", "{"]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), inner, max_size=4)),
    max_leaves=25)
DEEP = st.integers(min_value=50, max_value=5000).map(lambda n: "[" * n + "]" * n)
RAW = st.one_of(st.binary(max_size=64), DEEP, st.sampled_from(
    ['{"query":', "{'a': 1}", "\x00\xff", '{"a":1}{"b":2}', "[1,2", '"text"', "nul",
     '{"index":{}}\n', '{"index":{"_id":1}}\n{"n":"x"\n', '{"delete":{}}\n', "\n\n\n",
     '{"create":{"_index":5}}\n{}\n', '{"update":{"_id":"1"}}\n{"doc":3}\n',
     '{"index":{"_index":"' + SEEDED + '","_id":"0"}}\n{"n":']))
PARAM_NAMES = ["size", "from", "q", "scroll", "keep_alive", "timeout", "refresh", "routing",
               "sort", "_source", "_source_includes", "track_total_hits", "pretty", "format",
               "wait_for_status", "level", "ignore_unavailable", "allow_no_indices", "h", "s",
               "search_type", "df", "default_operator", "analyze_wildcard", "lenient",
               "filter_path", "if_seq_no", "version", "op_type", "rest_total_hits_as_int",
               "version_type", "if_primary_term", "retry_on_conflict", "stored_fields",
               "max_concurrent_searches", "preference", "detect_noop", "flat_settings"]
PARAM_VALUES = st.one_of(st.text(max_size=8), st.sampled_from(
    ["-1", "1e309", "99999999999999999999999", "1000000000000000d", "nan", "true", "yes",
     "", "0", "-5m", "1s", "2147483648", "title:(", "*", "green", "indices"]))
PARAMS = st.dictionaries(st.sampled_from(PARAM_NAMES), PARAM_VALUES, max_size=3)

READS = [("GET", "/"), ("GET", "/_cat/indices"), ("GET", "/_cat/shards/{i}"),
         ("GET", "/_cluster/health/{i}"), ("GET", "/_count"), ("POST", "/{i}/_count"),
         ("GET", "/_mapping"), ("GET", "/{i}/_mapping"), ("POST", "/_search"),
         ("POST", "/{i}/_search"), ("GET", "/{i}/_search"), ("POST", "/_search/scroll"),
         ("POST", "/_search/scroll/{d}"), ("DELETE", "/_search/scroll"), ("POST", "/{i}/_pit"),
         ("DELETE", "/_pit"), ("GET", "/{i}/_settings"), ("GET", "/{i}/_doc/{d}"),
         ("GET", "/{i}/_source/{d}"), ("HEAD", "/{i}"), ("POST", "/{i}/_refresh"),
         ("GET", "/_settings"), ("GET", "/_cluster/settings"),
         # index management (aliases, stats, _cat tables, state, templates, analyze)
         ("GET", "/_alias"), ("GET", "/_alias/{d}"), ("GET", "/{i}/_alias/{d}"),
         ("HEAD", "/{i}/_alias/{d}"), ("GET", "/_stats"), ("GET", "/{i}/_stats/{d}"),
         ("GET", "/_cat/aliases/{d}"), ("POST", "/_cat/count/{i}"), ("GET", "/_cat/health"),
         ("GET", "/_cat/nodes"), ("GET", "/_cluster/state/{d}/{i}"),
         ("GET", "/_index_template/{d}"), ("GET", "/_component_template/{d}"),
         ("POST", "/_index_template/_simulate_index/{i}"), ("POST", "/_index_template/_simulate"),
         ("POST", "/_analyze"), ("POST", "/{i}/_analyze"),
         ("GET", "/%3C{d}-%7Bnow%2Fd%7D%3E/_search"),
         ("POST", "/_mget"),
         ("POST", "/{i}/_mget"), ("POST", "/_msearch"), ("GET", "/{i}/_msearch"),
         ("GET", "/_nodes/{d}"), ("GET", "/_nodes/{d}/stats"), ("GET", "/{i}/_search_shards"),
         ("GET", "/_data_stream/{d}")]
WRITES = [("PUT", "/{i}"), ("DELETE", "/{i}"), ("POST", "/{i}/_doc"), ("PUT", "/{i}/_doc/{d}"),
          ("PUT", "/{i}/_create/{d}"), ("POST", "/{i}/_update/{d}"), ("DELETE", "/{i}/_doc/{d}"),
          ("PUT", "/{i}/_mapping"), ("PUT", "/{i}/_settings"), ("POST", "/_bulk"),
          ("POST", "/{i}/_bulk"), ("PUT", "/_settings"), ("POST", "/_aliases"),
          ("PUT", "/{i}/_alias/{d}"), ("DELETE", "/{i}/_alias/{d}"),
          ("PUT", "/_component_template/{d}"), ("DELETE", "/_component_template/{d}")]
DOC_IDS = st.one_of(st.sampled_from(["0", "1", "%2F", "_all", "a" * 600]),
                    st.text(alphabet="abc019-_.", min_size=1, max_size=8))


def _body(value: object | bytes | str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return json.dumps(value).encode()


# Valid request shapes with one hole filled by any JSON: the parsers get past the first check.
TEMPLATES = [
    lambda x: {"query": {"term": {"title": x}}}, lambda x: {"query": {"term": {"n": x}}},
    lambda x: {"query": {"range": {"n": {"gte": x}}}}, lambda x: {"query": {"match": x}},
    lambda x: {"query": {"bool": {"must": x}}}, lambda x: {"query": {"terms": {"n": x}}},
    lambda x: {"query": {"ids": {"values": x}}}, lambda x: {"size": x}, lambda x: {"from": x},
    lambda x: {"sort": x}, lambda x: {"sort": [{"n": x}]}, lambda x: {"_source": x},
    lambda x: {"search_after": x, "sort": ["n"]}, lambda x: {"track_total_hits": x},
    lambda x: {"timeout": x}, lambda x: {"aggs": {"a": {"terms": {"field": x}}}},
    lambda x: {"aggs": x}, lambda x: {"query": {"query_string": {"query": x}}},
    lambda x: {"query": {"regexp": {"tag": x}}}, lambda x: {"query": {"wildcard": {"tag": x}}},
    lambda x: {"query": {"prefix": {"tag": x}}}, lambda x: {"keep_alive": x},
    lambda x: {"scroll": x, "scroll_id": "abc"}, lambda x: {"scroll_id": x},
    lambda x: {"pit": {"id": x}}, lambda x: {"pit": {"id": "x", "keep_alive": x}},
    lambda x: {"settings": x}, lambda x: {"settings": {"number_of_shards": x}},
    lambda x: {"settings": {"index": {"refresh_interval": x}}}, lambda x: {"mappings": x},
    lambda x: {"mappings": {"properties": {"f": x}}}, lambda x: {"properties": {"f": x}},
    lambda x: {"doc": x}, lambda x: {"doc": {"n": 1}, "upsert": x}, lambda x: {"n": x},
    lambda x: {"highlight": x}, lambda x: {"docvalue_fields": x}, lambda x: {"collapse": x},
    lambda x: {"docs": x}, lambda x: {"docs": [x]}, lambda x: {"docs": [{"_id": "1", "_source": x}]},
    lambda x: {"ids": x}, lambda x: {"doc": {"n": 1}, "detect_noop": x},
    lambda x: {"doc": {"n": 1}, "_source": x}, lambda x: {"doc": {"n": 1}, "doc_as_upsert": x},
]
FILLED = st.tuples(st.sampled_from(TEMPLATES), JSON).map(lambda t: t[0](t[1]))
NESTED = st.integers(min_value=100, max_value=3000).map(
    lambda n: '{"a":' * n + "1" + "}" * n)
BULK_LINES = st.lists(st.one_of(st.sampled_from(
    ['{"index":{}}', '{"index":{"_id":"7"}}', '{"create":{"_id":[1]}}', '{"update":{"_id":"1"}}',
     '{"delete":{"_id":{}}}', '{"index":{"_index":["x"]}}', "[]", "1", '{"doc":5}',
     '{"update":{"_id":"1","retry_on_conflict":"x"}}', '{"index":{"version_type":"external"}}',
     '{"update":{"_id":"1","_source":7}}', '{"index":{"op_type":"create"}}', '{"index":"x"}',
     '{"routing":"r"}', '{"preference":{}}']),
    JSON.map(json.dumps)), max_size=6).map(lambda lines: "\n".join(lines) + "\n")
BODIES = st.one_of(JSON.map(_body), RAW.map(_body), st.just(b""), FILLED.map(_body),
                   FILLED.map(_body), NESTED.map(_body), BULK_LINES.map(_body))


@pytest.fixture(scope="module")
def seeded(base_url):
    with httpx.Client(base_url=base_url, timeout=60) as c:
        c.delete(f"/{SEEDED}")
        r = c.put(f"/{SEEDED}", json={"settings": {"number_of_shards": 2}})
        assert r.status_code == 200, r.text
        for i, doc in DOCS.items():
            assert c.put(f"/{SEEDED}/_doc/{i}", json=doc).status_code in (200, 201)
        c.post(f"/{SEEDED}/_refresh")
        yield c
        c.delete(f"/{SEEDED}")
        c.delete("/fuzzscratch")


def _assert_es_answer(client: httpx.Client, method: str, path: str, r: httpx.Response) -> None:
    assert r.status_code < 500, (method, path, r.status_code, r.text[:600])
    if r.status_code >= 400 and method != "HEAD":
        body = r.json()
        if r.status_code == 404 and (body.get("found") is False
                                     or body.get("result") == "not_found"):
            return   # Elasticsearch's answer for a missing document is not an error envelope
        assert body["status"] == r.status_code, r.text
        if r.status_code == 406:   # Elasticsearch's Content-Type refusal: the error is a string
            assert body["error"].startswith("Content-Type header "), r.text
            return
        if r.status_code == 404 and "/_alias" in path:   # ES: {"error": "alias [x] missing"}
            assert isinstance(body["error"], dict) or body["error"].endswith("missing"), r.text
            return
        assert body["error"]["type"] and body["error"]["reason"] is not None, r.text
    assert client.get("/").status_code == 200     # the same keep-alive connection still works


def _send(client, method, template, index, doc_id, params, body, ctype) -> httpx.Response:
    path = template.replace("{i}", index).replace("{d}", doc_id)
    headers = {"content-type": ctype} if ctype else {}
    return client.request(method, path, params=params, content=body or None, headers=headers)


def _data_unchanged(client: httpx.Client) -> None:
    client.post(f"/{SEEDED}/_refresh")
    r = client.post(f"/{SEEDED}/_search", json={"size": 100})
    assert r.status_code == 200, r.text
    got = {h["_id"]: h["_source"] for h in r.json()["hits"]["hits"]}
    assert got == DOCS


CTYPES = st.sampled_from(["application/json", "application/x-ndjson", None,
                          "application/json; charset=UTF-8", "text/plain",
                          "application/x-www-form-urlencoded"])


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(READS), index=st.sampled_from([SEEDED, "fuzz*", "_all", "nope"]),
       doc_id=DOC_IDS, params=PARAMS, body=BODIES, ctype=CTYPES)
def test_bad_reads_get_4xx_in_the_es_envelope(seeded, route, index, doc_id, params, body, ctype):
    method, template = route
    r = _send(seeded, method, template, index, doc_id, params, body, ctype)
    _assert_es_answer(seeded, method, template, r)


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(WRITES), doc_id=DOC_IDS, params=PARAMS, body=BODIES, ctype=CTYPES)
def test_bad_writes_get_4xx_and_leave_other_data_alone(seeded, route, doc_id, params, body,
                                                       ctype):
    method, template = route
    r = _send(seeded, method, template, "fuzzscratch", doc_id, params, body, ctype)
    _assert_es_answer(seeded, method, template, r)


def test_the_seeded_data_is_unchanged_after_fuzzing(seeded):
    _data_unchanged(seeded)


@pytest.mark.parametrize("raw", [b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
                                 b"POST /_search HTTP/1.1\r\nContent-Length: -5\r\n\r\n"])
def test_malformed_http_is_answered_in_the_es_envelope(server, raw):
    import socket
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), data[:300]
    assert b"application/json" in head.lower()
    err = json.loads(body)
    assert err["status"] == 400 and err["error"]["type"] == "illegal_argument_exception"
