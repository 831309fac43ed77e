"""eland (pandas over Elasticsearch) and ``elasticsearch.dsl`` against the real service.

uvicorn + Ray (the session fixtures), a small deterministic dataset with keyword, integer,
double and date fields on two shards, and every answer compared with pandas over the same rows:
``head``, ``shape``, ``describe`` (eland's percentiles are Elasticsearch's t-digest estimates;
ours are exact, so the quartiles are compared within one step of the data), ``value_counts``,
boolean filtering and ``groupby().agg``. ``elasticsearch-dsl`` 8.x pins the 8.x client, so the
DSL used is the one the 9.x client ships (``elasticsearch.dsl``), the same code.
"""
from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pandas as pd
import pytest

ed = pytest.importorskip("eland")
from elasticsearch import Elasticsearch  # noqa: E402
from elasticsearch.dsl import Search  # noqa: E402

# the service answers as Elasticsearch 8.15; eland 9 (the one the 9.x client allows) warns of it
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:Eland major version"),
              pytest.mark.filterwarnings("ignore:Received 'size' via a specific parameter")]

INDEX = "eland_flights"
MAPPINGS = {"properties": {"carrier": {"type": "keyword"}, "dest": {"type": "keyword"},
                           "delay": {"type": "integer"}, "price": {"type": "double"},
                           "day": {"type": "date"}}}
CARRIERS = ["Kibana Airlines", "Logstash Airways", "ES-Air", "JetBeats"]
DESTS = ["Rome", "Oslo", "Lima", "Pune", "Kyiv"]


def _docs(n: int = 240) -> list[dict]:
    """Deterministic rows: a linear congruential sequence, no randomness between runs."""
    out, x = [], 7
    for i in range(n):
        x = (x * 1103515245 + 12345) % 2**31
        out.append({"carrier": CARRIERS[x % 4], "dest": DESTS[(x >> 3) % 5],
                    "delay": (x >> 5) % 120, "price": round(100 + (x >> 7) % 900 + i / 8, 2),
                    "day": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"})
    return out


DOCS = _docs()


@pytest.fixture(scope="module")
def esc(base_url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(base_url, request_timeout=60)
    if client.indices.exists(index=INDEX):
        client.indices.delete(index=INDEX)
    client.indices.create(index=INDEX, settings={"number_of_shards": 2}, mappings=MAPPINGS)
    ops = [line for i, d in enumerate(DOCS)
           for line in ({"index": {"_index": INDEX, "_id": str(i)}}, d)]
    client.bulk(operations=ops, refresh=True)
    yield client
    client.indices.delete(index=INDEX)
    client.close()


@pytest.fixture(scope="module")
def edf(esc: Elasticsearch) -> "ed.DataFrame":
    return ed.DataFrame(es_client=esc, es_index_pattern=INDEX)


@pytest.fixture(scope="module")
def pdf() -> pd.DataFrame:
    df = pd.DataFrame(DOCS, index=[str(i) for i in range(len(DOCS))])
    df["day"] = pd.to_datetime(df["day"])
    return df


def test_shape_columns_and_dtypes(edf, pdf):
    assert edf.shape == pdf.shape
    assert sorted(edf.columns) == sorted(pdf.columns)
    dtypes = edf.dtypes.to_dict()
    assert str(dtypes["delay"]).startswith("int") and str(dtypes["price"]) == "float64"
    assert str(dtypes["day"]).startswith("datetime64") and dtypes["carrier"] == object


def test_head_returns_the_documents(edf, pdf):
    head = edf.head(7).to_pandas()
    assert len(head) == 7
    for doc_id, row in head.iterrows():
        want = pdf.loc[doc_id]
        assert (row["carrier"], row["dest"], row["delay"]) == (
            want["carrier"], want["dest"], want["delay"])
        assert row["price"] == pytest.approx(want["price"])
        assert pd.Timestamp(row["day"]) == want["day"]


def test_to_pandas_reads_every_document(edf, pdf):
    """All rows (eland pages with a point in time and ``search_after``)."""
    got = edf.to_pandas().sort_index(key=lambda ix: ix.astype(int))
    want = pdf[got.columns]
    assert list(got.index) == list(want.index)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_to_pandas_pages_with_point_in_time_and_search_after(edf, pdf, monkeypatch):
    """Pages of 37: eland opens a point in time and pages with ``search_after`` on ``_doc``
    across both shards; every document once, none lost between pages."""
    import eland.operations
    monkeypatch.setattr(eland.operations, "DEFAULT_SEARCH_SIZE", 37)
    got = edf[edf.delay >= 10].to_pandas()
    want = pdf[pdf.delay >= 10]
    assert len(got) == len(want) > 37 * 3
    assert sorted(got.index, key=int) == sorted(want.index, key=int)


def test_date_filter_nunique_and_quantile(edf, pdf):
    cut = pd.Timestamp("2024-06-15", tz="UTC")
    assert edf[edf.day > cut].shape[0] == int((pdf.day > cut).sum())
    assert edf["dest"].nunique() == pdf["dest"].nunique()
    assert edf.nunique()["carrier"] == 4
    assert edf["delay"].quantile(0.5) == pytest.approx(pdf["delay"].quantile(0.5), abs=1)
    assert edf.mean(numeric_only=True)["price"] == pytest.approx(pdf["price"].mean())
    # eland's mad() is Elasticsearch's median_absolute_deviation (ours: exact medians at rank
    # floor(n/2), within one step of numpy's interpolated ones)
    x = pdf["delay"].to_numpy()
    want = np.median(np.abs(x - np.median(x)))
    assert abs(edf.mad(numeric_only=True)["delay"] - want) <= 1


def test_describe_matches_pandas(edf, pdf):
    got = edf[["delay", "price"]].describe()
    want = pdf[["delay", "price"]].describe()
    for col in ("delay", "price"):
        for stat in ("count", "mean", "min", "max"):
            assert got.loc[stat, col] == pytest.approx(want.loc[stat, col]), (col, stat)
        # eland turns Elasticsearch's population std_deviation into pandas' sample one with
        # the factor n / (n - 1) (operations.py; the exact factor is its square root)
        n = len(pdf)
        assert got.loc["std", col] == pytest.approx(pdf[col].std(ddof=0) * n / (n - 1))
        values = np.sort(pdf[col].to_numpy())
        for q, stat in ((0.25, "25%"), (0.5, "50%"), (0.75, "75%")):
            k = int(q * (len(values) - 1))
            assert values[max(0, k - 1)] <= got.loc[stat, col] <= values[min(len(values) - 1,
                                                                                  k + 2)]


def test_value_counts(edf, pdf):
    got = edf["carrier"].value_counts()
    want = pdf["carrier"].value_counts()
    assert got.to_dict() == want.to_dict()
    assert list(got.values) == sorted(got.values, reverse=True)


def test_boolean_filtering(edf, pdf):
    got = edf[(edf.delay > 60) & (edf.carrier == "ES-Air")]
    want = pdf[(pdf.delay > 60) & (pdf.carrier == "ES-Air")]
    assert got.shape == want.shape
    assert sorted(got.to_pandas().index) == sorted(want.index)
    assert got["price"].sum() == pytest.approx(want["price"].sum())
    assert edf[edf.price < 300].shape[0] == int((pdf.price < 300).sum())


def test_groupby_agg_matches_pandas(edf, pdf):
    got = edf.groupby("carrier").agg(["min", "max", "mean", "sum", "count"],
                                     numeric_only=True)
    want = pdf.groupby("carrier")[["delay", "price"]].agg(["min", "max", "mean", "sum",
                                                           "count"])
    for col in ("delay", "price"):
        for stat in ("min", "max", "mean", "sum", "count"):
            for carrier in CARRIERS:
                assert got.loc[carrier, (col, stat)] == pytest.approx(
                    want.loc[carrier, (col, stat)]), (col, stat, carrier)


def test_groupby_two_keys_count(edf, pdf):
    got = edf.groupby(["carrier", "dest"]).count()["delay"]
    want = pdf.groupby(["carrier", "dest"]).count()["delay"]
    assert got.to_dict() == want.to_dict()


def test_elasticsearch_dsl_aggs_round_trip(esc, pdf):
    s = Search(using=esc, index=INDEX).extra(size=0)
    s.aggs.bucket("carriers", "terms", field="carrier").metric("avg_delay", "avg", field="delay")
    s.aggs.bucket("months", "date_histogram", field="day", calendar_interval="month")
    resp = s.execute()
    assert resp.hits.total.value == len(DOCS)
    want = pdf.groupby("carrier")["delay"].agg(["count", "mean"])
    buckets = resp.aggregations.carriers.buckets
    assert {b.key: b.doc_count for b in buckets} == want["count"].to_dict()
    for b in buckets:
        assert b.avg_delay.value == pytest.approx(want.loc[b.key, "mean"])
    months = resp.aggregations.months.buckets
    assert [b.doc_count for b in months] == [20] * 12
    assert months[0].key_as_string.startswith("2024-01-01")


def test_pandas_to_eland_and_dynamic_mappings(esc, pdf):
    """``pandas_to_eland`` writes a frame (its own mapping, bulk, refresh); a dynamically mapped
    index (strings as ``text`` + ``.keyword``) aggregates through the keyword sub-field."""
    frame = pdf.reset_index(drop=True)
    df = ed.pandas_to_eland(frame, es_client=esc, es_dest_index="eland_written",
                            es_if_exists="replace", es_refresh=True, es_dropna=True)
    try:
        assert df.shape == frame.shape
        assert df["delay"].sum() == frame["delay"].sum()
        assert df["carrier"].value_counts().to_dict() == frame["carrier"].value_counts().to_dict()
        back = df.to_pandas().sort_index(key=lambda ix: ix.astype(int))
        assert list(back["price"]) == pytest.approx(list(frame["price"]))
    finally:
        esc.indices.delete(index="eland_written")
    ops = [line for i, d in enumerate(DOCS[:60])
           for line in ({"index": {"_index": "eland_dynamic", "_id": str(i)}}, d)]
    esc.bulk(operations=ops, refresh=True)
    try:
        dyn = ed.DataFrame(es_client=esc, es_index_pattern="eland_dynamic")
        want = pdf.iloc[:60]
        assert dyn["carrier"].value_counts().to_dict() == want["carrier"].value_counts().to_dict()
        got = dyn.groupby("dest").agg(["max"], numeric_only=True)
        assert got[("delay", "max")].to_dict() == want.groupby("dest")["delay"].max().to_dict()
        # eland's == is a term query: on a text field it matches nothing, as in Elasticsearch
        assert dyn[dyn.carrier == "JetBeats"].shape[0] == 0
        jet = dyn.es_query({"term": {"carrier.keyword": "JetBeats"}})
        assert jet.shape[0] == int((want.carrier == "JetBeats").sum())
    finally:
        esc.indices.delete(index="eland_dynamic")
