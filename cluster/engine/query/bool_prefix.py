"""``match_bool_prefix``: the analysed terms as a ``bool`` of term queries, the last term as a
prefix query (Elasticsearch's ``MatchBoolPrefixQueryBuilder``). The node and its parser; the
``bool`` is built for a mapping by ``rewrite.bool_prefix_query``.

The term clauses score BM25 with the global statistics (so shard-invariant); the prefix
clause is constant-score (Lucene's default rewrite for a prefix query), worth 1. ``operator``
and ``minimum_should_match`` count the clauses, the prefix one included, as Elasticsearch does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import IllegalArgument, ParsingError
from . import nodes as Q
from .parse_helpers import ParseState, field_query, float_option, require_field

_OPTS = {"query", "analyzer", "operator", "minimum_should_match", "fuzziness", "prefix_length",
         "max_expansions", "fuzzy_transpositions", "fuzzy_rewrite"}
#: options Elasticsearch applies to fuzzy term clauses, which this server does not build
FUZZY_OPTS = ("fuzziness", "prefix_length", "max_expansions", "fuzzy_transpositions",
              "fuzzy_rewrite")


@dataclass(frozen=True)
class MatchBoolPrefix(Q.Query):
    field: str = ""
    text: Any = None
    analyzer: str | None = None
    operator: str = "or"
    minimum_should_match: Any = None


def parse_match_bool_prefix(body: dict[str, Any], st: ParseState) -> Q.Query:
    fname, o = field_query("match_bool_prefix", body, ("query",), _OPTS)
    if o.get("query") is None:
        raise ParsingError("[match_bool_prefix] requires query value")
    refuse_fuzzy("match_bool_prefix", o)
    op = str(o.get("operator", "or")).lower()
    if op not in ("or", "and"):
        raise IllegalArgument("No enum constant org.elasticsearch.index.query.Operator."
                              f"{op.upper()}")
    return MatchBoolPrefix(field=require_field(fname), text=o["query"],
                           analyzer=o.get("analyzer"),
                           operator=op,
                           minimum_should_match=o.get("minimum_should_match"),
                           boost=float_option("match_bool_prefix", "boost", o.get("boost", 1.0)))


def refuse_fuzzy(name: str, options: dict[str, Any]) -> None:
    """Fuzzy term clauses are not built here: naming the option beats ignoring it."""
    for k in FUZZY_OPTS:
        if k in options:
            raise IllegalArgument(f"[{name}] [{k}] is not supported by this server")
