"""Elasticsearch's and OpenSearch's own YAML REST tests, run against the real server.

Every ``*.yml``/``*.yaml`` under ``CONFORMANCE_DIR`` (default ``../shared/conformance``) is one
pytest case per (file, test). The files are data and stay outside the repo; cases we cannot pass
yet are listed with a reason in ``tests/conformance_xfail.py``.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conformance_xfail import XFAIL
from conftest import CONFORMANCE_DIR
from yamlrunner import Runner, SkipTest, YamlTest, parse_suite


def _cases(root: Path) -> list:
    if not root.is_dir():
        return [pytest.param(None, id="no-conformance-dir", marks=pytest.mark.skip(
            reason=f"conformance folder {root} not found; set CONFORMANCE_DIR to a folder of "
                   "Elasticsearch YAML REST tests"))]
    cases = []
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".yml", ".yaml"))
    for path in files:
        rel = path.relative_to(root).as_posix()
        try:
            tests = parse_suite(path.read_text(encoding="utf-8"), rel)
        except Exception as e:  # a broken file is one failing case, not a broken collection
            tests = [YamlTest(rel, f"<load error: {type(e).__name__}: {e}>", [])]
        for t in tests:
            marks = ()
            if t.key in XFAIL:
                marks = (pytest.mark.xfail(strict=True, reason=XFAIL[t.key]),)
            cases.append(pytest.param(t, id=f"{rel}:{t.name}", marks=marks))
    return cases


@pytest.fixture(scope="module")
def runner(base_url: str) -> Iterator[Runner]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield Runner(client)


@pytest.mark.parametrize("case", _cases(CONFORMANCE_DIR))
def test_yaml(case: YamlTest, runner: Runner) -> None:
    """One YAML REST test: setup, steps, teardown, then every index is deleted."""
    if case.name.startswith("<load error"):
        pytest.fail(f"{case.rel}: {case.name}")
    try:
        runner.run(case)
    except SkipTest as e:
        pytest.skip(str(e))
