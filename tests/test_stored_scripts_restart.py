"""Stored scripts are cluster metadata: on disk before ``PUT /_scripts`` is acknowledged, and
a service killed with ``kill -9`` comes back with them, a deleted one staying deleted (a real
``shardsearch serve --data-dir`` in its own session, twice)."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conftest import free_port
from service_proc import ServeProcess

pytestmark = pytest.mark.slow

ARGS = ["--num-cpus", "2", "--object-store-mb", "80"]
TEMPLATE = {"query": {"term": {"tag": "{{tag}}"}}}


def test_stored_scripts_survive_kill_9(tmp_path: Path) -> None:
    data = tmp_path / "data"
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "1.log")
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            assert c.put("/_scripts/plus", json={"script": {
                "lang": "painless", "source": "doc['n'].value + params.k"}}).status_code == 200
            assert c.put("/_scripts/by_tag", json={"script": {
                "lang": "mustache", "source": TEMPLATE}}).status_code == 200
            assert c.put("/_scripts/gone", json={"script": {
                "lang": "painless", "source": "1"}}).status_code == 200
            assert c.delete("/_scripts/gone").status_code == 200
            assert c.put("/docs", json={"settings": {"number_of_replicas": 0}}).status_code \
                == 200
            assert c.put("/docs/_doc/1?refresh=true", json={"n": 1, "tag": "a"}).status_code \
                == 201
    finally:
        svc.kill9()
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "2.log")
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            assert c.get("/_scripts/plus").json()["script"]["source"] == \
                "doc['n'].value + params.k"
            assert c.get("/_scripts/gone").status_code == 404
            r = c.post("/docs/_search", json={"script_fields": {"p": {"script": {
                "id": "plus", "params": {"k": 1}}}}}).json()
            assert r["hits"]["hits"][0]["fields"]["p"] == [2]
            r = c.post("/docs/_search/template", json={"id": "by_tag", "params": {"tag": "a"}})
            assert r.json()["hits"]["total"]["value"] == 1
    finally:
        svc.kill9()
