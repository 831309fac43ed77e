"""Scripts: a documented subset of Painless, parsed into a tree and evaluated without Python's
``eval`` (README, "Scripts (the Painless subset)").

:func:`compile_script` checks a script object (``source``, ``params``, ``lang``; a stored
script's ``id`` the front end has already resolved) and parses its source once (a bounded LRU
cache keyed by source and context);
:meth:`Compiled.run` evaluates it over a context's variables. Every error is a
:class:`ScriptError` (``script_exception``, 400) with Elasticsearch's fields.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from threading import Lock
from typing import Any

from ...errors import IllegalArgument
from ..cancellation import NO_LIMIT, Cancellation
from .errors import ScriptError, ScriptFault, script_error
from .interpreter import Interpreter
from .javavalues import to_string
from .lexer import Float, Long
from .methods import DocField
from .parser import Node, parse

__all__ = ["Compiled", "DocField", "ScriptError", "compile_script", "json_value",
           "parse_script_object",
           "UPDATE_CONTEXT", "SEARCH_CONTEXT", "SCORE_CONTEXT"]

UPDATE_CONTEXT = frozenset({"ctx", "params"})
SEARCH_CONTEXT = frozenset({"doc", "params"})
SCORE_CONTEXT = frozenset({"doc", "params", "_score"})
CACHE_SIZE = 512                 # compiled scripts kept (Painless's script.cache.max_size: 3000)
_SCRIPT_KEYS = {"source", "params", "lang", "id", "options", "inline"}

_cache: OrderedDict[tuple[str, frozenset[str]], Node] = OrderedDict()
_cache_lock = Lock()


@dataclass(frozen=True)
class Compiled:
    """A parsed script and its ``params``; :meth:`run` evaluates it once."""

    source: str
    tree: Node
    params: dict[str, Any] = field(default_factory=dict)

    def run(self, variables: dict[str, Any], cancel: Cancellation = NO_LIMIT) -> Any:
        """The script's value over ``variables`` (``params`` added); runtime errors become
        ``script_exception`` with the position of the failing expression."""
        scope = {"params": self.params, **variables}
        try:
            return Interpreter(scope, cancel).run(self.tree)
        except ScriptFault as f:
            raise script_error(self.source, f, compile_time=False) from None
        except RecursionError:
            raise script_error(self.source, ScriptFault(
                "stack_overflow_error", "the script nests too deeply", 0, 0), False) from None


def json_value(source: str, value: Any) -> Any:
    """``value`` as plain JSON data (a document, a field of a hit): ``doc['f']`` becomes its
    values; anything else that JSON cannot hold (``doc`` itself, a List that contains itself)
    is the script's runtime error."""
    try:
        return _plain(value, 0)
    except (TypeError, ValueError, RecursionError):
        raise script_error(source, ScriptFault(
            "illegal_argument_exception", "the script's value cannot be written as JSON", 0,
            len(source)), compile_time=False) from None


def _plain(value: Any, depth: int) -> Any:
    if depth > 100:
        raise ValueError("too deep")
    if value is None or type(value) in (bool, str, float, int, Long, Float):
        return value
    if isinstance(value, DocField):
        return list(value.values)
    if type(value) is list:
        return [_plain(v, depth + 1) for v in value]
    if type(value) is dict:
        return {_key(k): _plain(v, depth + 1) for k, v in value.items()}
    raise TypeError(type(value).__name__)


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if k is None or isinstance(k, (bool, int, float)):
        return to_string(k)
    raise TypeError("a Map key must be a String or a number")


def parse_script_object(script: Any) -> tuple[str, dict[str, Any]]:
    """``(source, params)`` of a script object (or a bare source string), checked as
    Elasticsearch checks it: only ``painless``; a stored script (``id``) has been replaced by
    its source before the request was parsed (``indices/stored_scripts.py``), so one left is
    refused."""
    if isinstance(script, str):
        return script, {}
    if not isinstance(script, dict):
        raise IllegalArgument("[script] must be an object or a string")
    unknown = sorted(set(script) - _SCRIPT_KEYS)
    if unknown:
        raise IllegalArgument(f"[script] unknown field [{unknown[0]}]")
    lang = script.get("lang", "painless")
    if lang != "painless":
        raise IllegalArgument(f"script_lang not supported [{lang}]")
    if "id" in script:
        raise IllegalArgument("a stored script ([script.id]) cannot be used in this place by "
                              "this server; send the script's [source]")
    if script.get("options"):
        raise IllegalArgument("[script.options] are not supported by this server")
    source = script.get("source", script.get("inline"))
    if not isinstance(source, str):
        raise IllegalArgument("must specify either [source] for an inline script or [id] for "
                              "a stored script")
    params = script.get("params") or {}
    if not isinstance(params, dict):
        raise IllegalArgument("[params] must be an object")
    return source, params


def compile_script(script: Any, context: frozenset[str] = UPDATE_CONTEXT) -> Compiled:
    """The script object parsed for ``context`` (its predefined variables), from the cache
    when the same source was compiled before."""
    source, params = parse_script_object(script)
    key = (source, context)
    with _cache_lock:
        tree = _cache.get(key)
        if tree is not None:
            _cache.move_to_end(key)
    if tree is None:
        try:
            tree = parse(source, context)
        except ScriptFault as f:
            raise script_error(source, f, compile_time=True) from None
        except RecursionError:    # a long operator chain: nesting is bounded, chains are not
            raise script_error(source, ScriptFault(
                "illegal_argument_exception", "the script nests too deeply", 0, 0),
                compile_time=True) from None
        with _cache_lock:
            _cache[key] = tree
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return Compiled(source, tree, params)
