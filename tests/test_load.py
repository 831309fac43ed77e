"""``shardsearch load`` and ``Cluster.load``: NDJSON in, every document or an error out."""
from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import httpx
import orjson

from shardsearch.cluster.documents.ndjson_file import BadLine, Item, items
from test_cli import EXE


def _lines(*objs: object) -> list[bytes]:
    return [orjson.dumps(o) + b"\n" for o in objs]


def test_plain_documents_become_index_actions_with_ids_from_the_id_field() -> None:
    got = list(items(iter(_lines({"k": 1, "n": "a"}, {"k": 2})), "ix", "k"))
    assert [it.action for it in got] == [{"index": {"_index": "ix", "_id": "1"}},
                                         {"index": {"_index": "ix", "_id": "2"}}]
    assert got[0].source == b'{"k":1,"n":"a"}'


def test_bulk_pairs_pass_through_and_the_index_fills_only_a_missing_one() -> None:
    got = list(items(iter(_lines({"index": {"_id": "a"}}, {"x": 1},
                                 {"delete": {"_index": "other", "_id": "b"}},
                                 {"create": {"_index": "other", "_id": "c"}}, {"y": 2})),
                     "ix", None))
    assert [(it.action, it.source) for it in got] == [
        ({"index": {"_id": "a", "_index": "ix"}}, b'{"x":1}'),
        ({"delete": {"_index": "other", "_id": "b"}}, None),
        ({"create": {"_index": "other", "_id": "c"}}, b'{"y":2}')]


def test_an_unreadable_line_is_reported_with_its_number_never_skipped_silently() -> None:
    lines = [b'{"a": 1}\n', b"{nope\n", b"[1, 2]\n", b'{"b": 2}\n', b'{"index": {}}\n']
    got = list(items(iter(lines), "ix", None))
    bad = [(g.line, g.reason.split(":")[0]) for g in got if isinstance(g, BadLine)]
    assert bad == [(2, "not JSON"), (3, "a document must be a JSON object, not list"),
                   (5, "an action line without its source line at the end")]
    assert sum(isinstance(g, Item) for g in got) == 2


def test_a_document_without_the_id_field_is_an_error() -> None:
    (got,) = items(iter(_lines({"other": 1})), "ix", "k")
    assert isinstance(got, BadLine) and "[k]" in got.reason


def _gz_corpus(path: Path, n: int, bad_line_at: int | None = None) -> Path:
    with gzip.open(path, "wb") as f:
        for i in range(n):
            if i == bad_line_at:
                f.write(b"{this is not json\n")
            f.write(orjson.dumps({"uid": i, "title": f"doc {i}", "n": i % 7}) + b"\n")
    return path


def test_cli_loads_a_gzipped_file_counts_a_bad_line_and_exits_non_zero(base_url, tmp_path):
    src = _gz_corpus(tmp_path / "docs.ndjson.gz", 2500, bad_line_at=1234)
    run = subprocess.run([EXE, "load", str(src), "--index", "loadcli", "--shards", "2",
                          "--id-field", "uid", "--batch-size", "400", "--url", base_url],
                         capture_output=True, text=True, timeout=300)
    try:
        assert run.returncode == 1, run.stderr
        assert "loaded 2,500 documents" in run.stderr and "1 errors" in run.stderr
        assert "line 1235: not JSON" in run.stderr
        assert "loading" in run.stderr                       # the progress bar
        with httpx.Client(base_url=base_url) as c:
            assert c.get("/loadcli/_count").json()["count"] == 2500
            assert c.get("/loadcli/_doc/7").json()["_source"]["uid"] == 7
            shards = c.get("/loadcli/_settings").json()["loadcli"]["settings"]["index"]
            assert str(shards["number_of_shards"]) == "2"
    finally:
        httpx.delete(f"{base_url}/loadcli")


def test_cli_loads_bulk_pairs_from_stdin_and_exits_zero(base_url):
    body = b"".join(_lines({"index": {"_index": "loadstdin", "_id": "x"}}, {"v": 1},
                           {"index": {"_index": "loadstdin", "_id": "y"}}, {"v": 2},
                           {"delete": {"_index": "loadstdin", "_id": "x"}}))
    run = subprocess.run([EXE, "load", "-", "--url", base_url, "--no-progress"], input=body,
                         capture_output=True, timeout=300)
    try:
        assert run.returncode == 0, run.stderr
        httpx.post(f"{base_url}/loadstdin/_refresh")
        hits = httpx.get(f"{base_url}/loadstdin/_search").json()["hits"]["hits"]
        assert [h["_id"] for h in hits] == ["y"]
    finally:
        httpx.delete(f"{base_url}/loadstdin")


def test_cluster_load_in_python_reports_docs_and_errors(cluster, tmp_path):
    src = _gz_corpus(tmp_path / "py.ndjson.gz", 900, bad_line_at=10)
    try:
        out = cluster.load(str(src), "loadpy", id_field="uid", batch_size=250, shards=3,
                           progress=False)
        assert (out["docs"], out["errors"]) == (900, 1)
        assert out["failures"][0].startswith("line 11: not JSON")
        assert cluster.count("loadpy") == 900
    finally:
        cluster.delete_index("loadpy")
