"""The Painless subset against real Painless: every script of ``tests/test_painless_subset.py``'s
tables runs on the OpenSearch node (``POST /_scripts/painless/_execute``, which answers the
script's value as Java's ``String.valueOf``) and in our evaluator. Values must print the same;
errors must be ``script_exception`` on both, with the same ``reason`` (compile or runtime
error) and the same Java exception in ``caused_by``."""
from __future__ import annotations

from typing import Any

import httpx
import pytest

from shardsearch.cluster.engine.script import ScriptError, compile_script
from shardsearch.cluster.engine.script.javavalues import to_string

from test_painless_subset import COMPILE_ERRORS, ERRORS, VALUES   # tests/ is on sys.path

# compile errors whose Java cause differs from ours, with the reason
CAUSE_DIFFERS: dict[str, str] = {
    "params = 1": "Painless checks the value's type first (int is not a Map: "
                  "class_cast_exception); we refuse the write to a read-only variable "
                  "(illegal_argument_exception). Both are compile errors.",
}


@pytest.fixture(scope="module")
def painless(opensearch_url: str) -> Any:
    with httpx.Client(base_url=opensearch_url, timeout=60) as client:
        yield client


def _theirs(client: httpx.Client, source: str, params: dict[str, Any]) -> tuple[int, Any]:
    r = client.post("/_scripts/painless/_execute",
                    json={"script": {"source": source, "params": params}})
    return r.status_code, r.json()


def _ours(source: str, params: dict[str, Any]) -> tuple[int, Any]:
    try:
        value = compile_script({"source": source, "params": params}).run({})
    except ScriptError as e:
        return 400, {"error": e.to_cause()}
    return 200, {"result": to_string(value)}


def _same_error(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    err = theirs["error"]
    while err.get("type") != "script_exception" and "caused_by" in err:
        err = err["caused_by"]
    assert err["type"] == ours["type"] == "script_exception", (ours, theirs)
    assert err["reason"] == ours["reason"], (ours, theirs)
    assert err["caused_by"]["type"] == ours["caused_by"]["type"], (ours, theirs)


@pytest.mark.parametrize(("source", "params", "expected"), VALUES)
def test_a_script_prints_the_value_painless_prints(painless: httpx.Client, source: str,
                                                   params: dict[str, Any],
                                                   expected: Any) -> None:
    theirs, ours = _theirs(painless, source, params), _ours(source, params)
    assert theirs == ours


@pytest.mark.parametrize(("source", "params", "java_type"), ERRORS)
def test_a_runtime_error_has_painless_cause(painless: httpx.Client, source: str,
                                           params: dict[str, Any], java_type: str) -> None:
    (their_status, theirs), (our_status, ours) = _theirs(painless, source, params), \
        _ours(source, params)
    assert their_status == our_status == 400, theirs
    _same_error(ours["error"], theirs)


@pytest.mark.parametrize("source", COMPILE_ERRORS)
def test_a_compile_error_is_a_compile_error_in_painless(painless: httpx.Client,
                                                        source: str) -> None:
    (their_status, theirs), (our_status, ours) = _theirs(painless, source, {}), \
        _ours(source, {})
    assert their_status == our_status == 400, theirs
    if source in CAUSE_DIFFERS:
        pytest.skip(CAUSE_DIFFERS[source])
    _same_error(ours["error"], theirs)
