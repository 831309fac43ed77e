"""The pure rules behind _update, _msearch, _mget, write conditions and _nodes (no Ray, no
HTTP): what each decides, and the Elasticsearch texts of what each refuses."""
from __future__ import annotations

import pytest

from shardsearch.cluster.documents.bulk_updates import _runs
from shardsearch.cluster.documents.mget import parse_mget
from shardsearch.cluster.documents.update import UpdateRequest, parse_update, plan_update
from shardsearch.cluster.documents.versioning import write_conditions
from shardsearch.cluster.errors import SearchError
from shardsearch.cluster.indices.nodes import (KNOWN_INFO_METRICS, node_table, select_nodes,
                                               split_target)
from shardsearch.cluster.search.msearch import max_concurrent, parse_msearch

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


def test_an_update_merges_objects_and_replaces_everything_else() -> None:
    req = UpdateRequest("i", "1", doc={"o": {"b": 2}, "l": [9], "s": "new"})
    plan = plan_update(req, {"o": {"a": 1}, "l": [1, 2], "s": "old", "k": 0})
    assert plan.action == "index"
    assert plan.source == {"o": {"a": 1, "b": 2}, "l": [9], "s": "new", "k": 0}


def test_an_update_that_changes_nothing_is_a_noop_unless_detect_noop_is_off() -> None:
    current = {"a": 1, "o": {"x": 1}}
    assert plan_update(UpdateRequest("i", "1", doc={"o": {"x": 1}}), current).action == "noop"
    off = UpdateRequest("i", "1", doc={"o": {"x": 1}}, detect_noop=False)
    assert plan_update(off, current).action == "index"


def test_a_missing_document_is_upserted_or_reported() -> None:
    assert plan_update(UpdateRequest("i", "1", doc={"a": 1}, upsert={"a": 0}), None).source \
        == {"a": 0}
    as_upsert = UpdateRequest("i", "1", doc={"a": 1}, doc_as_upsert=True)
    assert plan_update(as_upsert, None).action == "create"
    with pytest.raises(SearchError) as e:
        plan_update(UpdateRequest("i", "1", doc={"a": 1}), None)
    assert (e.value.status, e.value.es_type) == (404, "document_missing_exception")


def test_a_scripted_plan_follows_ctx_op_and_runs_upserts_only_when_scripted() -> None:
    def plan(body: dict, current: dict | None) -> tuple:
        p = plan_update(parse_update("i", "1", body), current, version=3)
        return p.action, p.source
    assert plan({"script": "ctx._source.n = ctx._version"}, {"n": 1}) == ("index", {"n": 3})
    assert plan({"script": "ctx.op = 'delete'"}, {"n": 1}) == ("delete", {"n": 1})
    assert plan({"script": "ctx.op = 'noop'"}, {"n": 1})[0] == "noop"
    assert plan({"script": "ctx._source.n = nope", "upsert": {"n": 0}}, None) == \
        ("create", {"n": 0})
    assert plan({"script": "ctx._source.n = 9", "upsert": {}, "scripted_upsert": True},
                None) == ("create", {"n": 9})


@pytest.mark.parametrize("body, kwargs, text", [
    ({"doc": {}, "script": "x"}, {}, "can't provide both script and doc"),
    ({"script": "x", "doc_as_upsert": True}, {},
     "doc must be specified if doc_as_upsert is enabled"),
    ({"upsert": {}}, {}, "script or doc is missing"),
    ({"doc": {}, "x": 1}, {}, "[UpdateRequest] unknown field [x]"),
    ({"doc": {}}, {"if_seq_no": 1, "retry_on_conflict": 1},
     "compare and write operations can not be retried"),
    ({"doc": {}, "upsert": {}}, {"if_seq_no": 1},
     "upsert requests don't support `if_seq_no` and `if_primary_term`"),
    ({"doc": {}}, {"retry_on_conflict": 1000}, "[retry_on_conflict] must be between 0 and 100"),
])
def test_update_requests_elasticsearch_refuses(body, kwargs, text) -> None:
    with pytest.raises(SearchError) as e:
        parse_update("i", "1", body, **kwargs)
    assert text in str(e.value)


def test_bulk_updates_run_in_order_and_never_twice_on_one_id_at_once() -> None:
    items = [{"action": a, "index": "i", "id": d} for a, d in
             [("index", "1"), ("update", "1"), ("update", "2"), ("update", "1"),
              ("delete", "2"), ("update", "2")]]
    assert _runs(items) == [(False, [0]), (True, [1, 2]), (True, [3]), (False, [4]),
                            (True, [5])]


@pytest.mark.parametrize("item, text", [
    ({"action": "index", "version": 2}, "internal versioning can not be used"),
    ({"action": "index", "version_type": "external"}, "illegal version value [-3]"),
    ({"action": "create", "version": 2, "version_type": "external"},
     "create operations only support internal versioning"),
    ({"action": "index", "if_seq_no": 2}, "ifSeqNo is set, but primary term is [0]"),
    ({"action": "index", "version_type": "force"}, "No version type match [force]"),
    ({"action": "index", "if_seq_no": -5, "if_primary_term": 1},
     "sequence numbers must be non negative"),
])
def test_write_conditions_refused_with_elasticsearchs_texts(item, text) -> None:
    with pytest.raises(SearchError) as e:
        write_conditions(item)
    assert text in str(e.value) and e.value.status == 400


def test_write_conditions_keep_only_what_is_set() -> None:
    assert write_conditions({"action": "index"}) == {}
    assert write_conditions({"action": "delete", "version": "4", "version_type": "external"}) \
        == {"version": 4, "version_type": "external"}
    assert write_conditions({"action": "index", "if_seq_no": 0, "if_primary_term": 1}) == \
        {"if_seq_no": 0, "if_primary_term": 1}


def test_write_conditions_become_plain_longs_and_strs_as_json_would_give_them() -> None:
    """The Python API may hand over NumPy scalars: what a shard and its log get are the plain
    values Elasticsearch would have parsed from JSON (a fraction cut off, as it coerces)."""
    import numpy as np
    out = write_conditions({"action": "index", "version": np.float64(7.9),
                            "version_type": np.str_("external_gte")})
    assert out == {"version": 7, "version_type": "external_gte"}
    assert type(out["version"]) is int and type(out["version_type"]) is str
    out = write_conditions({"action": "index", "if_seq_no": np.int64(3),
                            "if_primary_term": np.int32(1)})
    assert out == {"if_seq_no": 3, "if_primary_term": 1}
    assert {type(v) for v in out.values()} == {int}


@pytest.mark.parametrize("item", [
    {"action": "index", "version": float("inf"), "version_type": "external"},
    {"action": "index", "version": 2**63, "version_type": "external"},
    {"action": "index", "if_seq_no": -2**63 - 1, "if_primary_term": 1},
    {"action": "index", "if_seq_no": 0, "if_primary_term": 2**70},
])
def test_write_conditions_past_a_long_are_refused_as_a_400(item) -> None:
    with pytest.raises(SearchError, match="is out of range for a long") as e:
        write_conditions(item)
    assert e.value.es_type == "illegal_argument_exception" and e.value.status == 400


def test_msearch_headers_become_the_searches_parameters() -> None:
    raw = (b'{"index": "a", "routing": "r", "request_cache": true}\n{"size": 2}\n'
           b'{}\n{"query": {"match_all": {}}}\n')
    first, second = parse_msearch(raw, ("d",), {"rest_total_hits_as_int": "true"})
    assert first.indices == ("a",) and first.routing == "r" and first.size == 2
    assert second.indices == ("d",) and second.rest_total_hits_as_int


@pytest.mark.parametrize("raw, text", [
    (b'{"type": "x"}\n{}\n', "key [type] is not supported in the metadata section"),
    (b'{}\n', "must be terminated by a newline"),
    (b'not json\n{}\n', "Failed to parse line [1]"),
    (b'\n\n', "no requests added"),
])
def test_msearch_bodies_that_fail_the_request(raw, text) -> None:
    with pytest.raises(SearchError) as e:
        parse_msearch(raw, ("_all",), {})
    assert text in str(e.value)


def test_max_concurrent_searches_must_be_positive() -> None:
    assert max_concurrent({}) >= 1 and max_concurrent({"max_concurrent_searches": "2"}) == 2
    with pytest.raises(SearchError, match="maxConcurrentSearchRequests must be positive"):
        max_concurrent({"max_concurrent_searches": "0"})


def test_mget_items_take_the_urls_defaults_and_their_own_keys() -> None:
    items = parse_mget({"docs": [{"_id": 1}, {"_id": 2, "_index": "b", "routing": "r",
                                              "_source": {"includes": ["x"]}}]},
                       "a", {"_source": "false", "routing": "u"})
    assert items[0] == ("a", "1", {"routing": "u", "_source": "false"})
    assert items[1] == ("b", "2", {"routing": "r", "_source_includes": "x"})


def test_nodes_are_read_as_ids_or_metrics_as_elasticsearch_reads_them() -> None:
    assert split_target("http,settings", None, KNOWN_INFO_METRICS) == (None, ("http",
                                                                              "settings"))
    assert split_target("abc", None, KNOWN_INFO_METRICS) == ("abc", None)
    assert split_target("abc", "http", KNOWN_INFO_METRICS) == ("abc", ("http",))
    table = node_table([{"id": "n1", "resource": "node_0", "address": "10.0.0.1",
                         "name": "node_0"},
                        {"id": "n2", "resource": "node_1", "address": "127.0.0.1",
                         "name": "node_1"}], "host", "127.0.0.1")
    assert [n["id"] for n in select_nodes(table, "_local")] == ["n2"]
    assert [n["id"] for n in select_nodes(table, "node_*")] == ["n1", "n2"]
    assert [n["id"] for n in select_nodes(table, "n1,missing")] == ["n1"]


def _core():
    from shardsearch.cluster.engine.mapping import Mapping
    from shardsearch.cluster.engine.shard import ShardCore
    return ShardCore("i", 0, Mapping.from_body({"properties": {"n": {"type": "long"}}}))


def test_a_shard_applies_external_versions_and_seq_no_conditions() -> None:
    from shardsearch.cluster.engine.writes import WriteOp
    core = _core()
    made, = core.apply([WriteOp("index", "1", 0, b'{"n":1}', version=5,
                                version_type="external")])
    assert (made["status"], made["_version"]) == (201, 5)
    same, gte, wrong_seq = core.apply([
        WriteOp("index", "1", 1, b'{"n":2}', version=5, version_type="external"),
        WriteOp("index", "1", 2, b'{"n":3}', version=5, version_type="external_gte"),
        WriteOp("index", "1", 3, b'{"n":4}', if_seq_no=0, if_primary_term=1)])
    assert same["status"] == 409 and gte["status"] == 200 and wrong_seq["status"] == 409
    assert "current document has seqNo [2]" in wrong_seq["error"]["reason"]


def test_a_conditional_write_overtaken_by_a_later_one_is_a_conflict_not_a_noop() -> None:
    """Two read-modify-writes of the same version: the one that reaches the shard second
    must fail, whatever order the coordinator numbered them in."""
    from shardsearch.cluster.engine.writes import WriteOp
    core = _core()
    core.apply([WriteOp("index", "c", 0, b'{"n":0}')])
    later, = core.apply([WriteOp("index", "c", 2, b'{"n":1}', if_seq_no=0, if_primary_term=1)])
    earlier, = core.apply([WriteOp("index", "c", 1, b'{"n":1}', if_seq_no=0,
                                   if_primary_term=1)])
    assert later["status"] == 200
    assert earlier["status"] == 409
    plain, = core.apply([WriteOp("index", "c", 1, b'{"n":9}')])
    assert plain["result"] == "noop"      # an unconditional overtaken write: as if applied first
