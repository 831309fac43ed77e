"""Generated requests sent to shardsearch and to a real OpenSearch node; replies compared field by
field (see ``compare.py``). A difference fails the test unless ``exceptions.py`` documents it.
"""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import exceptions
from .compare import compare
from .corpus import INDEX
from .strategies import BAD_BODIES, aggregation_bodies, queries, search_bodies

pytestmark = pytest.mark.slow


def cases(n: int) -> settings:
    """``n`` examples, the same ones every run (derandomized: CI and laptops agree)."""
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check(pair: Any, method: str, path: str, body: Any = None,
          params: dict[str, Any] | None = None, their_body: Any = None) -> tuple[Any, Any]:
    """Send to both (``their_body`` to OpenSearch when given); every difference must be a
    documented exception. The two replies."""
    ours, theirs = pair.send(method, path, body, params, their_body)
    request = {"method": method, "path": path, "body": body, "params": params}
    diffs = compare(ours, theirs)
    explained = [exceptions.explain(d, request) for d in diffs]
    undocumented = [d for d, e in zip(diffs, explained) if e is None]
    exceptions.TALLY.record([e for e in explained if e is not None])
    assert not undocumented, f"{method} {path} {body} {params}: " + "; ".join(
        f"{d.path}: ours {d.ours!r} / OpenSearch {d.theirs!r}" for d in undocumented)
    return ours, theirs


@cases(110)
@given(body=search_bodies())
def test_search_pages_agree_with_opensearch(pair, body):
    check(pair, "POST", f"/{INDEX}/_search", body)


@cases(200)
@given(body=aggregation_bodies())
def test_aggregations_agree_with_opensearch(pair, body):
    """Buckets (keys, order, counts) and metric values, ours over 3 shards, OpenSearch over 1."""
    check(pair, "POST", f"/{INDEX}/_search", body)


@cases(25)
@given(query=st.none() | queries())
def test_counts_agree_with_opensearch(pair, query):
    check(pair, "POST", f"/{INDEX}/_count", None if query is None else {"query": query})


@cases(12)
@given(query=queries(), size=st.integers(3, 25),
       sort=st.sampled_from([[{"n": "asc"}, {"uid": "desc"}], [{"tag": "desc"}, {"uid": "asc"}],
                             [{"price": "asc"}, {"uid": "asc"}], ["_score", {"uid": "asc"}]]))
def test_search_after_walks_agree_with_opensearch(pair, query, size, sort):
    """Every page of a search_after walk, each system continuing from its own last sort values
    (as a client would: a score may differ in its last float bit, so one system's cursor is not
    the other's): same hits, same sort values."""
    ours_after = theirs_after = None
    for _ in range(12):
        body = {"query": query, "size": size, "sort": sort}
        ours_body, their_body = dict(body), dict(body)
        if ours_after is not None:
            ours_body["search_after"], their_body["search_after"] = ours_after, theirs_after
        (_, ob), (_, tb) = check(pair, "POST", f"/{INDEX}/_search", ours_body, None, their_body)
        if len(ob["hits"]["hits"]) < size:
            break
        ours_after = ob["hits"]["hits"][-1]["sort"]
        theirs_after = tb["hits"]["hits"][-1]["sort"]


@cases(30)
@given(case=st.sampled_from(BAD_BODIES), size=st.none() | st.integers(0, 5))
def test_errors_agree_with_opensearch(pair, case, size):
    """Refused requests: the same status and ``error.type``."""
    _, body = case
    body = dict(body)
    index = body.pop("_index", INDEX)
    params = None if size is None else {"size": size}
    check(pair, "POST", f"/{index}/_search", body, params)


@pytest.mark.parametrize("fields", ["*", "t*,n", "price,date,uid", "nothing*", "tag"])
def test_field_caps_agree_with_opensearch(pair, fields):
    """``_field_caps`` of the mapped fields. Two differences by design (README): OpenSearch lists
    its internal metadata fields (``_seq_no``, ``_field_names`` ...), and we add Elasticsearch
    8's ``metadata_field`` flag, which OpenSearch 2.19 does not send."""
    ours, theirs = pair.send("GET", f"/{INDEX}/_field_caps", params={"fields": fields})
    assert ours[0] == theirs[0] == 200, (ours, theirs)

    def mapped(body):
        return {k: {t: {a: b for a, b in caps.items() if a != "metadata_field"}
                    for t, caps in v.items()}
                for k, v in body["fields"].items() if not k.startswith("_")}
    assert ours[1]["indices"] == theirs[1]["indices"]
    assert mapped(ours[1]) == mapped(theirs[1])
