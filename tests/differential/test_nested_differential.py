"""``nested`` fields against a real OpenSearch node: the nested query (score modes, inner hits),
sorting on a nested field, ``nested`` / ``reverse_nested`` aggregations. Ours over 3 shards,
OpenSearch over 1; hits, scores, inner hits and buckets must agree.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from .compare import compare

pytestmark = pytest.mark.slow

INDEX = "diff_nested"
MAPPING = {"properties": {
    "title": {"type": "text"},
    "group": {"type": "keyword"},
    "uid": {"type": "long"},
    "comments": {"type": "nested", "properties": {
        "author": {"type": "keyword"}, "stars": {"type": "long"}, "text": {"type": "text"}}},
}}
WORDS = ["fun", "bad", "great", "meh", "dull", "fine"]


def _docs() -> list[dict[str, Any]]:
    docs = []
    for i in range(40):
        comments = [{"author": ["ann", "bob", "cid", "dan"][(i + k) % 4],
                     "stars": (i * 7 + k * 3) % 6,
                     "text": " ".join(WORDS[(i + k + j) % 6] for j in range(1 + (i + k) % 3))}
                    for k in range(i % 4)]
        docs.append({"title": f"doc {WORDS[i % 6]}", "group": f"g{i % 3}", "uid": i,
                     "comments": comments})
    return docs


@pytest.fixture(scope="module")
def nested_pair(pair) -> Iterator[Any]:
    for client, shards in ((pair.theirs, 1), (pair.ours, 3)):
        client.delete(f"/{INDEX}")
        r = client.put(f"/{INDEX}", json={"settings": {"number_of_shards": shards,
                                                       "number_of_replicas": 0},
                                          "mappings": MAPPING})
        assert r.status_code == 200, r.text
        lines = []
        for i, d in enumerate(_docs()):
            lines += [orjson.dumps({"index": {"_index": INDEX, "_id": str(i)}}), orjson.dumps(d)]
        r = client.post("/_bulk", params={"refresh": "true"}, content=b"\n".join(lines) + b"\n",
                        headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200 and not r.json()["errors"], r.text[:2000]
    yield pair
    pair.ours.delete(f"/{INDEX}")
    pair.theirs.delete(f"/{INDEX}")


def _inner(hit: dict[str, Any]) -> Any:
    """Inner hits reduced to what both must agree on."""
    out = {}
    for name, got in (hit.get("inner_hits") or {}).items():
        out[name] = (got["hits"]["total"]["value"],
                     [(h["_id"], h["_nested"], _round(h.get("_score")), h.get("_source"),
                       h.get("sort")) for h in got["hits"]["hits"]])
    return out


def _round(x: Any) -> Any:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(x, 4)


def agree(pair: Any, body: dict[str, Any]) -> dict[str, Any]:
    ours, theirs = pair.send("POST", f"/{INDEX}/_search", body)
    assert ours[0] == theirs[0] == 200, (ours, theirs)
    diffs = compare(ours, theirs)
    assert not diffs, "; ".join(f"{d.path}: ours {d.ours!r} / OpenSearch {d.theirs!r}"
                                for d in diffs)
    assert [_inner(h) for h in ours[1]["hits"]["hits"]] == \
        [_inner(h) for h in theirs[1]["hits"]["hits"]]
    return ours[1]


@pytest.mark.parametrize("mode", ["avg", "max", "min", "sum", "none"])
def test_nested_query_scores_agree_with_opensearch(nested_pair, mode):
    body = {"query": {"nested": {"path": "comments", "score_mode": mode, "query": {
        "bool": {"should": [{"match": {"comments.text": "fun great"}},
                            {"range": {"comments.stars": {"gte": 3}}}]}}}}, "size": 40}
    got = agree(nested_pair, body)
    assert got["hits"]["total"]["value"] > 5


def test_inner_hits_agree_with_opensearch(nested_pair):
    body = {"query": {"nested": {"path": "comments", "score_mode": "max",
                                 "query": {"match": {"comments.text": "fun"}},
                                 "inner_hits": {"size": 2, "_source": ["comments.author"]}}},
            "size": 10}
    got = agree(nested_pair, body)
    assert any(h["inner_hits"]["comments"]["hits"]["hits"] for h in got["hits"]["hits"])
    body["query"]["nested"]["inner_hits"] = {"name": "s", "from": 1, "size": 2,
                                             "sort": [{"comments.stars": "desc"}]}
    agree(nested_pair, body)


def test_nested_sort_agrees_with_opensearch(nested_pair):
    for opts in ({"order": "desc", "mode": "max", "nested": {"path": "comments"}},
                 {"order": "asc", "mode": "min", "nested": {
                     "path": "comments", "filter": {"term": {"comments.author": "ann"}}}}):
        agree(nested_pair, {"sort": [{"comments.stars": opts}, {"uid": "asc"}], "size": 40})


def test_nested_and_reverse_nested_aggregations_agree_with_opensearch(nested_pair):
    aggs = {"c": {"nested": {"path": "comments"}, "aggs": {
        "who": {"terms": {"field": "comments.author"}, "aggs": {
            "stars": {"avg": {"field": "comments.stars"}},
            "back": {"reverse_nested": {}, "aggs": {
                "groups": {"terms": {"field": "group"}}}}}}}},
            "by_group": {"terms": {"field": "group"}, "aggs": {
                "c": {"nested": {"path": "comments"}, "aggs": {
                    "max": {"max": {"field": "comments.stars"}}}}}}}
    got = agree(nested_pair, {"size": 0, "aggs": aggs})
    assert got["aggregations"]["c"]["doc_count"] > 0


def _flatten(fields: dict[str, Any], prefix: str = "") -> dict[str, list[Any]]:
    """Elasticsearch 8's grouped ``fields`` of nested paths back to OpenSearch's flat form."""
    out: dict[str, list[Any]] = {}
    for key, values in fields.items():
        for v in values:
            if isinstance(v, dict):
                for k, vs in _flatten(v, prefix + key + ".").items():
                    out.setdefault(k, []).extend(vs)
            else:
                out.setdefault(prefix + key, []).append(v)
    return out


def test_fields_of_nested_paths_hold_opensearchs_values_grouped_as_elasticsearch(nested_pair):
    """``fields`` under a nested path: Elasticsearch 8 groups them per child (an array of
    objects, which we follow); OpenSearch 2.19 lists them flat. The values are the same."""
    body = {"query": {"ids": {"values": ["5", "6", "7"]}}, "sort": [{"uid": "asc"}],
            "fields": ["comments.author", "comments.stars", "group"], "_source": False}
    ours, theirs = nested_pair.send("POST", f"/{INDEX}/_search", body)
    assert ours[0] == theirs[0] == 200
    got = [h.get("fields") for h in ours[1]["hits"]["hits"]]
    assert [_flatten(f) for f in got] == [h.get("fields") for h in theirs[1]["hits"]["hits"]]
    assert got[1]["comments"] == [{"author": ["cid"], "stars": [0]},
                                  {"author": ["dan"], "stars": [3]}]


def test_cat_indices_counts_children_as_opensearch_does(nested_pair):
    """``docs.count`` is Lucene's document count: parents and their nested children."""
    ours, theirs = nested_pair.send("GET", f"/_cat/indices/{INDEX}", params={"format": "json"})
    assert ours[0] == theirs[0] == 200
    children = sum(len(d["comments"]) for d in _docs())
    assert ours[1][0]["docs.count"] == theirs[1][0]["docs.count"] == str(40 + children)
