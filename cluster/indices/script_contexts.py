"""``GET /_script_context`` and ``GET /_script_language``: the script contexts this server
really runs, described as Elasticsearch describes them (each context's ``execute`` signature
and its getters), so a client that asks learns what it may send.

Elasticsearch lists some thirty contexts; we list the ones a script of ours can run in:
``update`` (``_update``, ``_bulk`` updates, ``_update_by_query``, ``_reindex``), ``score``
(``script_score``, ``function_score``), ``field`` (``script_fields``), ``number_sort`` and
``string_sort`` (``_script`` sort), and ``template`` (mustache search templates).
"""
from __future__ import annotations

from typing import Any

_MAP = "java.util.Map"


def _method(name: str, return_type: str, *params: tuple[str, str]) -> dict[str, Any]:
    return {"name": name, "return_type": return_type,
            "params": [{"type": t, "name": n} for t, n in params]}


_PARAMS = _method("getParams", _MAP)
_DOC = _method("getDoc", _MAP)
_SCORE = _method("get_score", "double")

#: Each context we run, with its methods in Elasticsearch's order (``execute`` first, then
#: the getters by name).
CONTEXT_METHODS: dict[str, list[dict[str, Any]]] = {
    "field": [_method("execute", "java.lang.Object"), _DOC, _PARAMS],
    "number_sort": [_method("execute", "double"), _DOC, _PARAMS, _SCORE],
    "score": [_method("execute", "double",
                      ("org.elasticsearch.script.ScoreScript$ExplanationHolder",
                       "explanation")), _DOC, _PARAMS, _SCORE],
    "string_sort": [_method("execute", "java.lang.String"), _DOC, _PARAMS, _SCORE],
    "template": [_method("execute", "java.lang.String"), _PARAMS],
    "update": [_method("execute", "void"), _method("getCtx", _MAP), _PARAMS],
}
#: The languages and the contexts each serves. Painless runs in all but ``template``;
#: mustache templates render, but as OpenSearch without its ``lang-mustache`` module we list
#: Painless only.
LANGUAGE_CONTEXTS = {"painless": sorted(set(CONTEXT_METHODS) - {"template"})}


def script_contexts() -> dict[str, Any]:
    """The body of ``GET /_script_context``, contexts sorted by name as Elasticsearch sorts."""
    return {"contexts": [{"name": name, "methods": methods}
                         for name, methods in sorted(CONTEXT_METHODS.items())]}


def script_languages() -> dict[str, Any]:
    """The body of ``GET /_script_language``: both script types are allowed (inline and
    stored), and each language's contexts."""
    return {"types_allowed": ["inline", "stored"],
            "language_contexts": [{"language": lang, "contexts": contexts}
                                  for lang, contexts in sorted(LANGUAGE_CONTEXTS.items())]}
