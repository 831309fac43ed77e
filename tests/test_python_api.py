"""The Python handle (`Cluster`) does what the HTTP API does, for notebooks and scripts."""
from __future__ import annotations

import pytest

from shardsearch.cluster.errors import IndexNotFound, SearchError


@pytest.fixture
def books(cluster):
    cluster.create_index("py_books", shards=3, mappings={"properties": {"year": {"type": "long"}}})
    docs = [{"title": "Dune", "year": 1965}, {"title": "Emma", "year": 1815},
            {"title": "Dune Messiah", "year": 1969}, {"title": "Solaris", "year": 1961}]
    cluster.bulk("py_books", docs, ids=["1", "2", "3", "4"], refresh=True)
    yield cluster
    cluster.delete_index("py_books")


def test_search_pages_and_sorts(books) -> None:
    r = books.search("py_books", sort=[{"year": "desc"}], from_=1, size=2)
    assert [h["_id"] for h in r["hits"]["hits"]] == ["1", "4"]
    assert r["hits"]["total"] == {"value": 4, "relation": "eq"}
    assert r["hits"]["hits"][0]["_source"] == {"title": "Dune", "year": 1965}


def test_ranked_query_and_count(books) -> None:
    r = books.search("py_books", query={"match": {"title": "dune"}})
    assert [h["_id"] for h in r["hits"]["hits"]] == ["1", "3"]
    assert r["hits"]["hits"][0]["_score"] > r["hits"]["hits"][1]["_score"]
    assert books.count("py_books") == 4
    assert books.count("py_books", {"range": {"year": {"lt": 1900}}}) == 1


def test_index_get_delete(books) -> None:
    out = books.index("py_books", {"title": "Ubik", "year": 1969}, id="9", refresh=True)
    assert out["result"] == "created"
    assert books.get("py_books", "9")["_source"]["title"] == "Ubik"
    assert books.delete("py_books", "9", refresh=True)["result"] == "deleted"
    assert books.get("py_books", "9")["found"] is False


def test_errors_are_domain_errors_with_es_types(books) -> None:
    with pytest.raises(IndexNotFound):
        books.search("py_missing")
    with pytest.raises(SearchError) as e:
        books.search("py_books", from_=-1)
    assert e.value.es_type == "illegal_argument_exception"
    with pytest.raises(SearchError) as e2:
        books.index("py_books", {"year": "not a year"}, id="x")
    assert e2.value.es_type == "mapper_parsing_exception"


def test_mapping_and_health(books) -> None:
    props = books.mapping("py_books")["py_books"]["mappings"]["properties"]
    assert props["year"] == {"type": "long"} and props["title"]["type"] == "text"
    assert books.health()["status"] in ("green", "yellow")
    assert "py_books" in books.indices()


def test_values_json_cannot_carry_are_refused_with_a_clear_error_and_nothing_written(
        books) -> None:
    """Documents reach storage as JSON: a value JSON cannot carry as it is (a ``Decimal``, a
    NumPy scalar, an object, ``NaN``) is refused by name, never stored changed (``NaN`` as
    ``null``) or unreadable; the other documents of the call are written."""
    import decimal

    import numpy as np
    with pytest.raises(SearchError) as e:
        books.index("py_books", {"title": "Price", "price": decimal.Decimal("9.99")}, id="d")
    assert e.value.es_type == "illegal_argument_exception"
    assert "decimal.Decimal" in e.value.reason and "cannot be stored exactly" in e.value.reason
    r = books.bulk("py_books", [{"title": "Fine"}, {"n": np.float64(1.5)}, {"n": float("nan")},
                                {"n": object()}], ids=["ok", "np", "nan", "obj"], refresh=True)
    failed = {next(iter(it.values()))["_id"] for it in r["items"]
              if "error" in next(iter(it.values()))}
    assert failed == {"np", "nan", "obj"}
    assert books.get("py_books", "ok")["found"] is True
    assert not any(books.get("py_books", i)["found"] for i in ("d", "np", "nan", "obj"))
    with pytest.raises(SearchError, match="cannot be stored exactly"):
        books.create_index("py_np", shards=np.int64(2))
    assert "py_np" not in books.indices()


def test_a_bulk_item_with_an_unusable_write_option_fails_alone_and_the_rest_is_written(
        books) -> None:
    """Per-write options from Python (NumPy scalars, an infinity, a number past a long) are
    normalised or refused per item before any shard sees them: one bad item gets its own
    400, and the other items of the same shard's batch are written."""
    import numpy as np
    items = [{"action": "index", "index": "py_books", "id": "n1", "source": {"title": "a"},
              "version": np.int64(5), "version_type": np.str_("external")},
             {"action": "index", "index": "py_books", "id": "inf", "source": {"title": "b"},
              "version": float("inf"), "version_type": "external"},
             {"action": "index", "index": "py_books", "id": "big", "source": {"title": "c"},
              "if_seq_no": 2**70, "if_primary_term": 1},
             {"action": "index", "index": "py_books", "id": "n2", "source": {"title": "d"}},
             {"action": "index", "index": "py_books", "id": "1", "source": {"title": "Dune"},
              "if_seq_no": np.int64(0), "if_primary_term": np.int64(1)}]
    r = books._call("bulk", items, True)
    by_id = {it["index"]["_id"]: it["index"] for it in r["items"]}
    for bad in ("inf", "big"):
        assert by_id[bad]["status"] == 400
        assert by_id[bad]["error"]["type"] == "illegal_argument_exception"
        assert "is out of range for a long" in by_id[bad]["error"]["reason"]
        assert books.get("py_books", bad)["found"] is False
    assert by_id["n1"]["status"] == 201 and by_id["n1"]["_version"] == 5
    assert by_id["n2"]["status"] == 201
    assert by_id["1"]["status"] == 200     # seq 0 of doc "1" matched: the condition held
    assert books.get("py_books", "n2")["found"] is True
