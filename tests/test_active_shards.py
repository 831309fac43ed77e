"""``wait_for_active_shards`` as Elasticsearch's ``ActiveShardCount``: its parsing, what each
value needs of a shard, and which shards of a health body are short (pure, without Ray)."""
from __future__ import annotations

import pytest

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.indices.active_shards import (ALL, check_creatable, copies_needed,
                                                       parse_active_shard_count, short_shards,
                                                       unavailable)


def test_all_or_a_non_negative_int_parse_and_nothing_else() -> None:
    assert parse_active_shard_count(None) is None
    assert parse_active_shard_count("all") == ALL
    assert parse_active_shard_count("0") == 0 and parse_active_shard_count("3") == 3
    with pytest.raises(IllegalArgument, match=r"^cannot parse ActiveShardCount\[ALL\]$"):
        parse_active_shard_count("ALL")
    with pytest.raises(IllegalArgument, match="^shard count cannot be a negative value$"):
        parse_active_shard_count("-2")


def test_all_needs_the_primary_and_every_replica() -> None:
    assert copies_needed(ALL, 2) == 3
    assert copies_needed(2, 0) == 2
    assert copies_needed(None, 4) == 1


def test_index_creation_refuses_a_count_above_its_copies_but_not_all() -> None:
    check_creatable(ALL, 0)
    check_creatable(2, 1)
    with pytest.raises(IllegalArgument, match=r"invalid wait_for_active_shards\[3\]: cannot be "
                                              r"greater than number of shard copies \[2\]"):
        check_creatable(3, 1)


def _shard(active: int) -> dict:
    return {"active_shards": active, "initializing_shards": 0, "unassigned_shards": 0}


HEALTH = {"indices": {
    "a": {"number_of_replicas": 1, "shards": {"0": _shard(2), "1": _shard(1)}},
    "b": {"number_of_replicas": 0, "shards": {"0": _shard(1)}}}}


def test_short_shards_are_those_with_fewer_active_copies_than_needed() -> None:
    assert short_shards(HEALTH, ["b", "a"], ALL) == [("a", 1, 1, 2)]
    assert short_shards(HEALTH, ["a", "b"], 2) == [("a", 1, 1, 2), ("b", 0, 1, 2)]
    assert short_shards(HEALTH, ["a"], 1) == []


def test_the_503_names_the_shard_the_count_and_the_timeout_as_elasticsearch() -> None:
    e = unavailable(("a", 1, 1, 2), ALL, "1m")
    assert (e.status, e.es_type) == (503, "unavailable_shards_exception")
    assert e.reason == ("[a][1] Not enough active copies to meet shard count of [ALL] "
                        "(have 1, needed 2). Timeout: [1m]")


def test_auto_expand_replicas_follows_the_data_nodes_within_its_bounds() -> None:
    from shardsearch.cluster.indices.auto_expand import expanded_replicas, parse_auto_expand
    assert expanded_replicas("0-1", 1, 1) == 0
    assert expanded_replicas("0-1", 3, 0) == 1
    assert expanded_replicas("0-all", 4, 0) == 3 and expanded_replicas("0-all", 1, 2) == 0
    assert expanded_replicas("2-5", 1, 0) == 2
    assert expanded_replicas("false", 3, 1) == 1 and expanded_replicas(None, 3, 2) == 2
    assert parse_auto_expand("1-all") == (1, None)
    for bad in ("x", "3", "-1", "a-b", "3-1"):
        with pytest.raises(IllegalArgument, match="auto_expand_replicas"):
            parse_auto_expand(bad)
