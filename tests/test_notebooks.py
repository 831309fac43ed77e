"""The notebooks run top to bottom (with smaller parameters) so they cannot rot."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

# smaller parameters per notebook, replacing the cell tagged "parameters"
SMALL: dict[str, str] = {
    "quickstart.ipynb": "N_DOCS = 120\nPAGE = 7\nSHARDS = 3",
}


def run_notebook(name: str) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []) and name in SMALL:
            cell.source = SMALL[name]
    env_before = dict(os.environ)
    os.environ.pop("RAY_ADDRESS", None)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    return nb


def _text(nb: nbformat.NotebookNode) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") or str(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)


def test_quickstart_pages_follow_one_order() -> None:
    text = _text(run_notebook("quickstart.ipynb"))
    assert "pages == one order: True | unique: True" in text
    assert "1 shard == 3 shards: True" in text
    assert "errors: False" in text


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_notebook_is_listed_with_small_parameters(name: str) -> None:
    assert name in SMALL, f"add reduced parameters for {name} to SMALL"
