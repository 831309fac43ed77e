"""Sort values of missing fields, and ``date_nanos`` end to end, against the OpenSearch node.

Two indices on both systems: ``dn_nanos`` (a ``date_nanos`` field and one of every other
sortable type, one document missing them all) and ``dn_millis`` (the same field name mapped as
``date``), so that mixed date/date_nanos sorting across indices is compared too. Every request
of the table goes to both; the hits' ids, ``sort`` values and ``fields``, and the aggregations
must be equal.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

TYPES = {"l": "long", "i": "integer", "f": "double", "fl": "float", "k": "keyword",
         "b": "boolean", "d": "date", "n": "date_nanos"}
DOCS = {
    "1": {"l": 5, "i": 5, "f": 1.5, "fl": 0.25, "k": "b", "b": True,
          "d": "2020-01-02T00:00:00.123Z", "n": "2020-01-02T00:00:00.123456789Z"},
    "2": {"l": -3, "i": -3, "f": -2.5, "fl": 2.5, "k": "a", "b": False,
          "d": "2020-01-01T00:00:00Z", "n": "2020-01-02T00:00:00.123456788Z"},
    "3": {},
}
MILLIS_DOCS = {"m1": {"n": "2020-01-02T00:00:00.123Z"}}   # (ties of missing values across
# indices follow our total order, index name then sequence, not OpenSearch's shard order)


def _load(client: httpx.Client) -> None:
    for name, props, docs in (("dn_nanos", TYPES, DOCS),
                              ("dn_millis", {"n": "date"}, MILLIS_DOCS)):
        client.delete(f"/{name}")
        r = client.put(f"/{name}", json={
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": {k: {"type": t} for k, t in props.items()}}})
        assert r.status_code == 200, r.text
        for doc_id, src in docs.items():
            client.put(f"/{name}/_doc/{doc_id}", json=src)
        client.post(f"/{name}/_refresh")


@pytest.fixture(scope="module")
def both(opensearch_url: str, base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with httpx.Client(base_url=base_url, timeout=60) as ours, \
            httpx.Client(base_url=opensearch_url, timeout=60) as theirs:
        _load(ours)
        _load(theirs)
        yield ours, theirs
        for c in (ours, theirs):
            c.delete("/dn_nanos,dn_millis")


def _sorts() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for field in TYPES:
        for order in ("asc", "desc"):
            for missing in (None, "_first", "_last"):
                spec: dict[str, Any] = {"order": order}
                if missing:
                    spec["missing"] = missing
                out.append((f"{field}-{order}-{missing}", {"sort": [{field: spec}]}))
    for field, value in (("l", 0), ("f", 0.5), ("k", "zz"), ("d", "2020-01-01T12:00:00Z"),
                         ("n", "2020-01-01T12:00:00Z"), ("b", True)):
        out.append((f"{field}-custom", {"sort": [{field: {"missing": value}}]}))
    for field in ("d", "n"):
        for fmt in ("strict_date_optional_time_nanos", "epoch_millis", "yyyy-MM-dd HH:mm:ss.SSS"):
            out.append((f"{field}-format-{fmt}", {"sort": [{field: {"format": fmt}}]}))
    return out


REQUESTS = _sorts() + [
    ("nanos-search-after", {"sort": [{"n": "asc"}], "search_after": [1577923200123456788]}),
    ("nanos-search-after-out-of-range", {"sort": [{"n": "asc"}],
                                         "search_after": ["1577923200123456788"]}),
    ("date-range-fmt", {"size": 0, "aggs": {"r": {"date_range": {
        "field": "d", "format": "dd/MM/yyyy",
        "ranges": [{"from": "01/01/2020", "to": "02/01/2020"}, {"from": "02/01/2020"}]}}}}),
    ("date-range-bad-bound", {"size": 0, "aggs": {"r": {"date_range": {
        "field": "d", "ranges": [{"from": "nope"}]}}}}),
    ("i-search-after-missing", {"sort": [{"i": "asc"}], "search_after": [5]}),
    ("nanos-range", {"query": {"range": {"n": {"gt": "2020-01-02T00:00:00.123456788Z"}}}}),
    ("nanos-range-lte", {"query": {"range": {"n": {"lte": "2020-01-02T00:00:00.123456788Z"}}}}),
    ("nanos-docvalues", {"docvalue_fields": [
        {"field": "n", "format": "strict_date_optional_time_nanos"}, {"field": "n"},
        {"field": "d", "format": "strict_date_optional_time_nanos"}], "sort": ["l"]}),
    ("nanos-fields", {"fields": ["n", "d"], "sort": ["l"]}),
    ("nanos-histogram", {"size": 0, "aggs": {"h": {"date_histogram": {
        "field": "n", "calendar_interval": "day"}}, "mn": {"min": {"field": "n"}},
        "mx": {"max": {"field": "n"}}}}),
]
MIXED = [
    ("mixed-asc", {"sort": [{"n": "asc"}]}),
    ("mixed-desc-missing-first", {"sort": [{"n": {"order": "desc", "missing": "_first"}}]}),
    ("mixed-nanos-numeric-type", {"sort": [{"n": {"numeric_type": "date_nanos"}}]}),
    ("mixed-millis-numeric-type", {"sort": [{"n": {"numeric_type": "date"}}]}),
]


# requests where OpenSearch 2.19 is not Elasticsearch 8, with the reason: each must still differ
# (like a strict xfail), and we must answer them (200)
OPENSEARCH_DIFFERS = {
    "format": "a sort's `format` is Elasticsearch 7.13+ (OpenSearch 2.19: `[field_sort] unknown "
              "field [format]`)",
    "nanos-docvalues": "Elasticsearch 8 prints date_nanos by default with "
                       "strict_date_optional_time_nanos (DEFAULT_DATE_TIME_NANOS_FORMATTER); "
                       "OpenSearch 2.19 with millisecond precision",
    "nanos-fields": "as nanos-docvalues",
    "i-": "Elasticsearch 8 sorts every integer type and boolean as a Lucene LONG "
          "(IndexNumericFieldData.NumericType): a missing value prints as Long.MAX/MIN_VALUE; "
          "OpenSearch 2.19 sorts them as INT and prints Integer.MAX/MIN_VALUE",
    "b-": "as i-",
}


def _differs(name: str) -> bool:
    """Rows an OPENSEARCH_DIFFERS key names (integer and boolean rows differ only when a
    document is missing from the page, which every such row of the table has)."""
    return any(key in name for key in OPENSEARCH_DIFFERS) and "custom" not in name


def _view(status: int, body: dict[str, Any]) -> Any:
    if status != 200:
        return status, body.get("error", {}).get("type")
    hits = [(h["_id"], h.get("sort"), h.get("fields")) for h in body["hits"]["hits"]]
    return status, hits, body.get("aggregations")


def _both(both, index: str, body: dict[str, Any]) -> tuple[Any, Any]:
    out = []
    for c in both:
        r = c.post(f"/{index}/_search", json=body)
        out.append(_view(r.status_code, r.json()))
    return out[0], out[1]


@pytest.mark.parametrize("name,body", REQUESTS, ids=[n for n, _ in REQUESTS])
def test_sort_values_and_date_nanos_are_the_nodes(both, name, body):
    ours, theirs = _both(both, "dn_nanos", body)
    if _differs(name):
        assert ours[0] == 200 and ours != theirs
        return
    assert ours == theirs


@pytest.mark.parametrize("name,body", MIXED, ids=[n for n, _ in MIXED])
def test_date_and_date_nanos_sort_together_as_on_the_node(both, name, body):
    ours, theirs = _both(both, "dn_nanos,dn_millis", body)
    assert ours == theirs


# a range bound no format reads: (value, the query's format or None for the mapping's)
BAD_BOUNDS = [("not-a-date", None), ("2020", "yyyy-MM-dd"), ("2020-01-01x", "yyyy-MM-dd"),
              ("20x0-01-01", "yyyy-MM-dd"), ("2020-01-01", "dd/MM/yyyy"),
              ("2020-01-01 10:00", "yyyy-MM-dd[ HH:mm:ss]"),
              ("2020-01-01Tx", "strict_date_optional_time"),
              ("2020-1-01", "strict_date_optional_time"),
              ("2020-01-01Tx", "strict_date_optional_time_nanos"),
              ("abc", "epoch_millis"), ("x", "date_time_no_millis"),
              ("2020/01/01", "yyyy-MM-dd||yyyy"), ("x", "hour_minute")]


@pytest.mark.parametrize("value,fmt", BAD_BOUNDS, ids=[f"{v}-{f}" for v, f in BAD_BOUNDS])
def test_a_bad_range_bound_fails_with_the_nodes_three_levels_of_causes(both, value, fmt):
    """``parse_exception``, caused by the formatter's ``illegal_argument_exception``, caused
    by java.time's ``date_time_parse_exception`` (where the parse stopped): type and reason
    at every level equal to the node's."""
    bound: dict[str, Any] = {"gte": value, **({"format": fmt} if fmt else {})}
    answers = [c.post("/dn_nanos/_search", json={"query": {"range": {"d": bound}}})
               for c in both]
    assert [r.status_code for r in answers] == [400, 400]
    ours, theirs = (r.json()["error"]["failed_shards"][0]["reason"] for r in answers)
    assert ours == theirs
    assert ours["caused_by"]["caused_by"]["type"] == "date_time_parse_exception"
