"""``match_bool_prefix``: the analysed terms as a ``bool`` of term queries, the last term as a
prefix query (Elasticsearch's ``MatchBoolPrefixQueryBuilder``). The node and its parser; the
``bool`` is built for a mapping by ``rewrite.bool_prefix_query``.

The term clauses score BM25 with the global statistics (so shard-invariant), as fuzzy terms
with ``fuzziness`` (``fuzzy_query.py``; never the last, prefix, clause); the prefix
clause is constant-score (Lucene's default rewrite for a prefix query), worth 1. ``operator``
and ``minimum_should_match`` count the clauses, the prefix one included, as Elasticsearch does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import IllegalArgument, ParsingError
from . import nodes as Q
from .fuzzy_query import MATCH_KEYS, fuzzy_options
from .parse_helpers import ParseState, field_query, float_option, require_field

_OPTS = {"query", "analyzer", "operator", "minimum_should_match", "fuzziness", "prefix_length",
         "max_expansions", "fuzzy_transpositions", "fuzzy_rewrite"}


@dataclass(frozen=True)
class MatchBoolPrefix(Q.Query):
    field: str = ""
    text: Any = None
    analyzer: str | None = None
    operator: str = "or"
    minimum_should_match: Any = None
    fuzzy: Q.FuzzyOptions | None = None


def parse_match_bool_prefix(body: dict[str, Any], st: ParseState) -> Q.Query:
    fname, o = field_query("match_bool_prefix", body, ("query",), _OPTS)
    if o.get("query") is None:
        raise ParsingError("[match_bool_prefix] requires query value")
    op = str(o.get("operator", "or")).lower()
    if op not in ("or", "and"):
        raise IllegalArgument("No enum constant org.elasticsearch.index.query.Operator."
                              f"{op.upper()}")
    return MatchBoolPrefix(field=require_field(fname), text=o["query"],
                           analyzer=o.get("analyzer"),
                           operator=op,
                           minimum_should_match=o.get("minimum_should_match"),
                           fuzzy=fuzzy_of("match_bool_prefix", o),
                           boost=float_option("match_bool_prefix", "boost", o.get("boost", 1.0)))


def fuzzy_of(name: str, options: dict[str, Any]) -> Q.FuzzyOptions | None:
    """The fuzzy options of a ``match``-like query: None without ``fuzziness`` (the other
    fuzzy options are checked, and change nothing then, as in Elasticsearch)."""
    parsed = fuzzy_options(name, options, MATCH_KEYS, builder_checks=True)
    return parsed if "fuzziness" in options else None
