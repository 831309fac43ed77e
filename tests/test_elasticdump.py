"""An elasticdump round trip keeps every document: dump an index of 3,000 documents to a file
and load it into another index (issue 19: elasticdump's default request, ``stored_fields:
["*"]`` with ``_source: true``, used to drop ``_source`` and reload 0 documents).

elasticdump is installed from npm into a cache folder on first use
(``$SHARDSEARCH_NPM_CACHE``, default ``~/.cache/shardsearch-npm``); the test skips with the
reason when npm is missing or the install fails. Real Ray, real uvicorn, the real tool.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

N_DOCS = 3_000
CACHE = Path(os.environ.get("SHARDSEARCH_NPM_CACHE",
                            Path.home() / ".cache" / "shardsearch-npm"))


def _elasticdump() -> Path:
    tool = CACHE / "node_modules" / ".bin" / "elasticdump"
    if tool.exists():
        return tool
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the elasticdump round trip needs Node.js and npm")
    CACHE.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "elasticdump"],
                       cwd=CACHE, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or not tool.exists():
        pytest.skip(f"npm install elasticdump failed: {r.stderr.strip()[-300:]}")
    return tool


def _sources(c: httpx.Client, index: str) -> dict[str, dict]:
    r = c.post(f"/{index}/_search", json={"size": N_DOCS + 10, "query": {"match_all": {}}})
    assert r.status_code == 200, r.text
    return {h["_id"]: h["_source"] for h in r.json()["hits"]["hits"]}


def test_an_elasticdump_round_trip_keeps_every_document(es: httpx.Client, base_url: str,
                                                        tmp_path: Path) -> None:
    tool = _elasticdump()
    es.put("/src", json={"settings": {"number_of_shards": 3, "number_of_replicas": 0}})
    lines = []
    for i in range(N_DOCS):
        lines += [json.dumps({"index": {"_index": "src", "_id": f"d{i}"}}),
                  json.dumps({"title": f"document {i}", "n": i, "tags": [f"t{i % 7}"],
                              "nested": {"x": i % 3, "s": "é ü ✓"}})]
    r = es.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200 and not r.json()["errors"]
    dump = tmp_path / "src.json"
    for args in ([f"--input={base_url}/src", f"--output={dump}"],
                 [f"--input={dump}", f"--output={base_url}/dst"]):
        run = subprocess.run([str(tool), *args, "--type=data", "--limit=500"],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert sum(1 for _ in dump.open()) == N_DOCS
    es.post("/dst/_refresh")
    assert es.get("/dst/_count").json()["count"] == N_DOCS
    assert _sources(es, "dst") == _sources(es, "src")
