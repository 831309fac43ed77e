"""Bad queries fail with Elasticsearch 8's error types and wording, and never with a 500.

Wording checked against Elasticsearch's source: ``AbstractQueryBuilder.parseInnerQueryBuilder``
("unknown query [x]" plus ``SuggestingErrorOnUnknown``'s "did you mean"), the hand-written
``fromXContent`` parsers of match/term/range/terms/exists/constant_score, ``bool``'s
ObjectParser (``x_content_parse_exception``, errors inside a clause wrapped as "[bool] failed to
parse field [must]"), ``indices.query.bool.max_nested_depth`` (30) and Lucene's
``IndexSearcher.TooManyClauses`` / ``TooManyNestedClauses`` (1024). Elasticsearch prefixes
parse reasons with a ``[line:col]`` location, which we do not have.
"""
from __future__ import annotations

import pytest
from inprocess import LocalCluster
from shardsearch.cluster.errors import SearchError
from shardsearch.cluster.engine.query.dsl import parse_query

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

NESTED_DEPTH_REASON = ("The nested depth of the query exceeds the maximum nested depth for "
                       "queries set in [indices.query.bool.max_nested_depth]")


def parse_error(dsl) -> SearchError:
    with pytest.raises(SearchError) as err:
        parse_query(dsl)
    return err.value


@pytest.mark.parametrize("dsl,es_type,reason", [
    ({"foo": {}}, "parsing_exception", "unknown query [foo]"),
    ({"boool": {}}, "parsing_exception", "unknown query [boool] did you mean [bool]?"),
    ({"match_": {}}, "parsing_exception",
     "unknown query [match_] did you mean any of [match, match_all, match_none]?"),
    ({"foo": "bar"}, "parsing_exception", "[foo] query malformed, no start_object after query name"),
    ({"match": "x"}, "parsing_exception",
     "[match] query malformed, no start_object after query name"),
    ([], "parsing_exception", "[_na] query malformed, must start with start_object"),
    ({}, "illegal_argument_exception", "query malformed, empty clause found"),
    ({"match": {"a": "x"}, "term": {"a": "x"}}, "parsing_exception",
     "[match] malformed query, expected [END_OBJECT] but found [FIELD_NAME]"),
    ({"match": {"a": {"query": "x", "foo": 1}}}, "parsing_exception",
     "[match] query does not support [foo]"),
    ({"match": {"a": "x", "b": "y"}}, "parsing_exception",
     "[match] query doesn't support multiple fields, found [a] and [b]"),
    ({"match": {"a": {}}}, "parsing_exception", "No text specified for text query"),
    ({"match": {"a": {"query": {"x": 1}}}}, "parsing_exception",
     "[match] unknown token [START_OBJECT] after [query]"),
    ({"match": {"a": {"query": "x", "operator": "xor"}}}, "illegal_argument_exception",
     "No enum constant org.elasticsearch.index.query.Operator.XOR"),
    ({"match": {"a": {"query": "x", "zero_terms_query": "some"}}}, "parsing_exception",
     "Unsupported zero_terms_query value [some]"),
    ({"match_phrase": {"a": {"query": "x", "slop": -1}}}, "illegal_argument_exception",
     "No negative slop allowed."),
    ({"multi_match": {"fields": ["a"]}}, "parsing_exception",
     "No text specified for multi_match query"),
    ({"term": {"a": ["x"]}}, "parsing_exception", "[term] query does not support array of values"),
    ({"term": {"a": {"value": ["x"]}}}, "parsing_exception",
     "[term] query does not support arrays for value - use a bool query with multiple term "
     "clauses in the should section or use a Terms query if scoring is not required"),
    ({"term": {"a": {"valeu": "x"}}}, "parsing_exception", "[term] query does not support [valeu]"),
    ({"term": {"a": None}}, "illegal_argument_exception", "value cannot be null"),
    ({"term": {}}, "illegal_argument_exception", "field name is null or empty"),
    ({"terms": {"a": "x"}}, "parsing_exception", "[terms] query does not support [a]"),
    ({"terms": {"a": ["x"], "b": ["y"]}}, "parsing_exception",
     "[terms] query does not support multiple fields"),
    ({"terms": {}}, "parsing_exception", "[terms] query requires a field name, followed by array "
                                         "of terms or a document lookup specification"),
    ({"terms": {"a": [None]}}, "parsing_exception", "No value specified for terms query"),
    ({"range": {"n": 5}}, "parsing_exception", "[range] query does not support [n]"),
    ({"range": {"n": {"gt": 1, "over": 2}}}, "parsing_exception",
     "[range] query does not support [over]"),
    ({"exists": {}}, "parsing_exception", "[exists] must be provided with a [field]"),
    ({"exists": {"field": "a", "x": 1}}, "parsing_exception", "[exists] query does not support [x]"),
    ({"ids": {"values": "1"}}, "x_content_parse_exception",
     "[ids] values doesn't support values of type: VALUE_STRING"),
    ({"prefix": {"a": {"value": "x", "nope": 1}}}, "parsing_exception",
     "[prefix] query does not support [nope]"),
    ({"wildcard": {"a": {}}}, "illegal_argument_exception", "value cannot be null"),
    ({"constant_score": {}}, "parsing_exception", "[constant_score] requires a 'filter' element"),
    ({"constant_score": {"query": {"match_all": {}}}}, "parsing_exception",
     "[constant_score] query does not support [query]"),
    ({"bool": {"must": 5}}, "x_content_parse_exception",
     "[bool] must doesn't support values of type: VALUE_NUMBER"),
    ({"bool": {"foo": []}}, "x_content_parse_exception", "[bool] unknown field [foo]"),
    ({"bool": {"shuold": []}}, "x_content_parse_exception",
     "[bool] unknown field [shuold] did you mean [should]?"),
    ({"query_string": {"default_field": "a"}}, "parsing_exception",
     "[query_string] must be provided with a [query]"),
    ({"query_string": {"query": "a", "defualt_field": "a"}}, "parsing_exception",
     "[query_string] query does not support [defualt_field]"),
    ({"simple_query_string": {"query": "a", "field": ["a"]}}, "parsing_exception",
     "[simple_query_string] unsupported field [field]"),
])
def test_malformed_queries_are_refused_with_elasticsearch_wording(dsl, es_type, reason) -> None:
    e = parse_error(dsl)
    assert (e.es_type, e.reason, e.status) == (es_type, reason, 400)


def test_an_error_inside_a_bool_clause_is_wrapped_as_elasticsearch_wraps_it() -> None:
    e = parse_error({"bool": {"filter": [{"match_all": {}}, {"foo": {}}]}})
    assert (e.es_type, e.reason) == ("x_content_parse_exception",
                                     "[bool] failed to parse field [filter]")
    assert e.extra["caused_by"] == {"type": "parsing_exception", "reason": "unknown query [foo]"}


def nested_bools(depth: int) -> dict:
    q: dict = {"match_all": {}}
    for _ in range(depth - 1):
        q = {"bool": {"must": [q]}}
    return q


def test_thirty_nested_queries_parse_and_thirty_one_do_not() -> None:
    parse_query(nested_bools(30))
    e = parse_error(nested_bools(31))
    assert e.es_type == "x_content_parse_exception" and e.status == 400
    inner = e.extra["caused_by"]
    while "caused_by" in inner:
        inner = inner["caused_by"]
    assert inner == {"type": "illegal_argument_exception", "reason": NESTED_DEPTH_REASON}


def test_known_but_unsupported_query_types_say_so() -> None:
    e = parse_error({"geo_shape": {"loc": {"shape": {"type": "point", "coordinates": [0, 0]}}}})
    assert (e.es_type, e.reason) == ("parsing_exception",
                                     "[geo_shape] query is not supported by this server")


# --------------------------------------------------------------------------- clause limits

@pytest.fixture(scope="module")
def small() -> LocalCluster:
    c = LocalCluster().create("small", 2, {"properties": {"t": {"type": "text"},
                                                          "k": {"type": "keyword"}}})
    c.index("small", {"1": {"t": "w1 w2", "k": "w1"}, "2": {"t": "w3", "k": "w3"}})
    return c


def search_error(c: LocalCluster, body: dict, **params) -> SearchError:
    with pytest.raises(SearchError) as err:
        c.search("small", body, **params)
    return err.value


def should_terms(n: int) -> dict:
    return {"bool": {"should": [{"term": {"k": f"w{i}"}} for i in range(n)]}}


def test_a_bool_with_1024_clauses_runs_and_1025_is_too_many_clauses(small) -> None:
    assert small.search("small", {"query": should_terms(1024)})["hits"]["total"]["value"] == 2
    e = search_error(small, {"query": should_terms(1025)})
    assert (e.es_type, e.reason, e.status) == ("too_many_clauses",
                                               "maxClauseCount is set to 1024", 400)


def test_a_match_of_more_than_1024_words_is_too_many_clauses(small) -> None:
    words = " ".join(f"w{i}" for i in range(1025))
    e = search_error(small, {"query": {"match": {"t": words}}})
    assert e.es_type == "too_many_clauses"


def test_more_than_1024_leaf_clauses_in_nested_bools_is_too_many_nested_clauses(small) -> None:
    q = {"bool": {"should": [should_terms(600), should_terms(600)]}}
    e = search_error(small, {"query": q})
    assert (e.es_type, e.reason, e.status) == (
        "too_many_nested_clauses",
        "Query contains too many nested clauses; maxClauseCount is set to 1024", 400)


def test_a_query_string_expanding_past_the_limit_is_refused(small) -> None:
    e = search_error(small, {"query": {"query_string": {
        "query": " OR ".join(f"w{i}" for i in range(1100)), "default_field": "t"}}})
    assert e.es_type in ("too_many_clauses", "too_many_nested_clauses")
    e = search_error(small, None, q=" ".join(f"w{i}" for i in range(1100)), df="t")
    assert e.es_type in ("too_many_clauses", "too_many_nested_clauses")


def test_a_regex_longer_than_index_max_regex_length_is_refused(small) -> None:
    reason = ("The length of regex [1001] used in the Regexp Query request has exceeded the "
              "allowed maximum of [1000]. This maximum can be set by changing the "
              "[index.max_regex_length] index level setting.")
    for body in ({"query": {"regexp": {"k": "a" * 1001}}},
                 {"query": {"query_string": {"query": "/" + "a" * 1001 + "/"}}}):
        e = search_error(small, body)
        assert (e.es_type, e.reason, e.status) == ("illegal_argument_exception", reason, 400)
    c = LocalCluster().create("rx", 1, {"properties": {"k": {"type": "keyword"}}},
                              max_regex_length=2000)
    c.index("rx", {"1": {"k": "a" * 1001}})
    assert c.ids("rx", {"query": {"regexp": {"k": "a" * 1001}}}) == ["1"]


def test_a_value_a_field_cannot_hold_fails_the_query_on_every_shard(small) -> None:
    c = LocalCluster().create("nums", 3, {"properties": {"n": {"type": "long"},
                                                         "d": {"type": "date"}}})
    c.index("nums", {"1": {"n": 1}})   # two of the three shards are empty
    for q in ({"term": {"n": "abc"}}, {"range": {"n": {"gte": "abc"}}},
              {"term": {"d": "yesterday"}}):
        with pytest.raises(SearchError) as err:
            c.search("nums", {"query": q})
        cause = err.value.to_cause()
        assert err.value.status == 400, cause
        assert cause["root_cause"][0]["type"] == "query_shard_exception", cause
        assert cause["root_cause"][0]["reason"].startswith("failed to create query:"), cause
    # a range's date bound fails as the date parser's parse_exception (parsed at rewrite)
    with pytest.raises(SearchError) as err:
        c.search("nums", {"query": {"range": {"d": {"gte": "yesterday"}}}})
    cause = err.value.to_cause()
    assert err.value.status == 400, cause
    assert [r["type"] for r in cause["root_cause"]] == ["parse_exception"], cause
    # the same value in a lenient query_string just does not match
    assert c.ids("nums", {"query": {"query_string": {"query": "abc"}}}) == []


# --------------------------------------------------------------------------- over HTTP

def _error(r, status: int) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == status
    return body["error"]


def test_http_unknown_query_is_a_400_parsing_exception(es) -> None:
    es.put("/idx")
    err = _error(es.post("/idx/_search", json={"query": {"mtach": {"a": "x"}}}), 400)
    assert err["type"] == "parsing_exception"
    assert err["reason"] == "unknown query [mtach] did you mean [match]?"
    assert err["root_cause"][0]["type"] == "parsing_exception"


def test_http_too_many_clauses_is_a_400(es) -> None:
    es.put("/idx", json={"mappings": {"properties": {"k": {"type": "keyword"}}}})
    err = _error(es.post("/idx/_search", json={"query": should_terms(1025)}), 400)
    assert err["type"] == "too_many_clauses"
    assert err["reason"] == "maxClauseCount is set to 1024"


def test_http_pathological_nesting_is_a_400_never_a_crash(es) -> None:
    es.put("/idx")
    err = _error(es.post("/idx/_search", json={"query": nested_bools(31)}), 400)
    assert err["type"] == "x_content_parse_exception"
    # 10,000 nested bools: deeper than the JSON parser accepts (1024 levels)
    deep = b'{"query":' + b'{"bool":{"must":[' * 10_000 + b'{"match_all":{}}' \
        + b"]}}" * 10_000 + b"}"
    err = _error(es.post("/idx/_search", content=deep,
                         headers={"content-type": "application/json"}), 400)
    assert err["type"] == "x_content_parse_exception"
    # deep arrays where a query is expected, and inside a terms query
    for body in (b'{"query": {"bool": {"must": ' + b"[" * 500 + b"]" * 500 + b"}}}",
                 b'{"query": {"terms": {"a": ' + b"[" * 500 + b"]" * 500 + b"}}}",
                 b'{"sort": ' + b"[" * 1000 + b"]" * 1000 + b"}",
                 b"[" * 100_000 + b"]" * 100_000):
        r = es.post("/idx/_search", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] in ("parsing_exception", "x_content_parse_exception")
    # the server is still answering
    assert es.get("/idx/_search").status_code == 200


def test_http_a_bad_value_for_a_numeric_field_is_a_400(es) -> None:
    es.put("/idx", json={"mappings": {"properties": {"n": {"type": "long"}}}})
    err = _error(es.post("/idx/_search", json={"query": {"term": {"n": "abc"}}}), 400)
    assert err["root_cause"][0]["type"] == "query_shard_exception"
    assert err["root_cause"][0]["reason"] == 'failed to create query: For input string: "abc"'


def test_http_sorting_on_text_is_a_400_illegal_argument_exception(es) -> None:
    es.put("/idx?refresh=true", json={"mappings": {"properties": {"t": {"type": "text"}}}})
    es.put("/idx/_doc/1?refresh=true", json={"t": "x"})
    err = _error(es.post("/idx/_search", json={"sort": ["t"]}), 400)
    root = err["root_cause"][0]
    assert root["type"] == "illegal_argument_exception"
    assert root["reason"].startswith(
        "Fielddata is disabled on [t] in [idx]. Text fields are not optimised for operations "
        "that require per-document field data like aggregations and sorting, so these "
        "operations are disabled by default. Please use a keyword field instead. "
        "Alternatively, set fielddata=true on [t] in order to load field data by uninverting "
        "the inverted index. Note that this can use significant memory.")
