"""A search request, parsed and validated from Elasticsearch's URL parameters and JSON body.

Pure functions: the HTTP layer and the Python API both build a :class:`SearchRequest` here, so
both reject the same input with the same Elasticsearch error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ActionRequestValidation, IllegalArgument, ParsingError, XContentParseError
from ..values import check_format, parse_bool, parse_time_ms
from ..engine.source_filter import SourceFilter, bounded_source, parse_source
from ..engine.inner_hits import check_inner_hits
from ..engine.query.dsl import parse_named_query
from ..engine.query.nodes import MatchAll, Query, QueryString
from ..engine.query.parse_helpers import token_name
from ..engine.sorting import SortField, parse_sort, parse_sort_param, score_only
from ..indices.preference import parse_preference
from .script_fields import parse_script_fields
from .slicing import SliceSpec, check_slice, parse_slice

DEFAULT_SIZE = 10
# how the query phase finds a from/size page: ``auto`` (deep_page at or beyond the coordinator's
# ``deep_page_threshold``), the classic ``from_size`` merge, or ``deep_page`` (deep_page.py)
PAGING_METHODS = ("auto", "from_size", "deep_page")

BODY_KEYS = {
    "query", "from", "size", "sort", "_source", "track_total_hits", "track_scores",
    "search_after", "min_score", "terminate_after", "timeout", "explain", "version",
    "seq_no_primary_term", "stored_fields", "docvalue_fields", "fields", "pit", "profile",
    "aggs", "aggregations", "highlight", "post_filter", "script_fields", "rescore",
    "indices_boost", "collapse", "slice", "suggest", "ext", "runtime_mappings", "stats",
}

#: Body keys Elasticsearch defines that this service does not implement yet: refused with a 400
#: naming them, never accepted and dropped (README, "What we refuse"). Checked after the
#: per-index limits, so a request over a limit gets Elasticsearch's limit error first.
UNSUPPORTED_BODY_KEYS = (
    "ext", "runtime_mappings",
)

#: URL parameters that only make sense with a body key above.
UNSUPPORTED_PARAMS = ("suggest_field", "suggest_mode", "suggest_size", "suggest_text")

SEARCH_PARAMS = {
    "q", "df", "default_operator", "analyzer", "analyze_wildcard", "lenient", "from", "size",
    "sort", "_source", "_source_includes", "_source_excludes", "_source_include",
    "_source_exclude", "track_total_hits", "track_scores", "timeout", "terminate_after",
    "explain", "version", "seq_no_primary_term", "stored_fields", "docvalue_fields",
    "rest_total_hits_as_int", "scroll", "search_type", "allow_partial_search_results",
    "ignore_unavailable", "allow_no_indices", "expand_wildcards", "ignore_throttled",
    "preference", "routing", "request_cache", "batched_reduce_size", "max_concurrent_shard_requests",
    "pre_filter_shard_size", "typed_keys", "ccs_minimize_roundtrips", "pretty", "human",
    "error_trace", "filter_path", "format", "min_score", "consistent_page",
    "include_named_queries_score", "stats", "suggest_field", "suggest_mode", "suggest_size",
    "suggest_text", "force_synthetic_source",
    "allow_no_indices", "paging",
}


@dataclass
class SearchRequest:
    """Everything the coordinator needs to run one search."""

    indices: tuple[str, ...] = ("_all",)
    query: Query = field(default_factory=MatchAll)
    from_: int = 0
    size: int = DEFAULT_SIZE
    sort: tuple[SortField, ...] = ()
    track_total_hits: bool | int = 10_000
    track_scores: bool = False
    source: SourceFilter = field(default_factory=SourceFilter)
    search_after: list[Any] | None = None
    min_score: float | None = None
    terminate_after: int | None = None
    timeout_ms: float | None = None
    explain: bool = False
    version: bool = False
    seq_no_primary_term: bool = False
    rest_total_hits_as_int: bool = False
    scroll: str | None = None
    pit: dict[str, Any] | None = None
    search_type: str = "dfs_query_then_fetch"
    allow_partial_search_results: bool = True
    ignore_unavailable: bool = False
    allow_no_indices: bool = True
    expand_wildcards: bool = True      # False: ``expand_wildcards`` names no open index state
    profile: bool = False
    stored_fields: tuple[str, ...] | None = None
    unsupported: tuple[str, ...] = ()   # refused after the per-index limits (refuse_unsupported)
    routing: str | None = None      # restricts the search to the routing values' shards
    preference: str | None = None   # ``_shards:N,M`` restricts the shards (routing.py)
    docvalue_fields: tuple[Any, ...] = ()
    fields: tuple[Any, ...] = ()
    from_given: bool = False
    consistent_page: str | None = None
    paging: str = "auto"                   # ours: auto | from_size | deep_page (query phase)
    # internal: a cursor's indices as first resolved (alias filters and routing), so that its
    # later pages search through the same aliases (``indices/resolver.py``); never parsed
    access: Any = None
    script_fields: tuple[Any, ...] = ()    # script_fields.ScriptField, run on the page's hits
    rescore_windows: tuple[int, ...] = ()  # each rescorer's window_size (default 10)
    request_cache: bool | None = None
    aggs: Any = None                       # engine.aggs.AggRequest (``aggs``/``aggregations``)
    post_filter: Query | None = None       # narrows the hits after aggregations are computed
    typed_keys: bool = False               # prefix aggregation names with their type
    slice: SliceSpec | None = None         # one part of a sliced scroll or PIT (slicing.py)
    collapse: Any = None                   # search.collapse.Collapse: one hit per group
    named: tuple[tuple[str, Query], ...] = ()   # ``_name``d queries -> ``matched_queries``
    include_named_queries_score: bool = False   # ``matched_queries`` as name -> score
    rescore: tuple[Any, ...] = ()          # search.rescore.Rescorer, applied in order
    indices_boost: tuple[tuple[str, float], ...] = ()   # (index pattern, boost), in order
    highlight: Any = None                  # search.highlight.HighlightSpec
    suggest: tuple[Any, ...] = ()          # search.suggest.TermSuggestion


def _int(value: Any, name: str, *, url: bool) -> int:
    if isinstance(value, bool):
        raise _bad_number(value, name, url)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise _bad_number(value, name, url)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            if url:
                raise _bad_number(value, name, url) from None
            # the body parser reads the string with Java's Integer.parseInt, uncaught
            raise IllegalArgument(f"For input string: \"{value}\"",
                                  es_type="number_format_exception") from None
    raise _bad_number(value, name, url)


def _bad_number(value: Any, name: str, url: bool) -> Exception:
    if url:
        return IllegalArgument(f"Failed to parse int parameter [{name}] with value [{value}]",
                               caused_by={"type": "number_format_exception",
                                          "reason": f"For input string: \"{value}\""})
    return XContentParseError(f"[1:1] [search] failed to parse field [{name}]",
                              caused_by={"type": "illegal_argument_exception",
                                         "reason": f"For input string: \"{value}\""})


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v for v in (p.strip() for p in value.split(",")) if v)


def source_from_params(params: dict[str, str], base: SourceFilter) -> SourceFilter:
    """URL ``_source``/``_source_includes``/``_source_excludes`` override the body."""
    out = base
    if "_source" in params:
        v = params["_source"]
        if v.lower() in ("true", "false", ""):
            out = SourceFilter(enabled=v.lower() != "false")
        else:
            out = SourceFilter(includes=_csv(v))
    inc = params.get("_source_includes", params.get("_source_include"))
    exc = params.get("_source_excludes", params.get("_source_exclude"))
    if inc is not None or exc is not None:
        out = SourceFilter(enabled=True,
                           includes=_csv(inc) if inc is not None else out.includes,
                           excludes=_csv(exc) if exc is not None else out.excludes)
    return bounded_source(out)


def _unsupported(body: dict[str, Any], params: dict[str, str]) -> tuple[str, ...]:
    """What the request asks for that this service cannot do (refused, never ignored)."""
    out = [k for k in UNSUPPORTED_BODY_KEYS if k in body and body[k] not in (None, {})]
    out += [k for k in UNSUPPORTED_PARAMS if k in params]
    if parse_bool(params.get("force_synthetic_source", "false"), "force_synthetic_source"):
        out.append("force_synthetic_source")
    return tuple(out)


WILDCARD_STATES = ("open", "closed", "hidden", "all", "none")


def expands_open_indices(value: str) -> bool:
    """``expand_wildcards``: whether patterns reach open indices (every index here is open and
    none is hidden, so ``closed``, ``hidden`` and ``none`` alone match nothing)."""
    states = [v.strip() for v in value.split(",") if v.strip()]
    for s in states:
        if s not in WILDCARD_STATES:
            raise IllegalArgument(f"No enum constant org.elasticsearch.action.support."
                                  f"IndicesOptions.WildcardStates.{s.upper()}")
    return "open" in states or "all" in states


def refuse_unsupported(req: SearchRequest) -> None:
    """A 400 naming the first feature of the request that this service does not implement."""
    if req.unsupported:
        raise IllegalArgument(f"[{req.unsupported[0]}] is not supported by this server")


def _source_with_stored_fields(req: SearchRequest, body: dict[str, Any],
                               params: dict[str, str]) -> SourceFilter:
    """``stored_fields`` without ``_source`` among them hides ``_source`` unless the request asks
    for it explicitly (``_source: true`` or a filter), as Elasticsearch's fetch phase does."""
    explicit = "_source" in body or any(k in params for k in (
        "_source", "_source_includes", "_source_excludes", "_source_include", "_source_exclude"))
    stored = req.stored_fields or ()
    if "_none_" in stored and explicit and req.source.enabled:
        raise IllegalArgument("[stored_fields] cannot be disabled if [_source] is requested")
    if "_source" in stored or explicit:
        return req.source
    return SourceFilter(enabled=False)


def check_params(params: dict[str, str], allowed: set[str], path: str) -> None:
    """Unknown URL parameters are an error in Elasticsearch; so they are here."""
    unknown = sorted(k for k in params if k not in allowed)
    if unknown:
        if len(unknown) == 1:
            raise IllegalArgument(f"request [{path}] contains unrecognized parameter: "
                                  f"[{unknown[0]}]")
        raise IllegalArgument(f"request [{path}] contains unrecognized parameters: "
                              + ", ".join(f"[{u}]" for u in unknown))


def parse_search(indices: tuple[str, ...], params: dict[str, str], body: Any,
                 path: str = "/_search") -> SearchRequest:
    """Build a :class:`SearchRequest`; URL parameters win over the body, as in Elasticsearch.

    The steps run in this order so that a request with several mistakes gets the error
    Elasticsearch reports first."""
    check_params(params, SEARCH_PARAMS, path)
    body = _body_object(body)
    req = SearchRequest(indices=indices)
    _parse_query(req, params, body)
    _parse_page(req, params, body)
    _parse_totals(req, params, body)
    req.source = source_from_params(params, parse_source(body.get("_source")))
    _parse_collection(req, params, body)
    _parse_hit_flags(req, params, body)
    _parse_cursor_and_targets(req, params, body)
    _parse_fields(req, params, body)
    _parse_extras(req, params, body)
    _parse_aggs_section(req, params, body)
    validate(req)
    return req


def _body_object(body: Any) -> dict[str, Any]:
    """The body as an object of known keys (none: ``{}``)."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ParsingError("Expected [START_OBJECT] but found [" +
                           ("START_ARRAY" if isinstance(body, list) else "VALUE_STRING") + "]")
    for key in body:
        if key not in BODY_KEYS:
            raise ParsingError(f"Unknown key for a {token_name(body[key])} in [{key}].")
    return body


def _parse_query(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """``query`` in the body, or Lucene syntax in ``q`` (which wins)."""
    if "query" in body:
        if body["query"] is None or body["query"] == {}:
            req.query = MatchAll()
        else:
            req.query, req.named = parse_named_query(body["query"])
            check_inner_hits(req.query)
    if "q" in params:
        df = params.get("df")
        req.query = QueryString(query=params["q"], fields=((df, 1.0),) if df else (),
                                default_operator=str(params.get("default_operator", "or")).lower(),
                                lenient=params["lenient"] == "true" if "lenient" in params else None,
                                analyzer=params.get("analyzer"))


def _parse_page(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """``from`` / ``size`` (the URL wins over the body) and ``sort``."""
    if "from" in body:
        req.from_ = _int(body["from"], "from", url=False)
        req.from_given = True
    if "size" in body:
        req.size = _int(body["size"], "size", url=False)
        if req.size < 0:
            raise IllegalArgument(f"[size] parameter cannot be negative, found [{req.size}]")
    if "from" in params:
        req.from_ = _int(params["from"], "from", url=True)
        req.from_given = True
    if "size" in params:
        size = _int(params["size"], "size", url=True)
        if size == -1 and "from" not in params:
            size = DEFAULT_SIZE  # deprecated spelling of "unset" (Elasticsearch 7.13+)
        req.size = size
    if req.from_ < 0:
        raise IllegalArgument(f"[from] parameter cannot be negative, found [{req.from_}]")
    if req.size < 0:
        raise IllegalArgument(f"[size] parameter cannot be negative, found [{req.size}]")
    if "sort" in body:
        req.sort = parse_sort(body["sort"])
    if "sort" in params:
        req.sort = parse_sort_param(params["sort"])


def _parse_totals(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """``track_total_hits`` and its legacy integer form; ``track_scores``."""
    tth: Any = body.get("track_total_hits", params.get("track_total_hits"))
    if "track_total_hits" in params:
        tth = params["track_total_hits"]
    if tth is not None:
        if isinstance(tth, bool):
            req.track_total_hits = tth
        elif str(tth).lower() in ("true", "false"):
            req.track_total_hits = str(tth).lower() == "true"
        else:
            n = _int(tth, "track_total_hits", url="track_total_hits" in params)
            if n < -1:
                raise IllegalArgument("[track_total_hits] parameter must be positive or equals "
                                      f"to -1, got {n}")
            req.track_total_hits = True if n == -1 else n
    req.rest_total_hits_as_int = parse_bool(params.get("rest_total_hits_as_int", "false"),
                                            "rest_total_hits_as_int")
    if req.rest_total_hits_as_int and "track_total_hits" not in body \
            and "track_total_hits" not in params:
        req.track_total_hits = True
    if req.rest_total_hits_as_int and req.track_total_hits not in (True, False):
        raise IllegalArgument("[rest_total_hits_as_int] cannot be used if the tracking of total "
                              "hits is not accurate, got " + str(req.track_total_hits))
    req.track_scores = parse_bool(body.get("track_scores", params.get("track_scores", False)),
                                  "track_scores")


def _parse_collection(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """What the shards collect: ``search_after``, ``min_score``, ``terminate_after``,
    ``timeout``."""
    if "search_after" in body:
        req.search_after = parse_search_after(body["search_after"])
    if "min_score" in body or "min_score" in params:
        try:
            req.min_score = float(body.get("min_score", params.get("min_score")))
        except (TypeError, ValueError):
            raise ParsingError("[min_score] must be a number") from None
    ta = params.get("terminate_after", body.get("terminate_after"))
    if ta is not None:
        t = _int(ta, "terminate_after", url="terminate_after" in params)
        if t < 0:
            raise IllegalArgument("terminateAfter must be > 0")
        req.terminate_after = t or None
    to = params.get("timeout", body.get("timeout"))
    if to is not None:
        ms = parse_time_ms(to)
        req.timeout_ms = ms if ms > 0 else None


def _parse_hit_flags(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """What each hit shows besides its source: ``explain``, ``version``, ``seq_no_primary_term``;
    and ``profile``."""
    req.explain = parse_bool(params.get("explain", body.get("explain", False)), "explain")
    req.version = parse_bool(params.get("version", body.get("version", False)), "version")
    req.seq_no_primary_term = parse_bool(params.get("seq_no_primary_term",
                                                    body.get("seq_no_primary_term", False)),
                                         "seq_no_primary_term")
    req.profile = parse_bool(body.get("profile", False), "profile")


def _parse_cursor_and_targets(req: SearchRequest, params: dict[str, str],
                              body: dict[str, Any]) -> None:
    """``scroll``, ``pit``, ``search_type`` and how missing indices or failed shards are taken."""
    if "scroll" in params:
        req.scroll = params["scroll"]
        parse_time_ms(req.scroll, "scroll")
    if "pit" in body:
        pit = body["pit"]
        if not isinstance(pit, dict) or "id" not in pit:
            raise ParsingError("[pit] must be an object with an [id]")
        req.pit = pit
    st = params.get("search_type")
    if st is not None:
        if st not in ("query_then_fetch", "dfs_query_then_fetch"):
            raise IllegalArgument(f"No search type for [{st}]")
        req.search_type = st
    req.allow_partial_search_results = parse_bool(
        params.get("allow_partial_search_results", "true"), "allow_partial_search_results")
    req.ignore_unavailable = parse_bool(params.get("ignore_unavailable", "false"),
                                        "ignore_unavailable")
    req.allow_no_indices = parse_bool(params.get("allow_no_indices", "true"), "allow_no_indices")
    req.expand_wildcards = expands_open_indices(params.get("expand_wildcards", "open"))
    check_format(params)


def _parse_fields(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """``stored_fields``, ``docvalue_fields`` and ``fields``."""
    if "stored_fields" in body or "stored_fields" in params:
        sf = body.get("stored_fields", params.get("stored_fields"))
        req.stored_fields = (sf,) if isinstance(sf, str) else tuple(sf or ())
        if isinstance(sf, str) and "," in sf:
            req.stored_fields = _csv(sf)
        req.source = _source_with_stored_fields(req, body, params)
    if "docvalue_fields" in body:
        req.docvalue_fields = _field_specs(body["docvalue_fields"])
    if "docvalue_fields" in params:
        req.docvalue_fields = _csv(params["docvalue_fields"])
    if "fields" in body:
        req.fields = _field_specs(body["fields"])


_FIELD_SPEC_KEYS = ("field", "format", "include_unmapped")


def _field_specs(value: Any) -> tuple[Any, ...]:
    """``fields`` / ``docvalue_fields`` entries: a name or ``{field, format}``, checked as
    Elasticsearch's ``fetch_field_and_format`` parser checks them; ``include_unmapped`` must
    read as a boolean (``hits.py`` builds it)."""
    specs = tuple(value or ())
    for spec in specs:
        if not isinstance(spec, dict):
            continue
        for key in spec:
            if key not in _FIELD_SPEC_KEYS:
                raise XContentParseError(f"[fetch_field_and_format] unknown field [{key}]")
        if "field" not in spec:
            raise XContentParseError("[fetch_field_and_format] Required [field]")
        parse_bool(spec.get("include_unmapped", False), "include_unmapped")
    return specs


def _parse_extras(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """Our extensions (``consistent_page``, ``paging``), options that only need checking
    (``script_fields``, ``rescore``, ``request_cache``), what we refuse, and routing."""
    req.consistent_page = params.get("consistent_page")
    if "paging" in params:   # our extension: choose the query-phase method (experiments)
        req.paging = params["paging"]
        if req.paging not in PAGING_METHODS:
            raise IllegalArgument(f"[paging] must be one of {list(PAGING_METHODS)} but was "
                                  f"[{req.paging}]")
    if body.get("script_fields") is not None:
        req.script_fields = parse_script_fields(body["script_fields"])
    rescore = body.get("rescore")
    rescorers = rescore if isinstance(rescore, list) else [rescore] if rescore else []
    req.rescore_windows = tuple(_int(r.get("window_size", 10), "window_size", url=False)
                                for r in rescorers if isinstance(r, dict))
    _parse_features(req, params, body)
    if "request_cache" in params:
        req.request_cache = parse_bool(params["request_cache"], "request_cache")
    req.unsupported = _unsupported(body, params)
    if body.get("slice") is not None:
        req.slice = parse_slice(body["slice"])
    req.routing = params.get("routing")
    req.preference = params.get("preference")
    parse_preference(req.preference)   # Elasticsearch's errors before any fan-out


def _parse_features(req: SearchRequest, params: dict[str, str], body: dict[str, Any]) -> None:
    """``collapse``, ``rescore``, ``indices_boost``, ``highlight``, ``suggest`` and how named queries
    report (their own modules parse them)."""
    from .collapse import parse_collapse
    from .highlight import parse_highlight
    from .indices_boost import parse_indices_boost
    from .rescore import parse_rescore
    from .suggest import parse_suggest
    req.suggest = parse_suggest(body.get("suggest"))
    req.collapse = parse_collapse(body.get("collapse"))
    req.rescore = parse_rescore(body.get("rescore"))
    req.indices_boost = parse_indices_boost(body.get("indices_boost"))
    req.highlight = parse_highlight(body.get("highlight"))
    req.include_named_queries_score = parse_bool(
        params.get("include_named_queries_score", "false"), "include_named_queries_score")


def _parse_aggs_section(req: SearchRequest, params: dict[str, str], body: dict[str, Any]
                        ) -> None:
    """``aggs`` / ``aggregations``, ``post_filter`` and ``typed_keys`` (engine/aggs)."""
    from ..engine.aggs import parse_aggs
    if "aggs" in body and "aggregations" in body:
        raise ParsingError("Found two aggregation definitions: [aggs] and [aggregations]")
    section = body.get("aggs", body.get("aggregations"))
    if section is not None:
        req.aggs = parse_aggs(section)
    if body.get("post_filter") is not None:
        req.post_filter, named = parse_named_query(body["post_filter"])
        req.named = tuple(dict(req.named + named).items())
    req.typed_keys = parse_bool(params.get("typed_keys", "false"), "typed_keys")


def parse_search_after(value: Any) -> list[Any]:
    """The body's ``search_after``: an array of scalars (``SearchAfterBuilder.fromXContent``)."""
    if not isinstance(value, list):
        raise ParsingError(f"Unknown key for a {token_name(value)} in [search_after].")
    for v in value:
        if isinstance(v, (dict, list)):
            raise ParsingError("Expected [VALUE_STRING] or [VALUE_NUMBER] or [VALUE_BOOLEAN] or "
                               f"[VALUE_NULL] but found [{token_name(v)}] inside search_after.")
    if not value:
        raise IllegalArgument("Values must contains at least one value.")
    return value


def validate(req: SearchRequest) -> None:
    """Cross-field rules Elasticsearch checks before running a search.

    The point-in-time index rule is checked first and alone (``RestSearchAction``); the rest are
    collected in the order of ``SearchSourceBuilder.validate`` / ``SearchRequest.validate`` and
    reported together, numbered, as Elasticsearch does.
    """
    if req.pit is not None and req.indices not in ((), ("_all",)) and req.indices != ("",):
        raise ActionRequestValidation(
            "Validation Failed: 1: [indices] cannot be used with point in time. Do not specify "
            "any index with point in time.;")
    errors: list[str] = []
    has_after = bool(req.search_after)
    if req.scroll is not None:
        tth = req.track_total_hits
        if tth is False or (tth is not True and tth != 10_000):
            errors.append("disabling [track_total_hits] is not allowed in a scroll context")
        if req.from_given and req.from_ > 0:
            errors.append("using [from] is not allowed in a scroll context")
        if req.size == 0:
            errors.append("[size] cannot be [0] in a scroll context")
        if has_after:
            errors.append("[search_after] cannot be used in a scroll context")
    if has_after and req.from_given and req.from_ > 0:
        errors.append("[from] parameter must be set to 0 when [search_after] is used")
    if req.pit is None and any(sf.field == "_shard_doc" for sf in req.sort):
        errors.append("[_shard_doc] sort field cannot be used without [point in time]")
    from .collapse import collapse_errors
    from .rescore import rescore_errors
    errors += collapse_errors(req.collapse, req.scroll is not None, bool(req.rescore),
                              has_after, req.sort)
    if req.scroll is not None:
        if getattr(req, "request_cache", None):
            errors.append("[request_cache] cannot be used in a scroll context")
        if req.pit is not None:
            errors.append("using [point in time] is not allowed in a scroll context")
    if errors:
        raise ActionRequestValidation(
            "Validation Failed: " + "".join(f"{i}: {e};" for i, e in enumerate(errors, 1)))
    if req.slice is not None:
        check_slice(req.slice, scroll=req.scroll is not None, pit=req.pit is not None)
    for e in rescore_errors(req.rescore, bool(req.sort) and not score_only(req.sort)):
        raise IllegalArgument(e)
