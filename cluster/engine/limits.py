"""Limits on what one request may ask for, with Elasticsearch's names, defaults and error texts.

Each is checked before the work it bounds starts (and never with unbounded cost itself):

* JSON nesting depth of a request body (Elasticsearch's parser stops at 1,000 levels; ours at
  :data:`MAX_JSON_DEPTH`, because bodies travel between processes and are walked recursively);
* immense terms: a keyword value over 32,766 UTF-8 bytes rejects its document, as Lucene does;
* ``_source`` include/exclude patterns per request (:data:`MAX_SOURCE_PATTERNS`);
* ``cluster.max_shards_per_node``: shard copies the node may hold, sized from its memory.

``index.mapping.depth.limit`` and ``index.mapping.total_fields.limit`` live with the mapping
(``properties.MAX_DEPTH``, ``doc_parsing.MAX_TOTAL_FIELDS``); ``index.max_regex_length`` with the
query checks (``matcher.MAX_REGEX_LENGTH``); ``indices.query.bool.max_clause_count`` with the query
parser.
"""
from __future__ import annotations

import os
from typing import Any

from ..errors import IllegalArgument, SearchError, XContentParseError

MAX_JSON_DEPTH = 500
MAX_TERM_BYTES = 32766                 # Lucene's IndexWriter.MAX_TERM_LENGTH
MAX_SOURCE_PATTERNS = 1024
SHARD_COPY_MIB = 150                   # a shard copy's process, measured (RAY_NOTES.md)


def check_json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse a parsed body nested deeper than ``limit`` (iterative: the depth is untrusted)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > limit:
            raise XContentParseError(f"Document nesting depth ({depth}) exceeds the maximum "
                                     f"allowed ({limit})")
        if isinstance(obj, dict):
            stack.extend((v, depth + 1) for v in obj.values() if isinstance(v, (dict, list)))
        elif isinstance(obj, list):
            stack.extend((v, depth + 1) for v in obj if isinstance(v, (dict, list)))


def check_immense_terms(parsed: dict[str, list[Any]], kind_of: Any) -> None:
    """Reject a document with a keyword value over 32,766 UTF-8 bytes, in Lucene's words.

    ``kind_of(path)`` is the field's kind. Only values longer than a quarter of the limit in
    characters are encoded (a character is at most 4 bytes), so ordinary documents cost a
    ``len`` per keyword value.
    """
    for path, values in parsed.items():
        for v in values:
            if type(v) is str and len(v) > MAX_TERM_BYTES // 4 and kind_of(path) == "keyword":
                size = len(v.encode("utf-8", "surrogatepass"))
                if size > MAX_TERM_BYTES:
                    prefix = list(v.encode("utf-8", "surrogatepass")[:30])
                    raise IllegalArgument(
                        f'Document contains at least one immense term in field="{path}" (whose '
                        f"UTF8 encoding is longer than the max length {MAX_TERM_BYTES}), all of "
                        "which were skipped.  Please correct the analyzer to not produce such "
                        f"terms.  The prefix of the first immense term is: '{prefix}...', "
                        f"original message: bytes can be at most {MAX_TERM_BYTES} in length; "
                        f"got {size}")


def check_source_patterns(patterns: list[Any], limit: int = MAX_SOURCE_PATTERNS) -> None:
    """A ``_source`` filter with more patterns than ``limit`` is refused before matching."""
    if len(patterns) > limit:
        raise IllegalArgument(f"Trying to filter _source with [{len(patterns)}] include and "
                              f"exclude patterns, more than the limit of [{limit}]")


def default_max_shards_per_node(total_mib: int | None = None) -> int:
    """``cluster.max_shards_per_node`` for this machine: Elasticsearch's 1,000, lowered so that
    the shard copies allowed fit in half the memory (each is a process of ~150 MiB)."""
    if total_mib is None:
        try:
            total_mib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        except (ValueError, OSError):
            total_mib = 8192
    return max(4, min(1000, total_mib // 2 // SHARD_COPY_MIB))


def check_shards_per_node(adding: int, open_now: int, nodes: int = 1,
                          limit: int | None = None) -> None:
    """Refuse an index whose shard copies would pass ``cluster.max_shards_per_node``."""
    per_node = default_max_shards_per_node() if limit is None else limit
    allowed = per_node * max(1, nodes)
    if open_now + adding > allowed:
        raise SearchError(f"Validation Failed: 1: this action would add [{adding}] shards, but "
                          f"this cluster currently has [{open_now}]/[{allowed}] maximum normal "
                          "shards open; for more information, see the "
                          "[cluster.max_shards_per_node] setting;",
                          es_type="validation_exception", status=400)


ALLOW_EXPENSIVE = "search.allow_expensive_queries"
_PREFIX_HINT = " For optimised prefix queries on text fields please enable [index_prefixes]."


def expensive_allowed(store: dict[str, dict[str, str]]) -> bool:
    """``search.allow_expensive_queries`` from the cluster settings (transient wins; default
    true, as in Elasticsearch)."""
    raw = store["transient"].get(ALLOW_EXPENSIVE, store["persistent"].get(ALLOW_EXPENSIVE))
    return raw is None or str(raw).lower() != "false"


def check_expensive_queries(q: Any, mapping: Any) -> None:
    """With ``search.allow_expensive_queries`` false, refuse the queries Elasticsearch refuses
    (``regexp``, ``wildcard``, ``prefix``, ``fuzzy``, ``range`` on text or keyword fields,
    ``script_score``), in its words, wherever they are nested (``function_score`` included).
    ``q`` is the query after field expansion (so ``query_string`` wildcards are seen too)."""
    from .query import nodes as Q
    from .query.score_nodes import ScriptScore
    stack = [q]
    while stack:
        node = stack.pop()
        name = {Q.Regexp: "regexp", Q.Wildcard: "wildcard", Q.Prefix: "prefix",
                Q.Fuzzy: "fuzzy"}.get(type(node))
        if name is not None:
            raise _expensive(f"[{name}] queries cannot be executed when '{ALLOW_EXPENSIVE}' is "
                             "set to false." + (_PREFIX_HINT if name == "prefix" else ""))
        if isinstance(node, Q.Range):
            ft = mapping.get(node.field)
            if ft is not None and ft.kind in ("text", "keyword"):
                raise _expensive(f"[range] queries on [text] or [keyword] fields cannot be "
                                 f"executed when '{ALLOW_EXPENSIVE}' is set to false.")
        if isinstance(node, ScriptScore):
            raise _expensive(f"[script score] queries cannot be executed when "
                             f"'{ALLOW_EXPENSIVE}' is set to false.")
        for attr in ("must", "should", "filter", "must_not", "queries", "query", "functions"):
            sub = getattr(node, attr, None)
            if isinstance(sub, Q.Query):
                stack.append(sub)
            elif isinstance(sub, (tuple, list)):
                stack.extend(sub)


def _expensive(reason: str) -> IllegalArgument:
    return IllegalArgument(f"failed to create query: {reason}", es_type="query_shard_exception")
