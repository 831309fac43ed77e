"""``nested`` fields, as the engine and the coordinator answer them (in process, no Ray).

The documents (``comments`` is ``nested``: each object is a hidden child document)::

    1  "red fox"    ann 5 "great fun", bob 1 "bad"
    2  "brown dog"  ann 2 "meh fun"
    3  "lazy cat"   bob 4 (no text)
    4  "old owl"    (no comments)

Every test runs on one shard and on three, which must answer identically.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inprocess import LocalCluster
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.nested import MAX_NESTED_OBJECTS
from shardsearch.cluster.errors import SearchError

pytestmark = pytest.mark.young_collections   # answers, not the collector: conftest.py

MAPPINGS = {"properties": {
    "title": {"type": "text"},
    "comments": {"type": "nested", "properties": {
        "author": {"type": "keyword"}, "stars": {"type": "long"}, "text": {"type": "text"}}},
}}
DOCS = {
    "1": {"title": "red fox", "comments": [{"author": "ann", "stars": 5, "text": "great fun"},
                                           {"author": "bob", "stars": 1, "text": "bad"}]},
    "2": {"title": "brown dog", "comments": [{"author": "ann", "stars": 2, "text": "meh fun"}]},
    "3": {"title": "lazy cat", "comments": {"author": "bob", "stars": 4}},
    "4": {"title": "old owl"},
}


@pytest.fixture(scope="module", params=[1, 3], ids=["1shard", "3shards"])
def books(request) -> LocalCluster:
    c = LocalCluster().create("books", request.param, MAPPINGS)
    assert c.index("books", DOCS)["errors"] is False
    return c


def nested(query: dict, **opts) -> dict:
    return {"nested": {"path": "comments", "query": query, **opts}}


def hits(c: LocalCluster, body: dict) -> list[tuple[str, float]]:
    return [(h["_id"], h["_score"]) for h in c.search("books", body)["hits"]["hits"]]


def error_of(c: LocalCluster, body: dict) -> SearchError:
    with pytest.raises(SearchError) as e:
        c.search("books", body)
    return e.value


def text(e: SearchError) -> str:
    """The reason, with the shards' root causes (a shard's error arrives wrapped in
    ``search_phase_execution_exception``, as in Elasticsearch)."""
    return str(e) + json.dumps(e.__dict__, default=str)


# --- the children are not documents --------------------------------------------------------

def test_children_are_never_hits_nor_counted(books):
    r = books.search("books", {"query": {"match_all": {}}, "size": 10})
    assert r["hits"]["total"] == {"value": 4, "relation": "eq"}
    assert sorted(h["_id"] for h in r["hits"]["hits"]) == ["1", "2", "3", "4"]


def test_a_nested_field_does_not_match_outside_a_nested_query(books):
    assert books.ids("books", {"query": {"term": {"comments.author": "ann"}}}) == []
    assert books.ids("books", {"query": {"exists": {"field": "comments.stars"}}}) == []


def test_the_source_of_a_hit_is_the_parents_whole_source(books):
    r = books.search("books", {"query": nested({"term": {"comments.author": "ann"}}),
                               "sort": ["_doc"], "size": 10})
    by_id = {h["_id"]: h["_source"] for h in r["hits"]["hits"]}
    assert by_id["1"] == DOCS["1"]


# --- the nested query ------------------------------------------------------------------------

def test_nested_query_matches_parents_whose_one_child_matches_every_clause(books):
    both = nested({"bool": {"must": [{"term": {"comments.author": "bob"}},
                                     {"range": {"comments.stars": {"gte": 4}}}]}})
    assert books.ids("books", {"query": both}) == ["3"]   # doc 1's bob gave 1 star


def test_score_modes_join_the_children_scores(books):
    q = {"bool": {"should": [{"match": {"comments.text": "fun"}},
                             {"range": {"comments.stars": {"gte": 1}}}]}}
    child = {m: dict(hits(books, {"query": nested(q, score_mode=m)}))
             for m in ("avg", "max", "min", "sum", "none")}
    assert child["max"]["3"] == pytest.approx(1.0)      # bob 4: the range clause only
    one_fun, one_bad = child["max"]["1"], child["min"]["1"]     # doc 1: "great fun", "bad"
    assert one_bad == pytest.approx(1.0) and one_fun > one_bad
    assert child["sum"]["1"] == pytest.approx(one_fun + one_bad, rel=1e-6)
    assert child["avg"]["1"] == pytest.approx((one_fun + one_bad) / 2, rel=1e-6)
    assert set(child["none"].values()) == {0.0}


def test_boost_multiplies_the_joined_score(books):
    plain = dict(hits(books, {"query": nested({"match": {"comments.text": "fun"}})}))
    boosted = dict(hits(books, {"query": nested({"match": {"comments.text": "fun"}},
                                                boost=2)}))
    assert boosted == {k: pytest.approx(2 * v, rel=1e-6) for k, v in plain.items()}


def test_unmapped_path_fails_unless_ignore_unmapped(books):
    e = error_of(books, {"query": {"nested": {"path": "nope", "query": {"match_all": {}}}}})
    assert e.status == 400 and "query_shard_exception" in text(e)
    assert "[nested] failed to find nested object under path [nope]" in text(e)
    assert books.ids("books", {"query": {"nested": {"path": "nope", "ignore_unmapped": True,
                                                    "query": {"match_all": {}}}}}) == []


def test_a_path_that_is_not_nested_is_refused(books):
    e = error_of(books, {"query": {"nested": {"path": "title", "query": {"match_all": {}}}}})
    assert "is not of nested type" in text(e) and e.status == 400


@pytest.mark.parametrize("body, reason", [
    ({"path": "comments"}, "[nested] requires 'query' field"),
    ({"query": {"match_all": {}}}, "[nested] requires 'path' field"),
    ({"path": "comments", "query": {"match_all": {}}, "score_mode": "median"},
     "No score mode for child query [median] found"),
    ({"path": "comments", "query": {"match_all": {}}, "bogus": 1},
     "[nested] query does not support [bogus]"),
    ({"path": "comments", "query": {"match_all": {}}, "inner_hits": {"highlight": {}}},
     "[inner_hits] option [highlight] is not supported"),
    ({"path": "comments", "query": {"match_all": {}}, "inner_hits": {"sort": 5}},
     "[sort] must be a string, an object or an array of them"),
    ({"path": "comments", "query": {"match_all": {}}, "inner_hits": {"size": 101}},
     "Inner result window is too large"),
])
def test_malformed_nested_queries_are_refused_by_name(books, body, reason):
    e = error_of(books, {"query": {"nested": body}})
    assert e.status == 400 and reason in text(e)


# --- inner hits -------------------------------------------------------------------------------

def test_inner_hits_list_the_matching_children_with_their_place(books):
    r = books.search("books", {"query": nested({"term": {"comments.author": "bob"}},
                                               inner_hits={}), "sort": ["_doc"]})
    got = {h["_id"]: h["inner_hits"]["comments"]["hits"] for h in r["hits"]["hits"]}
    assert got["1"]["total"] == {"value": 1, "relation": "eq"}
    inner = got["1"]["hits"][0]
    assert inner["_id"] == "1" and inner["_nested"] == {"field": "comments", "offset": 1}
    assert inner["_source"] == {"author": "bob", "stars": 1, "text": "bad"}


def test_inner_hits_sort_from_size_name_and_source(books):
    ih = {"name": "best", "sort": [{"comments.stars": "desc"}], "from": 1, "size": 1,
          "_source": ["comments.stars"]}
    r = books.search("books", {"query": {"ids": {"values": ["1"]}}})
    assert "inner_hits" not in r["hits"]["hits"][0]
    r = books.search("books", {"query": nested({"match_all": {}}, inner_hits=ih)})
    one = next(h for h in r["hits"]["hits"] if h["_id"] == "1")["inner_hits"]["best"]["hits"]
    assert one["total"]["value"] == 2
    assert [(h["_nested"]["offset"], h["sort"], h["_source"]) for h in one["hits"]] == \
        [(1, [1], {"stars": 1})]


def test_inner_hit_scores_are_the_childrens_scores(books):
    r = books.search("books", {"query": nested({"match": {"comments.text": "fun"}},
                                               score_mode="max", inner_hits={})})
    for h in r["hits"]["hits"]:
        assert h["_score"] == pytest.approx(h["inner_hits"]["comments"]["hits"]["max_score"])


# --- sort ------------------------------------------------------------------------------------

def test_sort_on_a_nested_field_with_mode_and_filter(books):
    def order(opts: dict) -> list[tuple[str, list]]:
        r = books.search("books", {"sort": [{"comments.stars": opts}], "size": 10})
        return [(h["_id"], h["sort"]) for h in r["hits"]["hits"]]
    assert order({"order": "desc", "mode": "max", "nested": {"path": "comments"}})[:3] == \
        [("1", [5]), ("3", [4]), ("2", [2])]
    assert order({"order": "asc", "mode": "avg", "nested": {"path": "comments"}})[:3] == \
        [("2", [2]), ("1", [3]), ("3", [4])]
    ann = order({"order": "asc", "nested": {"path": "comments",
                                            "filter": {"term": {"comments.author": "ann"}}}})
    assert [i for i, _ in ann][:2] == ["2", "1"]


def test_nested_sort_options_we_do_not_run_are_refused(books):
    e = error_of(books, {"sort": [{"comments.stars": {"nested": {"path": "comments",
                                                                 "max_children": 1}}}]})
    assert e.status == 400 and "[max_children]" in text(e)


# --- aggregations ----------------------------------------------------------------------------

def test_nested_and_reverse_nested_aggregations(books):
    aggs = {"c": {"nested": {"path": "comments"}, "aggs": {
        "who": {"terms": {"field": "comments.author"}, "aggs": {
            "stars": {"sum": {"field": "comments.stars"}},
            "docs": {"reverse_nested": {}}}}}}}
    got = books.search("books", {"size": 0, "aggs": aggs})["aggregations"]["c"]
    assert got["doc_count"] == 4
    assert [(b["key"], b["doc_count"], b["stars"]["value"], b["docs"]["doc_count"])
            for b in got["who"]["buckets"]] == [("ann", 2, 7.0, 2), ("bob", 2, 5.0, 2)]


def test_aggregations_outside_nested_do_not_see_children(books):
    aggs = {"n": {"value_count": {"field": "comments.stars"}}}
    assert books.search("books", {"size": 0, "aggs": aggs})["aggregations"]["n"]["value"] == 0


def test_top_hits_under_nested_render_children(books):
    aggs = {"c": {"nested": {"path": "comments"}, "aggs": {
        "top": {"top_hits": {"sort": [{"comments.stars": "desc"}], "size": 1}}}}}
    top = books.search("books", {"size": 0, "aggs": aggs})["aggregations"]["c"]["top"]
    hit = top["hits"]["hits"][0]
    assert (hit["_id"], hit["_nested"], hit["_source"]["stars"]) == \
        ("1", {"field": "comments", "offset": 0}, 5)


def test_reverse_nested_outside_nested_is_refused(books):
    e = error_of(books, {"size": 0, "aggs": {"r": {"reverse_nested": {}}}})
    assert e.status == 400 and "can only be used inside a [nested] aggregation" in text(e)


# --- mapping, limits, writes -----------------------------------------------------------------

def test_include_in_parent_copies_the_values_up():
    c = LocalCluster().create("p", 1, {"properties": {"c": {
        "type": "nested", "include_in_parent": True, "properties": {"a": {"type": "keyword"}}}}})
    c.index("p", {"1": {"c": [{"a": "x"}, {"a": "y"}]}})
    assert c.ids("p", {"query": {"term": {"c.a": "x"}}}) == ["1"]
    assert c.ids("p", {"query": {"nested": {"path": "c", "query": {"term": {"c.a": "y"}}}}}) \
        == ["1"]


def test_nested_fields_limit():
    props = {f"n{i}": {"type": "nested"} for i in range(51)}
    with pytest.raises(SearchError, match=r"Limit of nested fields \[50\] has been exceeded"):
        Mapping.from_body({"properties": props})


def test_nested_objects_limit_fails_the_document():
    c = LocalCluster().create("lim", 1, {"properties": {"c": {"type": "nested"}}})
    r = c.index("lim", {"1": {"c": [{"a": i} for i in range(MAX_NESTED_OBJECTS + 1)]}})
    assert r["errors"] is True
    assert "The number of nested documents has exceeded the allowed limit of [10000]" in \
        str(r["items"][0])


def test_updates_and_deletes_replace_the_children_with_the_parent():
    c = LocalCluster().create("u", 2, MAPPINGS)
    c.index("u", DOCS)
    c.index("u", {"1": {"title": "red fox", "comments": [{"author": "cid", "stars": 3}]}})
    c.bulk([{"action": "delete", "index": "u", "id": "3"}])
    q = lambda a: c.ids("u", {"query": nested({"term": {"comments.author": a}})})  # noqa: E731
    assert (q("bob"), q("cid")) == ([], ["1"])


def test_a_merge_keeps_children_with_their_parents():
    c = LocalCluster().create("m", 1, MAPPINGS)
    for k, v in DOCS.items():      # one segment per document
        c.index("m", {k: v})
    c.index("m", {"2": {"title": "brown dog", "comments": [{"author": "dan", "stars": 3}]}})
    body = {"query": nested({"match_all": {}}, inner_hits={}), "sort": ["_doc"],
            "aggs": {"c": {"nested": {"path": "comments"}}}}
    before = c.search("m", body)
    asyncio.run(c.coord.force_merge("m", max_num_segments=1))
    after = c.search("m", body)
    segments = asyncio.run(c.coord.segments("m"))["indices"]["m"]["shards"]["0"][0]["segments"]
    assert len(segments) == 1
    assert after["hits"] == before["hits"]
    assert after["aggregations"] == before["aggregations"] == {"c": {"doc_count": 4}}


# --- one shard or three: the same ranking and scores -----------------------------------------

_words = st.sampled_from(["fun", "bad", "great", "meh", "ok"])
_child = st.fixed_dictionaries({"author": st.sampled_from(["ann", "bob", "cid"]),
                                "stars": st.integers(0, 5),
                                "text": st.lists(_words, min_size=1, max_size=3).map(" ".join)})
_docs = st.lists(st.lists(_child, max_size=4), min_size=1, max_size=12)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=_docs, mode=st.sampled_from(["avg", "max", "min", "sum"]), word=_words)
def test_nested_scores_do_not_depend_on_the_shard_count(docs, mode, word):
    body = {"query": nested({"match": {"comments.text": word}}, score_mode=mode), "size": 20,
            "aggs": {"c": {"nested": {"path": "comments"}, "aggs": {
                "a": {"terms": {"field": "comments.author"}}}}}}
    answers = []
    for shards in (1, 3):
        c = LocalCluster().create("p", shards, MAPPINGS)
        c.index("p", {str(i): {"title": "t", "comments": cs} for i, cs in enumerate(docs)})
        r = c.search("p", body)
        answers.append(([(h["_id"], round(h["_score"], 5)) for h in r["hits"]["hits"]],
                        r["aggregations"]))
    assert answers[0] == answers[1]


def test_cat_indices_counts_the_hidden_children_as_elasticsearch_does():
    """``docs.count`` is Lucene's document count (children included); ``_count`` is not."""
    c = LocalCluster().create("cat", 2, MAPPINGS)
    c.index("cat", DOCS)
    rows = asyncio.run(c.coord.cat_indices("cat"))
    assert [r["docs.count"] for r in rows] == ["8"]    # 4 documents + 4 comments
    assert c.search("cat", {"size": 0})["hits"]["total"]["value"] == 4


def test_fields_under_a_nested_path_are_grouped_per_child(books):
    r = books.search("books", {"query": {"ids": {"values": ["1"]}},
                               "fields": ["comments.author", "comments.stars", "title"]})
    assert r["hits"]["hits"][0]["fields"] == {
        "title": ["red fox"],
        "comments": [{"author": ["ann"], "stars": [5]}, {"author": ["bob"], "stars": [1]}]}


DRIVERS = {"properties": {"drivers": {"type": "nested", "properties": {
    "last": {"type": "keyword"},
    "cars": {"type": "nested", "properties": {"make": {"type": "keyword"},
                                              "year": {"type": "long"}}}}}}}
FLEET = {"1": {"drivers": [{"last": "M", "cars": [{"make": "Powell", "year": 1990},
                                                  {"make": "Miller", "year": 2000}]},
                           {"last": "H", "cars": [{"make": "Ford", "year": 2010}]}]},
         "2": {"drivers": {"last": "K", "cars": [{"make": "Ford", "year": 1999},
                                                 {"make": "Dodge", "year": 2001}]}}}


@pytest.mark.parametrize("shards", [1, 3])
def test_multi_level_nesting_in_queries_inner_hits_and_aggregations(shards):
    c = LocalCluster().create("fleet", shards, DRIVERS)
    c.index("fleet", FLEET)
    old_ford = {"nested": {"path": "drivers", "query": {"nested": {
        "path": "drivers.cars", "query": {"bool": {"must": [
            {"term": {"drivers.cars.make": "Ford"}},
            {"range": {"drivers.cars.year": {"lt": 2005}}}]}}}}}}
    assert c.ids("fleet", {"query": old_ford}) == ["2"]
    r = c.search("fleet", {"sort": ["_doc"], "query": {"nested": {
        "path": "drivers.cars", "query": {"term": {"drivers.cars.make": "Ford"}},
        "inner_hits": {}}}})
    first = r["hits"]["hits"][0]["inner_hits"]["drivers.cars"]["hits"]["hits"][0]
    assert first["_nested"] == {"field": "drivers", "offset": 1,
                                "_nested": {"field": "cars", "offset": 0}}
    assert first["_source"] == {"make": "Ford", "year": 2010}
    aggs = {"d": {"nested": {"path": "drivers"}, "aggs": {"c": {
        "nested": {"path": "drivers.cars"}, "aggs": {"m": {
            "terms": {"field": "drivers.cars.make", "size": 1}, "aggs": {
                "driver": {"reverse_nested": {"path": "drivers"},
                           "aggs": {"l": {"terms": {"field": "drivers.last"}}}},
                "doc": {"reverse_nested": {}}}}}}}}}
    d = c.search("fleet", {"size": 0, "aggs": aggs})["aggregations"]["d"]
    ford = d["c"]["m"]["buckets"][0]
    assert (d["doc_count"], d["c"]["doc_count"], ford["key"], ford["doc_count"]) == \
        (3, 5, "Ford", 2)
    assert [b["key"] for b in ford["driver"]["l"]["buckets"]] == ["H", "K"]
    assert ford["doc"]["doc_count"] == 2


def test_recovery_rebuilds_the_children_from_the_log_and_snapshots(tmp_path):
    """A shard copy reopened from its files (snapshot + log tail) answers nested queries,
    inner hits and statistics exactly as before."""
    from shardsearch.cluster.engine.query.dsl import parse_query
    from shardsearch.cluster.engine.shard_messages import ShardQuery
    from shardsearch.cluster.engine.sorting import SCORE_SORT
    from test_storage import Writer, open_copy

    def answer(copy) -> tuple:
        q = parse_query(nested({"match": {"comments.text": "fun"}}, inner_hits={}))
        stats, gen = copy.core.term_stats(["comments.text"], [("comments.text", "fun")])
        hits = copy.core.query(ShardQuery(query=q, sort=SCORE_SORT, k=10, index_rank=0,
                                          generation=gen, stats=stats))
        addrs = [int(a) for a in hits.addr]
        return ([round(float(s), 6) for s in hits.scores], copy.core.inner_hits(
            ShardQuery(query=q, sort=SCORE_SORT, k=10, index_rank=0, generation=gen,
                       stats=stats), addrs), copy.core.doc_count(nested=True))

    settings = {"translog.flush_threshold_size": "1kb"}
    c = open_copy(tmp_path, **settings)
    w = Writer(c)
    w.mapping = Mapping.from_body(MAPPINGS)
    for k, v in DOCS.items():
        w.index({k: v}, refresh=True)
    w.index({"2": {"title": "brown dog", "comments": [{"author": "eve", "text": "fun fun"}]}},
            refresh=True)
    before = answer(c)
    assert before[2] == 8 and len(before[0]) == 2
    again = open_copy(tmp_path, **settings)
    assert again.recovery["snapshot"] is not None
    assert answer(again) == before


def test_a_mapping_update_over_the_nested_fields_limit_changes_nothing():
    m = Mapping.from_body({"properties": {f"n{i}": {"type": "nested"} for i in range(50)}})
    with pytest.raises(SearchError, match=r"Limit of nested fields \[50\]"):
        m.merge({"properties": {"one_more": {"type": "nested"}}})
    assert "one_more" not in m.properties and len(m.nested) == 50


@pytest.mark.parametrize("body", [
    {"query": {"nested": {"path": "drivers", "query": {"nested": {
        "path": "other", "query": {"match_all": {}}}}}}},
    {"size": 0, "aggs": {"d": {"nested": {"path": "drivers"}, "aggs": {
        "o": {"nested": {"path": "other"}}}}}},
])
def test_a_nested_path_that_is_not_a_child_of_the_enclosing_one_is_a_400(body):
    mapping = {"properties": {**DRIVERS["properties"], "other": {"type": "nested"}}}
    c = LocalCluster().create("two", 1, mapping)
    c.index("two", {**FLEET, "3": {"other": [{"x": 1}]}})
    with pytest.raises(SearchError) as e:
        c.search("two", body)
    assert e.value.status == 400 and "is not a child of [drivers]" in text(e.value)
