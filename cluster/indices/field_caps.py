"""``_field_caps``: what each field is, and whether it can be searched and aggregated, per index.

A plain function over the indices' mapping bodies (no shards are asked: a field's capabilities
follow from its mapping here). The answer has Elasticsearch's shape::

    {"indices": [...], "fields": {name: {type: {"type", "metadata_field", "searchable",
                                                "aggregatable", "indices"?,
                                                "non_searchable_indices"?,
                                                "non_aggregatable_indices"?, "meta"?}}}}

``indices`` is listed only when the field has more than one type across the indices (a
conflict, or ``unmapped`` with ``include_unmapped``); ``non_searchable_indices`` /
``non_aggregatable_indices`` only when the indices of one type disagree. Object and nested
fields are reported (``object`` / ``nested``, neither searchable nor aggregatable), as are
multi-fields (``title.keyword``) and the metadata fields this service serves.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from typing import Any

from ..errors import IllegalArgument

#: Metadata fields as this service serves them: ``_id`` / ``_index`` answer term, terms, ids and
#: exists queries; no aggregation reads a metadata field here (Elasticsearch aggregates
#: ``_index``; saying so would promise what the aggregations do not do).
METADATA: dict[str, tuple[bool, bool]] = {
    "_id": (True, False), "_index": (True, False), "_source": (False, False),
}
#: Types searchable and aggregatable whatever their ``index`` / ``doc_values`` say.
_ALWAYS = {"geo_point": (True, True), "flattened": (True, True), "wildcard": (True, True),
           "constant_keyword": (True, True), "match_only_text": (True, False),
           "completion": (True, False)}
_FILTERS = {"+metadata", "-metadata", "-nested", "-multifield", "-parent"}


def _caps(ftype: str, spec: dict[str, Any]) -> tuple[bool, bool]:
    """(searchable, aggregatable) of one mapped field."""
    if ftype in ("object", "nested"):
        return False, False
    if ftype in _ALWAYS:
        return _ALWAYS[ftype]
    searchable = bool(spec.get("index", True))
    if ftype == "text":
        # Elasticsearch aggregates a text field with ``fielddata: true``; the aggregations here
        # refuse every text field, so none is reported aggregatable
        return searchable, False
    return searchable, bool(spec.get("doc_values", True))


def _walk(props: dict[str, Any], prefix: str = "", in_nested: bool = False
          ) -> Iterator[tuple[str, str, dict[str, Any], str]]:
    """``(path, type, spec, kind)`` of every field; kind is ``field``, ``parent``, ``nested``
    (under a nested object) or ``multifield``."""
    for name, spec in props.items():
        if not isinstance(spec, dict):
            continue
        path = prefix + name
        ftype = str(spec.get("type", "object"))
        kind = "parent" if ftype in ("object", "nested") else "field"
        yield path, ftype, spec, "nested" if in_nested and kind == "field" else kind
        if ftype in ("object", "nested"):
            yield from _walk(spec.get("properties") or {}, path + ".",
                             in_nested or ftype == "nested")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            if isinstance(sub_spec, dict):
                yield path + "." + sub, sub_spec.get("type", "object"), sub_spec, "multifield"


def _resolve_alias(props: dict[str, Any], target: str) -> tuple[str, dict[str, Any]] | None:
    for path, ftype, spec, _kind in _walk(props):
        if path == target and ftype != "alias":
            return ftype, spec
    return None


def index_fields(mapping: dict[str, Any], filters: set[str] | None = None
                 ) -> dict[str, tuple[str, bool, bool, dict[str, Any] | None, bool]]:
    """One index's fields: ``path -> (type, searchable, aggregatable, meta, metadata_field)``."""
    filters = filters or set()
    props = mapping.get("properties") or {}
    out: dict[str, tuple[str, bool, bool, dict[str, Any] | None, bool]] = {}
    if "-metadata" not in filters:
        for name, (s, a) in METADATA.items():
            out[name] = (name, s, a, None, True)
    if "+metadata" in filters:
        return out
    for path, ftype, spec, kind in _walk(props):
        if (kind == "parent" and "-parent" in filters
                or kind == "nested" and "-nested" in filters
                or kind == "multifield" and "-multifield" in filters):
            continue
        if ftype == "alias":
            target = _resolve_alias(props, str(spec.get("path", "")))
            if target is None:
                continue
            ftype, spec = target
        searchable, aggregatable = _caps(ftype, spec)
        out[path] = (ftype, searchable, aggregatable, spec.get("meta"), False)
    return out


def _matches(name: str, patterns: list[str]) -> bool:
    return any(p == "*" or p == name or fnmatch.fnmatchcase(name, p) for p in patterns)


def parse_fields(fields: Any) -> list[str]:
    """``fields`` as a list of patterns (a comma list or a JSON array); required, as in ES."""
    if isinstance(fields, str):
        out = [f.strip() for f in fields.split(",") if f.strip()]
    elif isinstance(fields, list) and all(isinstance(f, str) for f in fields):
        out = [p.strip() for f in fields for p in f.split(",") if p.strip()]
    elif fields is None:
        out = []
    else:
        raise IllegalArgument("[fields] must be a string or an array of strings",
                              es_type="x_content_parse_exception")
    if not out:
        raise IllegalArgument("Validation Failed: 1: specified fields can't be null or empty;",
                              es_type="action_request_validation_exception")
    return out


def parse_filters(filters: str | None) -> set[str]:
    out = {f.strip() for f in (filters or "").split(",") if f.strip()}
    for f in sorted(out):
        if f not in _FILTERS:
            raise IllegalArgument(f"{f} is not a recognized filter option")
    return out


def field_caps(mappings: dict[str, dict[str, Any]], fields: list[str], *,
               include_unmapped: bool = False, types: list[str] | None = None,
               filters: set[str] | None = None) -> dict[str, Any]:
    """The ``_field_caps`` response for ``mappings`` (index name -> mapping body)."""
    indices = sorted(mappings)
    per_index = {n: index_fields(mappings[n], filters) for n in indices}
    # name -> type -> [(index, searchable, aggregatable, meta, metadata_field)]
    seen: dict[str, dict[str, list[tuple[str, bool, bool, Any, bool]]]] = {}
    for n in indices:
        for path, (ftype, s, a, meta, is_meta) in per_index[n].items():
            if _matches(path, fields) and (not types or ftype in types):
                seen.setdefault(path, {}).setdefault(ftype, []).append((n, s, a, meta, is_meta))
    out: dict[str, Any] = {}
    for path in sorted(seen):
        by_type = seen[path]
        if include_unmapped:
            mapped = {row[0] for rows in by_type.values() for row in rows}
            missing = [n for n in indices if n not in mapped]
            if missing:
                by_type["unmapped"] = [(n, False, False, None, False) for n in missing]
        multi = len(by_type) > 1
        out[path] = {t: _merge(t, rows, multi) for t, rows in by_type.items()}
    return {"indices": indices, "fields": out}


def _merge(ftype: str, rows: list[tuple[str, bool, bool, Any, bool]], multi: bool
           ) -> dict[str, Any]:
    """One type's entry: all-agree flags, and the indices that disagree when some do."""
    searchable = all(r[1] for r in rows)
    aggregatable = all(r[2] for r in rows)
    entry: dict[str, Any] = {"type": ftype, "metadata_field": rows[0][4],
                             "searchable": searchable, "aggregatable": aggregatable}
    if multi:
        entry["indices"] = [r[0] for r in rows]
    if not searchable and any(r[1] for r in rows):
        entry["non_searchable_indices"] = [r[0] for r in rows if not r[1]]
    if not aggregatable and any(r[2] for r in rows):
        entry["non_aggregatable_indices"] = [r[0] for r in rows if not r[2]]
    metas: dict[str, set[Any]] = {}
    for r in rows:
        for k, v in (r[3] or {}).items():
            metas.setdefault(k, set()).add(str(v))
    if metas:
        entry["meta"] = {k: sorted(v) for k, v in sorted(metas.items())}
    return entry
