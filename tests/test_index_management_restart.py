"""Storage never lies about index management: aliases, a closed index and index templates are
on disk before they are acknowledged, and a service killed with ``kill -9`` comes back with
them (a real ``shardsearch serve --data-dir`` in its own session, twice)."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conftest import free_port
from service_proc import ServeProcess

pytestmark = pytest.mark.slow

ARGS = ["--num-cpus", "2", "--object-store-mb", "80"]


def test_aliases_closed_state_and_templates_survive_kill_9(tmp_path: Path) -> None:
    data = tmp_path / "data"
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "1.log")
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            settings = {"settings": {"number_of_replicas": 0}}
            assert c.put("/kept", json={**settings, "aliases": {"k": {"is_write_index": True}}}
                         ).status_code == 200
            assert c.put("/shut", json=settings).status_code == 200
            assert c.post("/_aliases", json={"actions": [
                {"add": {"index": "kept", "alias": "f", "filter": {"term": {"a": "x"}}}}]}
                ).status_code == 200
            assert c.post("/shut/_close").status_code == 200
            assert c.put("/_component_template/ct", json={"template": {"mappings": {
                "properties": {"k": {"type": "keyword"}}}}}).status_code == 200
            assert c.put("/_index_template/t", json={"index_patterns": ["t-*"],
                                                     "composed_of": ["ct"],
                                                     "template": settings}).status_code == 200
    finally:
        svc.kill9()
    svc = ServeProcess(free_port(), [*ARGS, "--data-dir", str(data)], log=tmp_path / "2.log")
    try:
        svc.wait_up()
        with httpx.Client(base_url=svc.url, timeout=60) as c:
            assert c.get("/kept/_alias").json() == {"kept": {"aliases": {
                "k": {"is_write_index": True}, "f": {"filter": {"term": {"a": "x"}}}}}}
            r = c.post("/shut/_search")
            assert r.status_code == 400 and r.json()["error"]["type"] == "index_closed_exception"
            assert [t["name"] for t in c.get("/_index_template").json()["index_templates"]] \
                == ["t"]
            assert c.head("/_component_template/ct").status_code == 200
            assert c.put("/t-1").status_code == 200   # composed as before the restart
            assert c.get("/t-1/_mapping").json()["t-1"]["mappings"]["properties"] == {
                "k": {"type": "keyword"}}
    finally:
        svc.kill9()
