"""``GET [/{index}]/_mapping/field/{fields}``: the mapping of single fields, as Elasticsearch's
``GetFieldMappings`` API shows them.

Each field (a leaf, a multi-field such as ``title.raw``, an alias, or a metadata field) is
``{"full_name": path, "mapping": {leaf name: its spec}}``; objects are not fields and show
nothing. Names may be ``*`` patterns; an index with no match answers ``{"mappings": {}}``.
"""
from __future__ import annotations

import fnmatch
from typing import Any

# the metadata fields OpenSearch lists for a pattern (their mapping is shown empty)
METADATA = ("_id", "_index", "_source", "_routing", "_version", "_seq_no", "_ignored",
            "_field_names", "_doc_count", "_nested_path", "_data_stream_timestamp")


def field_mappings(mappings: dict[str, dict[str, Any]], patterns: list[str]
                   ) -> dict[str, Any]:
    """``index -> {"mappings": {field: {"full_name", "mapping"}}}`` for every index body."""
    return {name: {"mappings": _index_fields(body.get("properties") or {}, patterns)}
            for name, body in mappings.items()}


def _index_fields(props: dict[str, Any], patterns: list[str]) -> dict[str, Any]:
    leaves = dict(_leaves(props, ""))
    out: dict[str, Any] = {}
    for pat in patterns:
        wild = "*" in pat or "?" in pat
        for path, (leaf, spec) in leaves.items():
            if path == pat or wild and fnmatch.fnmatchcase(path, pat):
                out[path] = {"full_name": path, "mapping": {leaf: spec}}
        for meta in METADATA:
            if meta == pat or wild and fnmatch.fnmatchcase(meta, pat):
                out[meta] = {"full_name": meta, "mapping": {}}
    return out


def _leaves(props: dict[str, Any], prefix: str) -> list[tuple[str, tuple[str, Any]]]:
    """``(path, (leaf name, spec))`` of every field and multi-field; objects are walked."""
    out: list[tuple[str, tuple[str, Any]]] = []
    for name, spec in props.items():
        path = prefix + name
        if not isinstance(spec, dict):
            continue
        if spec.get("type", "object") in ("object", "nested") and "properties" in spec \
                or spec.get("type") in ("object", "nested"):
            out.extend(_leaves(spec.get("properties") or {}, path + "."))
            continue
        out.append((path, (name, spec)))
        for sub, sub_spec in (spec.get("fields") or {}).items():
            out.append((f"{path}.{sub}", (sub, sub_spec)))
    return out


__all__ = ["field_mappings"]
