"""Component templates and template simulation against the real OpenSearch node: the stored
shapes, the composed index, the ``_simulate_index`` / ``_simulate`` answers and the errors."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

COMPONENT = {"template": {"settings": {"index": {"number_of_shards": "2"}},
                          "mappings": {"properties": {"host": {"type": "keyword"}}},
                          "aliases": {"tdiff-al": {}}}, "version": 3}
TEMPLATE = {"index_patterns": ["tdiff-*"], "composed_of": ["tdiff-ct"], "priority": 7,
            "template": {"settings": {"index": {"number_of_replicas": "0"}},
                         "mappings": {"properties": {"msg": {"type": "text"}}}}}


@pytest.fixture
def templates(pair) -> Iterator[None]:
    ours, theirs = pair.send("PUT", "/_component_template/tdiff-ct", COMPONENT)
    assert ours[0] == theirs[0] == 200, (ours, theirs)
    ours, theirs = pair.send("PUT", "/_index_template/tdiff-t", TEMPLATE)
    assert ours[0] == theirs[0] == 200, (ours, theirs)
    yield
    pair.send("DELETE", "/tdiff-1")
    pair.send("DELETE", "/_index_template/tdiff-*")
    pair.send("DELETE", "/_component_template/tdiff-*")


def test_a_stored_component_template_reads_back_alike(pair, templates):
    ours, theirs = pair.send("GET", "/_component_template/tdiff-ct")
    assert ours == theirs


def test_the_composed_index_has_the_same_mapping_and_aliases(pair, templates):
    ours, theirs = pair.send("PUT", "/tdiff-1", {"mappings": {"properties": {
        "n": {"type": "long"}}}})
    assert ours[0] == theirs[0] == 200
    for path in ("/tdiff-1/_mapping", "/tdiff-1/_alias"):
        ours, theirs = pair.send("GET", path)
        assert ours == theirs, path
    ours, theirs = pair.send("GET", "/tdiff-1/_settings")
    for o in (ours[1], theirs[1]):
        assert o["tdiff-1"]["settings"]["index"]["number_of_shards"] == "2"


def test_simulations_answer_alike(pair, templates):
    pair.send("PUT", "/_index_template/tdiff-other", {"index_patterns": ["tdiff*"]})
    for method, path, body in (("POST", "/_index_template/_simulate_index/tdiff-9", None),
                               ("POST", "/_index_template/_simulate_index/nomatch-9", None),
                               ("POST", "/_index_template/_simulate_index/tdiff-9",
                                {"index_patterns": ["tdiff-9*"], "priority": 50,
                                 "composed_of": ["tdiff-ct"], "template": {
                                     "settings": {"index": {"number_of_shards": "4"}}}}),
                               ("POST", "/_index_template/_simulate/tdiff-t", None),
                               ("POST", "/_index_template/_simulate",
                                {"index_patterns": ["tdiff-x*"], "composed_of": ["tdiff-ct"],
                                 "priority": 9})):
        ours, theirs = pair.send(method, path, body)
        assert ours == theirs or _sorted(ours) == _sorted(theirs), path


def _sorted(answer):
    """OpenSearch lists ``overlapping`` in its hash map's order; ours is by name."""
    status, body = answer
    return status, {**body, "overlapping": sorted(body.get("overlapping") or [],
                                                  key=lambda o: o["name"])}


def test_errors_agree(pair, templates):
    cases = [("PUT", "/_index_template/tdiff-bad", {"index_patterns": ["x-*"],
                                                    "composed_of": ["tdiff-none"]}),
             ("DELETE", "/_component_template/tdiff-ct", None),
             ("GET", "/_component_template/tdiff-none", None),
             ("DELETE", "/_component_template/tdiff-none", None)]
    for method, path, body in cases:
        ours, theirs = pair.send(method, path, body)
        assert ours[0] == theirs[0], (path, ours, theirs)
        assert ours[1]["error"]["type"] == theirs[1]["error"]["type"], (path, ours, theirs)
        assert ours[1]["error"]["reason"] == theirs[1]["error"]["reason"], (path, ours, theirs)
