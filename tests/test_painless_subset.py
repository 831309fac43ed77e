"""The Painless subset (``cluster/engine/script``), evaluated without Ray: each row is a script
and the value Painless gives for it, or the error type it raises. The same table runs against
a real OpenSearch node in ``tests/differential/test_scripts_differential.py``."""
from __future__ import annotations

from typing import Any

import pytest

from shardsearch.cluster.engine.script import (SEARCH_CONTEXT, DocField, ScriptError,
                                               compile_script)
from shardsearch.cluster.engine.script.interpreter import LOOP_LIMIT_TEXT
from shardsearch.cluster.errors import IllegalArgument

# (source, params, the value of the script)
VALUES: list[tuple[str, dict[str, Any], Any]] = [
    ("1 + 2 * 3", {}, 7),
    ("7 / 2", {}, 3),
    ("-7 / 2", {}, -3),
    ("-7 % 3", {}, -1),
    ("7.0 / 2", {}, 3.5),
    ("2147483647 + 1", {}, -2147483648),
    ("9223372036854775807L + 1", {}, -9223372036854775808),
    ("int x = 7; x += 1.9; x", {}, 8),
    ("'a' + 1 + true + null", {}, "a1truenull"),
    ("'n=' + 1.0", {}, "n=1.0"),
    ("1 == 1.0", {}, True),
    ("'ab' == 'a' + 'b'", {}, True),
    ("[1, 2] == [1, 2]", {}, True),
    ("def x = null; x ?: 'dflt'", {}, "dflt"),
    ("def m = ['a': ['b': 2]]; m.a.b + m['a']['b']", {}, 4),
    ("def m = [:]; m?.x?.y", {}, None),
    ("true && !false || false", {}, True),
    ("3 > 2 ? 'yes' : 'no'", {}, "yes"),
    ("def s = 0; for (int i = 0; i < 10; ++i) { if (i % 2 == 0) { continue } s += i } s", {}, 25),
    ("def s = 0; for (def x : params.xs) { if (x > 3) { break; } s += x; } return s",
     {"xs": [1, 2, 3, 4, 5]}, 6),
    ("int i = 0; while (i < 5) { i++ } i", {}, 5),
    ("def l = new ArrayList(); l.add(3); l.add(0, 1); l.size() * 10 + l.get(0)", {}, 21),
    ("def m = new HashMap(); m.put('k', 1); m.containsKey('k') && !m.isEmpty()", {}, True),
    ("def l = [1, 2, 3]; l.remove(0); l", {}, [2, 3]),
    ("'Hello'.toLowerCase().substring(1, 3) + 'x'.toUpperCase()", {}, "elX"),
    ("'hello'.indexOf('l') + 'hello'.length()", {}, 7),
    ("'abc'.startsWith('a') && 'abc'.endsWith('c') && 'abc'.contains('b')", {}, True),
    ("Math.max(1, 2.5) + Math.min(3, 4) + Math.abs(-2)", {}, 7.5),
    ("Math.floor(2.7) + Math.ceil(2.1) + Math.round(2.5)", {}, 8.0),
    ("Math.sqrt(16) + Math.pow(2, 10)", {}, 1028.0),
    ("String.valueOf(12) + Integer.parseInt('30')", {}, "1230"),
    ("(int) 3.9 + (long) 2", {}, 5),
    ("params.a instanceof String", {"a": "x"}, True),
    ("params['n'] * 2", {"n": 21}, 42),
    ("if (params.n > 1) { return 'big' } else { return 'small' }", {"n": 0}, "small"),
    ("1 << 3 | 1", {}, 9),
    ("def x = 5; x === 5", {}, True),
]

# (source, params, the type of ``caused_by``); ``def`` keeps each a runtime error in Painless
# too (with static types, Painless finds ``1 / 0`` or ``'a' - 1`` while compiling)
ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("params.missing + 1", {}, "null_pointer_exception"),
    ("params.m.x", {}, "null_pointer_exception"),
    ("def x = 0; 1 / x", {}, "arithmetic_exception"),
    ("def s = 'a'; s - 1", {}, "class_cast_exception"),
    ("def l = [1]; l.get(3)", {}, "index_out_of_bounds_exception"),
    ("Integer.parseInt('x1')", {}, "number_format_exception"),
    ("def s = 'abc'; s.foo()", {}, "illegal_argument_exception"),
    ("boolean x = true; while (x) {}", {}, "painless_error"),
]

COMPILE_ERRORS = ["x + 1", "1 +", "def = 3", "if (true", "'unterminated", "Math.nope(1)",
                  "x -> x", "int 1", "params = 1"]


def run(source: str, params: dict[str, Any], **variables: Any) -> Any:
    return compile_script({"source": source, "params": params}).run({"ctx": {}, **variables})


@pytest.mark.parametrize(("source", "params", "expected"), VALUES)
def test_a_script_gives_the_value_painless_gives(source: str, params: dict[str, Any],
                                                 expected: Any) -> None:
    got = run(source, params)
    assert got == expected
    assert isinstance(got, float) == isinstance(expected, float)
    assert isinstance(got, bool) == isinstance(expected, bool)


@pytest.mark.parametrize(("source", "params", "java_type"), ERRORS)
def test_a_runtime_error_is_a_script_exception_with_its_java_cause(
        source: str, params: dict[str, Any], java_type: str) -> None:
    with pytest.raises(ScriptError) as e:
        run(source, params)
    cause = e.value.to_cause()
    assert cause["type"] == "script_exception" and cause["reason"] == "runtime error"
    assert cause["caused_by"]["type"] == java_type
    assert cause["lang"] == "painless" and cause["script"] == source
    assert cause["script_stack"][-1].strip().endswith("^---- HERE")


@pytest.mark.parametrize("source", COMPILE_ERRORS)
def test_a_compile_error_is_a_script_exception_with_its_position(source: str) -> None:
    with pytest.raises(ScriptError) as e:
        compile_script(source)
    cause = e.value.to_cause()
    assert cause["reason"] == "compile error", cause
    assert cause["caused_by"]["type"] == "illegal_argument_exception"
    pos = cause["position"]
    assert 0 <= pos["start"] <= pos["offset"] <= max(pos["end"], pos["offset"]) <= len(source)


def test_an_unknown_variable_is_named_at_its_position() -> None:
    with pytest.raises(ScriptError) as e:
        compile_script("def a = 1; a + b")
    assert e.value.extra["caused_by"]["reason"] == "cannot resolve symbol [b]"
    assert e.value.extra["position"]["offset"] == 15


def test_the_loop_budget_stops_an_endless_loop_with_painless_text() -> None:
    with pytest.raises(ScriptError) as e:
        run("int i = 0; while (true) { i++ }", {})
    assert e.value.extra["caused_by"]["reason"] == LOOP_LIMIT_TEXT


def test_a_script_cannot_grow_a_string_without_bound() -> None:
    with pytest.raises(ScriptError) as e:
        run("def s = 'x'; while (true) { s = s + s }", {})
    assert e.value.extra["caused_by"]["type"] == "painless_error"


def test_deep_nesting_is_a_compile_error_not_a_crash() -> None:
    with pytest.raises(ScriptError):
        compile_script("(" * 500 + "1" + ")" * 500)


def test_a_script_writes_ctx_source() -> None:
    ctx = {"_source": {"n": 1, "tags": ["a"], "gone": 1}, "op": "index"}
    compile_script({"source": "ctx._source.n += params.by; ctx._source.tags.add('b'); "
                              "ctx._source.remove('gone'); ctx._source['new'] = 'v'",
                    "params": {"by": 2}}).run({"ctx": ctx})
    assert ctx["_source"] == {"n": 3, "tags": ["a", "b"], "new": "v"}


def test_doc_values_read_through_doc() -> None:
    script = compile_script({"source": "doc['n'].size() == 0 ? 0 : doc['n'].value * params.f",
                             "params": {"f": 2}}, SEARCH_CONTEXT)
    assert script.run({"doc": {"n": DocField("n", [21])}}) == 42
    assert script.run({"doc": {"n": DocField("n", [])}}) == 0


def test_ctx_is_not_visible_to_a_search_script() -> None:
    with pytest.raises(ScriptError):
        compile_script("ctx._source.x", SEARCH_CONTEXT)


@pytest.mark.parametrize("script", [{"source": "1", "lang": "expression"}, {"id": "stored"},
                                    {"source": 1}, {"source": "1", "nope": 1}])
def test_other_languages_and_unresolved_stored_scripts_are_refused(script: dict[str, Any]) -> None:
    with pytest.raises(IllegalArgument):
        compile_script(script)
