"""One hit of a search response, built from a shard's row and its fetched document.

What a hit shows depends on the request: ``_score`` (not for a field sort without
``track_scores``), ``_version`` / ``_seq_no``, ``_source`` filtered, the ``fields`` section and
the ``sort`` values in the form Elasticsearch prints them.
"""
from __future__ import annotations

import fnmatch
from typing import Any

import orjson

from ..engine.geo import geojson_points
from .field_formats import (FIELDS, DOCVALUE_FIELDS, OBJECT_VALUED, check_formats, formatted,
                            spec_format)
from .nested_fields import group_nested
from ..values import parse_bool
from ..engine.shard_messages import ShardHits
from ..engine.sorting import SortField, score_only, sort_value_out
from ..engine.source_filter import filter_source
from ..indices.catalog import IndexMeta
from .request import SearchRequest
from .script_fields import script_values


def render_hit(req: SearchRequest, sort: tuple[SortField, ...], h: ShardHits, row: int,
               doc: Any, meta: IndexMeta) -> dict[str, Any]:
    """The hit of ``row`` of shard answer ``h``; ``sort`` is the search's (with its defaults)."""
    score: float | None = float(h.scores[row])
    if req.sort and not req.track_scores and not any(s.field == "_score" for s in req.sort):
        score = None
    hit: dict[str, Any] = {"_index": h.index, "_id": doc.id}
    if req.version:
        hit["_version"] = doc.version
    if req.seq_no_primary_term:
        hit["_seq_no"] = doc.seq
        hit["_primary_term"] = 1
    hit["_score"] = score
    if getattr(doc, "ignored", ()):
        hit["_ignored"] = list(doc.ignored)
    if doc.routing is not None:
        hit["_routing"] = doc.routing
    if req.source.enabled and meta.mapping.source_enabled:
        if req.source.is_identity:
            hit["_source"] = doc.source
        else:
            hit["_source"] = orjson.dumps(filter_source(orjson.loads(doc.source),
                                                        req.source.includes,
                                                        req.source.excludes))
    if req.fields or req.docvalue_fields:
        specs = [(s, FIELDS) for s in req.fields] + [(s, DOCVALUE_FIELDS)
                                                     for s in req.docvalue_fields]
        fields_out = fields_section(orjson.loads(doc.source), specs, meta)
        if fields_out:
            hit["fields"] = fields_out
    if req.script_fields:
        hit.setdefault("fields", {}).update(
            script_values(req.script_fields, orjson.loads(doc.source), meta))
    if (req.sort and not score_only(req.sort)) or req.search_after is not None:
        vals = []
        for j, sf in enumerate(sort):
            ft = meta.mapping.get(sf.field)
            kind = h.kinds[j]
            miss = h.missing[j]
            v = None if miss is not None and miss[row] else h.columns[j][row]
            if kind == "tiebreak":
                v = int(h.ties[row])
            vals.append(sort_value_out(sf, kind, v, ft))
        hit["sort"] = vals
    return hit


def fields_section(source: dict[str, Any], specs: list[tuple[Any, str]], meta: IndexMeta
                   ) -> dict[str, Any]:
    """The ``fields`` / ``docvalue_fields`` section: values of the requested paths as lists;
    under a nested path, an array of objects per child (``nested_fields.py``). ``specs`` are
    ``(entry, "fields" | "docvalue_fields")``: the two lists check formats differently."""
    check_formats(specs, meta.mapping)
    out = _flat_fields(source, "", specs, meta)
    if not meta.mapping.nested:
        return out
    return group_nested(out, source, meta.mapping.nested,
                        lambda obj, prefix: _flat_fields(obj, prefix, specs, meta))


def _flat_fields(source: dict[str, Any], start: str, specs: list[tuple[Any, str]],
                 meta: IndexMeta) -> dict[str, Any]:
    """Mapped fields matching each entry; with ``include_unmapped`` (``fields`` only: doc
    values exist only for mapped fields), also the ``_source`` leaves no field maps (under an
    ``enabled: false`` object, or left out by ``dynamic: false``), as they are in ``_source``,
    as Elasticsearch's ``UnmappedFieldFetcher`` returns them."""
    out: dict[str, Any] = {}
    flat: dict[str, list[Any]] = {}

    def walk(node: Any, prefix: str) -> None:
        ft = meta.mapping.get(prefix[:-1]) if isinstance(node, (dict, list)) else None
        if ft is not None and ft.kind == "geo":     # a point is one value, whatever its form
            flat.setdefault(prefix[:-1], []).extend(geojson_points(node, ft))
        elif ft is not None and ft.type in OBJECT_VALUED:   # one value, not its keys
            values = node if isinstance(node, list) else [node]
            flat.setdefault(prefix[:-1], []).extend(v for v in values if v is not None)
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, prefix + k + ".")
        elif isinstance(node, list):
            for v in node:
                walk(v, prefix)
        elif node is not None:
            flat.setdefault(prefix[:-1], []).append(node)
    walk(source, start)
    for spec, api in specs:
        pat = spec.get("field") if isinstance(spec, dict) else spec
        if not isinstance(pat, str):
            continue
        unmapped = api == FIELDS and include_unmapped(spec)
        for path, vals in flat.items():
            if path != pat and not fnmatch.fnmatchcase(path, pat):
                continue
            ft = meta.mapping.get(path)
            if ft is not None:
                out[path] = formatted(vals, spec_format(spec), ft)
            elif unmapped and path not in meta.mapping.aliases:
                out[path] = vals
        for path in list(meta.mapping.multi):
            for sub in meta.mapping.multi[path]:
                if (sub == pat or fnmatch.fnmatchcase(sub, pat)) and path in flat:
                    out[sub] = flat[path]
        out.update(_alias_values(flat, pat, spec, meta.mapping))
    return out


def include_unmapped(spec: Any) -> bool:
    """An entry's ``include_unmapped`` (a boolean, or ``"true"`` as Kibana sends it)."""
    if not isinstance(spec, dict):
        return False
    return parse_bool(spec.get("include_unmapped", False), "include_unmapped")


def _alias_values(flat: dict[str, list[Any]], pat: str, spec: Any, mapping: Any
                  ) -> dict[str, list[Any]]:
    """Field aliases ``pat`` names, each under its own name with its target's values (a
    multi-field target reads its parent's), as Elasticsearch's field fetcher answers."""
    out: dict[str, list[Any]] = {}
    for alias, target in mapping.aliases.items():
        if alias != pat and not fnmatch.fnmatchcase(alias, pat):
            continue
        source = next((p for p, subs in mapping.multi.items() if target in subs), target)
        if source in flat:
            out[alias] = formatted(flat[source], spec_format(spec), mapping.get(alias))
    return out
