"""Contract: every error is Elasticsearch's envelope, and no input produces a 500.

    {"error": {"root_cause": [{"type": str, "reason": str, ...}, ...],
               "type": str, "reason": str, ...},
     "status": int}            # equal to the HTTP status, which is 4xx for bad input

The second half throws a bounded batch of malformed requests at the real server (loopback only)
and checks the same contract for each.
"""
from __future__ import annotations

import random

import pytest


def assert_envelope(r) -> None:
    assert r.status_code < 500, (r.status_code, r.text)
    if r.status_code < 400 or r.request.method == "HEAD":
        return
    body = r.json()
    if body.get("found") is False:  # GET of a missing document: ES's 404 body, not an error
        return
    assert set(body) == {"error", "status"}, body
    assert body["status"] == r.status_code
    err = body["error"]
    assert isinstance(err["type"], str) and isinstance(err["reason"], str)
    assert isinstance(err["root_cause"], list) and err["root_cause"]
    for cause in err["root_cause"]:
        assert isinstance(cause["type"], str) and "reason" in cause


CASES = [
    ("GET", "/_search?size=x", None),
    ("GET", "/_search?from=-1", None),
    ("POST", "/_search", b"[1,2]"),
    ("POST", "/_search", b'{"query": {"match_all": {}}, "sort": 5}'),
    ("POST", "/_search", b'{"query": {"bool": {"must": 5}}}'),
    ("POST", "/_search", b'{"query": {"term": {}}}'),
    ("POST", "/_search", b'{"query": {"match": {"a": {"query": "x", "operator": "xor"}}}}'),
    ("POST", "/_search", b'{"query": {"range": {"n": {"gte": "abc"}}}}'),
    ("POST", "/_search", b'{"size": "ten"}'),
    ("POST", "/_search", b'{"track_total_hits": "maybe"}'),
    ("POST", "/_search", b'{"_source": 5}'),
    ("POST", "/_search?timeout=5parsecs", b"{}"),
    ("POST", "/_search?scroll=forever", b"{}"),
    ("PUT", "/bad%20name", None),
    ("PUT", "/x", b'{"settings": {"number_of_shards": 0}}'),
    ("PUT", "/x", b'{"settings": {"number_of_shards": "many"}}'),
    ("PUT", "/x", b'{"mappings": {"properties": {"a": {"type": "nonsense"}}}}'),
    ("PUT", "/x/_doc/1", b"[]"),
    ("PUT", "/x/_doc/1", b'"a string"'),
    ("POST", "/_bulk", b"not json\n"),
    ("POST", "/_bulk", b'{"explode": {}}\n{}\n'),
    ("POST", "/_bulk", b""),
    ("DELETE", "/_all", None),
    ("GET", "/missing/_doc/1", None),
    ("GET", "/missing/_mapping", None),
    ("POST", "/missing/_refresh", None),
    ("GET", "/_search/nonsense/deeper/path", None),
]


@pytest.mark.parametrize("method,path,body", CASES)
def test_errors_use_the_envelope(es, method, path, body) -> None:
    es.put("/existing", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    r = es.request(method, path, content=body, headers={"content-type": "application/json"})
    assert r.status_code >= 400, r.text
    assert_envelope(r)


def _junk(rng: random.Random) -> bytes:
    atoms = [b"{", b"}", b"[", b"]", b'"query"', b":", b",", b'"match_all"', b"1", b"-1",
             b"null", b"true", b'"size"', b'"from"', b'"sort"', b'"bool"', b'"must"',
             b'"\xff"', b"1e999", b'"range"', b'"gte"', b'"_source"']
    return b"".join(rng.choice(atoms) for _ in range(rng.randint(0, 25)))


def test_a_bounded_batch_of_junk_never_gets_a_500(es) -> None:
    rng = random.Random(1234)
    es.put("/junk", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    es.put("/junk/_doc/1?refresh=true", json={"n": 1, "t": "x"})
    paths = ["/_search", "/junk/_search", "/junk/_count", "/junk/_doc/2", "/_bulk",
             "/junk/_mapping", "/junk/_settings", "/junk/_update/1"]
    for _ in range(250):
        path = rng.choice(paths)
        method = rng.choice(["POST", "PUT"]) if path != "/_search" else "POST"
        r = es.request(method, path, content=_junk(rng),
                       headers={"content-type": "application/json"})
        assert_envelope(r)
    deep = b'{"query":' + b'{"bool":{"must":' * 5000 + b"{}" + b"}}" * 5000 + b"}"
    assert_envelope(es.post("/_search", content=deep,
                            headers={"content-type": "application/json"}))
    nested = b"[" * 100_000 + b"]" * 100_000
    assert_envelope(es.post("/_search", content=nested,
                            headers={"content-type": "application/json"}))
