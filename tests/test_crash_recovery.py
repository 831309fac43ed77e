"""Durable before acknowledged: kill -9 the whole service during a bulk load, restart it.

``shardsearch serve --data-dir`` runs as its own process with its own private Ray; the test
kills every process of it at once (SIGKILL: no shutdown code runs, as when a machine loses
power — except that the page cache survives, which is what ``fsync`` guarantees anyway), then
starts it again on the same data directory.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import orjson
import pytest

from conftest import free_port
from service_proc import ServeProcess

pytestmark = pytest.mark.slow

ARGS = ["--num-cpus", "2", "--object-store-mb", "80"]


def bulk_body(index: str, docs: list[tuple[str, dict]]) -> bytes:
    lines = []
    for doc_id, src in docs:
        lines.append(orjson.dumps({"index": {"_index": index, "_id": doc_id}}))
        lines.append(orjson.dumps(src))
    return b"\n".join(lines) + b"\n"


def doc(i: int) -> dict:
    words = ["red", "green", "blue", "amber", "teal"]
    return {"title": " ".join(words[j % 5] for j in range(i % 7 + 1)) + f" item {i}", "n": i,
            "pad": "x" * (i % 50)}


def all_hits(c: httpx.Client, index: str, body: dict) -> list[dict]:
    r = c.post(f"/{index}/_search", json={**body, "size": 2000, "seq_no_primary_term": True,
                                           "version": True})
    assert r.status_code == 200, r.text
    return r.json()["hits"]["hits"]


def test_kill_9_mid_bulk_loses_no_acknowledged_write(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = free_port()
    svc = ServeProcess(port, [*ARGS, "--data-dir", str(data)], log=tmp_path / "serve1.log")
    acked: dict[str, tuple[int, int, dict]] = {}     # id -> (seq, version, source)
    sent: dict[str, dict] = {}
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            # an index loaded before the crash: its answers must come back identical
            assert c.put("/stable", json={"settings": {"number_of_shards": 2,
                                                       "number_of_replicas": 0}}).status_code \
                == 200
            r = c.post("/_bulk?refresh=true", content=bulk_body(
                "stable", [(str(i), doc(i)) for i in range(200)]),
                headers={"content-type": "application/x-ndjson"})
            assert not r.json()["errors"]
            scored = {"query": {"match": {"title": "amber teal"}}}
            before = all_hits(c, "stable", scored)
            assert len(before) > 60
            assert c.put("/load", json={"settings": {
                "number_of_shards": 2, "number_of_replicas": 0,
                "translog.flush_threshold_size": "64kb"}}).status_code == 200

        stop = threading.Event()
        batches = [0]

        def loader() -> None:
            i = 0
            with httpx.Client(base_url=svc.url, timeout=60) as lc:
                while not stop.is_set():
                    docs = [(f"d{i + j}", doc(i + j)) for j in range(40)]
                    # overwrite some earlier documents too (versions must survive)
                    if i >= 80:
                        docs += [(f"d{i - 80 + j}", {**doc(i + j), "rev": 2}) for j in range(5)]
                    for k, v in docs:
                        sent.setdefault(k, v)
                    try:
                        r = lc.post("/_bulk", content=bulk_body("load", docs),
                                    headers={"content-type": "application/x-ndjson"})
                    except httpx.HTTPError:
                        return                                   # the service died
                    for (k, v), item in zip(docs, r.json()["items"]):
                        res = item["index"]
                        assert "error" not in res, res
                        acked[k] = (res["_seq_no"], res["_version"], v)
                        sent[k] = v
                    batches[0] += 1
                    i += 40
        t = threading.Thread(target=loader, daemon=True)
        t.start()
        deadline = time.monotonic() + 90
        while batches[0] < 8 and time.monotonic() < deadline and t.is_alive():
            time.sleep(0.05)
        assert batches[0] >= 8, svc.tail()
        svc.kill9()                       # in the middle of the next bulk
        stop.set()
        t.join(timeout=60)
    finally:
        svc.stop()

    svc2 = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "serve2.log")
    try:
        svc2.wait_up()
        with httpx.Client(base_url=svc2.url, timeout=60) as c:
            assert all_hits(c, "stable", scored) == before       # same hits, scores, order
            # every acknowledged write is there, with its sequence number and version
            for doc_id, (seq, version, src) in acked.items():
                r = c.get(f"/load/_doc/{doc_id}")
                assert r.status_code == 200, (doc_id, r.text)
                got = r.json()
                assert (got["_seq_no"], got["_version"]) >= (seq, version), doc_id
                if (got["_seq_no"], got["_version"]) == (seq, version):
                    assert got["_source"] == src
            # searchable, in sequence order; anything not acknowledged is whole or absent
            hits = all_hits(c, "load", {"query": {"match_all": {}}})
            seqs = [h["_seq_no"] for h in hits]
            assert seqs == sorted(seqs)
            found = {h["_id"]: h for h in hits}
            assert set(acked) <= set(found)
            for doc_id, h in found.items():
                assert doc_id in sent, doc_id                       # never invented
                if doc_id not in acked:
                    assert h["_source"] == sent[doc_id]             # whole, never half
            # and the service goes on: new writes continue the sequence
            r = c.post("/load/_doc/after?refresh=true", json={"title": "after"})
            assert r.status_code == 201 and r.json()["_seq_no"] > max(seqs)
    finally:
        svc2.stop()


def test_a_killed_coordinator_answers_503_then_comes_back_with_the_data(tmp_path: Path) -> None:
    """The front end reaches the coordinator over its fast lane; when the coordinator's
    process dies, searches in flight and during the restart get Elasticsearch's 503
    (master_not_discovered_exception), never a 500, and once Ray has restarted it (from the
    data directory) the same searches answer as before."""
    import os
    import signal

    from service_proc import session_pids
    data = tmp_path / "data"
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "serve.log")
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            assert c.put("/keep", json={"settings": {"number_of_shards": 2,
                                                     "number_of_replicas": 0}}).status_code == 200
            r = c.post("/_bulk?refresh=true", content=bulk_body(
                "keep", [(str(i), doc(i)) for i in range(300)]),
                headers={"content-type": "application/x-ndjson"})
            assert not r.json()["errors"]
            body = {"query": {"match": {"title": "amber"}}, "size": 20}
            before = c.post("/keep/_search", json=body).json()["hits"]

            coord = [p for p in session_pids(svc.proc.pid)
                     if b"CoordinatorService" in Path(f"/proc/{p}/cmdline").read_bytes()]
            assert len(coord) == 1
            os.kill(coord[0], signal.SIGKILL)

            statuses: list[int] = []
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                r = c.post("/keep/_search", json=body)
                statuses.append(r.status_code)
                if r.status_code == 200:
                    break
                assert r.status_code == 503, r.text
                assert r.json()["error"]["type"] == "master_not_discovered_exception"
                time.sleep(0.2)
            assert statuses[-1] == 200, f"not back in 90 s: {statuses[-5:]} {svc.tail()}"
            print("statuses after the kill:", statuses)
            after = c.post("/keep/_search", json=body).json()["hits"]
            assert after["total"] == before["total"]
            assert [h["_id"] for h in after["hits"]] == [h["_id"] for h in before["hits"]]
    finally:
        svc.stop()


def load_past_the_bound(c: httpx.Client, index: str, total: int) -> None:
    """``total`` documents (more than a copy buffers) without a refresh, then some documents
    of the built segment replaced and deleted."""
    from shardsearch.cluster.engine.flushing import INDEX_BUFFER_DOCS
    assert total > INDEX_BUFFER_DOCS
    assert c.put(f"/{index}", json={"settings": {
        "number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": -1,
        "translog.flush_threshold_size": "512kb"},
        "mappings": {"properties": {"n": {"type": "long"}, "t": {"type": "text"}}}}
    ).status_code == 200
    step = 8192
    for start in range(0, total, step):
        docs = [(str(i), {"n": i, "t": f"w{i % 97} w{i % 13}"})
                for i in range(start, min(total, start + step))]
        r = c.post("/_bulk", content=bulk_body(index, docs),
                   headers={"content-type": "application/x-ndjson"})
        assert not r.json()["errors"]
    r = c.post("/_bulk", content=bulk_body(index, [(str(i), {"n": -i, "t": "w1 again"})
                                                   for i in range(100)]),
               headers={"content-type": "application/x-ndjson"})
    assert not r.json()["errors"]
    for i in range(100, 110):
        assert c.delete(f"/{index}/_doc/{i}").status_code == 200


def segment_layout(c: httpx.Client, index: str) -> list[tuple[bool, int, int]]:
    """(searched, documents, deleted) of each segment of shard 0's copy."""
    r = c.get(f"/{index}/_segments")
    assert r.status_code == 200, r.text
    segs = r.json()["indices"][index]["shards"]["0"][0]["segments"].values()
    return sorted((s["search"], s["num_docs"], s["deleted_docs"]) for s in segs)


def test_a_service_restarted_with_more_than_the_buffer_bound_unrefreshed_recovers_its_built_segment(
        tmp_path: Path) -> None:
    """Killed after loading more than ``INDEX_BUFFER_DOCS`` documents with refreshes off, a copy
    recovers its built (pending) segment as that segment, not as buffered documents (which
    the refresh after recovery would build into one): the same segments, documents and
    answers as an index loaded the same way that never restarted."""
    from shardsearch.cluster.engine.flushing import INDEX_BUFFER_DOCS
    total = INDEX_BUFFER_DOCS + 20_000
    data = tmp_path / "data"
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "s1.log")
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=120) as c:
            load_past_the_bound(c, "crashed", total)
            assert segment_layout(c, "crashed") == [(False, INDEX_BUFFER_DOCS - 110, 110)]
        svc.kill9()
    finally:
        svc.stop()
    svc2 = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "s2.log")
    try:
        svc2.wait_up()
        with httpx.Client(base_url=svc2.url, timeout=120) as c:
            # Elasticsearch refreshes after recovery: the built segment, then the buffer's
            after = segment_layout(c, "crashed")
            assert after == [(True, 20_100, 0), (True, INDEX_BUFFER_DOCS - 110, 110)]
            load_past_the_bound(c, "stayed", total)
            assert segment_layout(c, "stayed") == [(False, INDEX_BUFFER_DOCS - 110, 110)]
            assert c.post("/stayed/_refresh").status_code == 200
            assert segment_layout(c, "stayed") == after
            counts = [c.get(f"/{i}/_count").json()["count"] for i in ("crashed", "stayed")]
            assert counts == [total - 10] * 2
            body = {"query": {"match": {"t": "w1 w5"}}}
            answers = [[(h["_id"], h["_score"], h["_version"], h["_seq_no"], h["_source"])
                        for h in all_hits(c, i, body)] for i in ("crashed", "stayed")]
            assert answers[0] == answers[1] and len(answers[0]) == 2000   # all_hits' size
            assert c.get("/crashed/_doc/5").json()["_source"] == {"n": -5, "t": "w1 again"}
            assert c.get("/crashed/_doc/105").status_code == 404
    finally:
        svc2.stop()
