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
from ..errors import IllegalArgument
from ..engine.ip import parse_ip, render as ip_render
from .nested_fields import group_nested
from ..engine.dates import format_date, parse_date
from ..engine.numformat import decimal_format
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
        fields_out = fields_section(orjson.loads(doc.source),
                                    list(req.fields) + list(req.docvalue_fields), meta)
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


def fields_section(source: dict[str, Any], specs: list[Any], meta: IndexMeta) -> dict[str, Any]:
    """The ``fields`` / ``docvalue_fields`` section: values of the requested paths as lists;
    under a nested path, an array of objects per child (``nested_fields.py``)."""
    out = _flat_fields(source, "", specs, meta)
    if not meta.mapping.nested:
        return out
    return group_nested(out, source, meta.mapping.nested,
                        lambda obj, prefix: _flat_fields(obj, prefix, specs, meta))


def _flat_fields(source: dict[str, Any], start: str, specs: list[Any], meta: IndexMeta
                 ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    flat: dict[str, list[Any]] = {}

    def walk(node: Any, prefix: str) -> None:
        ft = meta.mapping.get(prefix[:-1]) if isinstance(node, (dict, list)) else None
        if ft is not None and ft.kind == "geo":     # a point is one value, whatever its form
            flat.setdefault(prefix[:-1], []).extend(geojson_points(node, ft))
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, prefix + k + ".")
        elif isinstance(node, list):
            for v in node:
                walk(v, prefix)
        elif node is not None:
            flat.setdefault(prefix[:-1], []).append(node)
    walk(source, start)
    for spec in specs:
        pat = spec.get("field") if isinstance(spec, dict) else spec
        if not isinstance(pat, str):
            continue
        for path, vals in flat.items():
            if path == pat or fnmatch.fnmatchcase(path, pat):
                out[path] = _formatted(vals, spec, meta.mapping.get(path))
        for path in list(meta.mapping.multi):
            for sub in meta.mapping.multi[path]:
                if (sub == pat or fnmatch.fnmatchcase(sub, pat)) and path in flat:
                    out[sub] = flat[path]
        out.update(_alias_values(flat, pat, spec, meta.mapping))
    return out


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
            out[alias] = _formatted(flat[source], spec, mapping.get(alias))
    return out


def _formatted(vals: list[Any], spec: Any, ft: Any) -> list[Any]:
    """``{"field": f, "format": "#.0"}`` on a numeric field: ``DecimalFormat`` strings."""
    fmt = spec.get("format") if isinstance(spec, dict) else None
    if ft is not None and ft.type == "ip":
        return [_ip_text(v) for v in vals]
    if ft is not None and ft.kind == "date":
        return _dates_formatted(vals, ft, None if fmt == "use_field_mapping" else fmt)
    if ft is not None and ft.kind == "geo" and vals and isinstance(vals[0], str):
        return geojson_points(vals, ft)      # strings are points too ("lat,lon", WKT)
    if fmt and fmt != "use_field_mapping" and ft is not None and ft.kind != "numeric":
        raise IllegalArgument(f"Field [{ft.path}] of type [{ft.type}] does not support custom "
                              "formats")
    if not fmt or ft is None or ft.kind != "numeric" or fmt == "use_field_mapping":
        return vals
    return [decimal_format(v, fmt) if isinstance(v, (int, float)) and not isinstance(v, bool)
            else v for v in vals]


def _ip_text(value: Any) -> Any:
    """An address from ``_source`` as ES renders an ip field's value (``::1``, ``10.0.0.1``)."""
    try:
        return ip_render(parse_ip(value))
    except ValueError:
        return value


def _dates_formatted(vals: list[Any], ft: Any, fmt: str | None) -> list[Any]:
    """Dates as Elasticsearch prints them: parsed under the mapping, printed with ``format``
    or the mapping's (``date_nanos``: ``strict_date_optional_time_nanos``). Values the mapping
    cannot read (skipped by ``ignore_malformed``) are not doc values and are left out."""
    default = "strict_date_optional_time_nanos" if ft.type == "date_nanos" else None
    out = []
    for v in vals:
        try:
            stored = parse_date(v, ft)
        except (ValueError, OverflowError):
            continue
        out.append(format_date(stored, ft, fmt or ft.format or default))
    return out
