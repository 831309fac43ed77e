"""Ray's extra serializers registered when their library is first imported, not before (issue 20).

When a Ray process makes its serialization context, Ray registers serializers for three
libraries it may meet in arguments (``ray.util.serialization_addons.apply``): pydantic's model
fields, starlette's ``State`` and pyarrow's tables and JSON options. To register them it imports
them all: pydantic (v2 and v1), starlette with anyio, pyarrow and ``pyarrow.json``, ~250
modules and ~15 MiB PSS in each of our processes, though an empty shard copy or the coordinator
never touches any of them. A value of one of those types only exists once its library has been
imported, so registering each when its library finishes importing changes nothing to what is
pickled and how; a process that never imports it never pays for it. (Only Ray Data reads,
``shardsearch.data``, import pyarrow; the front end imports pydantic and starlette with FastAPI.)

Ray is pinned (pyproject); on another Ray version (its ``apply`` may register more) the lever is
left off.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("shardsearch.ray")
RAY_VERSION = "2.60.0"   # the Ray whose ``serialization_addons.apply`` this replaces
_lock = threading.Lock()
_installed = False


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs the callbacks waiting for a module right after that module is first executed."""

    def __init__(self) -> None:
        self.waiting: dict[str, list[Callable[[], None]]] = {}

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.waiting:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _ThenCall(spec.loader, lambda: self._fire(name))
                return spec
        return None

    def _fire(self, name: str) -> None:
        # a failing registration must not fail the library's import (it runs inside it)
        for callback in self.waiting.pop(name, []):
            try:
                callback()
            except Exception:
                log.exception("Ray's serializer for %s could not be registered", name)

    def when_imported(self, name: str, callback: Callable[[], None]) -> None:
        """``callback()`` now if ``name`` is imported, else right after it is."""
        if name in sys.modules:
            callback()
        else:
            self.waiting.setdefault(name, []).append(callback)


class _ThenCall(importlib.abc.Loader):
    """A module's own loader, then a callback once the module has run."""

    def __init__(self, loader: Any, then: Callable[[], None]) -> None:
        self.loader, self.then = loader, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        self.then()

    def __getattr__(self, name: str) -> Any:   # get_code, is_package, resource readers, ...
        return getattr(self.loader, name)


_after_import = _AfterImport()


def _register_pydantic(context: Any) -> None:
    # Ray's module imports pydantic itself: only once pydantic is in
    from ray._common.pydantic_compat import register_pydantic_serializers
    register_pydantic_serializers(context)


def _lazy_apply(addons: Any, arrow: Callable[[Any], None]) -> Callable[[Any], None]:
    def apply(context: Any) -> None:
        _after_import.when_imported("pydantic", lambda: _register_pydantic(context))
        # a package's submodule is bound to its parent only after it runs: watch the package
        _after_import.when_imported("starlette",
                                    lambda: addons.register_starlette_serializer(context))
        if sys.platform != "win32":
            _after_import.when_imported("pyarrow", lambda: arrow(context))
    return apply


def install_lazy_addons() -> bool:
    """Make this process's Ray register its extra serializers lazily (idempotent; call before
    the process's first Ray call). A process that has not imported Ray is left alone (our
    engine also runs without Ray). Returns whether the lever is on in this process."""
    global _installed
    with _lock:
        if _installed:
            return True
        if "ray" not in sys.modules or getattr(sys.modules["ray"], "__version__", None) != \
                RAY_VERSION:
            return False
        try:
            from ray._private.arrow_serialization import _register_custom_datasets_serializers
            from ray.util import serialization_addons as addons
        except ImportError:
            return False
        if not (callable(getattr(addons, "apply", None))
                and callable(getattr(addons, "register_starlette_serializer", None))
                and importlib.util.find_spec("ray._common.pydantic_compat") is not None):
            return False
        addons.apply = _lazy_apply(addons, _register_custom_datasets_serializers)
        sys.meta_path.insert(0, _after_import)
        _installed = True
        return True
