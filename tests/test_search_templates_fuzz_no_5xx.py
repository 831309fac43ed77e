"""Zero 5xx from stored scripts and search templates: Hypothesis builds templates from mustache
fragments (sections, functions, set-delimiters, partials, comments) with parameters of any
shape, and JSON of any shape for the routes; a rendering gives text or a 4xx domain error, and
every answer over HTTP is a 2xx or a 4xx in Elasticsearch's envelope. Bounded
(``FUZZ_EXAMPLES``, default 120 for the pure property, a third of it over HTTP)."""
from __future__ import annotations

import os
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardsearch.cluster.engine.script.mustache import render_text
from shardsearch.cluster.errors import SearchError

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "120"))
FRAGMENTS = st.sampled_from([
    "{{", "}}", "{{{", "}}}", "{{a}}", "{{{a}}}", "{{&a}}", "{{#a}}", "{{/a}}", "{{^a}}",
    "{{.}}", "{{a.0}}", "{{l.1}}", "{{#l}}", "{{/l}}", "{{#toJson}}", "{{/toJson}}",
    "{{#join}}", "{{/join}}", "{{#join delimiter='.'}}", "{{/join delimiter='.'}}",
    "{{#url}}", "{{/url}}", "{{url}}", "{{=<% %>=}}", "<%a%>", "{{= =}}", "{{> p}}", "{{!c}}",
    "a", "l", "\"", "\\", "{", "}", "[", "]", ":", ",", " ", "\n", "1",
])
TEMPLATES = st.lists(FRAGMENTS, max_size=16).map("".join)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "l", "k"]), inner,
                                                 max_size=3)), max_leaves=12)
PARAMS = st.dictionaries(st.sampled_from(["a", "l", "url", "toJson", "k"]), VALUES, max_size=4)
KEYS = ["source", "id", "params", "explain", "profile", "inline", "script", "lang", "query",
        "size", "options", "context"]
JSON = st.recursive(st.one_of(SCALARS, TEMPLATES), lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=5)), inner, max_size=4)),
    max_leaves=12)
ROUTES = [("POST", "/_render/template"), ("POST", "/_render/template/t"),
          ("POST", "/_search/template"), ("POST", "/fz/_search/template"),
          ("PUT", "/_scripts/fz"), ("PUT", "/_scripts/fz/score"), ("POST", "/fz/_search")]


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(template=TEMPLATES, params=PARAMS)
def test_a_rendering_gives_text_or_a_4xx(template: str, params: dict[str, Any]) -> None:
    try:
        assert isinstance(render_text(template, params), str)
    except SearchError as e:
        assert 400 <= e.status < 500, e.reason


def _check(r: httpx.Response) -> None:
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        body = r.json()
        assert "error" in body and "status" in body, r.text


@pytest.fixture
def fz(es: httpx.Client) -> httpx.Client:
    es.put("/fz/_doc/1?refresh=true", json={"a": "x", "n": 1})
    yield es
    es.delete("/_scripts/fz")


@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(route=st.sampled_from(ROUTES), body=JSON)
def test_bad_template_and_script_requests_get_4xx(fz: httpx.Client, route: tuple[str, str],
                                                  body: Any) -> None:
    _check(fz.request(route[0], route[1], json=body))
    lines = "".join(f"{{}}\n{httpx.Response(200, json=b).text}\n" for b in (body, body))
    _check(fz.post("/_msearch/template", content=lines,
                   headers={"content-type": "application/x-ndjson"}))
