"""Zero 5xx from the script and by-query routes: Hypothesis sends JSON of any shape (with the
routes' own key names), wrongly typed parameters and random script sources; every answer is a
2xx or a 4xx in Elasticsearch's envelope. Bounded (``FUZZ_EXAMPLES``, default 120, per test);
the work happens on a scratch index, refilled for each example that may delete it."""
from __future__ import annotations

import os
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "120"))
KEYS = ["query", "match_all", "term", "max_docs", "conflicts", "script", "source", "params",
        "lang", "id", "dest", "index", "op_type", "version_type", "routing", "_source", "size",
        "upsert", "scripted_upsert", "doc", "script_fields", "ignore_failure", "n", "tag"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                    st.sampled_from(["scratch", "proceed", "abort", "create", "external",
                                     "painless", "ctx._source.n += 1", "doc['n'].value",
                                     "ctx.op = 'delete'", "=r", "1e400", "*", ""]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), inner, max_size=4)),
    max_leaves=20)
PARAMS = st.dictionaries(
    st.sampled_from(["conflicts", "max_docs", "scroll_size", "slices", "requests_per_second",
                     "refresh", "wait_for_completion", "q", "retry_on_conflict", "actions"]),
    st.one_of(st.text(max_size=6), st.sampled_from(["-1", "0", "auto", "1e309", "nan", "100000",
                                                    "2147483648", "true", "false", "n:1"])),
    max_size=3)
SOURCE_CHARS = st.sampled_from(list("()[]{};:.,'\"+-*/%<>=!&|^~?0123456789 \n") +
                               ["def ", "int ", "ctx", "_source", "params", "doc", "['n']",
                                ".value", "for", "while", "if", "else", "return", "new ",
                                "ArrayList", "Math.max", "size()", "x", "n", "1L", "2.5"])
SOURCES = st.lists(SOURCE_CHARS, max_size=25).map("".join)
ROUTES = [("POST", "/scratch/_delete_by_query"), ("POST", "/scratch/_update_by_query"),
          ("POST", "/_reindex"), ("POST", "/scratch/_update/1"), ("POST", "/scratch/_search"),
          ("GET", "/_tasks"), ("GET", "/_tasks/x:1"), ("POST", "/_tasks/_cancel")]
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture
def scratch(es: httpx.Client) -> httpx.Client:
    _fill(es)
    return es


def _fill(es: httpx.Client) -> None:
    for i in range(3):
        es.put(f"/scratch/_doc/{i}?refresh=true", json={"n": i, "tag": "t"})


def _check(r: httpx.Response) -> None:
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        body = r.json()
        assert "error" in body and "status" in body, r.text


@SETTINGS
@given(route=st.sampled_from(ROUTES), params=PARAMS, body=JSON)
def test_bad_by_query_requests_get_4xx(scratch: httpx.Client, route: tuple[str, str],
                                       params: dict[str, str], body: Any) -> None:
    params = {**params, "wait_for_completion": "true"} if route[1] != "/_tasks" else params
    _check(scratch.request(route[0], route[1], params=params, json=body))
    _fill(scratch)


@SETTINGS
@given(source=SOURCES, params=st.dictionaries(st.sampled_from(["x", "n"]), SCALARS,
                                              max_size=2))
def test_random_scripts_get_a_value_or_a_4xx(scratch: httpx.Client, source: str,
                                             params: dict[str, Any]) -> None:
    script = {"source": source, "params": params}
    _check(scratch.post("/scratch/_update/1", json={"script": script}))
    _check(scratch.post("/scratch/_search", json={"script_fields": {"f": {"script": script}}}))
    _check(scratch.post("/scratch/_update_by_query", json={"script": script, "max_docs": 1}))
    _fill(scratch)
