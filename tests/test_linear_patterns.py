"""User patterns run in linear time: a catastrophic regex cannot pin a shard.

``(a+)+b`` against a long run of ``a`` takes exponential time with a backtracking engine; with
RE2 it answers at once, and the shard serves the next search right away.
"""
from __future__ import annotations

import time

import pytest

from shardsearch.cluster.errors import IllegalArgument
from shardsearch.cluster.engine.query.pattern_syntax import lucene_regex, wildcard_regex

LONG = "a" * 30_000
EVIL_REGEXPS = ["(a+)+b", "(a|aa)+b", "(a*)*b", "(.*a){12}b"]
EVIL_WILDCARDS = ["*a*a*a*a*a*a*a*a*a*a*b", "a*a*a*a*a*a*a*a*a*a*?b"]


@pytest.mark.parametrize("pattern", EVIL_REGEXPS)
def test_a_catastrophic_regexp_is_decided_in_linear_time(pattern):
    rx = lucene_regex(pattern)
    t0 = time.perf_counter()
    assert rx.fullmatch(LONG) is None
    assert rx.fullmatch(LONG + "b") is not None
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("pattern", EVIL_WILDCARDS)
def test_a_catastrophic_wildcard_is_decided_in_linear_time(pattern):
    rx = wildcard_regex(pattern)
    t0 = time.perf_counter()
    assert rx.fullmatch(LONG) is None
    assert rx.fullmatch(LONG + "b") is not None
    assert time.perf_counter() - t0 < 1.0


def test_lucene_syntax_keeps_its_meaning_under_re2():
    assert lucene_regex('"a.b"c').fullmatch("a.bc")
    assert not lucene_regex('"a.b"c').fullmatch("axbc")
    assert lucene_regex("foo<1-12>").fullmatch("foo12")
    assert not lucene_regex("foo<1-12>").fullmatch("foo13")
    assert not lucene_regex("a#").fullmatch("a")
    assert lucene_regex(r"\d+\.x").fullmatch("12.x")
    assert lucene_regex("ab@").fullmatch("abzzz")
    assert lucene_regex("Ab", case_insensitive=True).fullmatch("aB")
    assert wildcard_regex(r"a\*b?").fullmatch("a*bc")
    assert not wildcard_regex(r"a\*b?").fullmatch("axbc")
    assert wildcard_regex("a b*").fullmatch("a b\nc")


def test_a_pattern_re2_cannot_compile_is_a_client_error():
    with pytest.raises(IllegalArgument):
        lucene_regex("a{2000}")


def test_a_catastrophic_pattern_does_not_pin_the_shard(es):
    es.put("/evil", json={"settings": {"number_of_shards": 1},
                          "mappings": {"properties": {"k": {"type": "keyword"},
                                                      "t": {"type": "text"}}}})
    docs = "".join('{"index":{"_id":"%d"}}\n{"k":"%s","t":"%s"}\n' % (i, LONG + str(i), "x")
                   for i in range(20))
    r = es.post("/evil/_bulk?refresh=true", content=docs,
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]
    queries = [{"regexp": {"k": p}} for p in EVIL_REGEXPS] + \
              [{"wildcard": {"k": p}} for p in EVIL_WILDCARDS] + \
              [{"query_string": {"query": "k:/(a+)+b/"}},
               {"query_string": {"query": "k:*a*a*a*a*a*a*a*a*a*a*b"}}]
    for q in queries:
        t0 = time.perf_counter()
        r = es.post("/evil/_search", json={"query": q})
        assert r.status_code == 200, r.text
        assert r.json()["hits"]["total"]["value"] == 0
        assert time.perf_counter() - t0 < 1.0, q
        t0 = time.perf_counter()
        r = es.post("/evil/_search", json={"query": {"match_all": {}}})
        assert r.json()["hits"]["total"]["value"] == 20
        assert time.perf_counter() - t0 < 1.0
