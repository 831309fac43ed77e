"""The ``ip`` and ``unsigned_long`` field types: parsing, queries, sorting, rendering and
aggregations, through the real coordinator and shards in this process (``inprocess.py``),
with 1 and 3 shards (the answer never depends on the shard count)."""
from __future__ import annotations

import orjson
import pytest

from inprocess import LocalCluster
from shardsearch.api.errors import envelope
from shardsearch.cluster.engine.ip import decode, parse_cidr, parse_ip, render, stored_ip

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

IPS = {"1": "::1", "2": "192.168.0.1", "3": "192.168.0.7", "4": "10.0.0.5",
       "5": "2001:db8::ff00:42:8329", "6": "::ffff:10.0.0.6"}
BIG = 2**64 - 1


@pytest.fixture(scope="module", params=[1, 3])
def c(request) -> LocalCluster:
    cl = LocalCluster()
    cl.create("net", shards=request.param, mappings={"properties": {
        "ip": {"type": "ip"}, "v": {"type": "long"}, "u": {"type": "unsigned_long"}}})
    docs = {i: {"ip": ip, "v": int(i)} for i, ip in IPS.items()}
    docs.update({"10": {"u": BIG}, "11": {"u": 10223372036854775807}, "12": {"u": BIG},
                 "13": {"u": 5}, "14": {"u": [7, 2**63]}})
    assert cl.index("net", docs)["errors"] is False
    return cl


def refused(search, *args) -> tuple[int, str]:
    """``(status, body)`` of the ES error envelope the HTTP layer would send for a search."""
    with pytest.raises(Exception) as err:
        search(*args)
    body = envelope(err.value)
    return body["status"], orjson.dumps(body).decode()


def ids(c: LocalCluster, query: dict) -> list[str]:
    return sorted(c.ids("net", {"query": query, "size": 50}), key=int)


# ---------------------------------------------------------------- ip: keys and spelling


def test_an_ipv4_address_is_its_ipv4_mapped_ipv6_key():
    assert parse_ip("10.0.0.5") == parse_ip("::ffff:10.0.0.5") == (0xFFFF << 32) | 0x0A000005


def test_stored_keys_sort_as_the_addresses_do():
    addrs = ["::", "::1", "10.0.0.5", "192.168.0.1", "2001:db8::1", "ffff::"]
    assert sorted(addrs, key=stored_ip) == addrs
    assert sorted(map(stored_ip, addrs)) == [stored_ip(a) for a in addrs]


def test_addresses_render_as_elasticsearch_spells_them():
    assert decode(stored_ip("::ffff:10.0.0.6")) == "10.0.0.6"
    assert decode(stored_ip("2001:0db8:0000:0000:0000:ff00:0042:8329")) == "2001:db8::ff00:42:8329"
    assert render(1 << 104) == "0:100::"


def test_a_cidr_block_is_its_first_and_last_address():
    assert parse_cidr("192.168.0.0/16") == (parse_ip("192.168.0.0"), parse_ip("192.168.255.255"))
    assert parse_cidr("::/0") == (0, 2**128 - 1)


# ---------------------------------------------------------------- ip: documents


def test_a_value_that_is_no_address_fails_its_document_with_es_error():
    cl = LocalCluster().create("bad", mappings={"properties": {"ip": {"type": "ip"}}})
    item = cl.index("bad", {"1": {"ip": "999.1.1.1"}})["items"][0]["index"]
    assert item["status"] == 400
    assert item["error"]["type"] == "mapper_parsing_exception"
    assert item["error"]["reason"].startswith("failed to parse field [ip] of type [ip]")
    assert item["error"]["caused_by"]["reason"] == "'999.1.1.1' is not an IP string literal."


def test_ip_is_never_mapped_dynamically():
    cl = LocalCluster().create("dyn")
    cl.index("dyn", {"1": {"addr": "10.0.0.1"}})
    props = cl.coord.get_mapping("dyn")["dyn"]["mappings"]["properties"]
    assert props["addr"]["type"] == "text"


# ---------------------------------------------------------------- ip: queries


def test_term_on_ip_matches_the_address_in_any_spelling(c):
    assert ids(c, {"term": {"ip": "10.0.0.6"}}) == ["6"]
    assert ids(c, {"term": {"ip": "::ffff:192.168.0.1"}}) == ["2"]


def test_term_and_terms_on_ip_accept_cidr_blocks(c):
    assert ids(c, {"term": {"ip": "192.168.0.0/16"}}) == ["2", "3"]
    assert ids(c, {"terms": {"ip": ["10.0.0.0/8", "::1"]}}) == ["1", "4", "6"]


def test_range_on_ip_compares_addresses_not_text(c):
    assert ids(c, {"range": {"ip": {"gte": "10.0.0.0", "lt": "192.168.0.7"}}}) == ["2", "4", "6"]
    assert ids(c, {"range": {"ip": {"gt": "192.168.0.7"}}}) == ["5"]


def test_match_on_ip_is_a_term_and_exists_sees_every_address(c):
    assert ids(c, {"match": {"ip": "::1"}}) == ["1"]
    assert ids(c, {"exists": {"field": "ip"}}) == ["1", "2", "3", "4", "5", "6"]


def test_a_bad_address_in_a_query_is_a_400():
    cl = LocalCluster().create("q", mappings={"properties": {"ip": {"type": "ip"}}})
    cl.index("q", {"1": {"ip": "10.0.0.1"}})
    status, body = refused(cl.search, "q", {"query": {"term": {"ip": "nope"}}})
    assert status == 400 and "'nope' is not an IP string literal." in body


# ---------------------------------------------------------------- ip: sort and rendering


def test_sort_on_ip_follows_address_order_and_prints_addresses(c):
    hits = c.search("net", {"sort": [{"ip": "asc"}], "size": 6,
                            "query": {"exists": {"field": "ip"}}})["hits"]["hits"]
    assert [h["sort"][0] for h in hits] == ["::1", "10.0.0.5", "10.0.0.6", "192.168.0.1",
                                            "192.168.0.7", "2001:db8::ff00:42:8329"]
    after = c.search("net", {"sort": [{"ip": "asc"}], "size": 2, "search_after": ["10.0.0.6"],
                             "query": {"exists": {"field": "ip"}}})["hits"]["hits"]
    assert [h["_id"] for h in after] == ["2", "3"]


def test_fields_and_docvalue_fields_render_canonical_addresses(c):
    hit = c.search("net", {"query": {"term": {"ip": "10.0.0.6"}}, "fields": ["ip"],
                           "docvalue_fields": ["ip"]})["hits"]["hits"][0]
    assert hit["fields"] == {"ip": ["10.0.0.6"]}
    assert hit["_source"]["ip"] == "::ffff:10.0.0.6"     # _source is what was sent


# ---------------------------------------------------------------- ip: aggregations


def test_terms_on_ip_has_address_keys_in_address_order_on_ties(c):
    buckets = c.search("net", {"size": 0, "aggs": {"a": {"terms": {"field": "ip"}}}}
                       )["aggregations"]["a"]["buckets"]
    assert [b["key"] for b in buckets] == ["::1", "10.0.0.5", "10.0.0.6", "192.168.0.1",
                                           "192.168.0.7", "2001:db8::ff00:42:8329"]
    assert all("key_as_string" not in b for b in buckets)


def test_terms_on_ip_includes_by_address_and_refuses_regular_expressions(c):
    got = c.search("net", {"size": 0, "aggs": {"a": {"terms": {
        "field": "ip", "include": ["::ffff:10.0.0.5", "::1"]}}}})["aggregations"]["a"]
    assert [b["key"] for b in got["buckets"]] == ["::1", "10.0.0.5"]
    status, body = refused(c.search, "net", {"size": 0, "aggs": {"a": {"terms": {
        "field": "ip", "exclude": "1.*"}}}})
    assert status == 400 and "cannot support regular expression style include/exclude" in body


def test_ip_range_buckets_keys_and_bounds_are_as_elasticsearch_generates_them(c):
    aggs = {"r": {"ip_range": {"field": "ip", "ranges": [
        {"to": "192.168.0.0"}, {"from": "192.168.0.0", "to": "192.169.0.0"},
        {"from": "192.169.0.0"}, {"mask": "10.0.0.0/25"}]},
        "aggs": {"s": {"sum": {"field": "v"}}}}}
    buckets = c.search("net", {"size": 0, "aggs": aggs})["aggregations"]["r"]["buckets"]
    assert [(b["key"], b.get("from"), b.get("to"), b["doc_count"], b["s"]["value"])
            for b in buckets] == [
        ("*-192.168.0.0", None, "192.168.0.0", 3, 11.0),
        ("10.0.0.0/25", "10.0.0.0", "10.0.0.128", 2, 10.0),
        ("192.168.0.0-192.169.0.0", "192.168.0.0", "192.169.0.0", 2, 5.0),
        ("192.169.0.0-*", "192.169.0.0", None, 1, 5.0)]


def test_ip_range_keyed_and_its_refusals(c):
    keyed = c.search("net", {"size": 0, "aggs": {"r": {"ip_range": {
        "field": "ip", "keyed": True, "ranges": [{"mask": "::/24", "key": "low"}]}}}})
    assert keyed["aggregations"]["r"]["buckets"] == {
        "low": {"to": "0:100::", "doc_count": 5}}
    for bad in ({"field": "v", "ranges": [{"to": "1.2.3.4"}]},
                {"field": "ip", "ranges": [{"to": "x"}]},
                {"field": "ip", "ranges": [{"mask": "10.0.0.0/8", "from": "1.1.1.1"}]},
                {"field": "ip", "ranges": []}):
        status, _ = refused(c.search, "net", {"size": 0, "aggs": {"r": {"ip_range": bad}}})
        assert status == 400, bad


# ---------------------------------------------------------------- unsigned_long


def test_unsigned_long_keeps_every_value_up_to_2_64_minus_1_exactly(c):
    buckets = c.search("net", {"size": 0, "aggs": {"t": {"terms": {"field": "u"}}}}
                       )["aggregations"]["t"]["buckets"]
    assert [(b["key"], b["doc_count"]) for b in buckets] == [
        (BIG, 2), (5, 1), (7, 1), (2**63, 1), (10223372036854775807, 1)]


def test_unsigned_long_out_of_range_fails_the_document():
    cl = LocalCluster().create("u", mappings={"properties": {"u": {"type": "unsigned_long"}}})
    for value in (-1, 2**64):
        err = cl.index("u", {"1": {"u": value}})["items"][0]["index"]["error"]
        assert err["type"] == "mapper_parsing_exception"
        assert err["caused_by"]["reason"] == f"Value [{value}] is out of range for a unsigned_long"


def test_term_and_range_on_unsigned_long_compare_exactly(c):
    assert ids(c, {"term": {"u": BIG}}) == ["10", "12"]
    assert ids(c, {"range": {"u": {"gt": 2**63 - 1}}}) == ["10", "11", "12", "14"]
    assert ids(c, {"range": {"u": {"lte": 10223372036854775807}}}) == ["11", "13", "14"]


def test_sort_on_unsigned_long_orders_above_2_63_and_prints_the_values(c):
    q = {"exists": {"field": "u"}}
    asc = c.search("net", {"query": q, "sort": [{"u": "asc"}]})["hits"]["hits"]
    assert [(h["_id"], h["sort"][0]) for h in asc] == [
        ("13", 5), ("14", 7), ("11", 10223372036854775807), ("10", BIG), ("12", BIG)]
    desc = c.search("net", {"query": q, "sort": [{"u": "desc"}]})["hits"]["hits"]
    assert [h["sort"][0] for h in desc] == [BIG, BIG, 10223372036854775807, 2**63, 5]
    after = c.ids("net", {"query": q, "sort": [{"u": "asc"}],
                          "search_after": [10223372036854775807]})
    assert after == ["10", "12"]


def test_unsigned_long_sums_as_doubles_like_elasticsearch(c):
    stats = c.search("net", {"size": 0, "aggs": {"s": {"stats": {"field": "u"}}}}
                     )["aggregations"]["s"]
    assert stats["count"] == 6 and stats["min"] == 5.0
    assert stats["sum"] == pytest.approx(float(BIG) * 2 + 10223372036854775807 + 12 + 2**63)


# ---------------------------------------------------------------- scaled_float


def test_scaled_float_values_and_terms_are_rounded_to_the_scaling_factor():
    cl = LocalCluster().create("sf", mappings={"properties": {
        "s": {"type": "scaled_float", "scaling_factor": 10}}})
    cl.index("sf", {"1": {"s": 1.53}, "2": {"s": 1.56}, "3": {"s": -2.15}})
    got = cl.search("sf", {"size": 0, "aggs": {"t": {"terms": {"field": "s"}}}})
    assert [b["key"] for b in got["aggregations"]["t"]["buckets"]] == [-2.1, 1.5, 1.6]
    assert cl.ids("sf", {"query": {"term": {"s": 1.52}}}) == ["1"]
    assert [h["sort"] for h in cl.search("sf", {"sort": [{"s": "desc"}]})["hits"]["hits"]] == [
        [1.6], [1.5], [-2.1]]


def test_scaled_float_needs_a_scaling_factor():
    with pytest.raises(Exception) as err:
        LocalCluster().create("sf", mappings={"properties": {"s": {"type": "scaled_float"}}})
    assert envelope(err.value)["error"]["reason"] == (
        "Failed to parse mapping: Field [scaling_factor] is required")


def test_composite_on_ip_pages_in_address_order_with_address_keys(c):
    def page(after=None):
        spec = {"size": 3, "sources": [{"f": {"terms": {"field": "ip"}}}]}
        if after is not None:
            spec["after"] = after
        return c.search("net", {"size": 0, "aggs": {"c": {"composite": spec}}}
                        )["aggregations"]["c"]
    first = page()
    assert [b["key"]["f"] for b in first["buckets"]] == ["::1", "10.0.0.5", "10.0.0.6"]
    second = page(first["after_key"])
    assert [b["key"]["f"] for b in second["buckets"]] == [
        "192.168.0.1", "192.168.0.7", "2001:db8::ff00:42:8329"]


def test_a_term_out_of_an_integer_types_range_is_a_400_not_a_shard_failure(c):
    for field, value, name in (("u", -1, "unsigned_long"), ("u", 2**64, "unsigned_long"),
                               ("v", 2**63, "long")):
        status, body = refused(c.search, "net", {"query": {"term": {field: value}}})
        assert status == 400
        assert f"Value [{value}] is out of range for a {name}" in body
