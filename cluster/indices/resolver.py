"""The one index-name resolver: an expression (``a,b``, ``log-*``, ``_all``, ``-excluded``,
aliases, ``<logs-{now/d}>``) to the concrete indices it names, and how each is reached.

Everything that takes an index name or pattern resolves it here (search, count, PIT, writes
through :func:`~.aliases.write_target`, mappings, settings, refresh, stats, ...), through
``IndexAdmin.resolve`` (names) or ``IndexAdmin.resolve_access`` (names with the filters and
search routing of the aliases they were reached through). Elasticsearch's rules:

* a pattern matches indices and aliases, never a closed index (``expand_wildcards=open``) nor
  a hidden alias; an explicit name may be a closed index (the caller decides what that means);
* an index reached directly, or through an alias without filter, is searched unfiltered;
  reached only through filtered aliases, the alias filters apply (any of them matches);
* search routing: an index reached only through aliases with ``search_routing`` is searched
  on those routing values' shards (intersected with the request's own ``routing``).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ..engine.query.dsl import parse_query
from ..engine.query.nodes import Bool, Query
from ..errors import IndexClosed, IndexNotFound
from .date_math import resolve_date_math


@dataclass
class Access:
    """How one resolved index is reached: ``filters`` None means unfiltered, ``routing`` None
    means every shard."""

    filters: list[dict[str, Any]] | None = None
    routing: set[str] | None = None


def _split(expr: str | tuple[str, ...] | list[str] | None) -> list[str]:
    if expr is None or expr == "" or expr == ():
        return ["_all"]
    if isinstance(expr, str):
        return [p.strip() for p in expr.split(",") if p.strip()]
    return [p for e in expr for p in str(e).split(",") if p]


def _reach(out: dict[str, Access], name: str, spec: dict[str, Any] | None) -> None:
    """Record that ``name`` is reached directly (``spec`` None) or through an alias."""
    if name not in out:
        out[name] = Access(filters=[], routing=set())
    acc = out[name]
    if spec is None:
        out[name] = Access(None, None)
        return
    acc.filters = None if acc.filters is None or "filter" not in spec \
        else acc.filters + [spec["filter"]]
    acc.routing = None if acc.routing is None or "search_routing" not in spec \
        else acc.routing | {r.strip() for r in spec["search_routing"].split(",")}


def resolve_access(indices: dict[str, Any], expr: str | tuple[str, ...] | list[str] | None, *,
                   ignore_unavailable: bool = False, allow_no_indices: bool = True,
                   expand_wildcards: bool = True, refuse_closed: bool = False,
                   include_closed: bool = False,
                   unopenable: dict[str, str] | None = None) -> dict[str, Access]:
    """Concrete index -> :class:`Access`, in the order the expression names them.
    ``refuse_closed``: a closed index named explicitly is ``index_closed_exception`` (skipped
    with ``ignore_unavailable``); ``include_closed``: patterns match closed indices too
    (``expand_wildcards=all``)."""
    parts = _split(expr)
    out: dict[str, Access] = {}
    for i, p in enumerate(parts):
        if p.startswith("<") and p.endswith(">"):
            p = resolve_date_math(p)
        wild = p == "_all" or "*" in p or "?" in p
        if wild and not expand_wildcards:
            continue
        if p.startswith("-") and i > 0:
            pat = p[1:]
            out = {n: a for n, a in out.items() if not fnmatch.fnmatchcase(n, pat)}
        elif wild:
            _expand_pattern(indices, "*" if p == "_all" else p, out, include_closed)
        elif p in indices:
            _explicit(indices[p], ignore_unavailable, refuse_closed, out)
        elif any(p in m.aliases for m in indices.values()):
            for n in sorted(indices):
                spec = indices[n].aliases.get(p)
                if spec is not None and (indices[n].state == "open" or not refuse_closed):
                    _reach(out, n, spec)
        elif not ignore_unavailable:
            why = (unopenable or {}).get(p)
            raise IndexNotFound(p, storage_problem=why) if why else IndexNotFound(p)
    if not out and not allow_no_indices:
        raise IndexNotFound(parts[0] if parts else "_all")
    return out


def _explicit(meta: Any, ignore_unavailable: bool, refuse_closed: bool,
              out: dict[str, Access]) -> None:
    if meta.state != "open" and refuse_closed:
        if ignore_unavailable:
            return
        raise IndexClosed(meta.name, meta.uuid)
    _reach(out, meta.name, None)


def _expand_pattern(indices: dict[str, Any], pat: str, out: dict[str, Access],
                    include_closed: bool = False) -> None:
    """Open indices whose name matches, then the indices of visible aliases that match."""
    for n in sorted(indices):
        meta = indices[n]
        if meta.state != "open" and not include_closed:
            continue
        if fnmatch.fnmatchcase(n, pat):
            _reach(out, n, None)
            continue
        for a, spec in meta.aliases.items():
            if not spec.get("is_hidden") and fnmatch.fnmatchcase(a, pat):
                _reach(out, n, spec)


def filtered(query: Query, filters: list[dict[str, Any]] | None) -> Query:
    """``query`` restricted by alias filters (any of them): they filter, never score."""
    if not filters:
        return query
    parsed = tuple(parse_query(f) for f in filters)
    clause = parsed[0] if len(parsed) == 1 else Bool(should=parsed, minimum_should_match=1)
    return Bool(must=(query,), filter=(clause,))


def search_routing(request: str | None, alias: set[str] | None) -> str | None:
    """The routing values a search uses on one index: the request's, the aliases', or those
    in both (an empty string when none are: no shard is searched)."""
    if alias is None:
        return request
    if request is None:
        return ",".join(sorted(alias))
    return ",".join(sorted(set(request.split(",")) & alias))
