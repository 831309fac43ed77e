"""Aggregations without Ray: the request parser's errors, a shard's partials, the exact reduce.

Partials are computed by a real ``ShardCore`` over real segments; the reduce is fed partials of
several shards built the same way.
"""
from __future__ import annotations

import pytest

from inprocess import LocalCluster
from shardsearch.cluster.engine.aggs import parse_aggs
from shardsearch.cluster.engine.aggs.partials import Keyed
from shardsearch.cluster.errors import IllegalArgument, ParsingError, XContentParseError
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.shard_messages import ShardQuery
from shardsearch.cluster.engine.query.nodes import MatchAll
from shardsearch.cluster.search.aggs import aggregations_response
from shardsearch.cluster.engine.shard import ShardCore
from shardsearch.cluster.engine.writes import WriteOp
from shardsearch.cluster.engine.sorting import SCORE_SORT

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPING = {"properties": {"tag": {"type": "keyword"}, "n": {"type": "long"},
                          "day": {"type": "date"}, "title": {"type": "text"}}}


def _shard(docs: list[dict], shard: int = 0) -> ShardCore:
    import orjson
    core = ShardCore("idx", shard, Mapping.from_body(MAPPING))
    core.apply([WriteOp("index", str(i), i, orjson.dumps(d)) for i, d in enumerate(docs)])
    core.refresh()
    return core


def _partials(core: ShardCore, aggs: dict) -> dict:
    q = ShardQuery(query=MatchAll(), sort=SCORE_SORT, k=0, index_rank=0, aggs=parse_aggs(aggs))
    return core.query(q).aggs


# --- parse ----------------------------------------------------------------------------------

def test_an_unknown_type_names_itself():
    with pytest.raises(ParsingError, match=r"Unknown aggregation type \[nope\]"):
        parse_aggs({"a": {"nope": {}}})


def test_two_types_in_one_aggregation_are_refused():
    with pytest.raises(ParsingError, match=r"Found two aggregation type definitions in \[a\]"):
        parse_aggs({"a": {"terms": {"field": "x"}, "avg": {"field": "y"}}})


def test_a_name_with_brackets_is_invalid():
    with pytest.raises(ParsingError, match="Invalid aggregation name"):
        parse_aggs({"a[0]": {"avg": {"field": "n"}}})


def test_metrics_take_no_sub_aggregations():
    with pytest.raises(IllegalArgument, match="cannot accept sub-aggregations"):
        parse_aggs({"a": {"avg": {"field": "n"}, "aggs": {"b": {"max": {"field": "n"}}}}})


def test_unknown_parameters_and_scripts_are_refused():
    with pytest.raises(XContentParseError, match=r"\[histogram\] unknown field \[colour\]"):
        parse_aggs({"h": {"histogram": {"field": "n", "interval": 1, "colour": "red"}}})
    with pytest.raises(IllegalArgument, match=r"\[script\]"):
        parse_aggs({"s": {"sum": {"script": "doc['n'].value"}}})


def test_a_field_or_script_is_required():
    with pytest.raises(IllegalArgument, match=r"Required one of fields \[field, script\]"):
        parse_aggs({"t": {"terms": {}}})


def test_global_is_top_level_only():
    with pytest.raises(IllegalArgument, match="top level"):
        parse_aggs({"t": {"terms": {"field": "tag"}, "aggs": {"g": {"global": {}}}}})


def test_date_histogram_needs_one_interval():
    with pytest.raises(IllegalArgument, match="calendar_interval"):
        parse_aggs({"d": {"date_histogram": {"field": "day", "calendar_interval": "1d",
                                             "fixed_interval": "1d"}}})


# --- collect and reduce -----------------------------------------------------------------------

def test_a_shard_ships_every_term_with_its_exact_count():
    core = _shard([{"tag": "a"}, {"tag": ["a", "b"]}, {"tag": "c"}, {"n": 1}])
    part = _partials(core, {"t": {"terms": {"field": "tag", "size": 1}}})["t"]
    assert isinstance(part, Keyed)
    assert dict(zip(part.keys.tolist(), part.counts.tolist())) == {"a": 2, "b": 1, "c": 1}


def test_a_document_counts_once_per_histogram_bucket_whatever_its_values():
    core = _shard([{"n": [1, 2, 3]}, {"n": 12}])
    part = _partials(core, {"h": {"histogram": {"field": "n", "interval": 10}}})["h"]
    assert part.keys.tolist() == [0.0, 10.0] and part.counts.tolist() == [1, 1]


def test_the_reduce_sums_counts_of_the_same_key_across_shards_and_cuts_once():
    shards = [_shard([{"tag": "x"}] * 3 + [{"tag": "y"}], 0),
              _shard([{"tag": "y"}] * 3 + [{"tag": "z"}] * 2, 1)]
    aggs = {"t": {"terms": {"field": "tag", "size": 1}}}
    partials = [_partials(s, aggs) for s in shards]
    out = aggregations_response(parse_aggs(aggs), partials, [Mapping.from_body(MAPPING)])
    assert out["t"]["buckets"] == [{"key": "y", "doc_count": 4}]
    assert out["t"]["sum_other_doc_count"] == 5


def test_sub_aggregations_reduce_under_their_global_bucket():
    shards = [_shard([{"tag": "x", "n": 1}, {"tag": "y", "n": 10}], 0),
              _shard([{"tag": "y", "n": 20}, {"tag": "x", "n": 3}], 1)]
    aggs = {"t": {"terms": {"field": "tag"}, "aggs": {"s": {"sum": {"field": "n"}}}}}
    out = aggregations_response(parse_aggs(aggs), [_partials(s, aggs) for s in shards],
                                [Mapping.from_body(MAPPING)])
    assert {b["key"]: b["s"]["value"] for b in out["t"]["buckets"]} == {"x": 4.0, "y": 30.0}


def test_terms_on_a_text_field_is_refused_like_fielddata():
    core = _shard([{"title": "hello"}])
    with pytest.raises(IllegalArgument, match="Fielddata is disabled on \\[title\\]"):
        _partials(core, {"t": {"terms": {"field": "title"}}})


def test_min_doc_count_zero_returns_terms_without_matches():
    c = LocalCluster().create("idx", shards=2, mappings=MAPPING)
    c.index("idx", [{"tag": "a", "n": 1}, {"tag": "b", "n": 2}])
    resp = c.search("idx", {"size": 0, "query": {"term": {"n": 1}},
                            "aggs": {"t": {"terms": {"field": "tag", "min_doc_count": 0}}}})
    assert resp["aggregations"]["t"]["buckets"] == [{"key": "a", "doc_count": 1},
                                                   {"key": "b", "doc_count": 0}]


def test_date_histogram_rounds_in_the_time_zone():
    c = LocalCluster().create("idx", shards=1, mappings=MAPPING)
    c.index("idx", [{"day": "2024-01-01T03:00:00Z"}, {"day": "2024-01-01T07:00:00Z"}])
    resp = c.search("idx", {"size": 0, "aggs": {"d": {"date_histogram": {
        "field": "day", "calendar_interval": "day", "time_zone": "-05:00"}}}})
    assert [(b["key_as_string"], b["doc_count"]) for b in resp["aggregations"]["d"]["buckets"]
            ] == [("2023-12-31T00:00:00.000-05:00", 1), ("2024-01-01T00:00:00.000-05:00", 1)]


def test_terms_ordered_by_a_sub_metric():
    c = LocalCluster().create("idx", shards=3, mappings=MAPPING)
    c.index("idx", [{"tag": "a", "n": 5}, {"tag": "a", "n": 5}, {"tag": "b", "n": 50}])
    resp = c.search("idx", {"size": 0, "aggs": {"t": {
        "terms": {"field": "tag", "order": {"m": "desc"}}, "aggs": {"m": {"max": {"field": "n"}}}}}})
    assert [b["key"] for b in resp["aggregations"]["t"]["buckets"]] == ["b", "a"]


def test_include_partitions_split_the_terms_without_overlap():
    c = LocalCluster().create("idx", shards=2, mappings=MAPPING)
    c.index("idx", [{"tag": f"t{i}"} for i in range(20)])
    seen: list[str] = []
    for p in range(3):
        resp = c.search("idx", {"size": 0, "aggs": {"t": {"terms": {
            "field": "tag", "size": 100, "include": {"partition": p, "num_partitions": 3}}}}})
        seen += [b["key"] for b in resp["aggregations"]["t"]["buckets"]]
    assert sorted(seen) == sorted(f"t{i}" for i in range(20))


def test_empty_partials_render_zeros():
    out = aggregations_response(parse_aggs({"a": {"avg": {"field": "n"}},
                                            "c": {"value_count": {"field": "n"}}}), [],
                                [Mapping.from_body(MAPPING)])
    assert out == {"a": {"value": None}, "c": {"value": 0}}


def test_long_partitions_use_hppcs_mix64() -> None:
    """``include: {partition, num_partitions}`` on longs: ``floorMod(BitMixer.mix64(v), n)``
    with HPPC's constants (OpenSearch's 20_terms "Partitioned integer test": 5678 in
    partition 0, 1234 in partition 1)."""
    from shardsearch.cluster.engine.aggs.bucket import _long_partition
    spec = {"num_partitions": 2}
    assert [_long_partition(v, dict(spec, partition=0)) for v in (1234, 5678)] == [False, True]
    assert [_long_partition(v, dict(spec, partition=1)) for v in (1234, 5678)] == [True, False]


def test_median_absolute_deviation_is_exact_across_shards() -> None:
    """``median_absolute_deviation``: the median of |x - median(x)|, both medians the exact
    percentiles' (rank floor(n/2)); the same on 1 and 3 shards; empty is null; errors named."""
    xs = [1, 1, 2, 2, 4, 6, 9, 13, 21, 40, 3]
    aggs = {"mad": {"median_absolute_deviation": {"field": "n"}},
            "none": {"filter": {"term": {"tag": "zz"}},
                     "aggs": {"m": {"median_absolute_deviation": {"field": "n"}}}}}
    outs = []
    for shards in (1, 3):
        c = LocalCluster().create("m", shards, {"properties": {"n": {"type": "long"},
                                                               "tag": {"type": "keyword"}}})
        c.index("m", [{"n": x, "tag": "t"} for x in xs])
        outs.append(c.search("m", {"size": 0, "aggs": aggs})["aggregations"])
    assert outs[0] == outs[1]
    assert outs[0]["mad"] == {"value": 3.0}          # median 4; deviations' median 3
    assert outs[0]["none"]["m"] == {"value": None}
    with pytest.raises(IllegalArgument, match=r"\[compression\] must be greater than 0"):
        c.search("m", {"size": 0, "aggs": {"x": {"median_absolute_deviation": {
            "field": "n", "compression": 0}}}})


@pytest.mark.parametrize("keys", ["ranks", "month_starts", "wide", "unsigned"])
def test_group_answers_the_distinct_pairs_in_owner_key_order_on_every_key_grid(keys: str) -> None:
    """``group`` counts integer keys on a small grid densely and sorts the others: both must
    answer the sorted distinct ``(owner, key)`` pairs and each input's pair, as plain Python
    computes them."""
    import numpy as np
    from shardsearch.cluster.engine.aggs.collect import group
    rng = np.random.default_rng(7)
    n = 5000
    owner = rng.integers(0, 12, n).astype(np.int64)
    key = {"ranks": lambda: rng.integers(-3, 4000, n),
           "month_starts": lambda: rng.integers(0, 300, n) * 86_400_000 + 1_300_000_000_000,
           "wide": lambda: rng.integers(-2**62, 2**62, n),
           "unsigned": lambda: rng.integers(0, 90, n).astype(np.uint64)}[keys]()
    u_owner, u_key, inverse = group(owner, key)
    pairs = sorted(set(zip(owner.tolist(), key.tolist())))
    assert list(zip(u_owner.tolist(), u_key.tolist())) == pairs
    assert u_key.dtype == key.dtype and u_owner.dtype == owner.dtype
    at = {p: i for i, p in enumerate(pairs)}
    assert inverse.tolist() == [at[p] for p in zip(owner.tolist(), key.tolist())]


@pytest.mark.parametrize("unit", ["month", "quarter", "year"])
@pytest.mark.parametrize("spread_days", [40, 200_000])   # a day table; a span too wide for it
def test_calendar_keys_are_the_first_midnight_of_the_month_quarter_or_year(
        unit: str, spread_days: int) -> None:
    """``date_histogram``'s calendar keys, rounded in UTC: each value's bucket starts at
    midnight on the first day of its month, quarter or year, as ``datetime`` computes it —
    before the epoch too."""
    import datetime as dt
    import numpy as np
    from shardsearch.cluster.engine.aggs.dates import round_down, zone
    rng = np.random.default_rng(5)
    centre = 1_100_000_000_000 if spread_days < 1000 else 0
    values = centre + rng.integers(-spread_days, spread_days, 3000) * 86_400_000 \
        + rng.integers(0, 86_400_000, 3000)
    got = round_down(values, unit, None, zone(None))
    epoch = dt.datetime(1970, 1, 1)
    for v, k in zip(values.tolist(), got.tolist()):
        d = epoch + dt.timedelta(milliseconds=v)
        month = {"month": d.month, "quarter": (d.month - 1) // 3 * 3 + 1, "year": 1}[unit]
        first = dt.datetime(d.year, month, 1)
        assert k == (first - epoch) // dt.timedelta(milliseconds=1)
