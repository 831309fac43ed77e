"""The pure logic of stored scripts and search templates, without Ray or HTTP: mustache as
Elasticsearch renders it, the template request, the stored-script records and references."""
from __future__ import annotations

from typing import Any

import pytest

from shardsearch.cluster.engine.script.mustache import (MAX_ITERATIONS, MAX_RENDERED_CHARS,
                                                        MAX_TEMPLATE_CHARS, check_template,
                                                        render_text)
from shardsearch.cluster.errors import SearchError
from shardsearch.cluster.indices.stored_scripts import (MAX_SIZE_BYTES, StoredScripts,
                                                        parse_stored, referenced_ids,
                                                        substitute)
from shardsearch.cluster.search.search_template import (parse_template_request, render_body,
                                                        search_body)


@pytest.mark.parametrize("template, params, expected", [
    ('"{{q}}"', {"q": 'say "hi"\\\n'}, '"say \\"hi\\"\\\\\\n"'),     # JSON escaping, not HTML
    ("{{q}}", {"q": "<b>&</b>"}, "<b>&</b>"),
    ("{{n}} {{f}} {{t}} {{z}}", {"n": 3, "f": 1.0, "t": True, "z": False}, "3 1.0 true false"),
    ("{{l}} {{m}}", {"l": ["a", 1], "m": {"k": "v"}}, "[a, 1] {k=v}"),   # Java's toString
    ("[{{missing}}]", {}, "[]"),
    ("{{x}}{{^x}}default{{/x}}", {}, "default"),
    ("{{x}}{{^x}}default{{/x}}", {"x": "given"}, "given"),
    ("{{l.1}}", {"l": ["a", "b"]}, "b"),
    ("{{#l}}<{{k}}>{{/l}}", {"l": [{"k": 1}, {"k": 2}]}, "<1><2>"),
    ("{{#toJson}}o{{/toJson}}", {"o": {"a": [1, "x"]}}, '{"a":[1,"x"]}'),
    ("{{#toJson}}o.a{{/toJson}}", {"o": {"a": [1, 2]}}, "[1,2]"),
    ("{{#toJson}}s{{/toJson}}", {"s": "{{not a tag}}"}, "{{not a tag}}"),
    ("{{#join}}l{{/join}}", {"l": ["a", "b", 3]}, "a,b,3"),
    ("{{#join delimiter='||'}}l{{/join delimiter='||'}}", {"l": ["a", "b"]}, "a||b"),
    ("{{#join delimiter='.'}}l{{/join delimiter='.'}}", {"l": ["a", "b"]}, "a.b"),
    ("[{{url}}{{toJson}}{{join}}]", {}, "[]"),          # a function named as a value: nothing
    ("{{#url}}{{url}}{{/url}}", {"url": "a b"}, "a+b"),
    ("{{#url}}{{u}}{{/url}}", {"u": "a b&c/~*"}, "a+b%26c%2F%7E*"),
])
def test_mustache_renders_as_elasticsearch(template: str, params: dict[str, Any],
                                           expected: str) -> None:
    assert render_text(template, params) == expected


def test_a_template_that_is_not_closed_is_a_script_exception() -> None:
    with pytest.raises(SearchError) as e:
        check_template('{"query": {{#a}} }')
    assert e.value.es_type == "script_exception" and e.value.reason == "Failed to close 'a' tag"
    with pytest.raises(SearchError) as e:
        check_template("{{#a}}{{/b}}")
    assert e.value.es_type == "script_exception"


@pytest.mark.parametrize("template", ["{{=a=}}", "{{= =}}", "{{#toJson}}a{{b}}{{/toJson}}",
                                      "{{> partial}}", "{{#}}{{/}}"])
def test_a_template_pystache_cannot_read_is_a_400(template: str) -> None:
    with pytest.raises(SearchError) as e:
        render_text(template, {"a": 1, "b": 2})
    assert e.value.status == 400


def test_rendering_is_bounded_and_each_limit_is_named() -> None:
    with pytest.raises(SearchError, match=f"more than the limit of \\[{MAX_TEMPLATE_CHARS}\\]"):
        render_text("x" * (MAX_TEMPLATE_CHARS + 1), {})
    nested = "{{#l}}{{#l}}{{#l}}x{{/l}}{{/l}}{{/l}}"
    with pytest.raises(SearchError, match=f"more than \\[{MAX_ITERATIONS}\\] section items"):
        render_text(nested, {"l": list(range(100))})
    with pytest.raises(SearchError, match=f"more than \\[{MAX_RENDERED_CHARS}\\] characters"):
        render_text("{{q}}" * 20, {"q": "x" * 1_000_000})


def test_a_rendering_that_is_not_json_is_an_x_content_parse_exception() -> None:
    with pytest.raises(SearchError) as e:
        render_body('{"size": {{n}}', {"n": 1})
    assert e.value.es_type == "x_content_parse_exception" and e.value.status == 400
    assert render_body('{"size": {{n}}}', {"n": 2}) == {"size": 2}


def test_template_request_fields_are_checked_by_name() -> None:
    req = parse_template_request({"source": {"size": "{{n}}"}, "params": {"n": 1},
                                  "explain": True})
    assert req.source == '{"size":"{{n}}"}' and req.explain
    assert search_body(req, {}) == {"size": "1", "explain": True}
    with pytest.raises(SearchError, match=r"unknown field \[nope\]"):
        parse_template_request({"source": "{}", "nope": 1})
    with pytest.raises(SearchError, match="template is missing"):
        parse_template_request({"params": {}})


def test_a_template_id_names_a_stored_mustache_script() -> None:
    req = parse_template_request({"id": "t", "params": {"n": 3}})
    stored = {"t": {"lang": "mustache", "source": '{"size": {{n}}}'}}
    assert search_body(req, stored) == {"size": 3}
    with pytest.raises(SearchError) as e:
        search_body(req, {})
    assert e.value.es_type == "resource_not_found_exception" and e.value.status == 404
    with pytest.raises(SearchError, match="not a \\[mustache\\] search template"):
        search_body(req, {"t": {"lang": "painless", "source": "1"}})


def test_stored_records_keep_lang_and_source_and_compile_painless_now() -> None:
    assert parse_stored("s", {"script": {"lang": "painless", "source": "params.a"}}) == \
        {"lang": "painless", "source": "params.a"}
    assert parse_stored("t", {"script": {"lang": "mustache", "source": {"size": 1}}}) == \
        {"lang": "mustache", "source": '{"size":1}',
         "options": {"content_type": "application/json"}}
    for script, reason in (({"lang": "", "source": "1"}, "lang cannot be empty"),
                           ({"lang": "painless", "source": ""}, "source cannot be empty")):
        with pytest.raises(SearchError, match=reason):
            parse_stored("s", {"script": script})
    with pytest.raises(SearchError) as e:
        parse_stored("s", {"script": {"lang": "painless", "source": "1 +"}})
    assert e.value.es_type == "script_exception"
    with pytest.raises(SearchError, match=f"stored script size in bytes \\[{MAX_SIZE_BYTES}\\]"):
        parse_stored("s", {"script": {"lang": "painless", "source": "1;" * MAX_SIZE_BYTES}})
    with pytest.raises(SearchError, match=r"\[script.params\] in a stored script"):
        parse_stored("s", {"script": {"lang": "painless", "source": "1", "params": {"a": 1}}})
    with pytest.raises(SearchError, match="illegal compiler options"):
        parse_stored("s", {"script": {"lang": "painless", "source": "1", "options": {"a": 1}}})


def test_references_are_found_in_scripts_and_never_in_documents_or_params() -> None:
    body = {"query": {"script_score": {"script": {"id": "a", "params": {
        "script": {"id": "inside-params"}}}}},
        "script_fields": {"f": {"script": {"id": "b"}}, "g": {"script": {"source": "1"}}},
        "doc": {"script": {"id": "a-document"}},
        "aggs": {"s": {"scripted_metric": {"map_script": {"id": "a"}}}}}
    assert referenced_ids(body) == ["a", "b"]
    stored = {"a": {"lang": "painless", "source": "A"}, "b": {"lang": "painless", "source": "B"}}
    out = substitute(body, stored)
    assert out["query"]["script_score"]["script"] == {
        "source": "A", "lang": "painless", "params": {"script": {"id": "inside-params"}}}
    assert out["script_fields"]["f"]["script"] == {"source": "B", "lang": "painless"}
    assert out["doc"] == {"script": {"id": "a-document"}}
    with pytest.raises(SearchError, match=r"unable to find script \[b\] in cluster state"):
        substitute(body, {"a": stored["a"]})


def test_the_store_saves_on_every_change_and_answers_get_as_elasticsearch() -> None:
    saved: list[dict[str, Any]] = []
    store = StoredScripts()
    store.saved = lambda scripts: saved.append(dict(scripts))
    store.put("s", {"script": {"lang": "painless", "source": "1"}})
    assert store.get("s") == (200, {"_id": "s", "found": True,
                                    "script": {"lang": "painless", "source": "1"}})
    store.delete("s")
    assert store.get("s") == (404, {"_id": "s", "found": False})
    assert saved == [{"s": {"lang": "painless", "source": "1"}}, {}]
    with pytest.raises(SearchError) as e:
        store.delete("s")
    assert e.value.status == 404


def test_every_search_template_url_parameter_reaches_the_search_parser() -> None:
    """``explain`` and ``profile`` become body flags; every other parameter of
    ``_search/template`` is one ``_search`` takes (and ``test_every_accepted_key.py``
    classifies), so a template search accepts and refuses what a search does."""
    from shardsearch.api.params import COMMON
    from shardsearch.api.routes.scripts import TEMPLATE_PARAMS
    from shardsearch.cluster.search.request import SEARCH_PARAMS
    assert TEMPLATE_PARAMS - {"explain", "profile"} - COMMON <= SEARCH_PARAMS
