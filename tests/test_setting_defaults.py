"""``include_defaults=true`` shows the values the server really falls back to: each listed
default, given to the code that reads it, behaves as the setting left unset (pure)."""
from __future__ import annotations

from shardsearch.cluster.distribution.translog_settings import translog_settings
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.merge_policy import MergePolicy
from shardsearch.cluster.indices.catalog import IndexMeta, refresh_interval_s
from shardsearch.cluster.setting_defaults import FIXED_DEFAULTS, index_defaults
from shardsearch.cluster.values import nest


def _meta(settings: dict) -> IndexMeta:
    return IndexMeta(name="i", uuid="u", created_ms=0, number_of_shards=1,
                     number_of_replicas=0, settings=settings, mapping=Mapping.from_body(None))


def test_each_listed_default_reads_as_the_unset_setting() -> None:
    d = FIXED_DEFAULTS
    assert refresh_interval_s({"refresh_interval": d["refresh_interval"]}) == \
        refresh_interval_s({})
    translog = {k: v for k, v in d.items() if k.startswith("translog.")}
    assert translog_settings(translog) == translog_settings({})
    merge = {k: v for k, v in d.items() if k.startswith("merge.policy.")}
    assert MergePolicy.from_settings(merge) == MergePolicy.from_settings({})
    assert _meta({"max_result_window": d["max_result_window"]}).max_result_window == \
        _meta({}).max_result_window


def test_a_setting_the_index_sets_is_not_listed_as_a_default() -> None:
    out = index_defaults(_meta({"refresh_interval": "5s", "max_result_window": 20}))["index"]
    assert "refresh_interval" not in out and "max_result_window" not in out
    assert out["max_rescore_window"] == "20"
    assert out == nest({k: v for k, v in {**FIXED_DEFAULTS, "max_rescore_window": "20"}.items()
                        if k not in ("refresh_interval", "max_result_window")})
