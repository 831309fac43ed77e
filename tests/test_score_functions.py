"""The arithmetic of ``function_score`` (``cluster/engine/query/score_functions.py``), one rule
per test: each modifier, each decay shape, each ``score_mode`` and ``boost_mode``, and the
random score's determinism — pure functions of arrays, no cluster."""
from __future__ import annotations

import math

import numpy as np
import pytest

from shardsearch.cluster.engine.query import score_functions as F
from shardsearch.cluster.errors import IllegalArgument

MODIFIED = {"none": 4.0, "log": math.log10(4), "log1p": math.log10(5), "log2p": math.log10(6),
            "ln": math.log(4), "ln1p": math.log1p(4), "ln2p": math.log(6), "square": 16.0,
            "sqrt": 2.0, "reciprocal": 0.25}


@pytest.mark.parametrize(("modifier", "expected"), sorted(MODIFIED.items()))
def test_each_modifier_applies_to_factor_times_value(modifier: str, expected: float) -> None:
    got = F.field_value_factor(np.array([2.0]), np.array([True]), "f", 2.0, modifier, None)
    assert got[0] == pytest.approx(expected)


def test_a_missing_value_uses_missing_or_is_an_error() -> None:
    present = np.array([True, False])
    got = F.field_value_factor(np.array([3.0, 0.0]), present, "f", 1.0, "none", 9.0)
    assert got.tolist() == [3.0, 9.0]
    with pytest.raises(IllegalArgument, match=r"Missing value for field \[f\]"):
        F.field_value_factor(np.array([3.0, 0.0]), present, "f", 1.0, "none", None)


def test_a_negative_factor_result_is_refused_as_elasticsearch_words_it() -> None:
    with pytest.raises(IllegalArgument, match=r"must not produce negative scores, but got: "
                                              r"\[-Infinity\] for field value: \[0.0\]"):
        F.field_value_factor(np.array([0.0]), np.array([True]), "f", 1.0, "ln", None)


@pytest.mark.parametrize("shape", F.DECAY_SHAPES)
def test_every_decay_is_one_at_origin_and_decay_at_scale(shape: str) -> None:
    got = F.decay_curve(shape, 10.0, 0.3, np.array([0.0, 10.0]))
    assert got[0] == pytest.approx(1.0)
    assert got[1] == pytest.approx(0.3)


def test_linear_decay_reaches_zero_and_stays_there() -> None:
    # s = scale / (1 - decay) = 20: zero from distance 20 on
    assert F.decay_curve("linear", 10.0, 0.5, np.array([20.0, 35.0])).tolist() == [0.0, 0.0]


def test_distances_subtract_the_offset_and_reduce_multiple_values_by_mode() -> None:
    values = np.array([1.0, 9.0, 4.0])
    value_docs = np.array([0, 0, 1])
    for mode, expected in (("min", [1.0, 0.0, 0.0]), ("max", [3.0, 0.0, 0.0]),
                           ("sum", [4.0, 0.0, 0.0]), ("avg", [2.0, 0.0, 0.0])):
        dist, present = F.decay_distances(values, value_docs, 3, origin=4.0, offset=2.0,
                                          mode=mode)
        assert dist.tolist() == expected, mode
        assert present.tolist() == [True, True, False]


def test_random_scores_are_in_unit_interval_and_depend_only_on_key_and_seed() -> None:
    keys = np.arange(1000, dtype=np.uint64)
    a = F.random_scores(keys, 42)
    assert ((a >= 0) & (a < 1)).all()
    assert np.array_equal(a[500:], F.random_scores(keys[500:], 42))   # no position dependence
    assert not np.array_equal(a, F.random_scores(keys, 43))
    assert len(np.unique(a)) > 990


def _parts() -> list[tuple[np.ndarray, np.ndarray, float]]:
    # doc 0: both functions apply; doc 1: only the second; doc 2: none
    return [(np.array([True, False, False]), np.array([4.0, 0.0, 0.0]), 2.0),
            (np.array([True, True, False]), np.array([3.0, 5.0, 0.0]), 1.0)]


@pytest.mark.parametrize(("mode", "expected"), [
    ("multiply", [12.0, 5.0, 1.0]), ("sum", [7.0, 5.0, 1.0]), ("avg", [7 / 3, 5.0, 1.0]),
    ("first", [4.0, 5.0, 1.0]), ("max", [4.0, 5.0, 1.0]), ("min", [3.0, 5.0, 1.0])])
def test_score_mode_combines_the_functions_that_apply(mode: str, expected: list[float]) -> None:
    assert F.combine_functions(_parts(), mode, 3).tolist() == pytest.approx(expected)


@pytest.mark.parametrize(("mode", "expected"), [
    ("multiply", [6.0, 8.0]), ("replace", [3.0, 4.0]), ("sum", [5.0, 6.0]),
    ("avg", [2.5, 3.0]), ("max", [3.0, 4.0]), ("min", [2.0, 2.0])])
def test_boost_mode_combines_query_and_functions_capped_by_max_boost(
        mode: str, expected: list[float]) -> None:
    got = F.combine_boost(np.array([2.0, 2.0], dtype=np.float32), np.array([3.0, 9.0]), mode,
                          max_boost=4.0)
    assert got.dtype == np.float32
    assert got.tolist() == expected


def test_score_script_helpers_follow_elasticsearch_formulas_in_scoring_contexts_only() -> None:
    from shardsearch.cluster.engine.script import SCORE_CONTEXT, ScriptError, compile_script

    def run(source: str) -> float:
        return compile_script(source, SCORE_CONTEXT).run({"doc": {}, "_score": 1.0})
    assert run("saturation(3, 1)") == 0.75
    assert run("sigmoid(2, 2, 3)") == 0.5
    assert run("decayNumericLinear(10, 4, 1, 0.5, 15)") == pytest.approx(0.5)
    assert run("decayNumericExp(10, 4, 0, 0.25, 6)") == pytest.approx(0.25)
    assert run("decayNumericGauss(10, 4, 0, 0.25, 14)") == pytest.approx(0.25)
    with pytest.raises(ScriptError) as err:
        compile_script("saturation(3, 1)")      # the update context has no helpers
    assert "cannot resolve symbol [saturation]" in str(err.value.to_cause())
