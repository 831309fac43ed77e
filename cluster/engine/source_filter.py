"""``_source`` filtering with Elasticsearch's include/exclude path semantics.

A pattern matches a field path exactly, as a wildcard (``obj.*``, ``*.name``), or as a prefix of
the path at an object boundary (``obj`` keeps all of ``obj.a.b``). Excludes win over includes.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ..errors import ParsingError
from .limits import check_source_patterns
from .query.parse_helpers import token_name


def _matches(path: str, patterns: tuple[str, ...], allow_prefix: bool = True) -> bool:
    for p in patterns:
        if p == path or fnmatch.fnmatchcase(path, p):
            return True
        if allow_prefix and (path.startswith(p + ".") or fnmatch.fnmatchcase(path, p + ".*")):
            return True
    return False


def _could_contain(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether some include pattern may match below the object at ``path``."""
    for p in patterns:
        if p.startswith(path + ".") or "*" in p and fnmatch.fnmatchcase(path + ".x", p.split(".")[0] + "*"):
            return True
        if "*" in p:
            head = p.split("*")[0]
            if head.startswith(path + ".") or (path + ".").startswith(head):
                return True
    return False


def filter_source(source: Any, includes: tuple[str, ...], excludes: tuple[str, ...]) -> Any:
    """A copy of ``source`` keeping included paths and dropping excluded ones."""
    return _filter(source, "", includes, excludes)


def _filter(node: Any, prefix: str, inc: tuple[str, ...], exc: tuple[str, ...]) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, val in node.items():
        path = prefix + key
        if exc and _matches(path, exc):
            continue
        included = not inc or _matches(path, inc)
        if isinstance(val, dict):
            if included:
                sub = _filter(val, path + ".", () if not inc else
                              tuple(p for p in inc) if not _matches(path, inc, allow_prefix=False)
                              and not _prefix_hit(path, inc) else (), exc)
                out[key] = sub
            elif _could_contain(path, inc):
                sub = _filter(val, path + ".", inc, exc)
                if sub:
                    out[key] = sub
        elif isinstance(val, list):
            if included:
                out[key] = [_filter(v, path + ".", () if _prefix_hit(path, inc) or not inc
                                    or _matches(path, inc, allow_prefix=False) else inc, exc)
                            for v in val]
            elif _could_contain(path, inc):
                items = [_filter(v, path + ".", inc, exc) for v in val if isinstance(v, dict)]
                items = [i for i in items if i]
                if items:
                    out[key] = items
        elif included:
            out[key] = val
    return out


def _prefix_hit(path: str, inc: tuple[str, ...]) -> bool:
    return any(p == path or fnmatch.fnmatchcase(path, p) for p in inc)


@dataclass(frozen=True)
class SourceFilter:
    """``_source`` selection: whether to return it and which paths to keep or drop."""

    enabled: bool = True
    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    @property
    def is_identity(self) -> bool:
        return self.enabled and not self.includes and not self.excludes


def _patterns(value: Any, key: str) -> tuple[str, ...]:
    """A ``_source`` pattern list: a string or an array of strings (anything else is refused,
    as Elasticsearch's parser does)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    bad = next((v for v in value if not isinstance(v, str)), value) \
        if isinstance(value, list) else value
    raise ParsingError(f"Unknown key for a {token_name(bad)} in [{key}].")


def bounded_source(f: SourceFilter) -> SourceFilter:
    """``f``, once its pattern count is within the limit (``engine/limits.py``)."""
    check_source_patterns([*f.includes, *f.excludes])
    return f


def parse_source(value: Any) -> SourceFilter:
    """The body's ``_source``: bool, a path, a list of paths, or includes/excludes."""
    if value is None:
        return SourceFilter()
    if isinstance(value, bool):
        return SourceFilter(enabled=value)
    if isinstance(value, str):
        return SourceFilter(includes=(value,))
    if isinstance(value, list):
        return bounded_source(SourceFilter(includes=_patterns(value, "_source")))
    if isinstance(value, dict):
        for key, v in value.items():
            if key not in ("includes", "include", "excludes", "exclude"):
                raise ParsingError(f"Unknown key for a {token_name(v)} in [{key}].")
        inc = value.get("includes", value.get("include"))
        exc = value.get("excludes", value.get("exclude"))
        return bounded_source(SourceFilter(includes=_patterns(inc, "includes"),
                                     excludes=_patterns(exc, "excludes")))
    raise ParsingError("[_source] must be a boolean, a string, an array or an object")
