"""Admin and document routes: every URL parameter they accept changes the answer, or is refused
with a 400 that names it (README, "What we refuse"). Each test is an answer that used to be
silently wrong: routes that read no parameter at all (``_refresh``, ``_mapping``, ``_settings``,
``_segments``, ``HEAD /{index}``, legacy ``_template``, ``_data_stream``), ``GET /{index}``'s
``features``, ``flat_settings`` and index options, ``DELETE /{index}?ignore_unavailable``
deleting nothing when one name was missing, and ``DELETE /_doc`` taking options only a write of
a source has. Real Ray, real uvicorn.
"""
from __future__ import annotations

import httpx
import pytest


@pytest.fixture
def adm(es: httpx.Client) -> httpx.Client:
    es.put("/adm", json={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                         "mappings": {"properties": {"n": {"type": "long"}}},
                         "aliases": {"adm-alias": {}}})
    r = es.put("/adm/_doc/1?refresh=true", json={"n": 1})
    assert r.status_code == 201, r.text
    return es


UNREAD = [("GET", "/_refresh"), ("POST", "/adm/_refresh"), ("GET", "/_mapping"),
          ("GET", "/adm/_mapping"), ("PUT", "/adm/_mapping"), ("GET", "/_settings"),
          ("GET", "/adm/_settings"), ("PUT", "/_settings"), ("PUT", "/adm/_settings"),
          ("GET", "/_segments"), ("GET", "/adm/_segments"), ("GET", "/_template"),
          ("GET", "/_template/x"), ("GET", "/_cat"), ("GET", "/"),
          ("DELETE", "/_data_stream/x"), ("PUT", "/_data_stream/x"), ("GET", "/adm"),
          ("DELETE", "/adm")]


@pytest.mark.parametrize("method,path", UNREAD)
def test_an_admin_route_refuses_a_parameter_it_does_not_read_naming_it(adm, method, path) -> None:
    body = {"properties": {}} if path.endswith("_mapping") else \
        {"index": {"max_result_window": 50}} if path.endswith("_settings") else None
    r = adm.request(method, path, params={"no_such_option": "1"}, json=body)
    assert r.status_code == 400, r.text
    assert "unrecognized parameter: [no_such_option]" in r.json()["error"]["reason"]
    assert adm.head("/adm").status_code == 200


@pytest.mark.parametrize("method,path,param", [
    ("PUT", "/adm/_settings", "preserve_existing"), ("PUT", "/adm/_settings", "reopen"),
    ("GET", "/adm/_segments", "verbose")])
def test_an_elasticsearch_option_we_do_not_build_is_refused_naming_it(adm, method, path,
                                                                      param) -> None:
    body = {"index": {"max_result_window": 50}} if path.endswith("_settings") else None
    r = adm.request(method, path, params={param: "true"}, json=body)
    assert r.status_code == 400 and f"[{param}]" in r.text, r.text
    assert adm.get("/adm/_settings").json()["adm"]["settings"]["index"].get(
        "max_result_window") is None


def test_an_exists_request_with_an_unknown_parameter_is_a_400(adm) -> None:
    assert adm.head("/adm", params={"no_such_option": "1"}).status_code == 400
    assert adm.head("/adm", params={"local": "true"}).status_code == 200


def test_get_index_features_keep_only_the_parts_named(adm) -> None:
    body = adm.get("/adm", params={"features": "mappings,aliases"}).json()["adm"]
    assert set(body) == {"mappings", "aliases"}
    assert body["aliases"] == {"adm-alias": {}}


def test_an_unknown_get_index_feature_is_refused_as_elasticsearch_does(adm) -> None:
    r = adm.get("/adm", params={"features": "settings,warmers"})
    assert r.status_code == 400 and r.json()["error"]["reason"] == "No feature for name [warmers]"


@pytest.mark.parametrize("path", ["/adm", "/adm/_settings", "/_settings"])
def test_flat_settings_gives_dotted_setting_names(adm, path) -> None:
    settings = adm.get(path, params={"flat_settings": "true"}).json()["adm"]["settings"]
    assert settings["index.number_of_shards"] == "1"
    assert "index" not in settings
    nested = adm.get(path).json()["adm"]["settings"]
    assert nested["index"]["number_of_shards"] == "1"


@pytest.mark.parametrize("path", ["/adm", "/adm/_settings"])
def test_include_defaults_adds_the_defaults_the_index_runs_with(adm, path) -> None:
    adm.put("/adm/_settings", json={"index": {"max_result_window": 50}})
    body = adm.get(path, params={"include_defaults": "true"}).json()["adm"]
    defaults = body["defaults"]["index"]
    assert defaults["refresh_interval"] == "1s"
    assert defaults["max_rescore_window"] == "50"      # follows the index's result window
    assert "max_result_window" not in defaults          # set on the index: not a default
    assert body["settings"]["index"]["max_result_window"] == "50"
    assert "defaults" not in adm.get(path).json()["adm"]
    flat = adm.get(path, params={"include_defaults": "true", "flat_settings": "true"}).json()
    assert flat["adm"]["defaults"]["index.translog.durability"] == "request"


def test_index_options_on_mapping_settings_exists_and_refresh_are_built(adm) -> None:
    assert adm.get("/adm,missing/_mapping").status_code == 404
    r = adm.get("/adm,missing/_mapping", params={"ignore_unavailable": "true"})
    assert r.status_code == 200 and set(r.json()) == {"adm"}
    r = adm.get("/ad*/_mapping", params={"expand_wildcards": "none", "allow_no_indices": "true"})
    assert r.status_code == 200 and r.json() == {}
    assert set(adm.get("/ad*/_mapping", params={"expand_wildcards": "all"}).json()) == {"adm"}
    assert set(adm.get("/ad*/_settings", params={"expand_wildcards": "open"}).json()) == {"adm"}
    assert adm.head("/adm,missing").status_code == 404
    assert adm.head("/adm,missing", params={"ignore_unavailable": "true"}).status_code == 200
    assert adm.head("/missing", params={"ignore_unavailable": "true"}).status_code == 404
    assert adm.post("/nothing*/_refresh", params={"allow_no_indices": "false"}).status_code == 404
    r = adm.post("/nothing*/_refresh", params={"allow_no_indices": "true"})
    assert r.status_code == 200 and r.json()["_shards"]["total"] == 0


def test_put_mapping_write_index_only_changes_only_the_aliass_write_index(adm) -> None:
    adm.put("/adm-b", json={"settings": {"number_of_replicas": 0},
                            "aliases": {"adm-alias": {"is_write_index": True}}})
    field = {"properties": {"w": {"type": "keyword"}}}
    r = adm.put("/adm-alias/_mapping", params={"write_index_only": "true"}, json=field)
    assert r.status_code == 200, r.text
    mappings = adm.get("/adm,adm-b/_mapping").json()
    assert "w" in mappings["adm-b"]["mappings"]["properties"]
    assert "w" not in mappings["adm"]["mappings"]["properties"]
    r = adm.put("/adm/_mapping", params={"write_index_only": "true"}, json=field)
    assert r.status_code == 200 and "w" in adm.get("/adm/_mapping").json()["adm"][
        "mappings"]["properties"]


def test_put_mapping_write_index_only_refuses_an_alias_without_a_write_index(adm) -> None:
    adm.put("/adm-c", json={"settings": {"number_of_replicas": 0}})
    adm.post("/_aliases", json={"actions": [{"add": {"index": "adm", "alias": "adm-two"}},
                                            {"add": {"index": "adm-c", "alias": "adm-two"}}]})
    r = adm.put("/adm-two/_mapping", params={"write_index_only": "true"},
                json={"properties": {"z": {"type": "keyword"}}})
    assert r.status_code == 400, r.text
    assert "no write index is defined for alias [adm-two]" in r.json()["error"]["reason"]
    mappings = adm.get("/adm,adm-c/_mapping").json()
    assert all("z" not in m["mappings"].get("properties", {}) for m in mappings.values())


def test_legacy_templates_accept_flat_settings(adm) -> None:
    assert adm.get("/_template", params={"flat_settings": "true"}).json() == {}
    assert adm.get("/_template", params={"flat_settings": "maybe"}).status_code == 400


def test_get_index_with_ignore_unavailable_skips_a_missing_name(adm) -> None:
    assert adm.get("/adm,missing").status_code == 404
    r = adm.get("/adm,missing", params={"ignore_unavailable": "true"})
    assert r.status_code == 200 and set(r.json()) == {"adm"}


def test_get_index_with_allow_no_indices_answers_an_empty_pattern_with_nothing(adm) -> None:
    assert adm.get("/nothing*").status_code == 404
    r = adm.get("/nothing*", params={"allow_no_indices": "true"})
    assert r.status_code == 200 and r.json() == {}


def test_get_index_expand_wildcards_none_matches_no_pattern(adm) -> None:
    r = adm.get("/ad*", params={"expand_wildcards": "none", "allow_no_indices": "true"})
    assert r.status_code == 200 and r.json() == {}


def test_delete_index_with_ignore_unavailable_deletes_the_indices_that_exist(adm) -> None:
    r = adm.delete("/adm,missing", params={"ignore_unavailable": "true"})
    assert r.status_code == 200 and r.json() == {"acknowledged": True}
    assert adm.head("/adm").status_code == 404


@pytest.mark.parametrize("expr", ["ad*", "nomatch*", "_all", "*", "adm,a*"])
def test_delete_index_refuses_patterns_as_elasticsearch_8_does(adm, expr) -> None:
    """Elasticsearch 8's default ``action.destructive_requires_name: true``."""
    r = adm.delete(f"/{expr}", params={"allow_no_indices": "true"})
    assert r.status_code == 400
    assert r.json()["error"]["reason"] == "Wildcard expressions or all indices are not allowed"
    assert adm.head("/adm").status_code == 200


def test_delete_index_with_ignore_unavailable_acknowledges_a_missing_name(adm) -> None:
    r = adm.delete("/missing", params={"ignore_unavailable": "true"})
    assert r.status_code == 200 and r.json() == {"acknowledged": True}
    assert adm.delete("/missing").status_code == 404


@pytest.mark.parametrize("param,value", [("op_type", "create"), ("pipeline", "p"),
                                         ("require_alias", "true"),
                                         ("require_data_stream", "true")])
def test_a_document_delete_refuses_options_of_writes_that_carry_a_source(adm, param,
                                                                         value) -> None:
    r = adm.delete("/adm/_doc/1", params={param: value})
    assert r.status_code == 400 and f"[{param}]" in r.text, r.text
    assert adm.get("/adm/_doc/1").json()["found"] is True


def test_count_with_ignore_unavailable_counts_the_indices_that_exist(adm) -> None:
    assert adm.get("/adm,missing/_count").status_code == 404
    r = adm.get("/adm,missing/_count", params={"ignore_unavailable": "true"})
    assert r.status_code == 200 and r.json()["count"] == 1


def test_count_with_allow_no_indices_false_refuses_an_empty_pattern(adm) -> None:
    assert adm.get("/nothing*/_count").json()["count"] == 0
    r = adm.get("/nothing*/_count", params={"allow_no_indices": "false"})
    assert r.status_code == 404 and r.json()["error"]["type"] == "index_not_found_exception"


def test_count_with_expand_wildcards_none_counts_no_pattern(adm) -> None:
    assert adm.get("/ad*/_count").json()["count"] == 1
    assert adm.get("/ad*/_count", params={"expand_wildcards": "none"}).json()["count"] == 0


def test_count_with_q_and_no_df_is_lenient_over_every_field_as_search_is(adm) -> None:
    assert adm.get("/adm/_count", params={"q": "1"}).json()["count"] == 1
    assert adm.get("/adm/_count", params={"q": "abc"}).json()["count"] == 0


@pytest.mark.parametrize("params,body,named", [
    ({"routing": "r"}, None, "[routing]"), ({"preference": "_shards:0"}, None, "[preference"),
    ({"expand_wildcards": "none"}, None, "[expand_wildcards=none]"),
    ({}, {"index_filter": {"match_all": {}}}, "[index_filter]"),
    ({}, {"bogus": 1}, "unknown field [bogus]")])
def test_a_point_in_time_refuses_what_would_narrow_it_naming_it(adm, params, body,
                                                                named) -> None:
    r = adm.post("/adm/_pit", params={"keep_alive": "1m", **params}, json=body)
    assert r.status_code == 400 and named in r.json()["error"]["reason"], r.text


def test_a_point_in_time_with_a_copy_preference_opens(adm) -> None:
    r = adm.post("/adm/_pit", params={"keep_alive": "1m", "preference": "_local"})
    assert r.status_code == 200 and r.json()["id"]


def test_alias_exists_with_ignore_unavailable_skips_a_missing_index(adm) -> None:
    assert adm.head("/adm,missing/_alias/adm-alias").status_code == 404
    r = adm.head("/adm,missing/_alias/adm-alias", params={"ignore_unavailable": "true"})
    assert r.status_code == 200


_NDJSON = {"content-type": "application/x-ndjson"}


def test_wait_for_active_shards_all_holds_when_every_copy_is_started(es) -> None:
    r = es.put("/wfas", params={"wait_for_active_shards": "all", "timeout": "30s"},
               json={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    assert r.json() == {"acknowledged": True, "shards_acknowledged": True, "index": "wfas"}
    wait = {"wait_for_active_shards": "all"}
    assert es.put("/wfas/_doc/1", params=wait, json={"n": 1}).status_code == 201
    assert es.post("/wfas/_update/1", params=wait, json={"doc": {"n": 2}}).status_code == 200
    bulk = '{"index": {"_index": "wfas", "_id": "2"}}\n{"n": 3}\n'
    r = es.post("/_bulk", params=wait, content=bulk, headers=_NDJSON)
    assert r.status_code == 200 and not r.json()["errors"], r.text
    assert es.delete("/wfas/_doc/1", params=wait).status_code == 200
    assert es.get("/wfas/_doc/2").json()["_source"] == {"n": 3}


def test_a_replica_without_a_node_to_start_on_is_waited_for_then_reported(es) -> None:
    """One node (the test service): a replica stays unassigned, as in Elasticsearch, so
    ``all`` on an index with a replica runs out of time: the created index answers
    ``shards_acknowledged: false`` and a write a 503."""
    assert es.get("/_cluster/health").json()["number_of_nodes"] == 1
    r = es.put("/wfas1", params={"wait_for_active_shards": "all", "timeout": "300ms"},
               json={"settings": {"number_of_shards": 1, "number_of_replicas": 1}})
    assert r.json() == {"acknowledged": True, "shards_acknowledged": False, "index": "wfas1"}
    r = es.put("/wfas1/_doc/1", params={"wait_for_active_shards": "all", "timeout": "200ms"},
               json={"n": 1})
    assert r.status_code == 503
    assert r.json()["error"]["reason"] == ("[wfas1][0] Not enough active copies to meet shard "
                                           "count of [ALL] (have 1, needed 2). Timeout: [200ms]")
    assert es.get("/wfas1/_doc/1").status_code == 404
    r = es.put("/wfas1/_doc/1", params={"wait_for_active_shards": "1"}, json={"n": 1})
    assert r.status_code == 201


def test_kibanas_index_with_auto_expand_replicas_is_all_active_on_one_node(es) -> None:
    """Kibana's migrations: ``auto_expand_replicas: 0-1`` and ``wait_for_active_shards=all``
    on index creation and bulk; one node means no replica, so both hold at once."""
    r = es.put("/kib", params={"wait_for_active_shards": "all", "timeout": "60s"},
               json={"settings": {"number_of_shards": 1, "auto_expand_replicas": "0-1"}})
    assert r.json() == {"acknowledged": True, "shards_acknowledged": True, "index": "kib"}
    settings = es.get("/kib/_settings").json()["kib"]["settings"]["index"]
    assert settings["number_of_replicas"] == "0" and settings["auto_expand_replicas"] == "0-1"
    bulk = '{"index": {"_index": "kib", "_id": "1"}}\n{"n": 1}\n'
    r = es.post("/_bulk", params={"wait_for_active_shards": "all", "refresh": "wait_for"},
                content=bulk, headers=_NDJSON)
    assert r.status_code == 200 and not r.json()["errors"], r.text
    assert es.get("/_cluster/health/kib").json()["status"] == "green"
    es.put("/kib/_settings", json={"index": {"auto_expand_replicas": "1-2"}})
    assert es.get("/kib/_settings").json()["kib"]["settings"]["index"][
        "number_of_replicas"] == "1"
    r = es.put("/kib/_settings", json={"index": {"auto_expand_replicas": "2-1",
                                                 "refresh_interval": "5s"}})
    assert r.status_code == 400 and "auto_expand_replicas" in r.text
    assert "refresh_interval" not in es.get("/kib/_settings").json()["kib"]["settings"]["index"]
    bad = es.put("/kib-bad", json={"settings": {"auto_expand_replicas": "x"}})
    assert bad.status_code == 400 and "auto_expand_replicas" in bad.text


def test_creating_an_index_waiting_for_more_copies_than_it_has_is_a_400(es) -> None:
    r = es.put("/wfas-many", params={"wait_for_active_shards": "3"},
               json={"settings": {"number_of_replicas": 1}})
    assert r.status_code == 400
    assert r.json()["error"]["reason"] == ("invalid wait_for_active_shards[3]: cannot be "
                                           "greater than number of shard copies [2]")
    assert es.head("/wfas-many").status_code == 404


@pytest.mark.parametrize("value,reason", [
    ("abc", "cannot parse ActiveShardCount[abc]"),
    ("-1", "shard count cannot be a negative value")])
def test_a_bad_wait_for_active_shards_is_refused_before_any_write(adm, value,
                                                                  reason) -> None:
    params = {"wait_for_active_shards": value}
    for method, path, body in [("PUT", "/adm/_doc/2", {"n": 2}), ("PUT", "/adm2", None),
                               ("POST", "/adm/_update/1", {"doc": {"n": 3}}),
                               ("DELETE", "/adm/_doc/1", None)]:
        r = adm.request(method, path, params=params, json=body)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "illegal_argument_exception"
        assert r.json()["error"]["reason"] == reason
    assert adm.get("/adm/_doc/1").json()["_source"] == {"n": 1}
    assert adm.get("/adm/_doc/2").status_code == 404 and adm.head("/adm2").status_code == 404


def test_a_write_waiting_for_copies_that_never_start_is_a_503_after_its_timeout(adm) -> None:
    params = {"wait_for_active_shards": "2", "timeout": "300ms"}
    r = adm.put("/adm/_doc/2", params=params, json={"n": 2})
    assert r.status_code == 503, r.text
    assert r.json()["error"]["type"] == "unavailable_shards_exception"
    assert r.json()["error"]["reason"] == ("[adm][0] Not enough active copies to meet shard "
                                           "count of [2] (have 1, needed 2). Timeout: [300ms]")
    assert adm.get("/adm/_doc/2").status_code == 404


def test_a_bulk_waiting_for_copies_that_never_start_fails_whole_before_any_write(adm) -> None:
    """Elasticsearch fails only the items on the short shards; here the whole bulk is a 503
    (README, "What we refuse")."""
    body = ('{"index": {"_index": "adm-alias", "_id": "9"}}\n{"n": 9}\n'
            '{"delete": {"_index": "adm", "_id": "1"}}\n')
    r = adm.post("/_bulk", params={"wait_for_active_shards": "2", "timeout": "200ms"},
                 content=body, headers=_NDJSON)
    assert r.status_code == 503, r.text
    assert r.json()["error"]["reason"] == ("[adm][0] Not enough active copies to meet shard "
                                           "count of [2] (have 1, needed 2). Timeout: [200ms]")
    assert adm.get("/adm/_doc/9").status_code == 404
    assert adm.get("/adm/_doc/1").status_code == 200


def test_cluster_settings_flat_settings_gives_dotted_names(adm) -> None:
    body = {"persistent": {"search": {"max_keep_alive": "2h"}}}
    r = adm.put("/_cluster/settings", params={"flat_settings": "true"}, json=body)
    try:
        assert r.json()["persistent"] == {"search.max_keep_alive": "2h"}
        flat = adm.get("/_cluster/settings", params={"flat_settings": "true"}).json()
        assert flat["persistent"] == {"search.max_keep_alive": "2h"}
        assert adm.get("/_cluster/settings").json()["persistent"] == body["persistent"]
    finally:
        adm.put("/_cluster/settings", json={"persistent": {"search.max_keep_alive": None}})


def test_cluster_settings_include_defaults_lists_the_cluster_settings_the_server_reads(
        adm) -> None:
    body = {"persistent": {"search.max_keep_alive": "2h"}}
    adm.put("/_cluster/settings", json=body)
    try:
        out = adm.get("/_cluster/settings", params={"include_defaults": "true"}).json()
        assert out["defaults"]["search"]["max_buckets"] == "65536"
        assert out["defaults"]["search"]["allow_expensive_queries"] == "true"
        assert "max_keep_alive" not in out["defaults"]["search"]   # set: not a default
        assert "defaults" not in adm.get("/_cluster/settings").json()
        flat = adm.get("/_cluster/settings", params={"include_defaults": "true",
                                                     "flat_settings": "true"}).json()
        assert flat["defaults"]["search.aggs.max_shard_terms"] == "1000000"
    finally:
        adm.put("/_cluster/settings", json={"persistent": {"search.max_keep_alive": None}})
