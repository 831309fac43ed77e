"""``_cat/nodes`` against the real OpenSearch node: the metric columns Elasticsearch and
OpenSearch share answer with the same spellings (percentages as whole numbers, load averages
with two decimals, times and sizes in their human and unit forms)."""
from __future__ import annotations

import re

SHARED = "heap.percent,ram.percent,cpu,load_1m,load_5m,load_15m,uptime,heap.max,ram.max," \
    "disk.used_percent,file_desc.percent"
SHAPES = {"heap.percent": r"\d+", "ram.percent": r"\d+", "cpu": r"\d+",
          "load_1m": r"\d+\.\d\d", "load_5m": r"\d+\.\d\d", "load_15m": r"\d+\.\d\d",
          "disk.used_percent": r"\d+\.\d\d", "file_desc.percent": r"\d+"}


def _row(answer):
    status, body = answer
    assert status == 200, body
    return body[0]


def test_shared_metric_columns_are_spelled_alike(pair):
    ours, theirs = pair.send("GET", "/_cat/nodes", params={"format": "json", "h": SHARED})
    ours, theirs = _row(ours), _row(theirs)
    assert list(ours) == list(theirs)
    for col, shape in SHAPES.items():
        assert re.fullmatch(shape, ours[col]) and re.fullmatch(shape, theirs[col]), col
    human = r"\d+(\.\d)?(nanos|micros|ms|s|m|h|d)"
    assert re.fullmatch(human, ours["uptime"]) and re.fullmatch(human, theirs["uptime"])
    size = r"\d+(\.\d)?(b|kb|mb|gb|tb|pb)"
    for col in ("heap.max", "ram.max"):
        assert re.fullmatch(size, ours[col]) and re.fullmatch(size, theirs[col]), col


def test_units_convert_alike(pair):
    params = {"format": "json", "h": "uptime,ram.max", "time": "s", "bytes": "kb"}
    ours, theirs = pair.send("GET", "/_cat/nodes", params=params)
    for row in (_row(ours), _row(theirs)):
        assert row["uptime"].isdigit() and row["ram.max"].isdigit(), row
