"""Refusals before any data is touched: Lucene's clause limits, the regex length limit, and
values a numeric, date or boolean field cannot hold (Elasticsearch fails to create such a
query on every shard, empty or not)."""
from __future__ import annotations

from typing import Any

from . import nodes as Q
from . import score_nodes as S
from .parse_helpers import MAX_CLAUSE_COUNT
from ...errors import IllegalArgument, TooManyClauses
from ..mapping import Mapping
from .context import Context
from .distance_feature import parameters as distance_feature_parameters
from .function_score import decay_parameters
from .field_values import date_bound, numeric_bounds, numeric_value
from .fuzzy_query import check_fuzzy
from .index_field import pattern_on_term_field_error
from .intervals import check_intervals
from .intervals_dsl import Intervals
from .combined_fields import CombinedFields
from .combined_scoring import check_combined_fields
from .geo_match import geo_field
from .geo_queries import GEO_QUERIES
from .pattern_syntax import lucene_regex
from .rewrite import analyze_for, expand

MAX_REGEX_LENGTH = 1000   # index.max_regex_length
MAX_TERMS_COUNT = 65536   # index.max_terms_count


def check_clause_limits(q: Q.Query, mapping: Mapping,
                        max_clauses: int = MAX_CLAUSE_COUNT,
                        max_regex_length: int = MAX_REGEX_LENGTH,
                        max_terms_count: int = MAX_TERMS_COUNT) -> int:
    """Lucene's limits on the query as it runs against ``mapping`` (after expansion and
    analysis): a boolean query with more than ``max_clauses`` clauses is ``too_many_clauses``;
    more than ``max_clauses`` leaf clauses in the whole tree is ``too_many_nested_clauses``;
    a regular expression longer than ``max_regex_length`` is refused as Elasticsearch words
    it, and so is a ``terms`` query with more than ``max_terms_count`` values. Returns the
    number of leaf clauses. O(size of the query)."""
    _check_pattern_fields(q, mapping)
    expanded = expand(q, mapping)
    _check_regex_length(expanded, max_regex_length)
    _check_terms_count(expanded, max_terms_count)
    _check_fuzzy(expanded, mapping)
    leaves = _count_leaves(expanded, mapping, max_clauses)
    if leaves > max_clauses:
        raise TooManyClauses("Query contains too many nested clauses; maxClauseCount is set to "
                             f"{max_clauses}", es_type="too_many_nested_clauses")
    return leaves


def _check_fuzzy(q: Q.Query, mapping: Mapping) -> None:
    """Fuzzy terms (a ``match`` with ``fuzziness`` included) as every shard would refuse
    them, before any shard is asked."""
    if isinstance(q, Q.Fuzzy):
        check_fuzzy(q)
        err = pattern_on_term_field_error(q, mapping.get(q.field))
        if q.field == "_index":
            err = "Can only use fuzzy queries on keyword and text fields - not on [_index] " \
                  "which is of type [_index]"
        if err is not None:
            raise IllegalArgument(f"failed to create query: {err}",
                                  es_type="query_shard_exception")
    for sub in _children(q):
        _check_fuzzy(sub, mapping)


def _check_regex_length(q: Q.Query, limit: int) -> None:
    if isinstance(q, Q.Regexp) and len(q.value) > limit:
        raise IllegalArgument(f"The length of regex [{len(q.value)}] used in the Regexp Query "
                              f"request has exceeded the allowed maximum of [{limit}]. This "
                              "maximum can be set by changing the [index.max_regex_length] "
                              "index level setting.")
    for sub in _children(q):
        _check_regex_length(sub, limit)


def _check_terms_count(q: Q.Query, limit: int) -> None:
    if isinstance(q, Q.Terms) and len(q.values) > limit:
        raise IllegalArgument(f"The number of terms [{len(q.values)}] used in the Terms Query "
                              f"request has exceeded the allowed maximum of [{limit}]. This "
                              "maximum can be set by changing the [index.max_terms_count] "
                              "index level setting.")
    for sub in _children(q):
        _check_terms_count(sub, limit)


def _check_pattern_fields(q: Q.Query, mapping: Mapping) -> None:
    """A ``prefix``/``wildcard``/``regexp`` of the request itself on a numeric, date, boolean,
    ip or range field (query strings, whose field lists may reach such fields, are expanded
    and checked by their own rules)."""
    field = getattr(q, "field", None)
    if isinstance(field, str):
        err = pattern_on_term_field_error(q, mapping.get(field))
        if err is not None:
            raise IllegalArgument(f"failed to create query: {err}", es_type="query_shard_exception")
    for sub in _children(q):
        _check_pattern_fields(sub, mapping)


def _children(q: Q.Query) -> tuple[Q.Query, ...]:
    if isinstance(q, Q.Bool):
        return q.must + q.should + q.filter + q.must_not
    if isinstance(q, Q.DisMax):
        return q.queries
    if isinstance(q, Q.ConstantScore):
        return (q.filter,)
    if isinstance(q, Q.Nested):
        return (q.query,)
    if isinstance(q, S.FunctionScore):
        return (q.query, *(f.filter for f in q.functions))
    if isinstance(q, S.ScriptScore):
        return (q.query,)
    return ()


def _flat_limit(n: int, max_clauses: int) -> None:
    if n > max_clauses:
        raise TooManyClauses(f"maxClauseCount is set to {max_clauses}")


def _count_leaves(q: Q.Query, mapping: Mapping, max_clauses: int) -> int:
    if isinstance(q, Q.Bool):
        subs = q.must + q.should + q.filter + q.must_not
        _flat_limit(len(subs), max_clauses)
        return sum(_count_leaves(s, mapping, max_clauses) for s in subs)
    if isinstance(q, Q.DisMax):
        return sum(_count_leaves(s, mapping, max_clauses) for s in q.queries)
    if isinstance(q, Q.ConstantScore):
        return _count_leaves(q.filter, mapping, max_clauses)
    if isinstance(q, Q.Nested):
        return _count_leaves(q.query, mapping, max_clauses)
    if isinstance(q, (Q.ConstantScore, S.FunctionScore, S.ScriptScore)):
        return sum(_count_leaves(s, mapping, max_clauses) for s in _children(q))
    if isinstance(q, Q.Match):
        ft = mapping.get(q.field)
        if ft is None or ft.kind not in ("text", "keyword"):
            return 1
        n = len(analyze_for(ft, q.text, q.analyzer))
        _flat_limit(n, max_clauses)
        return max(n, 1)
    if isinstance(q, Q.MatchPhrase):
        ft = mapping.get(q.field)
        return max(1, len(analyze_for(ft, q.text, q.analyzer))) if ft is not None else 1
    return 1


def validate(q: Q.Query, mapping: Mapping) -> None:
    """Refuse, before touching any data, what evaluating the *expanded* query ``q`` would
    refuse: values a numeric, date or boolean field cannot hold (``query_shard_exception``,
    as Elasticsearch fails to create the query on every shard, empty or not) and Lucene's
    clause limits. O(size of the query)."""
    leaves = _count_leaves(q, mapping, MAX_CLAUSE_COUNT)
    if leaves > MAX_CLAUSE_COUNT:
        raise TooManyClauses("Query contains too many nested clauses; maxClauseCount is set to "
                             f"{MAX_CLAUSE_COUNT}", es_type="too_many_nested_clauses")
    _validate_values(q, Context(mapping=mapping, stats=None))


def _validate_values(q: Q.Query, ctx: Context) -> None:
    if isinstance(q, Q.Bool):
        for s in q.must + q.should + q.filter + q.must_not:
            _validate_values(s, ctx)
        return
    if isinstance(q, Q.DisMax):
        for s in q.queries:
            _validate_values(s, ctx)
        return
    if isinstance(q, Q.Nested):
        _validate_values(q.query, ctx)
        return
    if isinstance(q, (Q.ConstantScore, S.FunctionScore, S.ScriptScore)):
        for s in _children(q):
            _validate_values(s, ctx)
        for f in getattr(q, "functions", ()):
            if isinstance(f.function, S.Decay):
                decay_parameters(f.function, ctx)
        return
    if isinstance(q, Q.Regexp):
        lucene_regex(q.value, q.flags, q.case_insensitive)
        return
    if isinstance(q, Intervals):
        check_intervals(q, ctx)
        return
    if isinstance(q, CombinedFields):
        check_combined_fields(q, ctx)
        return
    if isinstance(q, S.DistanceFeature):
        distance_feature_parameters(q, ctx)
        return
    if isinstance(q, GEO_QUERIES):
        geo_field(q, ctx)
        return
    field = getattr(q, "field", None)
    ft = ctx.mapping.get(field) if isinstance(field, str) else None
    if ft is None or ft.kind not in ("numeric", "date", "boolean"):
        return
    if isinstance(q, Q.Range):
        numeric_bounds(q, ft, ctx)
        return
    values: tuple[Any, ...] = ()
    if isinstance(q, Q.Term):
        values = (q.value,)
    elif isinstance(q, Q.Terms):
        values = q.values
    elif isinstance(q, (Q.Match, Q.MatchPhrase)) and not getattr(q, "lenient", False):
        values = (q.text,)
    for v in values:
        if ft.kind == "date":
            date_bound(ft, v, False, None, None, ctx)
        else:
            numeric_value(ft, v)
