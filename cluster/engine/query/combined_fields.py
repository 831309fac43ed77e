"""``combined_fields``: BM25F over several text fields, as Lucene's ``CombinedFieldQuery``
(Elasticsearch's ``CombinedFieldsQueryBuilder``).

Each query term is scored once, as if the fields were one: its frequency is the sum of
``boost_f * tf_f``, its document length ``sum boost_f * length_f`` (re-encoded as one norm
byte), its document frequency the largest over the fields, the document count the largest
and the total term count ``sum boost_f * sumTotalTermFreq_f``. All from the global statistics,
so the same for any shard count. The terms combine as a ``bool`` (``operator``,
``minimum_should_match``, ``zero_terms_query``). The node and its parser; the scoring is in
``combined_scoring.py``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import IllegalArgument, ParsingError, XContentParseError
from .nodes import Query
from .parse_full_text import operator_option, parse_fields, zero_terms_option
from .parse_helpers import ParseState, bool_option, float_option, is_value, token_name

_KEYS = ("query", "fields", "operator", "minimum_should_match", "zero_terms_query",
         "auto_generate_synonyms_phrase_query", "boost", "_name")


@dataclass(frozen=True)
class CombinedFields(Query):
    fields: tuple[tuple[str, float], ...] = ()
    text: Any = None
    operator: str = "or"
    minimum_should_match: Any = None
    zero_terms_query: str = "none"


def parse_combined_fields(body: dict[str, Any], st: ParseState) -> Query:
    for k, v in body.items():
        if k not in _KEYS:
            raise XContentParseError(f"[combined_fields] unknown field [{k}]")
        if k != "fields" and not is_value(v):
            raise XContentParseError(f"[combined_fields] {k} doesn't support values of type: "
                                     f"{token_name(v)}")
    if body.get("query") is None:
        raise ParsingError("[combined_fields] requires 'query' field")
    fields = parse_fields(body.get("fields", []), "combined_fields")
    if not fields:
        raise ParsingError("[combined_fields] requires 'fields' field")
    for f, b in fields:
        if b < 1.0:
            raise IllegalArgument(f"[combined_fields] requires field boosts >= 1.0, found "
                                  f"[{b}] for [{f}]")
    if "auto_generate_synonyms_phrase_query" in body:   # no synonyms here: never changes terms
        bool_option("combined_fields", "auto_generate_synonyms_phrase_query",
                    body["auto_generate_synonyms_phrase_query"])
    return CombinedFields(fields=fields, text=body["query"],
                          operator=operator_option(body.get("operator", "or")),
                          minimum_should_match=body.get("minimum_should_match"),
                          zero_terms_query=zero_terms_option(body.get("zero_terms_query",
                                                                      "none")),
                          boost=float_option("combined_fields", "boost", body.get("boost", 1.0)))
