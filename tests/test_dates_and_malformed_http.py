"""Dates and malformed values over HTTP, through the official ``elasticsearch`` client.

Real Ray, real uvicorn (fixtures of ``conftest.py``). Each test is one rule of Elasticsearch 8:
a mapping's ``format`` reads and prints dates, a bad pattern is refused with ES's text,
``ignore_malformed`` indexes the document without the field and reports it in ``_ignored``.
"""
from __future__ import annotations

import elasticsearch
import pytest


def _ids(resp) -> list[str]:
    return [h["_id"] for h in resp["hits"]["hits"]]


def test_a_bad_date_pattern_in_a_mapping_is_refused_with_elasticsearchs_text(esc):
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.indices.create(index="bad", mappings={"properties": {
            "d": {"type": "date", "format": "yyyy-MM-dd||test_format"}}})
    err = e.value.body["error"]
    assert err["type"] == "mapper_parsing_exception"
    assert err["reason"] == ("Failed to parse mapping: Error parsing [format] on field [d]: "
                             "Invalid format: [test_format]: Unknown pattern letter: t")


def test_a_mapping_format_parses_documents_and_range_bounds_and_prints_sort_values(esc):
    esc.indices.create(index="logs", mappings={"properties": {
        "at": {"type": "date", "format": "dd/MMM/uuuu:HH:mm:ss Z||epoch_millis"}}})
    esc.index(index="logs", id="1", document={"at": "02/Jan/2020:10:00:00 +0100"})
    esc.index(index="logs", id="2", document={"at": 1577923200000}, refresh=True)
    r = esc.search(index="logs", query={"range": {"at": {"gte": "02/Jan/2020:08:30:00 +0000"}}})
    assert _ids(r) == ["1"]
    r = esc.search(index="logs", sort=[{"at": {"order": "asc", "format": "basic_date_time"}}])
    assert [h["sort"] for h in r["hits"]["hits"]] == [["20200102T000000.000Z"],
                                                      ["20200102T090000.000Z"]]
    r = esc.search(index="logs", size=0, aggs={"d": {"date_histogram": {
        "field": "at", "calendar_interval": "day", "format": "EEE dd MMM uuuu"}}})
    assert [(b["key_as_string"], b["doc_count"]) for b in r["aggregations"]["d"]["buckets"]] \
        == [("Thu 02 Jan 2020", 2)]


def test_a_value_not_in_the_mapping_format_fails_the_document(esc):
    esc.indices.create(index="strict", mappings={"properties": {
        "d": {"type": "date", "format": "yyyy/MM/dd"}}})
    r = esc.index(index="strict", id="1", document={"d": "2020/01/02"})
    assert r["result"] == "created"
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.index(index="strict", id="2", document={"d": "2020-01-02"})
    assert e.value.body["error"]["type"] == "mapper_parsing_exception"
    assert "failed to parse field [d] of type [date]" in e.value.body["error"]["reason"]


def test_a_bad_format_in_a_range_query_is_a_400_naming_the_pattern(esc):
    esc.indices.create(index="r", mappings={"properties": {"d": {"type": "date"}}})
    esc.index(index="r", id="1", document={"d": "2020-01-02"}, refresh=True)
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="r", query={"range": {"d": {"gte": "2020", "format": "yyyyb"}}})
    assert "Invalid format: [yyyyb]: Unknown pattern letter: b" in str(e.value.body)


def test_ignore_malformed_indexes_the_document_without_the_field_and_reports_it(esc):
    esc.indices.create(index="m", mappings={"properties": {
        "n": {"type": "integer", "ignore_malformed": True},
        "d": {"type": "date", "ignore_malformed": True},
        "ok": {"type": "keyword"}}})
    esc.index(index="m", id="bad", document={"n": "ten", "d": "yesterday", "ok": "a"})
    esc.index(index="m", id="good", document={"n": 10, "d": "2020-01-02", "ok": "a"},
              refresh=True)
    r = esc.search(index="m", query={"term": {"ok": "a"}}, sort=[{"n": "asc"}])
    good, bad = r["hits"]["hits"]        # the skipped value sorts as missing: last
    assert bad["_ignored"] == ["d", "n"] and "_ignored" not in good
    assert bad["sort"] == [9223372036854775807]
    assert bad["_source"] == {"n": "ten", "d": "yesterday", "ok": "a"}   # _source is kept
    assert esc.get(index="m", id="bad")["_ignored"] == ["d", "n"]
    assert "_ignored" not in esc.get(index="m", id="good")
    assert _ids(esc.search(index="m", query={"exists": {"field": "n"}})) == ["good"]
    assert _ids(esc.search(index="m", query={"range": {"n": {"gte": 0}}})) == ["good"]
    assert _ids(esc.search(index="m", query={"exists": {"field": "_ignored"}})) == ["bad"]
    assert _ids(esc.search(index="m", query={"term": {"_ignored": "n"}})) == ["bad"]
    aggs = esc.search(index="m", size=0, aggs={"i": {"terms": {"field": "_ignored"}}})
    assert [(b["key"], b["doc_count"]) for b in aggs["aggregations"]["i"]["buckets"]] == \
        [("d", 1), ("n", 1)]
    # a real-time get reports it, refreshed or not; written after the searches above, which
    # it would join once the 1s refresher makes it searchable (any moment from now on)
    esc.index(index="m", id="late", document={"n": "x"})
    assert esc.get(index="m", id="late")["_ignored"] == ["n"]


def test_without_ignore_malformed_a_malformed_value_fails_its_document(esc):
    esc.indices.create(index="f", mappings={"properties": {"n": {"type": "integer"}}})
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.index(index="f", id="1", document={"n": "ten"})
    assert e.value.body["error"]["type"] == "mapper_parsing_exception"
    assert e.value.body["error"]["reason"].startswith("failed to parse field [n] of type "
                                                      "[integer]")


def test_the_index_setting_is_each_fields_default_and_a_field_may_override_it(esc):
    esc.indices.create(index="s", settings={"index.mapping.ignore_malformed": True},
                       mappings={"properties": {
                           "n": {"type": "long"},
                           "strict": {"type": "long", "ignore_malformed": False}}})
    r = esc.index(index="s", id="1", document={"n": "x"}, refresh=True)
    assert r["result"] == "created"
    hit = esc.search(index="s")["hits"]["hits"][0]
    assert hit["_ignored"] == ["n"]
    with pytest.raises(elasticsearch.BadRequestError):
        esc.index(index="s", id="2", document={"strict": "x"})
    with pytest.raises(elasticsearch.BadRequestError) as e:     # a static setting, as in ES
        esc.indices.put_settings(index="s", settings={"index.mapping.ignore_malformed": False})
    assert "Can't update non dynamic settings [[index.mapping.ignore_malformed]]" in str(
        e.value.body)


def test_ignore_malformed_on_a_type_without_it_is_refused_naming_it(esc):
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.indices.create(index="k", mappings={"properties": {
            "k": {"type": "keyword", "ignore_malformed": True}}})
    assert e.value.body["error"]["reason"] == (
        "Failed to parse mapping: unknown parameter [ignore_malformed] on mapper [k] of type "
        "[keyword]")


def test_a_bad_date_in_a_range_bound_is_a_400_parse_exception(esc):
    """Elasticsearch parses a ``range`` bound while the shard rewrites the query: its date
    parser's ``parse_exception`` is the root cause, not ``query_shard_exception``."""
    esc.indices.create(index="when", settings={"number_of_shards": 2},
                       mappings={"properties": {"d": {"type": "date"}}})
    esc.index(index="when", id="1", document={"d": "2020-01-01"}, refresh=True)
    detail = ("failed to parse date field [not-a-date] with format "
              "[strict_date_optional_time||epoch_millis]")
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="when", query={"range": {"d": {"gte": "not-a-date"}}})
    assert e.value.meta.status == 400
    body = e.value.body
    assert body["status"] == 400
    err = body["error"]
    assert err["type"] == "search_phase_execution_exception"
    assert err["root_cause"] == [{"type": "parse_exception", "reason": f"{detail}: [{detail}]"}]
    reason = err["failed_shards"][0]["reason"]
    assert reason["type"] == "parse_exception"
    assert reason["caused_by"] == {"type": "illegal_argument_exception", "reason": detail,
                                   "caused_by": {"type": "date_time_parse_exception",
                                                 "reason": "Failed to parse with all enclosed "
                                                           "parsers"}}
    assert body["error"]["caused_by"] == reason
    # a query's own format is the one named
    with pytest.raises(elasticsearch.BadRequestError) as e:
        esc.search(index="when", query={"range": {"d": {"lt": "2020", "format": "yyyy-MM-dd"}}})
    assert e.value.body["error"]["root_cause"][0]["reason"].startswith(
        "failed to parse date field [2020] with format [yyyy-MM-dd]: [")
    assert e.value.body["error"]["caused_by"]["caused_by"]["caused_by"] == {
        "type": "date_time_parse_exception", "reason": "Text '2020' could not be parsed at index 4"}
