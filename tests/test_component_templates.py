"""Component templates and template simulation, pure and over the real coordinator code
without Ray (``tests/inprocess.py``): Elasticsearch's merge order (component templates in
``composed_of`` order, then the index template's own ``template``, then the creation request),
its errors, and the ``_simulate_index`` / ``_simulate`` answers."""
from __future__ import annotations

import pytest

from inprocess import LocalCluster
from shardsearch.cluster.errors import IllegalArgument, SearchError
from shardsearch.cluster.indices.template_simulation import nested_settings

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


def _cluster() -> LocalCluster:
    c = LocalCluster()
    c.coord.put_component_template("base", {"template": {
        "settings": {"number_of_shards": 3, "index.refresh_interval": "5s"},
        "mappings": {"properties": {"a": {"type": "keyword"}, "o": {"properties": {
            "x": {"type": "long"}}}}},
        "aliases": {"from_base": {}}}})
    c.coord.put_component_template("more", {"template": {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"o": {"properties": {"y": {"type": "keyword"}}}}}}})
    c.coord.put_index_template("logs", {"index_patterns": ["logs-*"], "priority": 1,
                                        "composed_of": ["base", "more"], "template": {
                                            "mappings": {"properties": {"b": {"type": "text"}}},
                                            "aliases": {"from_template": {}}}})
    return c


def test_components_apply_in_order_then_the_template_then_the_request():
    c = _cluster()
    c.coord.create_index("logs-1", {"settings": {"number_of_replicas": 0},
                                    "mappings": {"properties": {"r": {"type": "long"}}}})
    meta = c.coord.indices["logs-1"]
    assert meta.number_of_shards == 2          # "more" overrides "base"
    props = meta.mapping.to_body()["properties"]
    assert set(props) == {"a", "o", "b", "r"}
    assert set(props["o"]["properties"]) == {"x", "y"}   # merged field by field
    assert set(meta.aliases) == {"from_base", "from_template"}
    c.coord.create_index("logs-2", {"settings": {"number_of_shards": 5}})
    assert c.coord.indices["logs-2"].number_of_shards == 5   # the request wins


def test_an_index_template_may_name_only_existing_component_templates():
    c = LocalCluster()
    with pytest.raises(IllegalArgument) as e:
        c.coord.put_index_template("t", {"index_patterns": ["t*"], "composed_of": ["a", "b"]})
    assert e.value.es_type == "invalid_index_template_exception"
    assert e.value.reason == ("index_template [t] invalid, cause [index template [t] specifies "
                              "component templates [a, b] that do not exist]")


def test_a_component_template_in_use_cannot_be_deleted():
    c = _cluster()
    with pytest.raises(IllegalArgument) as e:
        c.coord.delete_component_template("base")
    assert e.value.reason == ("component templates [base] cannot be removed as they are still "
                              "in use by index templates [logs]")
    c.coord.delete_index_template("logs")
    c.coord.delete_component_template("ba*")
    assert [t["name"] for t in c.coord.get_component_template(None)["component_templates"]] \
        == ["more"]


def test_missing_component_templates_are_404s_and_create_refuses_an_existing_one():
    c = _cluster()
    with pytest.raises(SearchError) as e:
        c.coord.get_component_template("nope")
    assert (e.value.status, e.value.es_type) == (404, "resource_not_found_exception")
    assert e.value.reason == "component template matching [nope] not found"
    assert c.coord.get_component_template("nope*") == {"component_templates": []}
    with pytest.raises(SearchError) as e:
        c.coord.delete_component_template("nope")
    assert (e.value.status, e.value.es_type) == (404, "index_template_missing_exception")
    with pytest.raises(IllegalArgument, match=r"component template \[base\] already exists"):
        c.coord.put_component_template("base", {"template": {}}, create=True)
    with pytest.raises(SearchError, match="unknown field"):
        c.coord.put_component_template("x", {"template": {}, "index_patterns": ["x"]})
    got = c.coord.get_component_template("base,more")["component_templates"]
    assert [g["name"] for g in got] == ["base", "more"]


def test_a_component_template_that_would_fail_every_index_creation_is_refused():
    c = _cluster()
    with pytest.raises(SearchError) as e:
        c.coord.put_component_template("more", {"template": {"mappings": {"properties": {
            "a": {"type": "no-such-type"}}}}})
    assert e.value.es_type == "mapper_parsing_exception"
    c.coord.create_index("logs-1")
    assert c.coord.indices["logs-1"].mapping.to_body()["properties"]["a"]["type"] == "keyword"


def test_simulate_index_answers_the_resolved_template_and_the_overlapping_ones():
    c = _cluster()
    c.coord.put_index_template("all_logs", {"index_patterns": ["logs*"], "priority": 0})
    out = c.coord.simulate_index("logs-x")
    assert out["template"]["settings"] == {"index": {"number_of_shards": "2",
                                                     "refresh_interval": "5s"}}
    assert set(out["template"]["mappings"]["properties"]) == {"a", "o", "b"}
    assert set(out["template"]["aliases"]) == {"from_base", "from_template"}
    assert out["overlapping"] == [{"name": "all_logs", "index_patterns": ["logs*"]}]
    assert c.coord.simulate_index("other") == {}
    with_body = c.coord.simulate_index("other", {"index_patterns": ["oth*"],
                                                 "composed_of": ["more"]})
    assert with_body["template"]["settings"] == {"index": {"number_of_shards": "2"}}
    assert "other" not in c.coord.indices and "logs-x" not in c.coord.indices


def test_simulate_template_resolves_a_stored_one_or_a_body_and_stores_nothing():
    c = _cluster()
    assert c.coord.simulate_template("logs", None)["template"]["settings"]["index"][
        "number_of_shards"] == "2"
    out = c.coord.simulate_template(None, {"index_patterns": ["m*"], "composed_of": ["base"]})
    assert out["template"]["settings"]["index"]["number_of_shards"] == "3"
    assert out["overlapping"] == []
    assert [t["name"] for t in c.coord.get_index_template(None)["index_templates"]] == ["logs"]
    with pytest.raises(IllegalArgument, match="that do not exist"):
        c.coord.simulate_template(None, {"index_patterns": ["m*"], "composed_of": ["zz"]})
    with pytest.raises(IllegalArgument, match=r"unable to simulate template \[nope\]"):
        c.coord.simulate_template("nope", None)


def test_settings_render_nested_with_string_values():
    assert nested_settings({"number_of_shards": 2, "analysis.analyzer.a.type": "standard",
                            "hidden": False}) == {"index": {
        "number_of_shards": "2", "hidden": "false",
        "analysis": {"analyzer": {"a": {"type": "standard"}}}}}
