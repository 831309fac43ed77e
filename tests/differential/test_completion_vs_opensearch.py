"""The completion suggester against the real OpenSearch node: the same documents in both (ours
over three shards, OpenSearch in one segment of one shard), the same suggesters, the same options
in the same order with the same scores; document errors compared too."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from .loading import loaded_pair

INDEX = "diff_completion"
MAPPING = {"properties": {
    "s": {"type": "completion"},
    "plain": {"type": "completion", "analyzer": "standard", "preserve_separators": False,
              "max_input_length": 12},
    "title": {"type": "keyword"}}}
ARTISTS = ["Nirvana", "Nevermind Nirvana", "Nine Inch Nails", "Nina Simone", "Nick Cave",
           "Neil Young", "Nirvana Band", "Norah Jones", "Nas", "New Order", "Nico",
           "Noel Gallagher", "Nile Rodgers", "Nelly Furtado", "Neutral Milk Hotel"]
DOCS = {str(i): {"s": {"input": [a, a.split()[-1]], "weight": (i * 7) % 11 + 1},
                 "plain": a + " live", "title": a}
        for i, a in enumerate(ARTISTS, 1)}
DOCS["16"] = {"s": ["Nirvana", "Nirvana"], "title": "dup"}
DOCS["17"] = {"s": [{"input": "Nirvana", "weight": 9}, {"input": "Zed", "weight": 40}]}


@pytest.fixture(scope="module")
def both(opensearch_url: str, base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with loaded_pair(base_url, opensearch_url, INDEX, MAPPING, DOCS) as pair:
        yield pair


def _send(both: Any, method: str, path: str, body: Any) -> tuple[Any, Any]:
    ours, theirs = both
    a, b = ours.request(method, path, json=body), theirs.request(method, path, json=body)
    assert a.status_code == b.status_code, (a.text, b.text)
    return a.json(), b.json()


@pytest.mark.parametrize("suggester", [
    {"prefix": "ni", "completion": {"field": "s"}},
    {"prefix": "N", "completion": {"field": "s", "size": 20}},
    {"prefix": "nir", "completion": {"field": "s", "skip_duplicates": True}},
    {"text": "ne", "completion": {"field": "s", "size": 3}},
    {"prefix": "nevermind n", "completion": {"field": "s"}},
    {"prefix": "nilerodg", "completion": {"field": "plain"}},
    {"prefix": "nick cave li", "completion": {"field": "plain"}},
    {"regex": "n[ie]c?k", "completion": {"field": "s"}},
    {"regex": "n.*o", "completion": {"field": "s", "size": 7}},
    {"prefix": "nrvana", "completion": {"field": "s", "fuzzy": {}}},
    {"prefix": "nevremind", "completion": {"field": "s", "fuzzy": {"fuzziness": 2}}},
    {"prefix": "ievermind", "completion": {"field": "s", "fuzzy": {"prefix_length": 0}}},
    {"prefix": "nevermind", "completion": {"field": "s", "fuzzy": {"min_length": 12}}},
])
def test_completion_options_agree_with_opensearch(both, suggester) -> None:
    body = {"suggest": {"x": suggester}, "_source": ["title"]}
    ours, theirs = _send(both, "POST", f"/{INDEX}/_search", body)
    assert ours["suggest"] == theirs["suggest"]


@pytest.mark.parametrize("value", [
    {"input": "a", "weight": 1.5}, {"input": "a", "weight": -3}, {"input": "a", "x": 1},
    {"input": "a", "weight": "7"}, ["a", {"input": ["b", "c"], "weight": 2}]])
def test_completion_document_values_agree_with_opensearch(both, value) -> None:
    ours, theirs = _send(both, "PUT", f"/{INDEX}/_doc/v", {"s": value})
    if "error" in theirs:
        assert ours["error"] == theirs["error"]
    else:
        assert ours["result"] == theirs["result"]


CTX_INDEX = "diff_completion_ctx"
CTX_MAPPING = {"properties": {"s": {"type": "completion", "contexts": [
    {"name": "genre", "type": "category"}, {"name": "era", "type": "category"}]}}}
CTX_DOCS = {str(i): {"s": {"input": [a], "weight": (i * 5) % 7 + 1, "contexts": {
    "genre": ["rock", "grunge"] if i % 3 == 0 else ["pop"] if i % 3 == 1 else ["soul", "rock"],
    "era": [f"{1960 + 10 * (i % 4)}s"]}}} for i, a in enumerate(ARTISTS, 1)}


@pytest.fixture(scope="module")
def ctx_both(opensearch_url: str, base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with httpx.Client(base_url=base_url, timeout=60) as ours, \
            httpx.Client(base_url=opensearch_url, timeout=60) as theirs:
        for client, shards in ((theirs, 1), (ours, 3)):
            client.delete(f"/{CTX_INDEX}")
            r = client.put(f"/{CTX_INDEX}", json={"settings": {"number_of_shards": shards},
                                                  "mappings": CTX_MAPPING})
            assert r.status_code == 200, r.text
            lines = []
            for doc_id, src in CTX_DOCS.items():
                lines += [orjson.dumps({"index": {"_index": CTX_INDEX, "_id": doc_id}}),
                          orjson.dumps(src)]
            r = client.post("/_bulk", params={"refresh": "true"},
                            content=b"\n".join(lines) + b"\n",
                            headers={"content-type": "application/x-ndjson"})
            assert r.status_code == 200 and not r.json()["errors"], r.text[:2000]
        yield ours, theirs
        ours.delete(f"/{CTX_INDEX}")
        theirs.delete(f"/{CTX_INDEX}")


@pytest.mark.parametrize("contexts", [
    {"genre": "rock"}, {"genre": ["pop", "soul"]}, {"era": {"context": "19", "prefix": True}},
    {"genre": [{"context": "grunge", "boost": 4}, "pop"]},
    {"genre": "rock", "era": ["1980s", {"context": "1990s", "boost": 2}]}])
def test_completion_contexts_agree_with_opensearch(ctx_both, contexts) -> None:
    body = {"_source": False, "suggest": {"x": {"prefix": "n", "completion": {
        "field": "s", "size": 20, "contexts": contexts}}}}
    ours, theirs = _send(ctx_both, "POST", f"/{CTX_INDEX}/_search", body)
    assert ours["suggest"] == theirs["suggest"]


@pytest.mark.parametrize("value", [{"input": "x"}, "x", {"input": "x", "contexts": {"zz": "a"}}])
def test_context_document_errors_agree_with_opensearch(ctx_both, value) -> None:
    ours, theirs = _send(ctx_both, "PUT", f"/{CTX_INDEX}/_doc/v", {"s": value})
    assert ours["error"] == theirs["error"]


def test_field_caps_of_a_completion_field_agree_with_opensearch(both) -> None:
    ours, theirs = _send(both, "GET", f"/{INDEX}/_field_caps?fields=s,plain", None)
    for caps in ours["fields"].values():   # Elasticsearch 8's key, which OpenSearch lacks
        for cap in caps.values():
            assert cap.pop("metadata_field") is False
    assert ours["fields"] == theirs["fields"]
