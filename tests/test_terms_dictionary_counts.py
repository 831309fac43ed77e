"""A top-level ``terms`` on a keyword counts each segment's dictionary ranks with one bincount
when every row has at most one value (``engine/aggs/bucket.py`` ``_dictionary_counts``); rows
with several values take the general grouping. Either way the buckets equal a brute-force count
over the documents' ``_source`` — across segments, deletes and updates, a filtering query,
``include``/``exclude`` and ``missing`` — in the in-process cluster (real shard and coordinator
code, no Ray).
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from inprocess import LocalCluster

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


def _docs(multi: bool) -> dict[str, dict[str, Any]]:
    rnd = random.Random(7 if multi else 3)
    out: dict[str, dict[str, Any]] = {}
    for i in range(600):
        d: dict[str, Any] = {"n": i % 5}
        if rnd.random() < 0.9:   # some documents lack the field
            tags = [f"k{rnd.randint(0, 60):02d}" for _ in range(rnd.randint(1, 3) if multi
                                                                 else 1)]
            d["tag"] = tags if multi else tags[0]
        out[str(i)] = d
    return out


def _brute(docs: dict[str, dict[str, Any]], size: int, keep: Any = None,
           missing: str | None = None) -> list[dict[str, Any]]:
    counts: Counter = Counter()
    for d in docs.values():
        tags = d.get("tag")
        values = set(tags if isinstance(tags, list) else [tags]) if tags is not None \
            else ({missing} if missing is not None else set())
        counts.update(v for v in values if keep is None or keep(v))
    ranked = sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))[:size]
    return [{"key": k, "doc_count": c} for k, c in ranked]


def _cluster(docs: dict[str, dict[str, Any]]) -> LocalCluster:
    c = LocalCluster().create("idx", shards=2, mappings={"properties": {
        "tag": {"type": "keyword"}, "n": {"type": "long"}}})
    items = list(docs.items())
    for at in range(0, len(items), 100):   # several segments per shard
        c.index("idx", dict(items[at:at + 100]))
    return c


def _terms(c: LocalCluster, query: dict[str, Any] | None = None, **params: Any) -> list:
    body: dict[str, Any] = {"size": 0, "aggs": {"t": {"terms": {"field": "tag", "size": 8,
                                                                  **params}}}}
    if query is not None:
        body["query"] = query
    return c.search("idx", body)["aggregations"]["t"]["buckets"]


@pytest.mark.parametrize("multi", [False, True], ids=["single_valued", "multi_valued"])
def test_top_level_keyword_terms_count_like_a_brute_force_count(multi: bool) -> None:
    docs = _docs(multi)
    c = _cluster(docs)
    assert _terms(c) == _brute(docs, 8)
    assert _terms(c, missing="zz") == _brute(docs, 8, missing="zz")
    assert _terms(c, include="k[0-3].*", exclude="k01") == _brute(
        docs, 8, keep=lambda v: v[1] in "0123" and v != "k01")
    odd = {k: d for k, d in docs.items() if d["n"] % 2 == 1}
    assert _terms(c, {"terms": {"n": [1, 3]}}) == _brute(odd, 8)
    changed = {str(i): {"n": 0, "tag": "k99"} for i in range(0, 600, 3)}
    c.bulk([{"action": "index", "index": "idx", "id": k, "source": v}
            for k, v in changed.items()]
           + [{"action": "delete", "index": "idx", "id": str(i)} for i in range(1, 600, 7)])
    docs.update(changed)
    for i in range(1, 600, 7):
        docs.pop(str(i), None)
    assert _terms(c) == _brute(docs, 8)
