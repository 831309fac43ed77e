"""Java ``DecimalFormat`` patterns for ``docvalue_fields`` formats (cluster/numformat.py)."""
from __future__ import annotations

import pytest

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.engine.numformat import decimal_format


@pytest.mark.parametrize("value,pattern,expected", [
    (1, "#.0", "1.0"),                 # the ES docvalue_fields conformance case
    (0.5, "#.0", ".5"),                # '#' integer digits print nothing for zero
    (0, "#", "0"),
    (1234567.891, "#,##0.00", "1,234,567.89"),
    (3.14159, "0.###", "3.142"),
    (2.5, "0", "2"),                   # HALF_EVEN, as DecimalFormat's default
    (3.5, "0", "4"),
    (-2.25, "0.0", "-2.2"),
    (7, "000", "007"),
    (7, "#.", "7."),
    (5, "'$'0.00", "$5.00"),
    (0.256, "#%", "26%"),
    (3, "0 units", "3 units"),
    (12.5, "0.00;(0.00)", "12.50"),
])
def test_decimal_format_matches_java(value, pattern, expected):
    assert decimal_format(value, pattern) == expected


def test_scientific_patterns_are_rejected_not_misformatted():
    with pytest.raises(IllegalArgument):
        decimal_format(1.0, "0.###E0")
