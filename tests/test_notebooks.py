"""The notebooks run top to bottom (with smaller parameters) so they cannot rot."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# each executed notebook and its figures are kept here (CI can upload the folder)
OUTPUT = Path(os.environ.get("NOTEBOOK_OUTPUT",
                             Path(__file__).resolve().parent.parent / "build" / "notebooks"))

# smaller parameters per notebook, replacing the cell tagged "parameters"
SMALL: dict[str, str] = {
    "quickstart.ipynb": "N_DOCS = 120\nPAGE = 7\nSHARDS = 3",
    "cost_of_deep_paging.ipynb": ("N_DOCS = 3_000\nSHARDS = 2\nFROMS = [0, 500, 2_900]\n"
                                  "SIZES = [10, 100]\nSHARD_COUNTS = [1, 2]\nN_SMALL = 600\n"
                                  "REPEAT = 1\nSCROLL_BATCH = 500"),
    "order_across_shards.ipynb": "N_DOCS = 160\nSHARDS = 8\nPAGE = 5\nN_PAGES = 3",
    "tail_latency.ipynb": ("N_DOCS = 300\nSHARD_COUNTS = [1, 3]\nSEARCHES = 12\n"
                           "LATENCY_MS = 1.0\nJITTER_MS = 3.0\nTIMEOUT_MS = 15\n"
                           "STRAGGLER_MS = 40.0"),
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
    _save(name, nb)
    return nb


def _save(name: str, nb: nbformat.NotebookNode) -> None:
    """The executed notebook and every figure it drew, as PNG files beside it."""
    import base64
    OUTPUT.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, OUTPUT / name)
    stem = name.removesuffix(".ipynb")
    for i, cell in enumerate(nb.cells):
        for j, o in enumerate(cell.get("outputs", [])):
            if "image/png" in o.get("data", {}):
                (OUTPUT / f"{stem}-cell{i}-{j}.png").write_bytes(
                    base64.b64decode(o["data"]["image/png"]))


def _text(nb: nbformat.NotebookNode) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") or str(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)


def test_quickstart_pages_follow_one_order() -> None:
    nb = run_notebook("quickstart.ipynb")
    text = _text(nb)
    assert "pages == one order: True | unique: True" in text
    assert "one rising order across shards: True" in text
    assert _figures(nb) >= 1
    assert list(OUTPUT.glob("quickstart-cell*.png"))     # its figure is saved
    assert "1 shard == 3 shards: True" in text
    assert "errors: False" in text


def _figures(nb: nbformat.NotebookNode) -> int:
    return sum(1 for cell in nb.cells for o in cell.get("outputs", [])
               if "image/png" in o.get("data", {}))


def test_cost_of_deep_paging_measures_what_each_method_must_send() -> None:
    nb = run_notebook("cost_of_deep_paging.ipynb")
    text = _text(nb)
    assert "from_size: every shard sends min(from + size, its matches): True" in text
    assert "deep_page: each shard sends a bounded range at any depth: True" in text
    assert "search_after: at most size per shard: True" in text
    assert "all three methods give the same page at every depth: True" in text, \
        [line for line in text.splitlines() if "differ" in line or ": False" in line]
    assert _figures(nb) >= 5


def test_order_across_shards_global_statistics_agree_local_ones_reorder() -> None:
    nb = run_notebook("order_across_shards.ipynb")
    text = _text(nb)
    assert "global statistics: 1 shard == 8 shards (ids and scores): True" in text
    assert "global: every page equal on 1 and 8 shards: True" in text
    assert "local statistics: 8 shards reorder the results: True" in text
    assert "ties follow (index name, write order): True" in text
    assert "every tied document exactly once across pages: True" in text
    assert "1 shard and 8 shards page through ties in the same order: True" in text
    assert _figures(nb) >= 1


def test_tail_latency_measures_percentiles_and_timeouts() -> None:
    nb = run_notebook("tail_latency.ipynb")
    text = _text(nb)
    assert "simulation on: 4 shard actors" in text      # 1 + 3 shards
    assert "searches: 48" in text                       # 2 settings x 2 indices x 12
    assert "'latency_ms': 40.0" in text                 # the straggler, in cluster health
    assert _figures(nb) >= 3


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_notebook_is_listed_with_small_parameters(name: str) -> None:
    assert name in SMALL, f"add reduced parameters for {name} to SMALL"
