"""The YAML REST-test runner's pure logic (tests/yamlrunner.py), without a server."""
from __future__ import annotations

import json

import pytest

from yamlrunner import (APIS, RunnerError, Response, Stash, UnknownApi, build_call, check_catch,
                        cluster_feature_met, java_text, lookup, parse_suite, run_assertion,
                        skip_reason, split_path, values_equal, version_in_ranges)

V = (8, 15, 0)


# --- loading


def test_suite_merges_documents_and_strips_keys():
    text = """
setup:
  - do: {indices.create: {index: test}}
---
 teardown:
  - do: {indices.delete: {index: test}}
---
"first":
  - match: {a: 1}
---
"second":
  - match: {b: 2}
"""
    tests = parse_suite(text, "x/1.yml")
    assert [t.name for t in tests] == ["first", "second"]
    assert tests[0].setup == [{"do": {"indices.create": {"index": "test"}}}]
    assert tests[1].teardown == [{"do": {"indices.delete": {"index": "test"}}}]
    assert tests[0].key == "x/1.yml::first"


def test_suite_without_leading_separator_and_setup_in_same_document():
    text = 'setup:\n  - do: {info: {}}\n"t":\n  - is_true: version\n'
    (t,) = parse_suite(text, "f.yml")
    assert t.name == "t" and t.setup == [{"do": {"info": {}}}]


def test_unquoted_dates_stay_strings():
    (t,) = parse_suite('"t":\n  - match: {d: 2019-10-21}\n', "f.yml")
    assert t.steps[0]["match"]["d"] == "2019-10-21"


# --- paths


def test_split_path_honours_escaped_dots():
    assert split_path("a.b\\.c.0") == ["a", "b.c", "0"]
    assert split_path("") == []


def test_lookup_walks_maps_and_list_indices():
    body = {"hits": {"hits": [{"_id": "1"}, {"_id": "2"}]}, "a.b": {"c": 3}}
    assert lookup(body, "hits.hits.1._id") == "2"
    assert lookup(body, "a\\.b.c") == 3
    assert lookup(body, "hits.hits.5._id") is None
    assert lookup(body, "") is body


def test_lookup_replaces_stashed_path_segments():
    stash = Stash()
    stash["node"] = "n1"
    assert lookup({"nodes": {"n1": {"name": "x"}}}, "nodes.$node.name", stash) == "x"


# --- stash


def test_full_string_reference_keeps_the_stashed_type():
    stash = Stash()
    stash["after"] = [24, 172]
    assert stash.resolve({"search_after": "$after"}) == {"search_after": [24, 172]}
    assert stash.resolve("${after}") == [24, 172]


def test_reference_inside_strings_and_json_lines():
    stash = Stash()
    stash["id"] = "abc"
    stash["n"] = 3
    assert stash.resolve("id is ${id}!") == "id is abc!"
    assert stash.resolve('{"scroll_id": "$id", "n": $n}') == '{"scroll_id": "abc", "n": 3}'
    assert stash.resolve(["$id", {"k": "$id"}]) == ["abc", {"k": "abc"}]


def test_unstashed_dollar_inside_text_is_left_alone_but_a_bare_reference_fails():
    stash = Stash()
    assert stash.resolve("costs $5 or $x") == "costs $5 or $x"
    with pytest.raises(RunnerError, match=r"stashed value not found for key \[\$missing\]"):
        stash.resolve("$missing")


def test_body_reference_is_the_last_response():
    stash = Stash()
    stash.body = {"hits": {"total": 2}}
    assert stash.resolve("$body") == {"hits": {"total": 2}}
    assert stash.resolve("$body.hits.total") == 2


def test_stashed_keys_are_replaced():
    stash = Stash()
    stash["field"] = "age"
    assert stash.resolve({"$field": 1}) == {"age": 1}


# --- skip / requires


@pytest.mark.parametrize("spec,skipped", [
    (" - 6.99.99", False), ("all", True), ("8.0.0 - ", True), ("7.0.0 - 8.14.99", False),
    ("7.0.0 - 8.15.0", True), (" - 2.99.99", False), ("1.0.0 - 2.0.0, 8.10.0 - 8.20.0", True),
    ("8.15.0", True), ("8.16.0 - ", False),
])
def test_version_ranges_against_8_15_0(spec, skipped):
    assert version_in_ranges(spec, V) is skipped


def test_skip_by_version_and_missing_features():
    assert skip_reason({"skip": {"version": " - 7.12.99", "reason": "old"}}, V) is None
    assert skip_reason({"skip": {"version": "all", "reason": "muted"}}, V)
    assert skip_reason({"skip": {"features": ["warnings", "headers"]}}, V) is None
    assert "transform_and_set" in skip_reason({"skip": {"features": "transform_and_set"}}, V)


def test_requires_synthetic_version_features():
    assert cluster_feature_met("gte_v8.15.0", V)
    assert not cluster_feature_met("gte_v8.16.0", V)
    assert not cluster_feature_met("search.vectors.feature", V)
    assert skip_reason({"requires": {"cluster_features": ["gte_v7.10.0"], "reason": "r"}}, V) \
        is None
    assert skip_reason({"requires": {"cluster_features": "gte_v8.16.0", "reason": "r"}}, V)
    assert skip_reason({"requires": {"test_runner_features": ["yaml"], "reason": "r"}}, V)


# --- assertions


def _stash(body):
    s = Stash()
    s.body = body
    return s


def test_match_compares_numbers_by_value_and_ids_as_strings():
    s = _stash({"a": 1, "b": 1.0, "id": "1", "flag": True})
    run_assertion("match", {"a": 1.0}, s)
    run_assertion("match", {"b": 1}, s)
    run_assertion("match", {"id": "1"}, s)
    with pytest.raises(RunnerError):
        run_assertion("match", {"id": 1}, s)
    with pytest.raises(RunnerError):
        run_assertion("match", {"flag": 1}, s)
    assert values_equal({"x": [1, {"y": "z"}]}, {"x": [1.0, {"y": "z"}]})


def test_match_regex_uses_comments_mode():
    s = _stash({"reason": "Result window is too large"})
    run_assertion("match", {"reason": "/ Result \\s window .* large /"}, s)
    with pytest.raises(RunnerError):
        run_assertion("match", {"reason": "/^nope/"}, s)


def test_match_null_and_missing():
    s = _stash({"max_score": None})
    run_assertion("match", {"max_score": None}, s)
    with pytest.raises(RunnerError, match="missing"):
        run_assertion("match", {"nothing": 1}, s)


def test_truthiness_as_es_defines_it():
    s = _stash({"zero": 0, "f": False, "e": "", "s": "false", "one": 1, "m": {}, "l": []})
    for path in ("zero", "f", "e", "s", "absent"):
        run_assertion("is_false", path, s)
    for path in ("one", "m", "l"):
        run_assertion("is_true", path, s)
    run_assertion("exists", "m", s)
    with pytest.raises(RunnerError):
        run_assertion("exists", "absent", s)


def test_length_comparisons_close_to_and_contains():
    s = _stash({"hits": [1, 2], "d": 3.1400001, "tags": ["a", {"k": 1, "x": 2}], "t": "hello"})
    s["first"] = 5
    run_assertion("length", {"hits": 2}, s)
    run_assertion("gt", {"d": 3}, s)
    run_assertion("lte", {"d": 3.15}, s)
    run_assertion("gt", {"$first": 4}, s)
    run_assertion("close_to", {"d": {"value": 3.14, "error": 0.001}}, s)
    run_assertion("contains", {"tags": {"k": 1}}, s)
    run_assertion("contains", {"t": "ell"}, s)
    with pytest.raises(RunnerError):
        run_assertion("length", {"hits": 3}, s)
    with pytest.raises(RunnerError):
        run_assertion("lt", {"d": 3}, s)


# --- catch


def _error(status, reason):
    body = {"error": {"root_cause": [{"type": "illegal_argument_exception", "reason": reason}],
                      "type": "illegal_argument_exception", "reason": reason}, "status": status}
    return Response(status, body, json.dumps(body))


def test_catch_by_status_name_and_by_regex_on_the_error_text():
    resp = _error(400, "[from] parameter cannot be negative, found [-5]")
    check_catch("bad_request", resp)
    check_catch("/\\[from\\] parameter cannot be negative, found \\[-5\\]/", resp)
    check_catch("/illegal_argument_exception/", resp)
    with pytest.raises(RunnerError):
        check_catch("missing", resp)
    with pytest.raises(RunnerError):
        check_catch("/size/", resp)
    with pytest.raises(RunnerError):
        check_catch("bad_request", Response(200, {}, "{}"))


def test_catch_request_means_another_error_status():
    check_catch("request", _error(500, "boom"))
    with pytest.raises(RunnerError):
        check_catch("request", _error(404, "gone"))


def test_java_text_prints_maps_like_java():
    assert java_text({"a": [1, {"b": None}], "c": True}) == "{a=[1, {b=null}], c=true}"


# --- API table


def test_search_with_body_posts_and_without_gets():
    call = build_call("search", {"index": ["test_1", "test_2"], "from": -5, "size": 10,
                                 "rest_total_hits_as_int": True, "body": {"query": {}}})
    assert (call.method, call.path) == ("POST", "/test_1,test_2/_search")
    assert call.params == {"from": "-5", "size": "10", "rest_total_hits_as_int": "true"}
    assert json.loads(call.body) == {"query": {}}
    assert build_call("search", {}).method == "GET"
    assert build_call("search", {}).path == "/_search"


def test_index_picks_put_with_id_and_post_without():
    assert (build_call("index", {"index": "i", "id": 1, "body": {}}).method,
            build_call("index", {"index": "i", "id": 1, "body": {}}).path) == ("PUT", "/i/_doc/1")
    assert build_call("index", {"index": "i", "body": {}}).path == "/i/_doc"


def test_bulk_list_and_string_bodies_are_ndjson():
    call = build_call("bulk", {"refresh": True, "body": [
        '{ "index" : { "_index" : "index1", "_id" : "1" } }', {"foo": "bar"}]})
    assert call.path == "/_bulk" and call.params == {"refresh": "true"}
    assert call.headers["Content-Type"] == "application/x-ndjson"
    lines = call.body.decode().split("\n")
    assert lines[-1] == "" and json.loads(lines[1]) == {"foo": "bar"}
    call = build_call("bulk", {"index": "t", "body": '{"index":{}}\n{"a":1}'})
    assert call.path == "/t/_bulk" and call.body.endswith(b"\n")


def test_unknown_api_names_fail_clearly():
    with pytest.raises(UnknownApi, match=r"unknown API \[snapshot.create\]"):
        build_call("snapshot.create", {})


def test_table_covers_the_conformance_apis():
    needed = {"search", "index", "create", "get", "delete", "update", "bulk", "count",
              "indices.create", "indices.delete", "indices.refresh", "indices.exists",
              "indices.get_mapping", "indices.put_mapping", "indices.get_settings",
              "indices.put_settings", "cluster.health", "scroll", "clear_scroll",
              "open_point_in_time", "close_point_in_time", "create_pit", "delete_pit",
              "get_all_pits", "delete_all_pits", "cluster.put_settings", "msearch", "info"}
    assert needed <= set(APIS)
