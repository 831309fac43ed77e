"""Component templates and template simulation through the real server and the real clients
(``elasticsearch`` and ``opensearch-py``): the routes, their parameters and error envelopes."""
from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from elasticsearch import ApiError, BadRequestError, Elasticsearch, NotFoundError
from opensearchpy import OpenSearch


@pytest.fixture
def esc(es: httpx.Client, base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    yield client
    for name in ("ct-logs", "ct-*"):
        es.delete(f"/_index_template/{name}")
    es.delete("/_component_template/ct-*")


def test_component_templates_compose_an_index_created_through_the_clients(
        esc: Elasticsearch, base_url: str) -> None:
    esc.cluster.put_component_template(name="ct-a", template={
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"host": {"type": "keyword"}}}})
    osc = OpenSearch(hosts=[base_url], timeout=60)
    osc.cluster.put_component_template(name="ct-b", body={"template": {
        "mappings": {"properties": {"msg": {"type": "text"}}}}})
    esc.indices.put_index_template(name="ct-logs", index_patterns=["ctl-*"],
                                   composed_of=["ct-a", "ct-b"],
                                   template={"settings": {"number_of_replicas": 0}})
    esc.indices.create(index="ctl-1")
    assert esc.indices.get_mapping(index="ctl-1")["ctl-1"]["mappings"]["properties"] == {
        "host": {"type": "keyword"}, "msg": {"type": "text"}}
    assert esc.indices.get_settings(index="ctl-1")["ctl-1"]["settings"]["index"][
        "number_of_shards"] == "2"
    got = esc.cluster.get_component_template(name="ct-*")["component_templates"]
    assert [g["name"] for g in got] == ["ct-a", "ct-b"]
    assert esc.cluster.exists_component_template(name="ct-a")
    assert not esc.cluster.exists_component_template(name="ct-zz")
    meta = esc.cluster.state(metric="metadata")["metadata"]
    assert set(meta["component_template"]["component_template"]) >= {"ct-a", "ct-b"}
    esc.indices.delete(index="ctl-1")


def test_errors_are_elasticsearchs(esc: Elasticsearch) -> None:
    with pytest.raises(BadRequestError) as e:
        esc.indices.put_index_template(name="ct-logs", index_patterns=["ctl-*"],
                                       composed_of=["ct-none"])
    assert e.value.body["error"]["type"] == "invalid_index_template_exception"
    esc.cluster.put_component_template(name="ct-a", template={})
    esc.indices.put_index_template(name="ct-logs", index_patterns=["ctl-*"],
                                   composed_of=["ct-a"])
    with pytest.raises(BadRequestError) as e:
        esc.cluster.delete_component_template(name="ct-a")
    assert e.value.body["error"]["reason"] == ("component templates [ct-a] cannot be removed "
                                               "as they are still in use by index templates "
                                               "[ct-logs]")
    with pytest.raises(NotFoundError) as e:
        esc.cluster.get_component_template(name="ct-none")
    assert e.value.body["error"]["type"] == "resource_not_found_exception"
    with pytest.raises(BadRequestError):
        esc.cluster.put_component_template(name="ct-a", template={}, create=True)
    with pytest.raises(ApiError) as e:
        esc.perform_request("PUT", "/_component_template/ct-c", params={"flat_settings": "x"},
                            body={"template": {}}, headers={"content-type": "application/json"})
    assert e.value.status_code == 400 and "flat_settings" in str(e.value.body)


def test_simulation_answers_without_creating_anything(esc: Elasticsearch, es: httpx.Client
                                                      ) -> None:
    esc.cluster.put_component_template(name="ct-a", template={"settings": {
        "number_of_shards": 3}, "aliases": {"ct-al": {}}})
    esc.indices.put_index_template(name="ct-logs", index_patterns=["ctl-*"],
                                   composed_of=["ct-a"], priority=2)
    out = esc.indices.simulate_index_template(name="ctl-9")
    assert out["template"] == {"settings": {"index": {"number_of_shards": "3"}},
                               "aliases": {"ct-al": {}}}
    assert out["overlapping"] == []
    assert es.head("/ctl-9").status_code == 404
    r = es.post("/_index_template/_simulate", json={"index_patterns": ["ctl-x*"],
                                                    "composed_of": ["ct-a"], "priority": 5})
    assert r.status_code == 200, r.text
    assert r.json()["overlapping"] == [{"name": "ct-logs", "index_patterns": ["ctl-*"]}]
    assert es.post("/_index_template/_simulate/ct-logs").json()["template"]["settings"] == {
        "index": {"number_of_shards": "3"}}
    assert es.post("/_index_template/_simulate_index/nomatch-1").json() == {}
