"""The query-node tree: small frozen dataclasses, one per query (what ``dsl.py`` parses into).

What a node *means* for a field (which analyzer, which column) is decided where the data is,
in ``matching.py``, from the index's mapping.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import field as _field
from typing import Any


@dataclass(frozen=True)
class Query:
    boost: float = 1.0


@dataclass(frozen=True)
class MatchAll(Query):
    pass


@dataclass(frozen=True)
class MatchNone(Query):
    pass


@dataclass(frozen=True)
class FuzzyOptions:
    """How a fuzzy term expands (``fuzzy_query.py``): ``fuzziness`` as written (``AUTO``,
    ``AUTO:3,6``, 0, 1, 2), the shared prefix, how many expansions, swaps as one edit, and
    the rewrite (None: Lucene's default, the top terms with blended frequencies)."""

    fuzziness: Any = "AUTO"
    prefix_length: int = 0
    max_expansions: int = 50
    transpositions: bool = True
    rewrite: str | None = None


@dataclass(frozen=True)
class Match(Query):
    field: str = ""
    text: Any = None
    operator: str = "or"
    minimum_should_match: Any = None
    analyzer: str | None = None
    zero_terms_query: str = "none"
    lenient: bool = False
    fuzzy: FuzzyOptions | None = None     # each analysed term as a fuzzy term


@dataclass(frozen=True)
class MatchPhrase(Query):
    field: str = ""
    text: Any = None
    slop: int = 0
    analyzer: str | None = None
    prefix: bool = False
    max_expansions: int = 50          # the last term's expansions, with ``prefix``
    zero_terms_query: str = "none"    # ``all``: no terms left after analysis matches all


@dataclass(frozen=True)
class MultiMatch(Query):
    fields: tuple[tuple[str, float], ...] = ()
    text: Any = None
    type: str = "best_fields"
    operator: str = "or"
    minimum_should_match: Any = None
    tie_breaker: float | None = None
    analyzer: str | None = None
    lenient: bool | None = None
    slop: int = 0
    zero_terms_query: str = "none"
    max_expansions: int = 50
    fuzzy: FuzzyOptions | None = None


@dataclass(frozen=True)
class Term(Query):
    field: str = ""
    value: Any = None
    case_insensitive: bool = False


@dataclass(frozen=True)
class Fuzzy(Query):
    """A term and the dictionary terms within its edit distance (``fuzzy_query.py``)."""

    field: str = ""
    value: str = ""
    options: FuzzyOptions = _field(default_factory=FuzzyOptions)


@dataclass(frozen=True)
class Terms(Query):
    field: str = ""
    values: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Range(Query):
    field: str = ""
    gt: Any = None
    gte: Any = None
    lt: Any = None
    lte: Any = None
    format: str | None = None
    time_zone: str | None = None
    relation: str = "intersects"     # on range fields only
    rewritten: bool = False          # the DSL's ``range``: its date bounds fail as
                                     # ``parse_exception`` (``field_values.date_bound``)


@dataclass(frozen=True)
class Exists(Query):
    field: str = ""


@dataclass(frozen=True)
class Ids(Query):
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prefix(Query):
    field: str = ""
    value: str = ""
    case_insensitive: bool = False


@dataclass(frozen=True)
class Wildcard(Query):
    field: str = ""
    pattern: str = ""
    case_insensitive: bool = False


@dataclass(frozen=True)
class Regexp(Query):
    """A Lucene regular expression that a whole term must match."""

    field: str = ""
    value: str = ""
    flags: str = "ALL"
    case_insensitive: bool = False


@dataclass(frozen=True)
class Bool(Query):
    must: tuple[Query, ...] = ()
    should: tuple[Query, ...] = ()
    filter: tuple[Query, ...] = ()
    must_not: tuple[Query, ...] = ()
    minimum_should_match: Any = None


@dataclass(frozen=True)
class ConstantScore(Query):
    filter: Query = field(default_factory=MatchAll)


@dataclass(frozen=True)
class DisMax(Query):
    queries: tuple[Query, ...] = ()
    tie_breaker: float = 0.0


@dataclass(frozen=True)
class QueryString(Query):
    """``query_string`` / ``simple_query_string`` / URI ``q=``; expanded by ``query_string.py``."""

    query: str = ""
    fields: tuple[tuple[str, float], ...] = ()
    default_operator: str = "or"
    simple: bool = False
    lenient: bool | None = None     # None: not given (lenient over ``*`` only)
    analyzer: str | None = None
    minimum_should_match: Any = None
    fuzzy: FuzzyOptions = field(default_factory=FuzzyOptions)   # term~ and term~N
    fuzzy_operator: bool = True     # simple_query_string's FUZZY flag
    type: str = "best_fields"       # query_string: how a text over several fields combines
    tie_breaker: float | None = None    # query_string: None = the type's own
    phrase_slop: int = 0                # query_string: slop of phrases without ``~N``
    allow_leading_wildcard: bool = True     # query_string: ``*foo`` / ``?foo`` allowed
    escape: bool = False                # query_string: the whole text as literal words
    quote_field_suffix: str | None = None   # quoted text goes to ``field + suffix`` if mapped
    time_zone: str | None = None        # query_string: of date ranges and single-field dates
    default_field: str | None = None    # query_string: the ``default_field`` given, if any
    quote_analyzer: str | None = None   # query_string: analyzer of quoted phrases
    fields_and_default_field: bool = False  # both given: refused when the query is built


@dataclass(frozen=True)
class Slice(Query):
    """One part of a sliced scroll or point in time within a shard (never parsed from the DSL:
    the coordinator adds it as a filter, ``search/slicing.py``). Without ``field``, a document
    belongs to part ``floorMod(murmur3(_id, 7919), max)``; with a numeric ``field``, to
    ``floorMod(value, max)`` of any of its values (as Elasticsearch's ``DocValuesSliceQuery``)."""

    id: int = 0
    max: int = 2
    field: str | None = None


@dataclass(frozen=True)
class Nested(Query):
    """``nested``: ``query`` over the children at ``path``, joined to their parents."""

    path: str = ""
    query: Query = field(default_factory=MatchAll)
    score_mode: str = "avg"
    ignore_unmapped: bool = False
    inner_hits: Any = field(default=None, compare=False, hash=False)   # parsed options or None
