"""What is acknowledged can always be read back: a value the storage could not give back
exactly is refused before anything of it is written (``engine/exact_json.py``).

Over HTTP every document is JSON. The paths that can carry other values: the Python API and
in-process callers (a ``Decimal``, a NumPy scalar, any object, ``NaN``), a scripted update
whose arithmetic makes ``NaN`` or an infinity, index bodies from the Python API, and a
command a shard copy logs (``WriteOp`` fields, settings). Each is refused with a clear error,
and a restart on the same files brings back every acknowledged document and nothing else.
Real files, the real coordinator, shard groups and shard copies (over ``LocalTransport``, as in
``test_replication.py``); the Python API over real Ray is in ``test_python_api.py``.
"""
from __future__ import annotations

import decimal
from pathlib import Path

import numpy as np
import orjson
import pytest

from test_replication import Service, docs_of, run
from test_storage import Writer, load, open_copy, state

from shardsearch.cluster.distribution.shard_group import STARTED
from shardsearch.cluster.documents.update import parse_update
from shardsearch.cluster.engine.exact_json import UnstorableValue, exact_json
from shardsearch.cluster.engine.storage import decode_value, encode_value
from shardsearch.cluster.engine.writes import WriteOp

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py


class _Point:
    """Any object of the caller's own class."""

    def __init__(self, x: float) -> None:
        self.x = x


UNSTORABLE = [decimal.Decimal("1.5"), np.float64(1.5), np.int64(3), _Point(1.0)]


@pytest.mark.parametrize("value", [*UNSTORABLE, float("nan"), float("inf"), {1, 2}])
def test_a_value_json_cannot_carry_as_it_is_is_refused_naming_it(value: object) -> None:
    with pytest.raises(UnstorableValue, match="cannot be stored exactly"):
        exact_json({"a": [1, {"b": value}]})
    assert exact_json({"a": [1, {"b": 1.5, "c": None}]}) == b'{"a":[1,{"b":1.5,"c":null}]}'


@pytest.mark.parametrize("value", UNSTORABLE)
def test_a_logged_value_recovery_could_not_read_is_refused_at_encode_time(value: object) -> None:
    with pytest.raises(UnstorableValue, match="cannot be stored exactly"):
        encode_value({"f": [value]})
    # values JSON holds only approximately are kept exactly (plain pickles recovery reads)
    for exact in ({"t": (1, 2)}, float("nan"), 2**70, {"s": {1, 2}}):
        back = decode_value(orjson.loads(orjson.dumps(encode_value(exact))))
        assert repr(back) == repr(exact)


@pytest.mark.parametrize("value", UNSTORABLE)
def test_a_copy_refuses_a_command_it_could_not_recover_and_restarts_with_what_it_acknowledged(
        tmp_path: Path, value: object) -> None:
    c = open_copy(tmp_path)
    w = Writer(c)
    load(w, batches=2)
    before, log_bytes = state(c), _log_bytes(tmp_path)
    bad = WriteOp(op="index", id="bad", seq=w.seq, source=b'{"title": "hello bad"}',
                  fields={"title": [value]})                            # type: ignore[list-item]
    with pytest.raises(UnstorableValue):
        c.command(w.op, "apply", ([bad], None, False), f"c{w.op}", w.prev)
    with pytest.raises(UnstorableValue):
        c.command(w.op, "configure", ({"refresh_interval": value},), f"c{w.op}", w.prev)
    assert state(c) == before and _log_bytes(tmp_path) == log_bytes   # nothing half-written
    w.index({"good": {"title": "hello good"}})      # the same command number, taken by the next
    acknowledged = state(c)
    again = open_copy(tmp_path)
    assert again.failure is None and state(again) == acknowledged
    assert "bad" not in acknowledged["docs"] and "good" in acknowledged["docs"]


def _log_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.glob("log-*.wal")))


def test_refused_writes_change_nothing_and_a_restart_recovers_every_acknowledged_document(
        tmp_path: Path) -> None:
    async def first() -> dict[str, bytes]:
        s = await Service(tmp_path).start()
        s.coord.create_index("i", {"settings": {"number_of_shards": 2, "number_of_replicas": 1}})
        bad = {f"bad-{k}": {"v": v} for k, v in enumerate(
            [*UNSTORABLE, float("nan"), float("-inf"), {"set"}])}
        good = {str(i): {"n": i, "t": f"doc {i}"} for i in range(len(bad))}
        items = [{"action": "index", "index": "i", "id": k, "source": v}
                 for pair in zip(good.items(), bad.items()) for k, v in pair]
        r = await s.coord.bulk(items, True)
        errors = {it["index"]["_id"]: it["index"]["error"]["type"]
                  for it in r["items"] if "error" in it["index"]}
        # NaN and infinities: the mapping refuses them first, as Elasticsearch's numeric
        # fields do ("supports only finite values"); the rest: the storage refuses them
        assert errors == {k: "mapper_parsing_exception" if k in ("bad-4", "bad-5")
                          else "illegal_argument_exception" for k in bad}
        # a scripted update whose arithmetic overflows: refused, the document as it was (its
        # field's mapping refuses the infinity first, as Elasticsearch's does)
        out = await s.coord.update(parse_update("i", "1", {"script": {
            "source": "ctx._source.n = ctx._source.n * 1e308 * 10"}}))
        assert out["error"]["type"] == "mapper_parsing_exception"   # the long field refuses it
        # index bodies from the Python API: refused before the index exists anywhere
        for body in ({"mappings": {"properties": {"p": {
                "type": "scaled_float", "scaling_factor": np.float64(100)}}}},
                {"settings": {"number_of_replicas": np.int64(0)}}):
            with pytest.raises(UnstorableValue):
                s.coord.create_index("never", body)
            assert "never" not in s.coord.indices
        with pytest.raises(UnstorableValue):
            await s.coord.admin.put_mapping("i", {"properties": {"d": {
                "type": "double", "null_value": decimal.Decimal("1")}}})
        before = dict(s.coord.indices["i"].settings)
        with pytest.raises(UnstorableValue):
            s.coord.admin.put_settings("i", {"index": {"max_result_window": np.int64(50)}})
        assert s.coord.indices["i"].settings == before
        g = s.group("i", 0), s.group("i", 1)
        assert all(c.state == STARTED for grp in g for c in grp.copies)   # none out of sync
        acked = {k: v for grp in g for k, v in docs_of(grp.copies[0].handle).items()}
        assert sorted(acked) == sorted(good)
        s.close()
        return {k: v[2] for k, v in acked.items()}

    async def second() -> dict[str, bytes]:
        s = await Service(tmp_path).start()
        try:
            assert sorted(s.coord.indices) == ["i"]
            assert s.coord.status.dir_problems == []     # no index directory left half-made
            return {k: v[2] for sid in (0, 1)
                    for k, v in docs_of(s.group("i", sid).copies[0].handle).items()}
        finally:
            s.close()

    acknowledged = run(first())
    assert run(second()) == acknowledged
    assert orjson.loads(acknowledged["1"]) == {"n": 1, "t": "doc 1"}


def test_templates_and_alias_filters_holding_an_unstorable_value_are_refused_before_storing(
        tmp_path: Path) -> None:
    """Index templates, component templates and alias filters are stored as JSON: from the
    Python API a value JSON cannot carry as it is is refused by name, and nothing of it is
    kept, in memory or on disk (a restart finds only what was acknowledged)."""
    async def first() -> None:
        s = await Service(tmp_path).start()
        s.coord.create_index("i", {"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
        s.coord.put_component_template("ok_c", {"template": {"settings": {"number_of_shards": 1}}})
        s.coord.put_index_template("ok_t", {"index_patterns": ["ok-*"], "composed_of": ["ok_c"]})
        s.coord.put_alias("i", "ok_a", {"filter": {"term": {"n": 1}}})
        refused = [
            lambda: s.coord.put_index_template("bad_t", {"index_patterns": ["bad-*"],
                                                         "priority": np.int64(5)}),
            lambda: s.coord.put_index_template("ok_t", {"index_patterns": ["ok-*"], "template": {
                "mappings": {"properties": {"p": {"type": "scaled_float",
                                                  "scaling_factor": np.float64(10)}}}}}),
            lambda: s.coord.put_component_template("bad_c", {"template": {
                "settings": {"number_of_replicas": decimal.Decimal("1")}}}),
            lambda: s.coord.put_component_template("ok_c", {"template": {
                "settings": {"refresh_interval": float("nan")}}}),
            lambda: s.coord.update_aliases([{"add": {"index": "i", "alias": "bad_a",
                                                     "filter": {"term": {"n": np.int64(2)}}}}]),
            lambda: s.coord.put_alias("i", "ok_a", {"filter": {"range": {"n": {
                "gte": _Point(1.0)}}}}),
        ]
        for attempt in refused:
            with pytest.raises(UnstorableValue, match="cannot be stored exactly"):
                attempt()
        _assert_only_the_acknowledged(s)
        s.close()

    async def second() -> None:
        s = await Service(tmp_path).start()
        try:
            _assert_only_the_acknowledged(s)
        finally:
            s.close()

    run(first())
    run(second())


def _assert_only_the_acknowledged(s: Service) -> None:
    assert [t["name"] for t in s.coord.get_index_template(None)["index_templates"]] == ["ok_t"]
    assert s.coord.get_index_template("ok_t")["index_templates"][0]["index_template"] == {
        "index_patterns": ["ok-*"], "composed_of": ["ok_c"]}
    comps = s.coord.get_component_template(None)["component_templates"]
    assert [(c["name"], c["component_template"]) for c in comps] == [
        ("ok_c", {"template": {"settings": {"number_of_shards": 1}}})]
    assert s.coord.get_alias("i", None) == {"i": {"aliases": {
        "ok_a": {"filter": {"term": {"n": 1}}}}}}
