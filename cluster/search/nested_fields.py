"""The ``fields`` section of a hit for fields under ``nested`` paths, as Elasticsearch renders
it: the nested path holds an array of objects, one per child with a requested value, each
with its fields relative to the path (``"comments": [{"author": ["ann"]}, ...]``), levels
nested the same way."""
from __future__ import annotations

from typing import Any


def group_nested(out: dict[str, Any], source: dict[str, Any], nested: dict[str, Any],
                 values_of: Any) -> dict[str, Any]:
    """``out`` (full path -> values) with the paths under a nested field regrouped per child.
    ``values_of(obj, prefix)`` gives the requested fields of one child object by full path."""
    tops = [p for p, spec in nested.items() if spec.parent == ""]
    for path in tops:
        if not any(k.startswith(path + ".") for k in out):
            continue
        for k in [k for k in out if k.startswith(path + ".")]:
            del out[k]
        children = _children(source, path, nested, values_of)
        if children:
            out[path] = children
    return out


def _children(obj: Any, path: str, nested: dict[str, Any], values_of: Any,
              rel: str | None = None) -> list[dict[str, Any]]:
    """One object per child at ``path`` under ``obj`` with its requested fields."""
    rows = []
    for child in _items(obj, rel if rel is not None else path):
        got = values_of(child, path + ".")
        for inner, spec in nested.items():
            if spec.parent != path:
                continue
            for k in [k for k in got if k.startswith(inner + ".")]:
                del got[k]
            deeper = _children(child, inner, nested, values_of, inner[len(path) + 1:])
            if deeper:
                got[inner] = deeper
        if got:
            rows.append({k[len(path) + 1:]: v for k, v in got.items()})
    return rows


def _items(obj: Any, rel: str) -> list[Any]:
    """The objects at the dotted ``rel`` under ``obj`` (spelled as objects or dotted keys)."""
    if not isinstance(obj, dict):
        return []
    if rel in obj:
        got = obj[rel]
    else:
        head, _, rest = rel.partition(".")
        return _items(obj.get(head), rest) if rest and head in obj else []
    items = got if isinstance(got, list) else [got]
    return [x for x in items if isinstance(x, dict)]
