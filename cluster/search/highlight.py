"""``highlight``: fragments of the page's hits with the query's terms marked (fetch phase).

Only the hits of the page are highlighted, from their ``_source``, with each field's own
analyzer (``engine/analysis.term_spans``). What is marked is what the query (or the field's
``highlight_query``) looks for in that field: the analyzed terms of ``match``/``term``-like
queries, each term of a phrase where the phrase occurs, the tokens a ``prefix`` or
``wildcard`` pattern matches and those within a fuzzy term's edit distance; ``must_not`` clauses mark nothing. Two highlighters are built,
``unified`` (the default: sentence fragments) and ``plain`` (fixed-size fragments); ``fvh``
needs term vectors and is refused with a 400 naming it. A field's ``matched_fields`` (unified
only: fields holding the same ``_source`` text, as multi-fields do) add the marks the query
makes on each of them, with its own analyzer, to the field's own. Fragment building is in
``highlight_fragments.py``.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ..engine.mapping import Mapping
from ..engine.query import nodes as Q
from ..engine.query.cross_fields import CrossFieldsGroup
from ..engine.query.more_like_this import MoreLikeThis
from ..engine.query.dsl import parse_query
from ..engine.query.fuzzy_query import spec_of
from ..engine.query.parse_helpers import token_name
from ..engine.query.rewrite import analyze_for, expand, query_text
from ..errors import IllegalArgument, ParsingError
from .highlight_fragments import FieldMatcher, field_fragments

TYPES = ("unified", "plain")
OPTION_KEYS = ("type", "fragment_size", "number_of_fragments", "pre_tags", "post_tags",
               "require_field_match", "highlight_query", "no_match_size", "order")
GLOBAL_KEYS = OPTION_KEYS + ("fields", "encoder")
FIELD_KEYS = OPTION_KEYS + ("matched_fields",)
# Elasticsearch options we do not build: refused, never ignored
REFUSED_KEYS = ("boundary_chars", "boundary_max_scan", "boundary_scanner",
                "boundary_scanner_locale", "fragmenter", "fragment_offset",
                "max_analyzed_offset", "phrase_limit", "tags_schema", "highlight_filter",
                "force_source", "max_fragment_length")


@dataclass(frozen=True)
class FieldOptions:
    """The options of one highlighted field (global values, overridden per field)."""

    type: str = "unified"
    fragment_size: int = 100
    number_of_fragments: int = 5
    pre_tags: tuple[str, ...] = ("<em>",)
    post_tags: tuple[str, ...] = ("</em>",)
    require_field_match: bool = True
    highlight_query: Q.Query | None = None
    no_match_size: int = 0
    order: str = "none"
    encoder: str = "default"
    matched_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class HighlightSpec:
    """``highlight``: the field patterns in order, each with its options."""

    fields: tuple[tuple[str, FieldOptions], ...] = field(default_factory=tuple)


def parse_highlight(value: Any) -> HighlightSpec | None:
    """The body's ``highlight`` object (Elasticsearch's ``HighlightBuilder``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ParsingError(f"[highlight] highlight doesn't support values of type: "
                           f"{token_name(value)}")
    base = _options(FieldOptions(), value, "highlight", GLOBAL_KEYS)
    encoder = value.get("encoder", "default")
    if encoder not in ("default", "html"):
        raise IllegalArgument(f"Unknown encoder [{encoder}]")
    base = replace(base, encoder=encoder)
    raw = value.get("fields")
    if raw is None:
        return HighlightSpec(())   # nothing to highlight, as in Elasticsearch
    if isinstance(raw, dict):
        entries = list(raw.items())
    elif isinstance(raw, list) and all(isinstance(e, dict) and len(e) == 1 for e in raw):
        entries = [next(iter(e.items())) for e in raw]
    else:
        raise ParsingError("[highlight] failed to parse field [fields]")
    out = []
    for name, opts in entries:
        if not name:
            raise IllegalArgument("[highlight] field names must not be empty")
        if opts is None:
            opts = {}
        if not isinstance(opts, dict):
            raise ParsingError(f"[fields] failed to parse field [{name}]")
        out.append((name, _options(base, opts, "fields", FIELD_KEYS)))
    return HighlightSpec(tuple(out))


def _options(base: FieldOptions, value: dict[str, Any], where: str,
             allowed: tuple[str, ...]) -> FieldOptions:
    for k in value:
        if k in REFUSED_KEYS:
            raise IllegalArgument(f"[highlight] option [{k}] is not supported by this server")
        if k not in allowed:
            raise ParsingError(f"[{where}] unknown field [{k}]")
    out = base
    if "type" in value:
        if value["type"] == "fvh":
            raise IllegalArgument("[highlight] type [fvh] is not supported by this server "
                                  "(use [unified] or [plain])")
        if value["type"] not in TYPES:
            raise IllegalArgument(f"unknown highlighter type [{value['type']}] for the field "
                                  "highlighting")
        out = replace(out, type=value["type"])
    for k in ("fragment_size", "number_of_fragments", "no_match_size"):
        if k in value:
            v = value[k]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise IllegalArgument(f"[{k}] must be a non-negative integer, found [{v}]")
            out = replace(out, **{k: v})
    for k in ("pre_tags", "post_tags"):
        if k in value:
            tags = value[k]
            if not isinstance(tags, list) or not tags or \
                    not all(isinstance(t, str) for t in tags):
                raise ParsingError(f"[{where}] failed to parse field [{k}]")
            out = replace(out, **{k: tuple(tags)})
    if "require_field_match" in value:
        out = replace(out, require_field_match=bool(value["require_field_match"]))
    if "highlight_query" in value:
        out = replace(out, highlight_query=parse_query(value["highlight_query"]))
    if "order" in value:
        if value["order"] not in ("score", "none"):
            raise IllegalArgument(f"Unknown order [{value['order']}]")
        out = replace(out, order=value["order"])
    if "matched_fields" in value:
        out = replace(out, matched_fields=_matched_fields(value["matched_fields"]))
    if out.matched_fields and out.type != "unified":
        raise IllegalArgument(f"[highlight] option [matched_fields] is not supported by this "
                              f"server for type [{out.type}] (only [unified])")
    return out


def _matched_fields(value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ParsingError("[fields] failed to parse field [matched_fields]")
    return tuple(names)


def highlight_hit(spec: HighlightSpec, query: Q.Query, source: bytes,
                  mapping: Mapping) -> dict[str, list[str]]:
    """The hit's ``highlight`` section: field -> fragments (fields without any left out)."""
    doc = orjson.loads(source)
    out: dict[str, list[str]] = {}
    for pattern, opts in spec.fields:
        for path in _fields_for(pattern, mapping):
            if path in out:
                continue
            concrete = mapping.resolve(path)     # an alias shows its target's text
            values = _values(doc, _source_path(concrete, mapping))
            if not values:
                continue
            q = opts.highlight_query or query
            matcher = _matcher(q, concrete, mapping, opts.require_field_match)
            extra = [(mapping.get(f), _matcher(q, f, mapping, opts.require_field_match))
                     for f in dict.fromkeys(map(mapping.resolve, opts.matched_fields))
                     if f != concrete and mapping.get(f) is not None]
            frags = field_fragments(values, mapping.get(path), matcher, opts, extra)
            if frags:
                out[path] = frags
    return out


def _fields_for(pattern: str, mapping: Mapping) -> list[str]:
    """The text and keyword fields ``pattern`` names (a plain name: itself, if mapped)."""
    if "*" not in pattern and "?" not in pattern:
        ft = mapping.get(pattern)
        return [pattern] if ft is not None and ft.kind in ("text", "keyword") else []
    return [p for p in mapping.fields if fnmatch.fnmatchcase(p, pattern)
            and (ft := mapping.get(p)) is not None and ft.kind in ("text", "keyword")]


def _source_path(path: str, mapping: Mapping) -> str:
    """A multi-field (``title.raw``) reads its parent's value from ``_source``."""
    for parent, subs in mapping.multi.items():
        if path in subs:
            return parent
    return path


def _values(doc: Any, path: str) -> list[str]:
    """The string values at a dotted ``path`` of the source, in order."""
    nodes = [doc]
    for part in path.split("."):
        nxt = []
        for n in nodes:
            if isinstance(n, list):
                n_items = n
            else:
                n_items = [n]
            for item in n_items:
                if isinstance(item, dict) and part in item:
                    nxt.append(item[part])
        nodes = nxt
    out: list[str] = []
    for n in nodes:
        for v in (n if isinstance(n, list) else [n]):
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out.append(str(v))
    return out


def _matcher(query: Q.Query, path: str, mapping: Mapping, require_field_match: bool
             ) -> FieldMatcher:
    """What to mark in ``path``: terms, phrases and patterns of the query's clauses on that
    field (on any field without ``require_field_match``)."""
    m = FieldMatcher()
    _walk(expand(query, mapping), path, mapping, require_field_match, m)
    return m


def _walk(q: Q.Query, path: str, mapping: Mapping, strict: bool, m: FieldMatcher) -> None:
    if isinstance(q, Q.Bool):
        for sub in q.must + q.should + q.filter:
            _walk(sub, path, mapping, strict, m)
        return
    if isinstance(q, Q.DisMax):
        for sub in q.queries:
            _walk(sub, path, mapping, strict, m)
        return
    if isinstance(q, Q.ConstantScore):
        _walk(q.filter, path, mapping, strict, m)
        return
    if isinstance(q, CrossFieldsGroup):
        if not strict or any(f == path for f, _ in q.fields):
            m.terms.update(q.terms)
        return
    if isinstance(q, MoreLikeThis):     # its terms are chosen on the shards
        raise IllegalArgument("[highlight] of a [more_like_this] query is not supported by "
                              "this server")
    qfield = getattr(q, "field", None)
    if qfield is None or (strict and qfield != path):
        return
    ft = mapping.get(path)
    if isinstance(q, Q.Term):
        m.terms.add(query_text(q.value).lower() if q.case_insensitive else query_text(q.value))
    elif isinstance(q, Q.Terms):
        m.terms.update(query_text(v) for v in q.values)
    elif isinstance(q, Q.Match):
        m.terms.update(analyze_for(ft, q.text, q.analyzer))
    elif isinstance(q, Q.MatchPhrase):
        terms = analyze_for(ft, q.text, q.analyzer)
        if len(terms) == 1 and not q.prefix:
            m.terms.update(terms)
        elif terms:
            m.phrases.append((tuple(terms), q.slop, q.prefix))
    elif isinstance(q, Q.Prefix):
        m.prefixes.append((q.value, q.case_insensitive))
    elif isinstance(q, Q.Wildcard):
        m.wildcards.append((q.pattern, q.case_insensitive))
    elif isinstance(q, Q.Fuzzy):
        m.fuzzy.append(spec_of(q)[0])
