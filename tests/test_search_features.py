"""Search features that used to be refused: ``collapse``, named queries, ``rescore``,
``indices_boost`` and ``highlight`` — each as Elasticsearch defines it, and each giving the same
page and scores for 1 and 4 shards. Real Ray, real uvicorn, the real ``elasticsearch`` client.
"""
from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from elasticsearch.dsl import Search

WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]
DOCS = {str(i): {"title": " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)),
                 "body": f"The {WORDS[i % 10]} fox is here. A second sentence about "
                         f"{WORDS[(i + 3) % 10]} things. Nothing else.",
                 "group": f"g{i % 4}", "n": i % 5, "rank": i}
        for i in range(40)}
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                          "group": {"type": "keyword"}, "n": {"type": "integer"},
                          "rank": {"type": "integer"}}}


@pytest.fixture(scope="module")
def c(base_url: str) -> Any:
    """Indices ``one`` (1 shard) and ``four`` (4 shards) holding the same documents."""
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for name, shards in (("one", 1), ("four", 4)):
            client.delete(f"/{name}")
            client.put(f"/{name}", json={"settings": {"number_of_shards": shards,
                                                      "number_of_replicas": 0},
                                         "mappings": MAPPING})
            lines = []
            for doc_id, doc in DOCS.items():
                lines += [json.dumps({"index": {"_index": name, "_id": doc_id}}),
                          json.dumps(doc)]
            r = client.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                            headers={"content-type": "application/x-ndjson"})
            assert r.status_code == 200 and not r.json()["errors"]
        yield client
        for name in ("one", "four", "three"):
            client.delete(f"/{name}")


def _search(c: httpx.Client, index: str, body: dict[str, Any], **params: str) -> dict[str, Any]:
    r = c.post(f"/{index}/_search", json=body, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _page(resp: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(h["_id"], h.get("_score")) for h in resp["hits"]["hits"]]


def _same_for_1_and_4_shards(c: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    one, four = _search(c, "one", body), _search(c, "four", body)
    assert [h["_id"] for h in one["hits"]["hits"]] == [h["_id"] for h in four["hits"]["hits"]]
    for a, b in zip(one["hits"]["hits"], four["hits"]["hits"]):
        if a.get("_score") is None:
            assert b.get("_score") is None
        else:
            assert a["_score"] == pytest.approx(b["_score"], rel=1e-6)
        for key in ("matched_queries", "highlight", "fields", "inner_hits"):
            assert _no_index(a.get(key)) == _no_index(b.get(key)), key
    return four


def _no_index(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_index(v) for k, v in value.items() if k != "_index"}
    if isinstance(value, list):
        return [_no_index(v) for v in value]
    return value


# --- collapse -------------------------------------------------------------------------------

def test_collapse_returns_one_hit_per_group_the_first_in_the_sort_order(c) -> None:
    resp = _same_for_1_and_4_shards(c, {"collapse": {"field": "group"},
                                        "sort": [{"rank": "desc"}], "size": 10})
    hits = resp["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["39", "38", "37", "36"]
    assert [h["fields"]["group"] for h in hits] == [["g3"], ["g2"], ["g1"], ["g0"]]
    assert resp["hits"]["total"] == {"value": 40, "relation": "eq"}   # every matching document


def test_collapse_pages_through_groups_without_duplicates(c) -> None:
    body = {"collapse": {"field": "n"}, "query": {"match": {"title": "fox dog"}}}
    seen = []
    for start in range(0, 6, 2):
        page = _same_for_1_and_4_shards(c, {**body, "from": start, "size": 2})
        seen += [h["fields"]["n"][0] for h in page["hits"]["hits"]]
    assert len(seen) == len(set(seen))
    best = {}
    for h in _search(c, "one", {**body, "size": 40})["hits"]["hits"]:
        best.setdefault(h["fields"]["n"][0], h["_id"])
    assert len(seen) == len(best)


def test_collapse_inner_hits_list_each_group_with_their_own_sort_and_size(c) -> None:
    body = {"collapse": {"field": "group", "inner_hits": {"name": "top", "size": 2,
                                                          "sort": [{"rank": "asc"}]}},
            "sort": [{"rank": "desc"}], "size": 2}
    hits = _same_for_1_and_4_shards(c, body)["hits"]["hits"]
    inner = hits[0]["inner_hits"]["top"]["hits"]
    assert inner["total"] == {"value": 10, "relation": "eq"}
    assert [h["_id"] for h in inner["hits"]] == ["3", "7"]


def test_collapse_in_a_scroll_is_refused_as_elasticsearch_does(c) -> None:
    r = c.post("/one/_search?scroll=1m", json={"collapse": {"field": "group"}})
    assert r.status_code == 400
    assert "cannot use `collapse` in a scroll context" in r.json()["error"]["reason"]


def test_collapse_on_a_text_field_is_refused(c) -> None:
    r = c.post("/one/_search", json={"collapse": {"field": "title"}})
    assert r.status_code == 400, r.text
    assert "collapse" in r.text


# --- named queries --------------------------------------------------------------------------

def test_named_queries_report_their_scores_with_include_named_queries_score(c) -> None:
    body = {"query": {"bool": {"should": [
        {"match": {"title": {"query": "fox", "_name": "fox"}}},
        {"constant_score": {"filter": {"term": {"group": "g1"}}, "_name": "g1"}}]}},
        "size": 40}
    plain = _same_for_1_and_4_shards(c, body)["hits"]["hits"]
    for h in plain:
        expected = sorted((["fox"] if "fox" in DOCS[h["_id"]]["title"].split() else []) +
                          (["g1"] if DOCS[h["_id"]]["group"] == "g1" else []))
        assert h["matched_queries"] == expected
    scored = _search(c, "four", body, include_named_queries_score="true")["hits"]["hits"]
    for h in scored:
        assert set(h["matched_queries"]) == set(
            next(p["matched_queries"] for p in plain if p["_id"] == h["_id"]))
        if "g1" in h["matched_queries"]:
            assert h["matched_queries"]["g1"] == pytest.approx(1.0)


# --- rescore --------------------------------------------------------------------------------

def test_rescore_reorders_the_top_window_with_the_weighted_scores(c) -> None:
    query = {"match": {"title": "fox dog"}}
    base = _search(c, "one", {"query": query, "size": 40})["hits"]["hits"]
    body = {"query": query, "size": 5, "rescore": {"window_size": 5, "query": {
        "rescore_query": {"constant_score": {"filter": {"term": {"group": "g2"}}, "boost": 5}},
        "query_weight": 0.5, "rescore_query_weight": 2, "score_mode": "total"}}}
    resp = _same_for_1_and_4_shards(c, body)
    window = base[:5]
    expected = sorted(((h["_score"] * 0.5 + (10.0 if DOCS[h["_id"]]["group"] == "g2" else 0),
                        -i, h["_id"]) for i, h in enumerate(window)), reverse=True)
    assert [h["_id"] for h in resp["hits"]["hits"]] == [e[2] for e in expected]
    assert [h["_score"] for h in resp["hits"]["hits"]] == pytest.approx([e[0] for e in expected],
                                                                        rel=1e-5)


@pytest.mark.parametrize("mode,combine", [
    ("multiply", lambda a, b: a * b), ("avg", lambda a, b: (a + b) / 2),
    ("max", max), ("min", min)])
def test_rescore_score_modes_combine_as_elasticsearch_does(c, mode, combine) -> None:
    query = {"match": {"title": "fox"}}
    base = _search(c, "one", {"query": query, "size": 3})["hits"]["hits"]
    body = {"query": query, "size": 3, "rescore": {"window_size": 3, "query": {
        "rescore_query": {"constant_score": {"filter": {"match_all": {}}, "boost": 2.0}},
        "score_mode": mode}}}
    got = {h["_id"]: h["_score"] for h in _same_for_1_and_4_shards(c, body)["hits"]["hits"]}
    assert got == pytest.approx({h["_id"]: combine(h["_score"], 2.0) for h in base}, rel=1e-5)


def test_rescore_with_a_field_sort_is_refused(c) -> None:
    r = c.post("/one/_search", json={"sort": ["rank"], "rescore": {"query": {
        "rescore_query": {"match_all": {}}}}})
    assert r.status_code == 400
    assert "Cannot use [sort] option in conjunction with [rescore]." in r.text


# --- indices_boost --------------------------------------------------------------------------

def test_indices_boost_multiplies_the_scores_of_the_named_index(c) -> None:
    query = {"query": {"match": {"title": "fox"}}, "size": 80}
    plain = _search(c, "one,four", query)["hits"]["hits"]
    boosted = _search(c, "one,four", {**query, "indices_boost": [{"fo*": 3}, {"one": 2}]})
    scores = {(h["_index"], h["_id"]): h["_score"] for h in plain}
    for h in boosted["hits"]["hits"]:
        factor = 3 if h["_index"] == "four" else 2
        assert h["_score"] == pytest.approx(scores[(h["_index"], h["_id"])] * factor, rel=1e-5)
    assert boosted["hits"]["hits"][0]["_index"] == "four"


# --- highlight ------------------------------------------------------------------------------

def test_highlight_marks_the_query_terms_in_sentences_that_fit_the_fragment_size(c) -> None:
    body = {"query": {"match": {"body": "fox"}}, "size": 1,
            "highlight": {"fields": {"body": {}}}}
    hit = _same_for_1_and_4_shards(c, body)["hits"]["hits"][0]
    text = DOCS[hit["_id"]]["body"]   # shorter than the default fragment_size (100)
    assert hit["highlight"]["body"] == [text.replace("fox", "<em>fox</em>")]
    body["highlight"]["fields"]["body"]["fragment_size"] = 20
    hit = _search(c, "four", body)["hits"]["hits"][0]
    assert hit["highlight"]["body"] == [text.split(". ")[0].replace("fox", "<em>fox</em>") + "."]


def test_highlight_options_tags_whole_field_and_html_encoder(c) -> None:
    body = {"query": {"ids": {"values": ["1"]}}, "highlight": {
        "pre_tags": ["<b>"], "post_tags": ["</b>"], "encoder": "html", "number_of_fragments": 0,
        "highlight_query": {"match": {"body": "things"}}, "fields": {"body": {}}}}
    hit = _search(c, "four", body)["hits"]["hits"][0]
    assert hit["highlight"]["body"] == [DOCS["1"]["body"].replace("things", "<b>things</b>")]


def test_highlight_no_match_size_returns_the_start_of_a_field_without_matches(c) -> None:
    body = {"query": {"match": {"title": "fox"}}, "size": 1, "highlight": {
        "require_field_match": True, "fields": {"body": {"no_match_size": 10}}}}
    hit = _search(c, "one", body)["hits"]["hits"][0]
    assert hit["highlight"]["body"] == ["The " + DOCS[hit["_id"]]["body"].split()[1]]


def test_highlight_without_require_field_match_marks_terms_of_other_fields(c) -> None:
    body = {"query": {"match": {"title": "fox"}}, "size": 1, "highlight": {
        "require_field_match": False, "fields": [{"body": {"type": "plain"}}]}}
    hit = _search(c, "one", body)["hits"]["hits"][0]
    assert "<em>fox</em>" in hit["highlight"]["body"][0]


def test_highlight_type_fvh_is_refused_naming_it(c) -> None:
    r = c.post("/one/_search", json={"highlight": {"type": "fvh", "fields": {"body": {}}}})
    assert r.status_code == 400 and "fvh" in r.json()["error"]["reason"]


def test_elasticsearch_dsl_highlight_example_works(base_url: str, c) -> None:
    client = Elasticsearch(base_url)
    s = Search(using=client, index="four").query("match", title="fox").highlight("title")
    resp = s.execute()
    assert resp.hits.total.value > 0
    for hit in resp:
        assert all("<em>fox</em>" in f for f in hit.meta.highlight.title)


# --- suggest --------------------------------------------------------------------------------

def test_term_suggester_proposes_indexed_terms_within_the_edit_distance(c) -> None:
    body = {"size": 0, "suggest": {"text": "quikc fox", "s": {"term": {"field": "title"}}}}
    one, four = _search(c, "one", body)["suggest"], _search(c, "four", body)["suggest"]
    assert one == four
    quick, fox = one["s"]
    assert (quick["text"], quick["offset"], quick["length"]) == ("quikc", 0, 5)
    assert quick["options"][0]["text"] == "quick"
    assert quick["options"][0]["score"] == pytest.approx(0.8)
    freq = sum("quick" in d["title"].split() for d in DOCS.values())
    assert quick["options"][0]["freq"] == freq
    assert fox["options"] == []   # shorter than min_word_length, and in the index


def test_term_suggester_modes_and_sort(c) -> None:
    spec = {"field": "title", "suggest_mode": "always", "min_word_length": 3,
            "max_term_freq": 1000, "sort": "frequency"}
    got = _search(c, "four", {"size": 0, "suggest": {"s": {"text": "dog", "term": spec}}})
    assert all(o["text"] != "dog" for o in got["suggest"]["s"][0]["options"])
    freqs = [o["freq"] for o in got["suggest"]["s"][0]["options"]]
    assert freqs == sorted(freqs, reverse=True)


def test_the_completion_suggester_needs_a_completion_field(c) -> None:
    r = c.post("/one/_search", json={"suggest": {"s": {"text": "x",
                                                        "completion": {"field": "title"}}}})
    assert r.status_code == 400
    assert "Field [title] is not a completion suggest field" in r.text
