"""``more_like_this``: the node and its parser (Elasticsearch's ``MoreLikeThisQueryBuilder``).

``like`` / ``unlike`` hold texts and items: a stored document (``_index``, ``_id``,
``routing``), fetched by the coordinator before the search (``search/mlt_items.py``), or an
artificial ``{"doc": {...}}``. Which terms the query then looks for is chosen on the shards
from the global statistics (``mlt_terms.py``), so it is the same for any shard count.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ...errors import IllegalArgument, ParsingError, SearchError
from .nodes import Query
from .parse_helpers import ParseState, bool_option, float_option, int_option, token_name

#: bounds: items per query, characters per like text (Lucene stops at 5,000 tokens anyway)
MAX_ITEMS = 100
MAX_TEXT_CHARS = 100_000
MAX_STOP_WORDS = 10_000


@dataclass(frozen=True)
class LikeItem:
    """A document to be like (or unlike): stored (``id``; ``doc`` filled in by the
    coordinator, None when missing) or artificial (``doc`` only), as JSON text."""

    index: str | None = None
    id: str | None = None
    routing: str | None = None
    doc: str | None = None
    fetched: bool = False


@dataclass(frozen=True)
class MoreLikeThis(Query):
    fields: tuple[str, ...] | None = None
    like_texts: tuple[str, ...] = ()
    like_items: tuple[LikeItem, ...] = ()
    unlike_texts: tuple[str, ...] = ()
    unlike_items: tuple[LikeItem, ...] = ()
    max_query_terms: int = 25
    min_term_freq: int = 2
    min_doc_freq: int = 5
    max_doc_freq: int = 2**31 - 1
    min_word_length: int = 0
    max_word_length: int = 0
    stop_words: tuple[str, ...] = ()
    analyzer: str | None = None
    minimum_should_match: Any = "30%"
    boost_terms: float = 0.0
    include: bool = False
    fail_on_unsupported_field: bool = True


_INTS = {"max_query_terms": 25, "min_term_freq": 2, "min_doc_freq": 5,
         "max_doc_freq": 2**31 - 1, "min_word_length": 0, "max_word_length": 0}
_ITEM_KEYS = ("_index", "_id", "doc", "routing")
_ITEM_REFUSED = ("fields", "per_field_analyzer", "version", "version_type", "_type")


def parse_more_like_this(body: dict[str, Any], st: ParseState) -> Query:
    """``MoreLikeThisQueryBuilder.fromXContent`` (its messages say ``[mlt]``)."""
    opts: dict[str, Any] = {}
    like: tuple[list[str], list[LikeItem]] = ([], [])
    unlike: tuple[list[str], list[LikeItem]] = ([], [])
    fields = None
    for k, v in body.items():
        if k in ("like", "unlike"):
            for entry in v if isinstance(v, list) else [v]:
                _like_entry(entry, like if k == "like" else unlike)
        elif k == "fields" and isinstance(v, list):
            fields = tuple(str(f) for f in v)
        elif k == "stop_words" and isinstance(v, list):
            if len(v) > MAX_STOP_WORDS:
                raise IllegalArgument(f"[mlt] more than {MAX_STOP_WORDS} [stop_words] are not "
                                      "supported by this server")
            opts["stop_words"] = tuple(str(w) for w in v)
        elif isinstance(v, (dict, list)) or k not in (*_INTS, "analyzer", "minimum_should_match",
                                                      "boost_terms", "include", "boost", "_name",
                                                      "fail_on_unsupported_field"):
            raise ParsingError(f"[mlt] query does not support [{k}]")
        elif k in _INTS:
            opts[k] = int_option("mlt", k, v)
        elif k in ("boost_terms", "boost"):
            opts[k] = float_option("mlt", k, v)
        elif k in ("include", "fail_on_unsupported_field"):
            opts[k] = bool_option("mlt", k, v)
        elif k in ("analyzer", "minimum_should_match"):
            opts[k] = str(v)
    if not like[0] and not like[1]:
        raise ParsingError("more_like_this requires 'like' to be specified")
    if fields is not None and not fields:
        raise ParsingError("more_like_this requires 'fields' to be non-empty")
    if opts.get("max_query_terms", 25) <= 0:
        raise IllegalArgument("requires 'maxQueryTerms' to be greater than 0")
    if len(like[1]) + len(unlike[1]) > MAX_ITEMS:
        raise IllegalArgument(f"[mlt] more than {MAX_ITEMS} like and unlike items are not "
                              "supported by this server")
    opts.pop("_name", None)
    return MoreLikeThis(fields=fields, like_texts=tuple(like[0]), like_items=tuple(like[1]),
                        unlike_texts=tuple(unlike[0]), unlike_items=tuple(unlike[1]), **opts)


def _like_entry(entry: Any, into: tuple[list[str], list[LikeItem]]) -> None:
    if isinstance(entry, dict):
        into[1].append(_item(entry))
    elif isinstance(entry, list) or entry is None:
        raise IllegalArgument("Content of 'like' parameter should either be a string or an "
                              "object")
    else:
        text = "true" if entry is True else "false" if entry is False else str(entry)
        if len(text) > MAX_TEXT_CHARS:
            raise IllegalArgument(f"[mlt] a like text longer than {MAX_TEXT_CHARS} characters "
                                  "is not supported by this server")
        into[0].append(text)


def _item(spec: dict[str, Any]) -> LikeItem:
    """``MoreLikeThisQueryBuilder.Item.parse``."""
    for k, v in spec.items():
        if k in _ITEM_REFUSED:
            raise IllegalArgument(f"[mlt] item [{k}] is not supported by this server")
        if k not in _ITEM_KEYS:
            raise SearchError(f"failed to parse More Like This item. unknown field [{k}]",
                              es_type="parse_exception", status=400)
        if k != "doc" and not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise ParsingError(f"[mlt] item [{k}] must be a value, found [{token_name(v)}]")
    if "_id" in spec and "doc" in spec:
        raise SearchError("failed to parse More Like This item. either [id] or [doc] can be "
                          "specified, but not both!", es_type="parse_exception", status=400)
    if "_id" not in spec and "doc" not in spec:
        raise SearchError("failed to parse More Like This item. neither [id] nor [doc] is "
                          "specified!", es_type="parse_exception", status=400)
    doc = spec.get("doc")
    if doc is not None and not isinstance(doc, dict):
        raise SearchError("failed to parse More Like This item. [doc] must be an object",
                          es_type="parse_exception", status=400)
    return LikeItem(index=None if "_index" not in spec else str(spec["_index"]),
                    id=None if "_id" not in spec else str(spec["_id"]),
                    routing=None if "routing" not in spec else str(spec["routing"]),
                    doc=None if doc is None else orjson.dumps(doc).decode())
