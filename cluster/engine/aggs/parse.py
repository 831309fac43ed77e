"""The ``aggs`` request tree, parsed into typed nodes with Elasticsearch's validation errors.

Pure: the request layer calls :func:`parse_aggs` once; shards and the coordinator read the
nodes. Every key an aggregation accepts is listed in ``PARAMS``; anything else is refused with
a 400 naming it (never accepted and ignored). Known Elasticsearch aggregations this service does
not run are refused by name too (``NOT_SUPPORTED``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import ActionRequestValidation, IllegalArgument, ParsingError, XContentParseError
from ...values import parse_bool
from .geo_params import GEO_METRICS, GEO_PARAMS, check_geo_agg
from .ip_values import check_ip_ranges
from ..query.dsl import parse_query
from ..query.nodes import Query
from ..query.parse_helpers import token_name

VALUE_SOURCE = {"field", "missing", "format", "value_type"}
PARAMS: dict[str, set[str]] = {
    "terms": VALUE_SOURCE | {"size", "shard_size", "order", "min_doc_count",
                             "shard_min_doc_count", "include", "exclude",
                             "show_term_doc_count_error", "execution_hint", "collect_mode"},
    "histogram": VALUE_SOURCE | {"interval", "offset", "min_doc_count", "extended_bounds",
                                 "hard_bounds", "order", "keyed"},
    "date_histogram": VALUE_SOURCE | {"calendar_interval", "fixed_interval", "interval",
                                      "time_zone",
                                      "offset", "min_doc_count", "extended_bounds",
                                      "hard_bounds", "order", "keyed"},
    "range": VALUE_SOURCE | {"ranges", "keyed"},
    "date_range": VALUE_SOURCE | {"ranges", "keyed", "time_zone"},
    "ip_range": {"field", "ranges", "keyed"},
    "missing": {"field", "value_type"},
    "global": set(),
    "nested": {"path"}, "reverse_nested": {"path"},
    "filters": {"filters", "other_bucket", "other_bucket_key", "keyed"},
    "avg": VALUE_SOURCE, "sum": VALUE_SOURCE, "min": VALUE_SOURCE, "max": VALUE_SOURCE,
    "stats": VALUE_SOURCE, "value_count": VALUE_SOURCE,
    "extended_stats": VALUE_SOURCE | {"sigma"},
    "cardinality": VALUE_SOURCE | {"precision_threshold", "execution_hint"},
    "weighted_avg": {"value", "weight", "format", "value_type"},
    **{k: {"buckets_path", "gap_policy", "format"} for k in (
        "avg_bucket", "max_bucket", "min_bucket", "sum_bucket", "stats_bucket",
        "cumulative_sum", "derivative")},
    "bucket_sort": {"sort", "from", "size", "gap_policy"},
    "composite": {"sources", "size", "after"},
    "top_hits": {"from", "size", "sort", "_source", "version", "seq_no_primary_term"},
    "percentiles": VALUE_SOURCE | {"percents", "keyed", "tdigest"},
    "percentile_ranks": VALUE_SOURCE | {"values", "keyed", "tdigest"},
    "median_absolute_deviation": VALUE_SOURCE | {"compression"},
    **GEO_PARAMS,
}
SOURCE_PARAMS = {
    "terms": {"field", "missing_bucket", "missing_order", "order", "value_type"},
    "histogram": {"field", "interval", "missing_bucket", "missing_order", "order", "format"},
    "date_histogram": {"field", "calendar_interval", "fixed_interval", "interval", "time_zone",
                       "offset", "missing_bucket", "missing_order", "order", "format"},
}
PIPELINE_TYPES = {"avg_bucket", "max_bucket", "min_bucket", "sum_bucket", "stats_bucket",
                  "cumulative_sum", "derivative", "bucket_sort"}
METRIC_TYPES = {"top_hits", "percentiles", "percentile_ranks", "median_absolute_deviation", "avg", "sum", "min", "max", "stats", "extended_stats", "value_count",
                "cardinality", "weighted_avg"} | GEO_METRICS
# Elasticsearch aggregations this service does not run: refused by name with a 400
NOT_SUPPORTED = {
     "extended_stats_bucket",
    "percentiles_bucket", "bucket_script", "bucket_selector",
    "moving_fn", "serial_diff", "significant_terms", "significant_text", "rare_terms",
    "multi_terms", "children", "parent", "sampler",
    "diversified_sampler", "adjacency_matrix", "auto_date_histogram", "variable_width_histogram",
    "scripted_metric", "matrix_stats", "string_stats",
    "boxplot", "t_test", "top_metrics", "rate", "random_sampler", "categorize_text",
    "frequent_item_sets", "time_series", "cumulative_cardinality", "moving_percentiles",
    "normalize", "inference", "geo_line", "ip_prefix", "moving_avg",
}
NAME_RE = re.compile(r"[\[\]>]")
CALENDAR_UNITS = {"1m": "minute", "minute": "minute", "1h": "hour", "hour": "hour",
                  "1d": "day", "day": "day", "1w": "week", "week": "week", "1M": "month",
                  "month": "month", "1q": "quarter", "quarter": "quarter", "1y": "year",
                  "year": "year", "1s": "second", "second": "second"}
FIXED_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


@dataclass
class AggNode:
    """One aggregation: its name, type, validated parameters and sub-aggregations."""

    name: str
    type: str
    params: dict[str, Any]
    subs: tuple[AggNode, ...] = ()
    meta: dict[str, Any] | None = None
    query: Query | None = None           # ``filter``'s query
    queries: tuple[tuple[str, Query], ...] = ()   # ``filters``'s named queries, in order
    keyed_filters: bool = True           # ``filters`` given as an object (keyed response)

    @property
    def field(self) -> str | None:
        return self.params.get("field")


@dataclass
class AggRequest:
    """The whole ``aggs`` section: its top-level nodes."""

    nodes: tuple[AggNode, ...] = field(default_factory=tuple)


def parse_aggs(body: Any) -> AggRequest:
    """``aggs`` / ``aggregations`` of a search body into :class:`AggRequest`."""
    nodes = _parse_level(body, depth=0)
    _check_composite_parents(nodes, True)
    return AggRequest(nodes)


def _check_composite_parents(nodes: tuple[AggNode, ...], allowed: bool) -> None:
    """``composite`` runs at the top level or under single-bucket ``nested``,
    ``reverse_nested`` and ``filter`` parents only (OpenSearch 2.13's rule)."""
    for node in nodes:
        if node.type == "composite" and not allowed:
            raise IllegalArgument("[composite] aggregation cannot be used with a parent "
                                  "aggregation")
        _check_composite_parents(node.subs, allowed and node.type in (
            "nested", "reverse_nested", "filter"))


def _parse_level(body: Any, depth: int) -> tuple[AggNode, ...]:
    if not isinstance(body, dict):
        raise ParsingError("Unexpected token " + token_name(body) + " in [aggs].")
    nodes = []
    for name, spec in body.items():
        if NAME_RE.search(name):
            raise ParsingError(f"Invalid aggregation name [{name}]. Aggregation names can "
                               "contain any character except '[', ']', and '>'")
        if not isinstance(spec, dict):
            raise ParsingError(f"Aggregation definition for [{name} starts with a "
                               f"[{token_name(spec)}], expected a [START_OBJECT].")
        nodes.append(_parse_node(name, spec, depth))
    return tuple(nodes)


def _parse_node(name: str, spec: dict[str, Any], depth: int) -> AggNode:
    kind: str | None = None
    subs: tuple[AggNode, ...] = ()
    meta = None
    body: Any = None
    for key, value in spec.items():
        if key in ("aggs", "aggregations"):
            if subs:
                raise ParsingError(f"Found two sub aggregation definitions under [{name}]")
            subs = _parse_level(value, depth + 1)
        elif key == "meta":
            if not isinstance(value, dict):
                raise ParsingError(f"Unexpected token {token_name(value)} [meta] in [{name}].")
            meta = value
        else:
            if kind is not None:
                raise ParsingError(f"Found two aggregation type definitions in [{name}]: "
                                   f"[{kind}] and [{key}]")
            kind, body = key, value
    if kind is None:
        raise ParsingError(f"Missing definition for aggregation [{name}]")
    if kind in NOT_SUPPORTED:
        raise IllegalArgument(f"aggregation [{name}] of type [{kind}] is not supported by "
                              "this service")
    if kind not in PARAMS and kind not in ("filter",):
        raise ParsingError(f"Unknown aggregation type [{kind}]")
    node = AggNode(name, kind, {}, subs, meta)
    if kind in PIPELINE_TYPES:
        _check_pipeline(name, kind, body, subs, depth)
    if kind == "filter":
        node.query = parse_query(body)
    elif kind == "filters":
        _parse_filters(node, body)
    else:
        node.params = _params(kind, name, body)
    _check_node(node, depth)
    _check_parents(node)
    return node


def _check_pipeline(name: str, kind: str, body: Any, subs: tuple[AggNode, ...], depth: int
                    ) -> None:
    if subs:
        raise IllegalArgument(f"Aggregator [{name}] of type [{kind}] cannot accept "
                              "sub-aggregations")
    if isinstance(body, dict) and kind != "bucket_sort" and "buckets_path" not in body:
        raise IllegalArgument(f"Required [buckets_path] in aggregation [{name}]")
    if isinstance(body, dict) and "gap_policy" in body and body["gap_policy"] not in (
            "skip", "insert_zeros", "keep_values"):
        raise IllegalArgument(f"Invalid gap policy: [{body['gap_policy']}]")
    if isinstance(body, dict) and body.get("gap_policy") == "insert_zeros":
        raise IllegalArgument(f"[gap_policy] [insert_zeros] in aggregation [{name}] is not "
                              "supported by this service")
    if depth == 0 and kind == "bucket_sort":
        raise ActionRequestValidation(f"Validation Failed: 1: bucket_sort aggregation [{name}] "
                                      "must be declared inside of another aggregation;")
    if depth == 0 and kind in ("cumulative_sum", "derivative"):
        raise ActionRequestValidation(
            f"Validation Failed: 1: {kind} aggregation [{name}] must have a histogram, "
            "date_histogram or auto_date_histogram as parent but doesn't have a parent;")


def _check_parents(node: AggNode) -> None:
    for sub in node.subs:
        if sub.type in ("cumulative_sum", "derivative") and node.type not in (
                "histogram", "date_histogram"):
            raise ActionRequestValidation(
                f"Validation Failed: 1: {sub.type} aggregation [{sub.name}] must have a "
                "histogram, date_histogram or auto_date_histogram as parent;")


def _params(kind: str, name: str, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ParsingError(f"Unexpected token {token_name(body)} in [{name}].")
    allowed = PARAMS[kind]
    for key in body:
        if key == "script":
            raise IllegalArgument(f"[script] in aggregation [{name}] is not supported by this "
                                  "service")
        if key not in allowed:
            raise XContentParseError(f"[1:1] [{kind}] unknown field [{key}]")
    return dict(body)


def _parse_filters(node: AggNode, body: Any) -> None:
    if not isinstance(body, dict):
        raise ParsingError(f"Unexpected token {token_name(body)} in [{node.name}].")
    for key in body:
        if key not in PARAMS["filters"]:
            raise XContentParseError(f"[1:1] [filters] unknown field [{key}]")
    filters = body.get("filters")
    if isinstance(filters, dict):
        node.queries = tuple((k, parse_query(v)) for k, v in filters.items())
    elif isinstance(filters, list):
        node.keyed_filters = False
        node.queries = tuple((str(i), parse_query(v)) for i, v in enumerate(filters))
    else:
        raise IllegalArgument(f"[filters] cannot be null or empty in [{node.name}]")
    node.params = {k: v for k, v in body.items() if k != "filters"}
    if "other_bucket_key" in body and "other_bucket" not in body:
        node.params["other_bucket"] = True


def _check_node(node: AggNode, depth: int) -> None:
    """Cross-field rules checked at parse time (Elasticsearch's builders' validation)."""
    p, kind, name = node.params, node.type, node.name
    if kind == "global" and depth > 0:
        raise IllegalArgument(f"Aggregation [{name}] of type [global] can only be used as a "
                              "top level aggregation")   # ES: AggregationInitializationException
    if kind == "nested" and not isinstance(p.get("path"), str):
        raise ParsingError(f"Missing [path] field for nested aggregation [{name}]")
    if kind in METRIC_TYPES and node.subs:
        raise IllegalArgument(f"Aggregator [{name}] of type [{kind}] cannot accept "
                              "sub-aggregations")
    needs_field = kind in METRIC_TYPES - {"weighted_avg", "top_hits"} or kind in (
        "terms", "histogram", "date_histogram", "range", "date_range", "ip_range")
    if needs_field and "field" not in p:
        raise IllegalArgument("Required one of fields [field, script], but none were specified. ")
    if kind == "weighted_avg":
        for part in ("value", "weight"):
            if not isinstance(p.get(part), dict) or "field" not in p[part]:
                raise IllegalArgument(f"[{part}] must have a [field] in aggregation [{name}]")
    if kind in GEO_PARAMS:
        check_geo_agg(p, kind, name)
    if kind == "composite":
        _check_composite(p, name, depth)
    if kind == "terms":
        _check_terms(p, name)
    elif kind == "histogram":
        interval = p.get("interval")
        if not isinstance(interval, (int, float)) or isinstance(interval, bool):
            raise IllegalArgument(f"[interval] must be set on histogram aggregation [{name}]"
                                  if interval is None else "[interval] must be a number")
        if interval <= 0:
            raise IllegalArgument(f"[interval] must be >0 for histogram aggregation [{name}]")
        _check_min_doc_count(p)
        p["order"] = parse_order(p.get("order"), default=[("_key", "asc")])
    elif kind == "date_histogram":
        _check_date_histogram(p, name)
    elif kind == "ip_range":
        check_ip_ranges(node)
    elif kind in ("range", "date_range"):
        ranges = p.get("ranges")
        if not isinstance(ranges, list) or not ranges:
            raise IllegalArgument(f"No [ranges] specified for the [{name}] aggregation")
        for r in ranges:
            if not isinstance(r, dict) or set(r) - {"from", "to", "key"}:
                bad = sorted(set(r) - {"from", "to", "key"}) if isinstance(r, dict) else [r]
                raise XContentParseError(f"[1:1] [range] unknown field [{bad[0]}]")
    elif kind == "top_hits":
        from ..source_filter import parse_source
        from ..sorting import parse_sort
        parse_sort(p.get("sort"))
        p["_source_filter"] = parse_source(p.get("_source"))
        for key in ("from", "size"):
            if not isinstance(p.get(key, 0), int) or p.get(key, 0) < 0:
                raise IllegalArgument(f"[{key}] must be a non-negative integer in [{name}]")
    elif kind in ("percentiles", "percentile_ranks"):
        _check_percentiles(p, kind)
    elif kind == "median_absolute_deviation":
        c = p.get("compression", 1000.0)
        if isinstance(c, bool) or not isinstance(c, (int, float)) or c <= 0:
            raise IllegalArgument(f"[compression] must be greater than 0. Found [{c}] in "
                                  f"[{name}]")
    elif kind == "cardinality":
        pt = p.get("precision_threshold")
        if pt is not None and int(pt) < 0:
            raise IllegalArgument("[precisionThreshold] must be greater than or equal to 0. "
                                  f"Found [{int(pt)}] in [{name}]")


def _check_percentiles(p: dict[str, Any], kind: str) -> None:
    key = "percents" if kind == "percentiles" else "values"
    given = key in p
    values = p.get(key, [1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0] if kind == "percentiles"
                   else None)
    if (given or kind == "percentile_ranks") and (
            not isinstance(values, list) or not values
            or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values)):
        raise IllegalArgument(f"[{key}] must not be empty and must hold numbers")
    p["_points"] = [float(v) for v in values]
    td = p.get("tdigest")
    if td is not None:
        if not isinstance(td, dict) or set(td) - {"compression"}:
            raise IllegalArgument("[tdigest] accepts only [compression]")
        c = float(td.get("compression", 100.0))
        if c < 0:
            raise IllegalArgument(f"[compression] must be greater than or equal to 0. "
                                  f"Found [{c}]")


def _check_composite(p: dict[str, Any], name: str, depth: int) -> None:
    """``sources`` into typed source nodes (``_sources``) and ``after`` into a list
    (``_after``), with Elasticsearch's errors."""
    if "sources" not in p:
        raise IllegalArgument("Required [sources]")
    sources = p["sources"]
    if not isinstance(sources, list) or not sources:
        raise IllegalArgument("Composite [sources] cannot be null or empty")
    nodes, names = [], []
    for src in sources:
        if not isinstance(src, dict) or len(src) != 1:
            raise ParsingError("[composite] each source must be an object with one name")
        (sname, body), = src.items()
        if not isinstance(body, dict) or len(body) != 1:
            raise ParsingError(f"[composite] source [{sname}] must have one type")
        (kind, params), = body.items()
        if kind not in SOURCE_PARAMS:
            raise IllegalArgument(f"composite source [{sname}] of type [{kind}] is not "
                                  "supported by this service")
        for key in params:
            if key not in SOURCE_PARAMS[kind]:
                raise XContentParseError(f"[1:1] [{kind}] unknown field [{key}]")
        if "field" not in params:
            raise IllegalArgument("Required one of fields [field, script], but none were "
                                  "specified. ")
        params = dict(params)
        if kind == "date_histogram":
            order = params.pop("order", "asc")
            _check_date_histogram(params, sname)
            params["order"] = order
        nodes.append(AggNode(sname, kind, params))
        names.append(sname)
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise IllegalArgument("Composite source names must be unique, found duplicates: "
                              f"[{', '.join(dupes)}]")
    _coerce_ints(p, "size")
    size = p.get("size", 10)
    if not isinstance(size, int) or size < 1:
        raise IllegalArgument(f"[size] must be greater than 0. Found [{size}] in [{name}]")
    p["_sources"] = nodes
    after = p.get("after")
    if after is not None:
        if not isinstance(after, dict) or set(after) != set(names):
            raise IllegalArgument(f"[after] has {len(after) if isinstance(after, dict) else 0}"
                                  f" value(s) but [sources] has {len(names)}")
        p["_after"] = [_after_value(n, after[n.name]) for n in nodes]


def _after_value(src: AggNode, value: Any) -> Any:
    if src.type == "date_histogram" and isinstance(value, str):
        from ..dates import parse_date_nanos
        fmt = src.params.get("format")
        try:
            return parse_date_nanos(value, None if fmt == "iso8601" else fmt,
                                    time_zone=src.params.get("time_zone")) // 1_000_000
        except IllegalArgument:
            raise
        except (ValueError, OverflowError):
            shown = fmt or "strict_date_optional_time||epoch_millis"
            raise IllegalArgument(f"failed to parse date field [{value}] with format [{shown}]",
                                  es_type="parse_exception") from None
    return value


def _coerce_ints(p: dict[str, Any], *keys: str) -> None:
    """Integers sent as strings (``"size": "10"``, as eland sends them): Elasticsearch's parser
    reads a numeric string where it wants a number, so these are read the same way."""
    for key in keys:
        v = p.get(key)
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            p[key] = int(v)


def _check_min_doc_count(p: dict[str, Any]) -> None:
    _coerce_ints(p, "min_doc_count")
    mdc = p.get("min_doc_count")
    if mdc is not None and (not isinstance(mdc, int) or mdc < 0):
        raise IllegalArgument(f"[min_doc_count] must be greater than or equal to 0. Found "
                              f"[{mdc}]")


def _check_terms(p: dict[str, Any], name: str) -> None:
    _coerce_ints(p, "size", "shard_size", "shard_min_doc_count")
    size = p.get("size", 10)
    if not isinstance(size, int) or size <= 0:
        raise IllegalArgument(f"[size] must be greater than 0. Found [{size}] in [{name}]")
    ss = p.get("shard_size")
    if ss is not None and (not isinstance(ss, int) or ss <= 0):
        raise IllegalArgument(f"[shardSize] must be greater than 0. Found [{ss}] in [{name}]")
    _check_min_doc_count(p)
    if "show_term_doc_count_error" in p:   # a boolean, or its string, as Elasticsearch reads it
        p["show_term_doc_count_error"] = parse_bool(p["show_term_doc_count_error"],
                                                    "show_term_doc_count_error")
    p["order"] = parse_order(p.get("order"), default=[("_count", "desc"), ("_key", "asc")])
    for key in ("include", "exclude"):
        v = p.get(key)
        if v is None or isinstance(v, (str, list)):
            continue
        if key == "include" and isinstance(v, dict) and set(v) == {"partition",
                                                                   "num_partitions"}:
            if not 0 <= int(v["partition"]) < int(v["num_partitions"]):
                raise IllegalArgument("[partition] must be >= 0 and < [num_partitions]")
            continue
        raise IllegalArgument(f"[{key}] must be a regular expression, an array of values or "
                              "(include only) partitions")
    if isinstance(p.get("include"), str) and isinstance(p.get("exclude"), list) \
            or isinstance(p.get("include"), list) and isinstance(p.get("exclude"), str):
        raise IllegalArgument("Cannot mix a regex with an array of values for [include] and "
                              "[exclude]")


def parse_order(value: Any, default: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``order``: an object or a list of objects of ``{path: asc|desc}``; ``_term`` is the
    deprecated name of ``_key``. A tie-breaker on the key is appended, as in Elasticsearch."""
    if value is None:
        return list(default)
    items = value if isinstance(value, list) else [value]
    out: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, dict) or len(item) != 1:
            raise ParsingError("[order] must be an object with one key, or an array of them")
        (path, direction), = item.items()
        direction = str(direction).lower()
        if direction not in ("asc", "desc"):
            raise ParsingError(f"Unknown order direction [{direction}]")
        out.append(("_key" if path in ("_term", "_time") else path, direction))
    if not any(p == "_key" for p, _ in out):
        out.append(("_key", "asc"))
    return out


def _check_date_histogram(p: dict[str, Any], name: str) -> None:
    if "interval" in p:   # deprecated: a calendar unit, or else a fixed interval
        legacy = p.pop("interval")
        if p.get("calendar_interval") is not None or p.get("fixed_interval") is not None:
            raise IllegalArgument("Cannot use [interval] with [fixed_interval] or "
                                  "[calendar_interval] configuration options.")
        p["calendar_interval" if legacy in CALENDAR_UNITS else "fixed_interval"] = legacy
    cal, fixed = p.get("calendar_interval"), p.get("fixed_interval")
    if cal is not None and fixed is not None:
        raise IllegalArgument("Cannot use [fixed_interval] with [calendar_interval] "
                              "configuration option.")
    if cal is None and fixed is None:
        raise IllegalArgument("Invalid interval specified, must be non-null and non-empty")
    if cal is not None:
        if cal not in CALENDAR_UNITS:
            raise IllegalArgument(f"The supplied interval [{cal}] could not be parsed as a "
                                  "calendar interval.")
        p["unit"] = CALENDAR_UNITS[cal]
    else:
        p["fixed_ms"] = fixed_ms(fixed)
    _check_min_doc_count(p)
    p["order"] = parse_order(p.get("order"), default=[("_key", "asc")])


def fixed_ms(value: Any) -> int:
    """A fixed interval (``90m``, ``1d``, ``30s``, ``5ms``) in milliseconds."""
    m = re.fullmatch(r"(\d+)(ms|s|m|h|d)", str(value).strip())
    if not m or int(m.group(1)) <= 0:
        raise IllegalArgument(f"failed to parse setting [date_histogram.fixedInterval] with "
                              f"value [{value}] as a time value: unit is missing or "
                              "unrecognized")
    return int(m.group(1)) * FIXED_UNITS[m.group(2)]
