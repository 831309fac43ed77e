"""Collapse, rescore, named queries and ``indices_boost`` do not depend on the shard count:
for random documents and queries, one shard and N shards (N = 2..8) give identical pages —
ids, scores, ``matched_queries``, collapse keys — walked page by page (no group repeats across
the pages of a collapsed search). The in-process backend runs the real coordinator and shards.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_relevance_properties import _build, docs_strategy, queries

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

features = st.fixed_dictionaries({}, optional={
    "collapse": st.sampled_from([{"field": "tag"}, {"field": "n"}]),
    "rescore": st.tuples(queries, st.integers(1, 12),
                         st.sampled_from(["total", "multiply", "avg", "max", "min"]))
    .map(lambda a: {"window_size": a[1], "query": {"rescore_query": a[0], "score_mode": a[2],
                                                   "rescore_query_weight": 1.5}}),
    "indices_boost": st.just([{"id*": 1.5}]),
})


def _named(query: dict) -> dict:
    return {"bool": {"should": [query, {"term": {"tag": {"value": "a", "_name": "is_a"}}}],
                     "_name": "all"}}


def _pages(c, body: dict, page: int) -> list:
    out, from_ = [], 0
    while from_ < 60:
        r = c.search("idx", {**body, "from": from_, "size": page},
                     include_named_queries_score="true")
        hits = [(h["_id"], h["_score"], h.get("matched_queries"), h.get("fields"))
                for h in r["hits"]["hits"]]
        out.append((r["hits"]["total"], r["hits"]["max_score"], hits))
        if len(hits) < page:
            break
        from_ += page
    return out


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=docs_strategy, query=queries, extra=features, shards=st.integers(2, 8),
       page=st.integers(1, 7), split=st.integers(0, 50))
def test_search_features_give_the_same_pages_for_one_and_n_shards(docs, query, extra, shards,
                                                                   page, split) -> None:
    if "collapse" in extra and "rescore" in extra:
        extra = {k: v for k, v in extra.items() if k != "rescore"}   # refused together
    split = min(split, len(docs))
    body = {"query": _named(query), **extra}
    one = _pages(_build(1, docs, split), body, page)
    many = _pages(_build(shards, docs, split), body, page)
    assert one == many
    if "collapse" in extra and "rescore" not in extra:
        field = extra["collapse"]["field"]
        keys = [str(f.get(field)) if f else None for _, _, hits in one for *_, f in hits]
        assert len(keys) == len(set(keys))
