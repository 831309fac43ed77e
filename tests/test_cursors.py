"""Pure rules of cursors (``cluster/search/cursors.py``): ids, keep-alive, expiry, page tokens,
sorts."""
from __future__ import annotations

import numpy as np
import pytest

from shardsearch.cluster.search.cursors import (SHARD_DOC, PageToken, Registry, check_keep_alive,
                                         decode_page_token, encode_page_token, format_time,
                                         parse_keep_alive, pit_sort, raw_sort_values,
                                         snapshot_in, snapshot_out, strip_hits_sort,
                                         with_tiebreak)
from shardsearch.cluster.errors import IllegalArgument, SearchPhaseExecution
from shardsearch.cluster.engine.shard_messages import ShardHits
from shardsearch.cluster.engine.sorting import SCORE_SORT, SortField


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def registry() -> tuple[Registry, FakeClock]:
    clock = FakeClock()
    return Registry("sess", clock=clock, wall=lambda: 1_700_000_000.0), clock


# --- keep-alive ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value,ms", [("1m", 60_000), ("30s", 30_000), ("500ms", 500),
                                      ("23h", 82_800_000), ("1d", 86_400_000), ("0", 0),
                                      ("2micros", 0)])
def test_keep_alive_uses_elasticsearch_time_units(value, ms):
    assert parse_keep_alive(value, "scroll") == ms


@pytest.mark.parametrize("value", ["abc", "10", "1x", ""])
def test_keep_alive_without_a_unit_is_refused_with_elasticsearchs_message(value):
    with pytest.raises(IllegalArgument) as e:
        parse_keep_alive(value, "scroll")
    assert e.value.reason == (f"failed to parse setting [scroll] with value [{value}] as a time "
                              "value: unit is missing or unrecognized")


def test_negative_keep_alive_is_refused():
    with pytest.raises(IllegalArgument, match="negative durations are not supported"):
        parse_keep_alive("-5s", "keep_alive")


def test_keep_alive_above_the_maximum_names_the_cluster_setting():
    with pytest.raises(IllegalArgument) as e:
        check_keep_alive(2 * 60_000, maximum=60_000)
    assert e.value.reason == ("Keep alive for request (2m) is too large. It must be less than "
                              "(1m). This limit can be set by changing the "
                              "[search.max_keep_alive] cluster level setting.")


@pytest.mark.parametrize("ms,text", [(90_000, "1.5m"), (86_400_000, "1d"), (500, "500ms"),
                                     (1000, "1s"), (0, "0s")])
def test_durations_print_like_elasticsearch_time_values(ms, text):
    assert format_time(ms) == text


# --- registry -----------------------------------------------------------------------------------

def test_an_opened_cursor_is_found_by_its_opaque_id():
    reg, _ = registry()
    c = reg.open("pit", ("a", "b"), ("ua", "ub"), {("a", 0): 3}, 60_000)
    assert reg.get(c.token, "pit") is c
    assert "sess" not in c.token and c.token.isascii()


def test_an_expired_cursor_is_a_404_search_context_missing():
    reg, clock = registry()
    c = reg.open("scroll", ("a",), ("u",), {("a", 0): 1}, 1_000)
    clock.t += 1.5
    with pytest.raises(SearchPhaseExecution) as e:
        reg.get(c.token, "scroll")
    assert e.value.status == 404
    cause = e.value.to_cause()
    assert cause["root_cause"][0]["type"] == "search_context_missing_exception"
    assert cause["root_cause"][0]["reason"] == f"No search context found for id [{c.number}]"
    assert reg.expire() == [c] and len(reg) == 0     # handed over once, to release its pins


def test_use_renews_the_keep_alive():
    reg, clock = registry()
    c = reg.open("pit", ("a",), ("u",), {}, 1_000)
    clock.t += 0.9
    reg.touch(c)
    clock.t += 0.9
    assert reg.get(c.token, "pit") is c
    reg.touch(c, 10_000)
    clock.t += 5
    assert reg.get(c.token, "pit") is c and c.keep_alive_ms == 10_000


def test_expire_returns_exactly_the_cursors_whose_keep_alive_ran_out():
    reg, clock = registry()
    short = reg.open("pit", (), (), {}, 1_000)
    long = reg.open("scroll", (), (), {}, 5_000)
    renewed = reg.open("pit", (), (), {}, 1_000)
    clock.t += 0.5
    reg.touch(renewed)
    clock.t += 0.6
    assert reg.expire() == [short]
    assert reg.next_deadline() == pytest.approx(renewed.expires_at)
    clock.t += 10
    assert {c.number for c in reg.expire()} == {long.number, renewed.number}
    assert len(reg) == 0 and reg.next_deadline() is None


def test_a_malformed_scroll_id_is_a_400_cannot_parse():
    reg, _ = registry()
    with pytest.raises(IllegalArgument, match="^Cannot parse scroll id$"):
        reg.get("invalid_scroll_id", "scroll")
    with pytest.raises(IllegalArgument, match=r"^invalid id: \[nope\]$"):
        reg.get("nope", "pit")


def test_a_pit_id_is_not_a_scroll_id():
    reg, _ = registry()
    c = reg.open("pit", (), (), {}, 1_000)
    with pytest.raises(IllegalArgument):
        reg.get(c.token, "scroll")


def test_an_id_from_another_coordinator_is_missing_not_malformed():
    reg, _ = registry()
    other = Registry("other")
    c = other.open("scroll", (), (), {}, 60_000)
    with pytest.raises(SearchPhaseExecution) as e:
        reg.get(c.token, "scroll")
    assert e.value.status == 404


def test_closing_twice_frees_once():
    reg, _ = registry()
    c = reg.open("scroll", (), (), {}, 60_000)
    assert reg.close(c) is True
    assert reg.close(c) is False
    assert reg.find(c.number, "scroll") is None


# --- page tokens ----------------------------------------------------------------------------------

def test_a_page_token_round_trips_its_snapshot():
    tok = PageToken(("a", "b"), ("ua", "ub"), {("a", 0): 4, ("b", 1): 7}, 1_000)
    raw = encode_page_token("sess", tok)
    back = decode_page_token("sess", raw, now_ms=2_000)
    assert back == tok and back.snapshot == tok.snapshot
    assert back.key == PageToken(("a", "b"), ("ua", "ub"), dict(tok.snapshot), 9_999).key


def test_a_page_token_expires_five_minutes_after_issue():
    raw = encode_page_token("sess", PageToken(("a",), ("u",), {("a", 0): 1}, 0))
    decode_page_token("sess", raw, now_ms=5 * 60_000)
    with pytest.raises(SearchPhaseExecution) as e:
        decode_page_token("sess", raw, now_ms=5 * 60_000 + 1)
    assert e.value.status == 404


def test_a_page_token_from_another_coordinator_is_missing():
    raw = encode_page_token("old", PageToken(("a",), ("u",), {("a", 0): 1}, 0))
    with pytest.raises(SearchPhaseExecution):
        decode_page_token("sess", raw, now_ms=1)


@pytest.mark.parametrize("raw", ["x", "eyJhIjoxfQ", "!!!"])
def test_a_garbled_page_token_is_a_400(raw):
    with pytest.raises(IllegalArgument, match="invalid consistent_page token"):
        decode_page_token("sess", raw, now_ms=1)


def test_snapshot_wire_form_round_trips():
    snap = {("logs-1", 0): 3, ("logs-1", 2): 0}
    assert snapshot_in(snapshot_out(snap)) == snap


# --- sorts ------------------------------------------------------------------------------------------

AGE = SortField("age", "desc")
ID = SortField("id", "desc")


def test_pit_adds_the_shard_doc_tiebreaker_when_there_is_a_sort():
    assert pit_sort((AGE, ID), None) == (AGE, ID, SHARD_DOC)
    assert pit_sort((AGE, ID), [24, 172, 5]) == (AGE, ID, SHARD_DOC)


def test_pit_skips_the_tiebreaker_when_search_after_has_no_value_for_it():
    assert pit_sort((AGE, ID), [24, 172]) == (AGE, ID)


def test_pit_without_sort_or_with_explicit_shard_doc_is_left_alone():
    assert pit_sort((), None) == ()
    explicit = (AGE, SortField("_shard_doc", "desc"))
    assert pit_sort(explicit, None) == explicit


def test_scroll_walks_with_the_tiebreak_appended():
    assert with_tiebreak(SCORE_SORT) == (SCORE_SORT + (SHARD_DOC,), 1)
    doc = (SortField("_doc"),)
    assert with_tiebreak(doc) == (doc, 0)


def test_raw_sort_values_keep_the_columns_value_space():
    h = ShardHits(index="i", shard=0, total=2,
                  columns=[np.array([5, 7], dtype=np.int64), np.array(["x", ""], dtype=object),
                           np.array([1.5, 2.5]), np.array([10, 11], dtype=np.int64)],
                  missing=[None, np.array([False, True]), None, None],
                  kinds=["int", "keyword", "float", "tiebreak"],
                  scores=np.zeros(2, dtype=np.float32), ties=np.array([10, 11]),
                  addr=np.array([0, 1]), max_score=None, generation=1)
    assert raw_sort_values(h, 0) == [5, "x", 1.5, 10]
    assert raw_sort_values(h, 1) == [7, None, 2.5, 11]
    assert all(type(v) in (int, float, str, type(None)) for v in raw_sort_values(h, 0))


def test_added_sort_keys_are_hidden_from_hits():
    resp = {"hits": {"hits": [{"_id": "1", "sort": [3, 99]}, {"_id": "2"}]}}
    strip_hits_sort(resp, 1, keep=True)
    assert resp["hits"]["hits"][0]["sort"] == [3]
    strip_hits_sort(resp, 0, keep=False)
    assert "sort" not in resp["hits"]["hits"][0]


# --- search_after values (sorting.coerce_after) -----------------------------------------------------

def _coerce(sort, after, fts=None):
    from shardsearch.cluster.engine.sorting import coerce_after, column_kind
    fts = fts or [None] * len(sort)
    return coerce_after(sort, [column_kind(sf, ft) for sf, ft in zip(sort, fts)], fts, after)


def test_search_after_on_the_default_score_sort_is_refused():
    with pytest.raises(IllegalArgument, match=r"^Sort must contain at least one field\.$"):
        _coerce(SCORE_SORT, [1.0])


def test_search_after_must_have_one_value_per_sort_key():
    from shardsearch.cluster.engine.field_types import FieldType
    with pytest.raises(IllegalArgument, match=r"^search_after has 2 value\(s\) but sort has 1\.$"):
        _coerce((SortField("n"),), [1, 2], [FieldType("n", "long")])


def test_search_after_values_convert_like_java():
    from shardsearch.cluster.engine.field_types import FieldType
    sort = (SortField("n"), SortField("k"), SortField("b"), SortField("_shard_doc"))
    fts = [FieldType("n", "long"), FieldType("k", "keyword"), FieldType("b", "boolean"), None]
    assert _coerce(sort, [1.9, True, "true", "7"], fts) == [1, "true", 1, 7]
    assert _coerce(sort, ["12", None, False, 3], fts) == [12, None, 0, 3]


def test_a_non_number_for_a_numeric_key_names_the_field():
    from shardsearch.cluster.engine.field_types import FieldType
    with pytest.raises(IllegalArgument) as e:
        _coerce((SortField("n"),), ["toto"], [FieldType("n", "long")])
    assert e.value.reason == "Failed to parse search_after value for field [n]."
    assert e.value.to_cause()["caused_by"] == {"type": "number_format_exception",
                                               "reason": 'For input string: "toto"'}


def test_a_date_search_after_is_parsed_with_the_sort_format_only():
    from shardsearch.cluster.errors import ParsingError
    from shardsearch.cluster.engine.field_types import FieldType
    ft = FieldType("t", "date")
    iso = SortField("t", format="strict_date_optional_time_nanos")
    assert _coerce((iso,), ["2021-02-11T08:30:04.828Z"], [ft]) == [1613032204828]
    custom = SortField("t", format="yyyy-MM-dd | HH:mm:ss.SSS")
    assert _coerce((custom,), ["2021-02-11 | 08:30:04.828"], [ft]) == [1613032204828]
    for fmt in ("yyyy-MM-dd HH:mm:ss.SSS", "epoch_millis"):
        with pytest.raises(ParsingError, match="failed to parse date field"):
            _coerce((SortField("t", format=fmt),), ["2021-02-11T08:30:04.828Z"], [ft])


def test_numeric_type_puts_millis_and_nanos_dates_on_one_scale():
    from shardsearch.cluster.engine.field_types import FieldType
    from shardsearch.cluster.engine.sorting import scale_date, sort_value_out
    millis, nanos = FieldType("t", "date"), FieldType("t", "date_nanos")
    as_nanos = SortField("t", numeric_type="date_nanos", format="strict_date_optional_time_nanos")
    col = scale_date(np.array([1613032204828]), as_nanos, millis)
    assert col.tolist() == [1613032204828000000]
    assert sort_value_out(as_nanos, "int", col[0], millis) == "2021-02-11T08:30:04.828Z"
    as_millis = SortField("t", numeric_type="date")
    assert scale_date(np.array([1613032204828733000]), as_millis, nanos).tolist() == \
        [1613032204828]
