"""Each documented exception still holds: its probe, sent to both systems, still differs, and only
in ways the exception covers. When OpenSearch and we come to agree, the entry must go.
"""
from __future__ import annotations

import pytest

from .compare import compare
from .exceptions import DELIBERATE, Deliberate, explain

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("deliberate", DELIBERATE, ids=lambda d: d.name)
def test_documented_exception_still_differs_and_is_covered(pair, deliberate: Deliberate) -> None:
    method, path, body, params = deliberate.probe
    ours, theirs = pair.send(method, path, body, params)
    request = {"method": method, "path": path, "body": body, "params": params}
    diffs = compare(ours, theirs)
    assert diffs, f"{deliberate.name}: no difference any more; remove the entry"
    assert all(explain(d, request) is deliberate for d in diffs), diffs


def test_exception_names_are_unique() -> None:
    names = [d.name for d in DELIBERATE]
    assert len(names) == len(set(names)) and all(d.why for d in DELIBERATE)
