"""The house rules, read from the source with ``ast`` (no import of the code itself).

``cluster/`` is layered (README, "Layout"); imports point down only::

    api -> coordinator -> search / documents / indices -> engine
                          distribution hosts engine objects in actors (the only Ray layer)

What fails here:

* ``engine`` importing Ray, asyncio, FastAPI (or Starlette, uvicorn), or any part of ``cluster/``
  other than ``engine`` itself, ``errors`` and ``values``;
* ``search``, ``documents`` or ``indices`` importing Ray or ``distribution``;
* ``search`` importing ``documents``; ``indices`` importing ``search`` or ``documents``;
* anything in ``cluster/`` importing the ``coordinator`` back (only the client handle, which
  sits above it, may), or the client handle;
* anything in ``cluster/`` importing ``api``;
* an import cycle between modules of ``cluster/`` (imports inside functions count: a lazy import
  is still a dependency).

import-linter cannot see ``shardsearch.cluster`` (it is mapped from ``cluster/`` through
``package-dir``), so the graph is built from the files. The last tests plant forbidden imports
in a temporary tree and check that the checker catches each of them.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "shardsearch.cluster"
GUI_OR_ASYNC = ("ray", "asyncio", "fastapi", "starlette", "uvicorn")
LAYERS = ("engine", "search", "documents", "indices", "distribution")
BASE = ("errors", "values")          # leaf modules every layer may use
ABOVE = ("coordinator", "client", "experiments")   # the facade and what sits on top of it


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def layer_of(module: str) -> str:
    """``engine``, ``search``, ..., ``coordinator``, ``errors``..., or ``api`` / an outside name."""
    if module == "shardsearch.api" or module.startswith("shardsearch.api."):
        return "api"
    if not module.startswith(PACKAGE + ".") and module != PACKAGE:
        return module.split(".")[0]
    rest = module[len(PACKAGE) + 1:].split(".")
    return rest[0] if rest[0] else "cluster"


def imports_of(path: Path, module: str) -> list[tuple[str, int]]:
    """Every module ``path`` imports (absolute names), with its line; lazy imports included."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rsplit(".", 1)[0]
    out: list[tuple[str, int]] = []
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", getattr(block.test, "attr", "")) == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:      # ``if TYPE_CHECKING:`` imports never run
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            if node.module is None:      # from . import a, b: each may be a module
                out += [(f"{base}.{a.name}", node.lineno) for a in node.names]
            else:
                out.append((base, node.lineno))
    return out


def _resolve(name: str, modules: set[str]) -> str | None:
    """The module of ``cluster/`` that an imported name lives in (``pkg.mod.Class`` -> ``pkg.mod``)."""
    while name:
        if name in modules:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return None


def forbidden(importer: str, imported: str) -> str | None:
    """Why ``importer`` (a module of ``cluster/``) may not import ``imported``, or None."""
    src, dst = layer_of(importer), layer_of(imported)
    top = imported.split(".")[0]
    if dst == "api":
        return "cluster/ never imports api/"
    if src == "engine":
        if top in GUI_OR_ASYNC:
            return f"engine imports {top}"
        if imported.startswith(PACKAGE) and dst not in ("engine", *BASE):
            return f"engine imports the {dst} layer"
    if src in ("search", "documents", "indices"):
        if top == "ray":
            return f"{src} imports ray"
        if dst == "distribution":
            return f"{src} imports distribution"
    if src == "search" and dst == "documents":
        return "search imports documents"
    if src == "indices" and dst in ("search", "documents"):
        return f"indices imports {dst}"
    if dst == "coordinator" and src not in ("coordinator", "client"):
        return "nothing imports the coordinator back"
    if dst in ("client", "experiments") and src not in ("client", "experiments"):
        return "nothing below the client handle imports it"
    if src in BASE and imported.startswith(PACKAGE) and dst not in BASE:
        return f"{src} is a leaf module"
    return None


def check(root: Path) -> list[str]:
    """Every broken rule in the ``cluster/`` tree at ``root``, one line each (empty: all kept)."""
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    names = {module_name(p, root): p for p in files}
    modules = set(names)
    problems: list[str] = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in names.items():
        for imported, line in imports_of(path, mod):
            target = _resolve(imported, modules) if imported.startswith(PACKAGE) else None
            why = forbidden(mod, target or imported)
            if why:
                problems.append(f"{path.relative_to(root)}:{line}: imports {imported} ({why})")
            if target and target != mod and not _is_package_of(target, mod):
                graph[mod].add(target)
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return problems


def _is_package_of(pkg: str, mod: str) -> bool:
    return mod.startswith(pkg + ".")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(_one_cycle(graph, sorted(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _one_cycle(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A readable cycle through the component's first module (breadth-first back to it)."""
    members, start = set(comp), comp[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return comp


# ---- the rules of this repository ----------------------------------------------------------

def test_cluster_keeps_the_house_rules() -> None:
    problems = check(ROOT / "cluster")
    assert not problems, "\n".join(problems)


def test_every_layer_exists() -> None:
    for layer in LAYERS:
        assert (ROOT / "cluster" / layer / "__init__.py").is_file(), layer


def test_files_stay_small() -> None:
    """No file of ``cluster/`` or ``api/`` over 700 lines (the aim is 600)."""
    big = {str(p.relative_to(ROOT)): n for d in ("cluster", "api") for p in (ROOT / d).rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 700}
    assert not big, big


# ---- the checker itself, on planted trees ---------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "cluster"
    for rel, text in {"__init__.py": "", "errors.py": "", "values.py": "",
                      "coordinator.py": "from .search import phases\n", **files}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for layer in LAYERS:
        (root / layer).mkdir(exist_ok=True)
        (root / layer / "__init__.py").touch()
    return root


CLEAN = {
    "engine/shard.py": "import numpy\nfrom ..errors import SearchError\nfrom . import scoring\n",
    "engine/scoring.py": "import math\n",
    "search/phases.py": "import asyncio\nfrom ..engine.shard import Shard\nfrom ..indices import routing\n",
    "indices/routing.py": "from ..engine import scoring\n",
    "documents/bulk.py": "from ..search import phases\n",
    "distribution/actors.py": "import ray\nfrom ..engine.shard import Shard\n",
    "client.py": "from .coordinator import Coordinator\n",
}


def test_checker_passes_a_clean_tree(tmp_path: Path) -> None:
    assert check(_tree(tmp_path, CLEAN)) == []


PLANTED = [
    ("engine/shard.py", "import ray\n", "engine imports ray"),
    ("engine/shard.py", "import asyncio\n", "engine imports asyncio"),
    ("engine/shard.py", "from fastapi import Request\n", "engine imports fastapi"),
    ("engine/shard.py", "def f():\n    from ..search import phases\n", "engine imports the search layer"),
    ("engine/shard.py", "from ..distribution.actors import x\n", "engine imports the distribution layer"),
    ("search/phases.py", "import ray\n", "search imports ray"),
    ("search/phases.py", "from ..distribution import actors\n", "search imports distribution"),
    ("documents/bulk.py", "from ..distribution.actors import x\n", "documents imports distribution"),
    ("indices/routing.py", "import ray.util\n", "indices imports ray"),
    ("search/phases.py", "from ..documents.bulk import x\n", "search imports documents"),
    ("indices/routing.py", "from ..search.phases import x\n", "indices imports search"),
    ("indices/routing.py", "from ..documents import bulk\n", "indices imports documents"),
    ("distribution/actors.py", "from ..coordinator import Coordinator\n",
     "nothing imports the coordinator back"),
    ("search/phases.py", "from shardsearch.cluster.coordinator import C\n",
     "nothing imports the coordinator back"),
    ("coordinator.py", "from ..api import app\n", "cluster/ never imports api/"),
    ("errors.py", "from .engine import shard\n", "errors is a leaf module"),
]


def test_checker_catches_each_planted_import(tmp_path: Path) -> None:
    for i, (rel, line, why) in enumerate(PLANTED):
        files = dict(CLEAN)
        base = files.get(rel, "from .search import phases\n" if rel == "coordinator.py" else "")
        files[rel] = base + line
        problems = check(_tree(tmp_path / str(i), files))
        assert any(why in p for p in problems), (rel, line, problems)


def test_checker_catches_a_cycle(tmp_path: Path) -> None:
    files = dict(CLEAN, **{"engine/scoring.py": "def f():\n    from .shard import Shard\n"})
    problems = check(_tree(tmp_path, files))
    assert problems == ["import cycle: shardsearch.cluster.engine.scoring -> "
                        "shardsearch.cluster.engine.shard -> shardsearch.cluster.engine.scoring"]


def test_every_coordinator_call_of_the_api_and_the_client_is_a_verb() -> None:
    """The actor runs only ``Coordinator.VERBS`` by name: the names the callers send are there."""
    import re

    from shardsearch.cluster.coordinator import Coordinator
    sent: set[str] = set()
    for d in ("api", "cluster/client"):
        for p in (ROOT / d).rglob("*.py"):
            sent |= set(re.findall(r'(?:\.call|_call)\("([a-z_]+)"', p.read_text()))
    assert sent and sent <= Coordinator.VERBS, sorted(sent - Coordinator.VERBS)
    assert all(callable(getattr(Coordinator, v)) for v in Coordinator.VERBS)
