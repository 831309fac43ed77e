"""Mustache, as Elasticsearch's ``lang: mustache`` scripts (search templates) render it.

The renderer is ``pystache`` (logic-less mustache, as mustache.java) set up as Elasticsearch's
``CustomMustacheFactory``: a ``{{var}}`` value is escaped for a JSON string (Jackson's
``quoteAsString``: quotes, backslashes, control characters), values print as Java's
``toString`` (``true``, ``1.0``, ``[a, b]``, ``{a=1}``), a missing value prints nothing
(``{{var}}{{^var}}default{{/var}}`` gives defaults), ``{{list.0}}`` indexes a list, and the
functions ``{{#toJson}}name{{/toJson}}``, ``{{#join}}name{{/join}}``,
``{{#join delimiter='||'}}name{{/join delimiter='||'}}`` and ``{{#url}}...{{/url}}`` write
what Elasticsearch's do. Rendering is bounded: the template's size, the section iterations
and the characters written (each limit named in its error).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

import orjson
import pystache
from pystache.parser import ParsingError as MustacheSyntaxError
from pystache.parser import parse as parse_mustache

from ...errors import IllegalArgument, SearchError
from .javavalues import to_string

MAX_TEMPLATE_CHARS = 1_048_576     # a template's source
MAX_RENDERED_CHARS = 10_485_760    # what one rendering writes
MAX_ITERATIONS = 100_000           # section items one rendering visits
_JOIN = re.compile(r"\{\{\s*([#/])\s*join delimiter='(.*?)'\s*\}\}")
_FUNCTION = re.compile(r"\{\{\s*([#/])\s*(toJson|join|url)\s*\}\}", re.I)
_RAW = "__shardsearch_raw__"
#: What pystache raises on templates it cannot read (odd delimiters, ...), besides its own error.
_PYSTACHE_FAILURES = (MustacheSyntaxError, IndexError, ValueError, KeyError, TypeError,
                      AttributeError)


def template_error(reason: str, source: str) -> SearchError:
    """A template that cannot be compiled or run (Elasticsearch's ``script_exception``)."""
    return SearchError(reason, es_type="script_exception", status=400, script=source[:1000],
                       lang="mustache")


def check_template(source: str) -> None:
    """Parse ``source`` once, so a broken template is refused before it is stored or run."""
    if len(source) > MAX_TEMPLATE_CHARS:
        raise IllegalArgument(f"the search template is [{len(source)}] characters, more than "
                              f"the limit of [{MAX_TEMPLATE_CHARS}]")
    try:
        parse_mustache(source)
    except _PYSTACHE_FAILURES as e:
        raise template_error(f"Failed to compile inline script [{source[:200]}] using lang "
                             f"[mustache]: {e}", source) from None
    except RecursionError:
        raise template_error("the search template nests too deeply", source) from None
    unclosed = _unclosed_section(source)
    if unclosed is not None:
        raise template_error(f"Failed to close '{unclosed}' tag", source)


_PROBE = "{{/\u0000}}"
_EXPECTED = re.compile(r"expected \{\{/(.*)\}\}$", re.S)


def _unclosed_section(source: str) -> str | None:
    """The section left open at the end (pystache drops it silently; mustache.java refuses
    it): a closing tag for no section is appended, and pystache's mismatch error names the
    section it expected to close."""
    try:
        parse_mustache(source + _PROBE)
    except MustacheSyntaxError as e:
        found = _EXPECTED.search(str(e))
        return found.group(1) if found else None
    return None


class _Budget:
    """Counts what one rendering does; past a limit it stops with the limit's name."""

    def __init__(self) -> None:
        self.chars = 0
        self.iterations = 0

    def wrote(self, n: int) -> None:
        self.chars += n
        if self.chars > MAX_RENDERED_CHARS:
            raise IllegalArgument(f"the search template renders more than "
                                  f"[{MAX_RENDERED_CHARS}] characters")

    def visited(self, n: int) -> None:
        self.iterations += n
        if self.iterations > MAX_ITERATIONS:
            raise IllegalArgument(f"the search template visits more than [{MAX_ITERATIONS}] "
                                  "section items")


class _List(list):
    """A list whose items a dotted name reaches by position (``{{list.0}}``)."""

    def __getattr__(self, name: str) -> Any:
        if name.isdigit() and int(name) < len(self):
            return self[int(name)]
        raise AttributeError(name)


def _scope(value: Any) -> Any:
    if isinstance(value, list):
        return _List(_scope(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _scope(v) for k, v in value.items()}
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _java(value: Any) -> str:
    """Java's ``toString`` of a parameter; ``null`` prints nothing at the top level."""
    return "" if value is None else to_string(_plain(value))


def _url_encode(text: str) -> str:
    """Java's ``URLEncoder.encode(s, UTF_8)`` (space as ``+``; ``* - . _`` kept)."""
    return quote_plus(text, safe="*").replace("~", "%7E")


class _Renderer(pystache.Renderer):
    def __init__(self, budget: _Budget) -> None:
        super().__init__(escape=self._json_escape, missing_tags="ignore",
                         partials=_NoPartials())
        self.budget = budget

    def str_coerce(self, val: Any) -> str:
        return _java(val)

    def _json_escape(self, s: str) -> str:
        out = orjson.dumps(s).decode()[1:-1]
        self.budget.wrote(len(out))
        return out

    def _to_unicode_hard(self, s: Any) -> str:
        out = super()._to_unicode_hard(s)
        self.budget.wrote(len(out))
        return out

    def _make_render_engine(self) -> Any:
        engine = super()._make_render_engine()
        fetch = engine.fetch_section_data

        def counted(context: Any, name: str) -> Any:
            data = fetch(context, name)
            self.budget.visited(max(1, len(data)) if hasattr(data, "__len__") else 1)
            return data
        engine.fetch_section_data = counted
        return engine


class _NoPartials:
    """Partials (``{{> name}}``) would read templates from elsewhere; none exist here."""

    def get(self, name: str) -> str:
        raise IllegalArgument(f"Template {name} not found: partials ([{{{{> {name}}}}}]) are "
                              "not supported by this server")


def _rewrite_functions(source: str) -> tuple[str, dict[str, str]]:
    """Sections of Elasticsearch's functions renamed apart from any parameter (there a
    function's section always wins, as it is read when the template compiles):
    ``{{#toJson}}`` becomes ``{{#__fn_tojson__}}``, ``{{#join delimiter='x'}}`` becomes
    ``{{#__join_N__}}`` (a delimiter may hold a dot, which a name cannot); with each join
    section's delimiter."""
    joins: dict[str, str] = {}

    def rename_join(m: re.Match[str]) -> str:
        name = joins.setdefault(m.group(2), f"__join_{len(joins)}__")
        return "{{" + m.group(1) + name + "}}"
    text = _JOIN.sub(rename_join, source)
    text = _FUNCTION.sub(lambda m: "{{" + m.group(1) + f"__fn_{m.group(2).lower()}__" + "}}",
                         text)
    return text, {name: delimiter for delimiter, name in joins.items()}


@dataclass
class _Functions:
    """Elasticsearch's mustache functions as pystache section lambdas: each computes its text
    and returns a raw placeholder, so what it writes is never read again as a template."""

    params: dict[str, Any]
    renderer: _Renderer
    joins: dict[str, str]
    raw: dict[str, str]

    def context(self) -> dict[str, Any]:
        out: dict[str, Any] = {"__fn_tojson__": self.to_json, "__fn_join__": self.joiner(","),
                               "__fn_url__": self.url, _RAW: self.raw}
        for name, delimiter in self.joins.items():
            out[name] = self.joiner(delimiter)
        return out

    def _placeholder(self, text: str) -> str:
        key = f"r{len(self.raw)}"
        self.raw[key] = text
        return "{{{" + _RAW + "." + key + "}}}"

    def _resolve(self, name: str, function: str) -> Any:
        if "{{" in name:
            raise IllegalArgument(f"Mustache function [{function}] must contain one and only "
                                  "one identifier")
        value: Any = self.params
        for part in name.strip().split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
        return value

    def to_json(self, text: str | None = None) -> str:
        value = None if text is None else self._resolve(text, "toJson")
        if value is None:
            return ""
        if isinstance(value, (list, dict)):
            return self._placeholder(orjson.dumps(_plain(value)).decode())
        return self._placeholder(_java(value))

    def joiner(self, delimiter: str) -> Any:
        def join(text: str | None = None) -> str:
            if text is None:
                return ""
            value = self._resolve(text, "join")
            if isinstance(value, list):
                return self._placeholder(delimiter.join(to_string(_plain(v)) for v in value))
            return self._placeholder(text)
        return join

    def url(self, text: str | None = None) -> str:
        if text is None:
            return ""
        inner = self.renderer.render(text, self.context(), self.params)
        return self._placeholder(_url_encode(inner))



def render_text(source: str, params: dict[str, Any]) -> str:
    """The template's text with ``params`` (bounded; a template pystache cannot read is a
    ``script_exception``)."""
    check_template(source)
    text, joins = _rewrite_functions(source)
    renderer = _Renderer(_Budget())
    scope = _scope(params)
    functions = _Functions(scope, renderer, joins, {})
    try:
        return renderer.render(text, functions.context(), scope)
    except _PYSTACHE_FAILURES as e:
        raise template_error(f"Failed to compile inline script [{source[:200]}] using lang "
                             f"[mustache]: {e}", source) from None
    except RecursionError:
        raise template_error("the search template nests too deeply", source) from None
