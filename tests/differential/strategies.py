"""Hypothesis strategies over the query DSL and the search body, on the corpus's fields and words."""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .corpus import DATE_FIELDS, N_DOCS, SORTABLE, TAGS, TEXT_FIELDS, WORDS

words = st.sampled_from(WORDS)
text_fields = st.sampled_from(TEXT_FIELDS)
phrase = st.lists(words, min_size=1, max_size=3).map(" ".join)
tag_values = st.sampled_from(TAGS + ("zulu",))
doc_ids = st.integers(0, N_DOCS + 5).map(lambda i: f"d{i:03d}")
dates = st.tuples(st.integers(1, 9), st.integers(10, 28)).map(lambda t: f"2024-0{t[0]}-{t[1]}")


def _match() -> st.SearchStrategy[dict[str, Any]]:
    plain = st.builds(lambda f, q: {"match": {f: q}}, text_fields, phrase)
    opts = st.builds(lambda f, q, op: {"match": {f: {"query": q, "operator": op}}},
                     text_fields, phrase, st.sampled_from(["or", "and"]))
    return plain | opts


def _range() -> st.SearchStrategy[dict[str, Any]]:
    lo_hi = st.sampled_from([("gte", "lt"), ("gt", "lte"), ("gte", "lte")])
    num = st.builds(lambda f, b, a, w: {"range": {f: {b[0]: a, b[1]: a + w}}},
                    st.sampled_from(["n", "price", "uid"]), lo_hi, st.integers(0, 60),
                    st.integers(0, 40))
    date = st.builds(lambda b, a, z: {"range": {"date": {b[0]: min(a, z), b[1]: max(a, z)}}},
                     lo_hi, dates, dates)
    return num | date


def leaf_queries() -> st.SearchStrategy[dict[str, Any]]:
    """Every leaf query the differential suite covers."""
    return st.one_of(
        st.just({"match_all": {}}),
        _match(),
        st.builds(lambda f, q: {"match_phrase": {f: q}}, text_fields,
                  st.lists(words, min_size=2, max_size=2).map(" ".join)),
        st.builds(lambda v: {"term": {"tag": v}}, tag_values),
        st.builds(lambda v: {"term": {"n": v}}, st.integers(0, 13)),
        st.builds(lambda vs: {"terms": {"tag": vs}}, st.lists(tag_values, min_size=1, max_size=3)),
        _range(),
        st.builds(lambda f, p: {"prefix": {f: p}}, st.sampled_from(["tag", "title", "ta*"]),
                  st.sampled_from(["a", "al", "b", "be", "g", "ch", "ma", "zz"])),
        st.builds(lambda f, p: {"wildcard": {f: p}}, st.sampled_from(["tag", "body"]),
                  st.sampled_from(["a*", "*a", "b?ta", "g*a", "*e*", "?"])),
        st.builds(lambda a, b, op, f: {"query_string": {"query": f"{a} {op} {b}",
                                                        "default_field": f}},
                  words, words, st.sampled_from(["AND", "OR", "AND NOT"]), text_fields),
        st.builds(lambda a, b, neg: {"simple_query_string": {
            "query": f"{a} {'-' if neg else ''}{b}", "fields": list(TEXT_FIELDS)}},
            words, words, st.booleans()),
        st.builds(lambda f: {"exists": {"field": f}},
                  st.sampled_from(["price", "tag", "date", "body", "nothing"])),
        st.builds(lambda ids: {"ids": {"values": ids}}, st.lists(doc_ids, max_size=6)),
        _boosting(),
    )


def _boosting() -> st.SearchStrategy[dict[str, Any]]:
    """``boosting`` of a match by a tag (the negative query scores nothing)."""
    return st.builds(lambda pos, tag, nb: {"boosting": {"positive": pos,
                                                        "negative": {"term": {"tag": tag}},
                                                        "negative_boost": nb}},
                     _match(), tag_values, st.sampled_from([0, 0.2, 0.5, 1.5]))


def queries() -> st.SearchStrategy[dict[str, Any]]:
    """Leaves, and ``bool`` queries of leaves (one level: enough to mix scoring and filtering)."""
    clauses = st.lists(leaf_queries(), max_size=2)
    bool_q = st.builds(
        lambda must, should, flt, must_not: {"bool": {k: v for k, v in (
            ("must", must), ("should", should), ("filter", flt), ("must_not", must_not)) if v}},
        clauses, clauses, st.lists(leaf_queries(), max_size=1),
        st.lists(leaf_queries(), max_size=1))
    return leaf_queries() | bool_q


def _sort_clause() -> st.SearchStrategy[Any]:
    field = st.builds(lambda f, o: {f: o}, st.sampled_from(SORTABLE), st.sampled_from(["asc", "desc"]))
    with_missing = st.builds(lambda f, o, m: {f: {"order": o, "missing": m}},
                             st.sampled_from(("price",) + DATE_FIELDS), st.sampled_from(["asc", "desc"]),
                             st.sampled_from(["_first", "_last"]))
    return field | with_missing | st.just("_score")


sorts = st.none() | st.lists(_sort_clause(), min_size=1, max_size=2)
sources = st.one_of(st.none(), st.booleans(), st.lists(st.sampled_from(
    ["title", "tag", "n", "price", "t*"]), min_size=1, max_size=2),
    st.builds(lambda inc, exc: {"includes": inc, "excludes": exc},
              st.lists(st.sampled_from(["*", "title", "n", "ta*"]), max_size=2),
              st.lists(st.sampled_from(["body", "uid", "p*"]), max_size=2)))
track_total = st.none() | st.booleans() | st.integers(1, 120)


@st.composite
def search_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A ``_search`` body: a query, maybe a sort, a page, ``_source`` and ``track_total_hits``."""
    body: dict[str, Any] = {"query": draw(queries()),
                            "from": draw(st.integers(0, 40)), "size": draw(st.integers(0, 15))}
    for key, strategy in (("sort", sorts), ("_source", sources),
                          ("track_total_hits", track_total)):
        value = draw(strategy)
        if value is not None:
            body[key] = value
    return body


# Bodies both systems must refuse: (what is wrong, body). The path is /{index}/_search unless the
# body names another index under "_index".
BAD_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("unknown query", {"query": {"no_such_query": {}}}),
    ("negative size", {"size": -1}),
    ("negative from", {"from": -3}),
    ("window over max_result_window", {"from": 9995, "size": 10}),
    ("unknown top-level key", {"no_such_key": 1}),
    ("sort on a text field", {"sort": [{"title": "asc"}]}),
    ("sort on an unmapped field", {"sort": [{"nothing": "asc"}]}),
    ("range bound not a number", {"query": {"range": {"n": {"gte": "abc"}}}}),
    ("term with an unknown option", {"query": {"term": {"tag": {"value": "x", "bogus": 1}}}}),
    ("match with two fields", {"query": {"match": {"title": "a", "body": "b"}}}),
    ("bool with an unknown clause", {"query": {"bool": {"shall": [{"match_all": {}}]}}}),
    ("search_after without a sort", {"search_after": [1]}),
    ("search_after with from", {"sort": [{"uid": "asc"}], "search_after": [3], "from": 2}),
    ("search_after of the wrong length", {"sort": [{"uid": "asc"}], "search_after": [1, 2]}),
    ("track_total_hits not a bool or int", {"track_total_hits": "many"}),
    ("two queries in one object", {"query": {"match_all": {}, "term": {"tag": "x"}}}),
    ("missing index", {"_index": "no_such_index", "query": {"match_all": {}}}),
    ("query_string syntax error", {"query": {"query_string": {"query": "apple AND (", "default_field": "title"}}}),
    ("size not an integer", {"size": "ten"}),
]


# --- aggregations -------------------------------------------------------------------------
# Trees of the bucket and metric aggregations both systems compute exactly on this corpus (one
# OpenSearch shard: its terms counts are exact too). Percentiles are left out: t-digest's error
# is documented and ours are exact; cardinality stays in, as HyperLogLog++ counts exactly this
# far below its precision threshold.
_NUMERIC = st.sampled_from(["n", "price", "uid"])


def _metric() -> st.SearchStrategy[dict[str, Any]]:
    kind = st.sampled_from(["avg", "sum", "min", "max", "stats", "value_count",
                            "extended_stats"])
    plain = st.builds(lambda k, f: {k: {"field": f}}, kind, _NUMERIC)
    missing = st.builds(lambda k, m: {k: {"field": "price", "missing": m}},
                        st.sampled_from(["avg", "sum", "max", "value_count"]),
                        st.sampled_from([0, 50, -1]))
    keyword_count = st.just({"value_count": {"field": "tag"}})
    cardinality = st.builds(lambda f: {"cardinality": {"field": f}},
                            st.sampled_from(["tag", "n", "price", "date"]))
    return plain | missing | keyword_count | cardinality


def _bucket(top: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """Bucket aggregations; ``composite`` only at the top (both refuse it under a parent)."""
    order = st.sampled_from([None, {"_count": "desc"}, {"_key": "asc"}, {"_key": "desc"},
                             {"_count": "asc"}])
    terms = st.builds(
        lambda f, size, o, mdc: {"terms": {"field": f, "size": size, "min_doc_count": mdc,
                                           **({"order": [o, {"_key": "asc"}]} if o else {})}},
        st.sampled_from(["tag", "n"]), st.integers(1, 12), order, st.sampled_from([1, 1, 3]))
    histogram = st.builds(
        lambda f, i, mdc: {"histogram": {"field": f, "interval": i, "min_doc_count": mdc}},
        st.sampled_from(["n", "price"]), st.sampled_from([1, 3, 10, 25]),
        st.sampled_from([0, 1]))
    date_histogram = st.builds(
        lambda iv, mdc: {"date_histogram": {"field": "date", **iv, "min_doc_count": mdc}},
        st.sampled_from([{"calendar_interval": "month"}, {"calendar_interval": "week"},
                         {"fixed_interval": "10d"}, {"calendar_interval": "1M",
                                                     "format": "yyyy-MM"}]),
        st.sampled_from([0, 1]))
    ranges = st.builds(
        lambda f, cuts, keyed: {"range": {"field": f, "keyed": keyed, "ranges": [
            {"to": cuts[0]}, {"from": cuts[0], "to": cuts[1]}, {"from": cuts[1]}]}},
        _NUMERIC, st.tuples(st.integers(0, 40), st.integers(41, 90)), st.booleans())
    filt = st.builds(lambda v: {"filter": {"term": {"tag": v}}}, tag_values)
    missing = st.builds(lambda f: {"missing": {"field": f}},
                        st.sampled_from(["price", "tag", "date"]))
    composite = st.builds(
        lambda srcs, size: {"composite": {"size": size, "sources": srcs}},
        st.lists(st.sampled_from([{"t": {"terms": {"field": "tag"}}},
                                  {"h": {"histogram": {"field": "n", "interval": 4}}},
                                  {"d": {"date_histogram": {"field": "date",
                                                            "calendar_interval": "month"}}},
                                  {"tm": {"terms": {"field": "tag", "missing_bucket": True,
                                                    "order": "desc"}}}]),
                 min_size=1, max_size=2, unique_by=lambda x: next(iter(x))),
        st.integers(1, 20))
    plain = terms | histogram | date_histogram | ranges | filt | missing
    return plain | composite if top else plain


@st.composite
def aggregation_trees(draw: st.DrawFn) -> dict[str, Any]:
    """One or two top-level aggregations; a bucket aggregation may carry one sub-aggregation."""
    tree: dict[str, Any] = {}
    for i in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            agg = dict(draw(_bucket()))
            if draw(st.booleans()):
                agg["aggs"] = {"inner": draw(_metric() | _bucket(top=False))}
        else:
            agg = draw(_metric())
        tree[f"a{i}"] = agg
    return tree


@st.composite
def aggregation_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A ``size: 0`` search whose answer is its aggregations, maybe under a query."""
    body: dict[str, Any] = {"size": 0, "aggs": draw(aggregation_trees())}
    query = draw(st.none() | leaf_queries())
    if query is not None:
        body["query"] = query
    return body
