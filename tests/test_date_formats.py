"""Date formats as Elasticsearch reads and prints them: built-in names, Java patterns, errors.

Pure functions of ``cluster/engine/date_formats.py`` and ``dates.py`` (no Ray). The expected
values are what Elasticsearch 8 (java.time with ``Locale.ROOT``) gives for the same input;
``tests/differential/test_date_formats_vs_opensearch.py`` checks the same table against a real
node.
"""
from __future__ import annotations

import pytest

from shardsearch.cluster.engine.date_formats import InvalidFormat, validate_format
from shardsearch.cluster.engine.dates import format_date, parse_date_nanos, parse_failure
from shardsearch.cluster.engine.field_types import FieldType

MS_2020_01_02 = 1577923200000

# (format, input, epoch millis) — every row parses to exactly that instant
PARSES = [
    ("strict_date_optional_time", "2020-01-02", MS_2020_01_02),
    ("strict_date_optional_time", "2020-01-02T10:11:12.123+01:00", 1577956272123),
    ("date_optional_time", "2020-01-02T10:11:12Z", 1577959872000),
    ("epoch_millis", "1577923200000", MS_2020_01_02),
    ("epoch_millis", 1577923200000, MS_2020_01_02),
    ("epoch_second", "1577923200", MS_2020_01_02),
    ("epoch_second", "1577923200.5", MS_2020_01_02 + 500),
    ("basic_date", "20200102", MS_2020_01_02),
    ("basic_date_time", "20200102T101112.123Z", 1577959872123),
    ("basic_date_time_no_millis", "20200102T101112+0100", 1577956272000),
    ("basic_ordinal_date", "2020002", MS_2020_01_02),
    ("date", "2020-01-02", MS_2020_01_02),
    ("date", "2020-1-2", MS_2020_01_02),                    # non-strict: fewer digits
    ("strict_date", "2020-01-02", MS_2020_01_02),
    ("date_hour", "2020-01-02T10", MS_2020_01_02 + 36_000_000),
    ("date_hour_minute", "2020-01-02T10:11", MS_2020_01_02 + 36_660_000),
    ("date_hour_minute_second", "2020-01-02T10:11:12", 1577959872000),
    ("strict_date_hour_minute_second_millis", "2020-01-02T10:11:12.123", 1577959872123),
    ("date_time_no_millis", "2020-01-02T10:11:12+01:00", 1577956272000),
    ("ordinal_date", "2020-032", 1580515200000),
    ("week_date", "2020-W01-4", MS_2020_01_02),              # ISO week 1 of 2020, Thursday
    ("weekyear_week", "2020-W01", 1577664000000),            # Monday 2019-12-30 (see below)
    ("year", "2020", 1577836800000),
    ("year_month", "2020-02", 1580515200000),
    ("year_month_day", "2020-01-02", MS_2020_01_02),
    ("yyyy/MM/dd", "2020/01/02", MS_2020_01_02),
    ("uuuu-MM-dd", "2020-01-02", MS_2020_01_02),
    ("dd/MMM/uuuu:HH:mm:ss Z", "02/Jan/2020:10:00:00 +0100", MS_2020_01_02 + 32_400_000),
    ("EEE, dd MMM yyyy HH:mm:ss", "Thu, 02 Jan 2020 00:00:00", MS_2020_01_02),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX", "2020-01-02T00:00:00.000001Z", MS_2020_01_02),
    ("yyyy-MM-dd'T'HH:mmVV", "2020-01-02T10:00Europe/Paris", MS_2020_01_02 + 32_400_000),
    ("yyyy-MM-dd[ HH:mm]", "2020-01-02", MS_2020_01_02),
    ("yyyy-MM-dd[ HH:mm]", "2020-01-02 01:00", MS_2020_01_02 + 3_600_000),
    ("hh:mm a", "01:30 PM", 48_600_000),
    ("yy-MM-dd", "20-01-02", MS_2020_01_02),
    ("yyyy||epoch_millis", "2020", 1577836800000),          # alternatives in order
    ("dd/MM/yyyy||epoch_millis", "1577923200000", MS_2020_01_02),
    ("yyyy", 2020, 1577836800000),                           # a number is read as its text
    ("strict_date_optional_time||epoch_millis", 2020, 1577836800000),   # even by the default
    ("strict_date_optional_time||epoch_millis", 86400000, 86400000),
    ("epoch_millis", 2020.0, 2020),
]


@pytest.mark.parametrize("fmt,value,millis", PARSES)
def test_a_format_parses_its_spelling_to_the_instant_elasticsearch_gives(fmt, value, millis):
    assert parse_date_nanos(value, fmt) // 1_000_000 == millis


# (format, input) — Elasticsearch refuses each of these
REFUSED = [
    ("strict_date", "2020-1-2"),                 # strict: exact digit counts
    ("yyyy-MM-dd", "2020-02-30"),                # the resolver is strict: no February 30th
    ("yyyy/MM/dd", "2020-01-02"),                # no fallback to the default format
    ("basic_date", "2020-01-02"),
    ("epoch_millis", "12ab"),
    ("date_hour_minute", "2020-01-02"),
    ("HH:mm", "25:00"),
]


@pytest.mark.parametrize("fmt,value", REFUSED)
def test_a_value_that_does_not_match_its_format_is_refused(fmt, value):
    with pytest.raises(ValueError):
        parse_date_nanos(value, fmt)


# (format, millis, printed)
PRINTS = [
    ("strict_date_optional_time", 1577959872123, "2020-01-02T10:11:12.123Z"),
    ("epoch_millis", 1577959872123, "1577959872123"),
    ("epoch_second", 1577959872000, "1577959872"),
    ("basic_date", MS_2020_01_02, "20200102"),
    ("basic_date_time", 1577959872123, "20200102T101112.123Z"),
    ("date_hour_minute_second", 1577959872123, "2020-01-02T10:11:12"),
    ("date_time_no_millis", 1577959872123, "2020-01-02T10:11:12Z"),
    ("ordinal_date", 1580515200000, "2020-032"),
    ("week_date", MS_2020_01_02, "2020-W01-4"),
    ("year_month", MS_2020_01_02, "2020-01"),
    ("dd MMM uuuu", MS_2020_01_02, "02 Jan 2020"),
    ("EEEE, MMMM d, yyyy", MS_2020_01_02, "Thu, Jan 2, 2020"),   # Locale.ROOT: one spelling
    ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", MS_2020_01_02, "2020-01-02T00:00:00.000+0000"),
    ("yyyy-MM-dd HH:mm:ss.SSSSSS", 1577959872123, "2020-01-02 10:11:12.123000"),
    ("hh a", 48_600_000, "01 PM"),
    ("yyyy/MM/dd||epoch_millis", MS_2020_01_02, "2020/01/02"),   # the first alternative prints
]


@pytest.mark.parametrize("fmt,millis,printed", PRINTS)
def test_a_format_prints_a_date_as_elasticsearch_does(fmt, millis, printed):
    assert format_date(millis, FieldType("d", "date"), fmt) == printed


def test_date_nanos_keep_their_nanoseconds_through_parse_and_print():
    ft = FieldType("d", "date_nanos")
    nanos = parse_date_nanos("2020-01-02T10:11:12.123456789Z", "strict_date_optional_time_nanos")
    assert nanos % 1_000_000_000 == 123456789
    assert format_date(nanos, ft, "strict_date_optional_time_nanos") == \
        "2020-01-02T10:11:12.123456789Z"
    assert format_date(nanos, ft, "yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS") == \
        "2020-01-02T10:11:12.123456789"
    assert format_date(nanos, ft, "epoch_millis") == "1577959872123.456789"


# (format, Elasticsearch's message)
BAD_FORMATS = [
    ("test_format", "Invalid format: [test_format]: Unknown pattern letter: t"),
    ("yyyy-MM-dd'T", "Invalid format: [yyyy-MM-dd'T]: Pattern ends with an incomplete string "
                     "literal: yyyy-MM-dd'T"),
    ("yyyy]", "Invalid format: [yyyy]]: Pattern invalid as it contains ] without previous ["),
    ("yyyy-MM-ddd", "Invalid format: [yyyy-MM-ddd]: Too many pattern letters: d"),
    ("yyyy#", "Invalid format: [yyyy#]: Pattern includes reserved character: '#'"),
    ("yyyy-MM-dd||bad", "Invalid format: [bad]: Unknown pattern letter: b"),
    ("yyyy-VVV", "Invalid format: [yyyy-VVV]: Pattern letter count must be 2: V"),
]


@pytest.mark.parametrize("fmt,message", BAD_FORMATS)
def test_a_bad_pattern_is_refused_with_elasticsearchs_text(fmt, message):
    with pytest.raises(InvalidFormat) as e:
        validate_format(fmt)
    assert str(e.value) == message


def test_java_letters_this_server_does_not_implement_are_refused_by_name():
    with pytest.raises(InvalidFormat, match=r"pattern letter \[G\] is not supported"):
        validate_format("G yyyy")


def test_a_format_longer_than_the_bound_is_refused_before_compiling():
    with pytest.raises(InvalidFormat, match="longer than"):
        validate_format("y" * 10_000)


# (value, epoch millis) with no format: the mapping default strict_date_optional_time||epoch_millis
DEFAULT_PARSES = [(2020, 1577836800000), ("2020", 1577836800000), (86400000, 86400000),
                  ("86400000", 86400000), (999, 999), (-5, -5), (1577923200000, MS_2020_01_02),
                  (1.5e12, 1_500_000_000_000), ("2020-01-02", MS_2020_01_02)]


@pytest.mark.parametrize("value,millis", DEFAULT_PARSES)
def test_a_date_field_without_format_reads_values_as_elasticsearchs_default(value, millis):
    assert parse_date_nanos(value) // 1_000_000 == millis


def test_date_nanos_outside_1970_to_2262_is_refused_with_elasticsearchs_text():
    from shardsearch.cluster.engine.dates import parse_date
    ft = FieldType("n", "date_nanos")
    with pytest.raises(ValueError) as e:
        parse_date("1960-01-01", ft)
    assert str(e.value) == ("date[1960-01-01T00:00:00Z] is before the epoch in 1970 and cannot "
                            "be stored in nanosecond resolution")
    with pytest.raises(ValueError) as e:
        parse_date("2300-01-01T00:00:00.5Z", ft)
    assert str(e.value) == ("date[2300-01-01T00:00:00.500Z] is after "
                            "2262-04-11T23:47:16.854775807 and cannot be stored in nanosecond "
                            "resolution")
    assert parse_date("2262-04-11T23:47:16.854775807Z", ft) == 2**63 - 1


@pytest.mark.parametrize("value, fmt, text", [   # each as OpenSearch 2.19's node answers
    ("not-a-date", "strict_date_optional_time||epoch_millis",
     "Failed to parse with all enclosed parsers"),
    ("abc", "epoch_millis", "Failed to parse with all enclosed parsers"),
    ("x", "date_time_no_millis", "Failed to parse with all enclosed parsers"),
    ("2020", "yyyy-MM-dd", "Text '2020' could not be parsed at index 4"),
    ("20x0-01-01", "yyyy-MM-dd", "Text '20x0-01-01' could not be parsed at index 0"),
    ("2020-01-01", "dd/MM/yyyy", "Text '2020-01-01' could not be parsed at index 2"),
    ("2020-01-01x", "yyyy-MM-dd",
     "Text '2020-01-01x' could not be parsed, unparsed text found at index 10"),
    ("2020-01-01 10:00", "yyyy-MM-dd[ HH:mm:ss]",
     "Text '2020-01-01 10:00' could not be parsed, unparsed text found at index 10"),
    ("2020-01-01Tx", "strict_date_optional_time",
     "Text '2020-01-01Tx' could not be parsed, unparsed text found at index 11"),
    ("2020-01-01Tx", "strict_date_optional_time_nanos",
     "Text '2020-01-01Tx' could not be parsed, unparsed text found at index 10"),
    ("1/1/2020", "date_optional_time",
     "Text '1/1/2020' could not be parsed, unparsed text found at index 1"),
])
def test_a_failed_parse_is_explained_with_java_times_text_where_it_stopped(value, fmt, text):
    with pytest.raises(ValueError):
        parse_date_nanos(value, fmt)
    assert parse_failure(value, fmt) == text


def test_a_date_every_element_of_its_pattern_reads_but_that_does_not_exist_has_no_such_text():
    """java.time parses ``2020-13-01`` to the end and fails resolving it (another exception)."""
    with pytest.raises(ValueError):
        parse_date_nanos("2020-13-01", "yyyy-MM-dd")
    assert parse_failure("2020-13-01", "yyyy-MM-dd") is None
