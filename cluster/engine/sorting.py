"""The one module that decides how hits compare.

The global order of a search is: the sort keys in turn (``_score`` descending when no sort is
given), then the *tie-break*: index name, then the sequence number of the document's current
version (the order in which documents were last written). The tie-break travels as one int64,
``index_rank << 40 | seq``, where ``index_rank`` is the rank of the index's name among the
indices searched; it is also the value of the ``_doc`` and ``_shard_doc`` sorts. None of this
depends on the number of shards or on which shard answers.

Missing values follow Elasticsearch: numeric fields substitute the largest (or smallest) value
so that they sort last (or first) in either direction, and report that value in ``sort``;
keyword fields sort missing values last by default and report ``null``.
"""
from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any

import numpy as np

from .ip import decode as ip_decode, stored_ip
from ..errors import IllegalArgument, ParsingError
from .dates import (NanosOutOfRange, format_date, nanos_in_range, parse_date,
                    parse_date_nanos, parses_with)
from .field_types import FieldType
from .mapping import Mapping

SEQ_BITS = 40
SEQ_MASK = (1 << SEQ_BITS) - 1
I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min


@dataclass(frozen=True)
class SortField:
    """One sort key as the request gave it."""

    field: str
    order: str = "asc"
    missing: Any = "_last"
    mode: str | None = None
    unmapped_type: str | None = None
    format: str | None = None
    numeric_type: str | None = None
    nested: Any = None            # ``(path, filter query or None)`` (``nested_sort.py``)
    script: Any = None                 # ``_script`` sorts: the compiled script (script_sort.py)
    script_type: str | None = None     # ... and its type, ``number`` or ``string``
    geo: Any = None                    # ``_geo_distance`` sorts: ``geo_sort.GeoSort``

    @property
    def desc(self) -> bool:
        return self.order == "desc"


SCORE_SORT = (SortField("_score", "desc"),)


def score_only(sort: tuple[SortField, ...]) -> bool:
    """True for a sort that is just ``_score`` descending: Elasticsearch treats it as no sort at
    all, so its hits carry no ``sort`` values."""
    return len(sort) == 1 and sort[0].field == "_score" and sort[0].desc


def tiebreak(index_rank: int, seq: np.ndarray) -> np.ndarray:
    """The tie-break key: index rank in the high bits, sequence number in the low 40 bits."""
    return (np.int64(index_rank) << np.int64(SEQ_BITS)) | seq.astype(np.int64)


def parse_sort(spec: Any) -> tuple[SortField, ...]:
    """Parse the body's ``sort`` (string, object or list of them) into sort fields."""
    if spec is None:
        return ()
    items = spec if isinstance(spec, list) else [spec]
    out: list[SortField] = []
    for item in items:
        if isinstance(item, str):
            out.append(_field(item, {}))
        elif isinstance(item, dict):
            if len(item) != 1:
                raise ParsingError("[sort] must be an object with a single field, found "
                                   f"[{len(item)}] fields")
            name, opts = next(iter(item.items()))
            if name == "_script":
                from .script_sort import parse_script_sort
                out.append(SortField(**parse_script_sort(opts)))
                continue
            if name in ("_geo_distance", "_geoDistance"):
                from .geo_sort import parse_geo_sort
                out.append(SortField(**parse_geo_sort(opts)))
                continue
            if isinstance(opts, str):
                opts = {"order": opts}
            if not isinstance(opts, dict):
                raise ParsingError(f"[sort] malformed for field [{name}]")
            out.append(_field(name, opts))
        else:
            raise ParsingError("[sort] must be a string, an object or an array of them")
    return tuple(out)


_SORT_OPTS = {"order", "missing", "mode", "unmapped_type", "format", "numeric_type", "nested"}


def _field(name: str, opts: dict[str, Any]) -> SortField:
    for k in opts:
        if k not in _SORT_OPTS:
            raise ParsingError(f"[field_sort] unknown field [{k}]")
    default_order = "desc" if name == "_score" else "asc"
    order = str(opts.get("order", default_order)).lower()
    if order not in ("asc", "desc"):
        raise ParsingError("[field_sort] failed to parse field [order]",
                           caused_by={"type": "illegal_argument_exception",
                                      "reason": f"Unknown SortOrder [{opts.get('order')}]"})
    mode = opts.get("mode")
    if mode is not None and mode not in ("min", "max", "avg", "sum", "median"):
        raise IllegalArgument(f"Unknown SortMode [{mode}]")
    nested = None
    if "nested" in opts:
        from .nested_sort import parse_nested_sort
        nested = parse_nested_sort(opts["nested"])
    return SortField(field=name, order=order, missing=opts.get("missing", "_last"), mode=mode,
                     unmapped_type=opts.get("unmapped_type"), format=opts.get("format"),
                     numeric_type=opts.get("numeric_type"), nested=nested)


def parse_sort_param(value: str) -> tuple[SortField, ...]:
    """The URL form ``?sort=field:asc,other:desc``."""
    out = []
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        name, _, order = part.rpartition(":") if ":" in part else (part, "", "")
        out.append(_field(name, {"order": order} if order else {}))
    return tuple(out)


def check_sortable(sf: SortField, ft: FieldType | None, index: str) -> None:
    """Reject sorts Elasticsearch rejects (text fields; unmapped without ``unmapped_type``)."""
    if sf.field in ("_score", "_doc", "_shard_doc") or sf.script is not None \
            or sf.geo is not None:
        return
    if ft is None:
        if sf.unmapped_type is None:
            raise IllegalArgument(f"No mapping found for [{sf.field}] in order to sort on",
                                  es_type="query_shard_exception", index=index)
        return
    if ft.type == "completion":
        raise IllegalArgument(f"Fielddata is not supported on field [{sf.field}] of type "
                              "[completion]", index=index)
    if ft.kind == "geo":
        raise IllegalArgument("can't sort on geo_point field without using specific sorting "
                              "feature, like geo_distance", index=index)
    if ft.kind == "binary":
        raise IllegalArgument(f"Field [{sf.field}] of type [binary] does not support sorting",
                              index=index)
    if ft.kind == "keyword":
        _check_keyword_sort(sf, ft, index)
    elif sf.numeric_type is not None:
        _check_numeric_type(sf, ft)
    if sf.format is not None and ft.kind not in ("date", "keyword", "text"):
        _refuse_sort_format(sf, ft, index)
    if ft.kind == "text":
        raise IllegalArgument(
            f"Fielddata is disabled on [{sf.field}] in [{index}]. Text fields are not optimised "
            "for operations that require per-document field data like aggregations and sorting, "
            "so these operations are disabled by default. Please use a keyword field instead. "
            f"Alternatively, set fielddata=true on [{sf.field}] in order to load field data by "
            "uninverting the inverted index. Note that this can use significant memory.")


def _check_keyword_sort(sf: SortField, ft: FieldType, index: str) -> None:
    """What a keyword sort cannot do, in Elasticsearch's words: average, add up or take the
    median of strings, read them as numbers, or format them."""
    if sf.mode in ("avg", "sum", "median"):
        raise IllegalArgument("we only support AVG, MEDIAN and SUM on number based fields",
                              es_type="query_shard_exception", index=index)
    if sf.numeric_type is not None:
        raise IllegalArgument("[numeric_type] option cannot be set on a non-numeric field, got "
                              f"{ft.type}", es_type="query_shard_exception", index=index)
    if sf.format is not None:
        raise IllegalArgument(f"Field [{sf.field}] of type [{ft.type}] does not support custom "
                              "formats", index=index)


def _refuse_sort_format(sf: SortField, ft: FieldType, index: str) -> None:
    """A sort ``format`` prints dates only. Elasticsearch builds the field's doc value format
    and then asks for a date one: a number's ``DecimalFormat`` fails that second step, a
    boolean's or an ip's the first."""
    if ft.kind == "numeric":
        raise IllegalArgument("require a date_time formatter; got [decimal]", index=index)
    raise IllegalArgument(f"Field [{sf.field}] of type [{ft.type}] does not support custom "
                          "formats", index=index)


SORT_NUMERIC_TYPES = ("date", "date_nanos", "double", "long")


def _check_numeric_type(sf: SortField, ft: FieldType) -> None:
    """``numeric_type`` as built: ``date``/``date_nanos`` on dates, ``double`` on numbers (an
    integer field's values print as doubles), ``long`` on integers and dates. Casting doubles
    to longs, or numbers to dates, is refused naming it rather than ignored."""
    nt = sf.numeric_type
    if nt not in SORT_NUMERIC_TYPES:
        raise IllegalArgument(f"invalid value for [numeric_type], must be "
                              f"[{', '.join(SORT_NUMERIC_TYPES)}], got {nt}")
    built = {"date": ft.kind == "date", "date_nanos": ft.kind == "date",
             "double": ft.kind == "numeric",
             "long": ft.kind == "date" or (ft.kind == "numeric" and ft.is_integer)}
    if not built[str(nt)]:
        raise IllegalArgument(f"[numeric_type={nt}] on a field of type [{ft.type}] is not "
                              "supported by this server")


def column_kind(sf: SortField, ft: FieldType | None) -> str:
    """``score``, ``tiebreak``, ``int``, ``float`` or ``keyword`` — how a key's values are held."""
    if sf.field == "_score":
        return "score"
    if sf.field in ("_doc", "_shard_doc"):
        return "tiebreak"
    if sf.script is not None:
        return "float" if sf.script_type == "number" else "keyword"
    if sf.geo is not None:
        return "float"
    if ft is None:
        ut = sf.unmapped_type or "keyword"
        ft = FieldType(sf.field, ut)
    if ft.kind == "keyword":
        return "keyword"
    if ft.kind == "range":          # Elasticsearch's range fields have no sortable doc values
        raise IllegalArgument(f"Sorting is not supported on field [{sf.field}] of type "
                              f"[{ft.type}]")
    if ft.kind in ("date", "boolean") or ft.is_integer:
        return "int"
    return "float"


def missing_substitute(sf: SortField, kind: str, ft: FieldType | None) -> Any:
    """The value a document without the field sorts (and reports) as."""
    m = sf.missing
    if kind == "keyword":
        if m in ("_last", "_first", None):
            return None
        return str(m)
    last = m in ("_last", None)
    first = m == "_first"
    if last or first:
        big = (I64_MAX if kind == "int" else np.inf)
        small = (I64_MIN if kind == "int" else -np.inf)
        # "last" means after every value in the sort direction
        if sf.desc:
            return small if last else big
        return big if last else small
    return _custom_missing(m, kind)


def _custom_missing(m: Any, kind: str) -> Any:
    """A custom ``missing`` read as Lucene's comparator reads it: a JSON number as is, any
    other value's text by ``Long.parseLong`` / ``Double.parseDouble`` (so a date string or a
    boolean is a ``number_format_exception``, as in Elasticsearch)."""
    if isinstance(m, (int, float)) and not isinstance(m, bool):
        return int(m) if kind in ("int", "tiebreak") else float(m)
    text = _java_str(m)
    try:
        if kind in ("int", "tiebreak"):
            if not re.fullmatch(r"[+-]?\d{1,19}", text):
                raise ValueError(text)
            value = int(text)
            if not I64_MIN <= value <= I64_MAX:
                raise ValueError(text)
            return value
        return float(text)
    except ValueError:
        raise IllegalArgument(f"For input string: \"{text}\"",
                              es_type="number_format_exception") from None


def coerce_value(value: Any, kind: str, ft: FieldType | None) -> Any:
    """A user-given sort value (``missing``, ``search_after``) in the column's type."""
    if value is None:
        return None
    try:
        if kind in ("int", "tiebreak"):
            if ft is not None and ft.kind == "date" and isinstance(value, str):
                return parse_date(value, ft)
            if isinstance(value, bool):
                return int(value)
            if isinstance(value, str) and ft is not None and ft.kind == "boolean":
                return int(value == "true")
            f = float(value) if isinstance(value, str) else value
            return int(f)
        if kind in ("float", "score"):
            return float(value)
        return stored_ip(value) if ft is not None and ft.type == "ip" else str(value)
    except (TypeError, ValueError, OverflowError):
        raise IllegalArgument(f"Failed to parse search_after value [{value}]") from None


def ascending_keys(sort: tuple[SortField, ...], kinds: list[str], columns: list[np.ndarray],
                   missing: list[np.ndarray | None], ties: np.ndarray,
                   ranks: list[np.ndarray | None] | None = None) -> list[np.ndarray]:
    """The arrays whose lexicographic ascending order is the search's order (most significant
    first), ending with the tie-break. Keyword columns become ranks among the given values.

    ``ranks`` (optional, per key) are precomputed integer ranks of a keyword column's present
    values, in the same order as the strings (a shard's ordinals): they replace the O(m log m)
    string sort of ``np.unique`` and give the identical order.
    """
    keys: list[np.ndarray] = []
    for j, (sf, kind, col, miss) in enumerate(zip(sort, kinds, columns, missing)):
        if kind == "keyword":
            miss_arr = np.zeros(len(col), dtype=bool) if miss is None else miss
            flag = (~miss_arr if sf.missing == "_first" else miss_arr).astype(np.int8)
            given = ranks[j] if ranks is not None else None
            if given is not None:
                rank = np.where(miss_arr, -1, given)
            elif len(col):
                vals = np.where(miss_arr, "", col).astype(object)
                _, rank = np.unique(vals, return_inverse=True)
            else:
                rank = np.zeros(0, dtype=np.int64)
            rank = rank.astype(np.int64)
            keys.append(flag)
            keys.append(-rank if sf.desc else rank)
        elif kind == "tiebreak":
            keys.append(-col if sf.desc else col)
        else:
            arr = col.astype(np.float64) if kind in ("score", "float") else col.astype(np.int64)
            if sf.desc:
                keys.append(-arr if kind != "int" else _neg_int(arr))
            else:
                keys.append(arr)
    keys.append(ties)
    return keys


def smallest_rows(prim: np.ndarray, k: int) -> np.ndarray:
    """Rows (ascending) whose value is at most the ``k``-th smallest, every tie at the cut
    included. ``1 <= k <= len(prim)``.

    A partition of all m rows costs ~0.4 ms at m = 56k (more with many ties), so a strided
    sample first guesses a value a little above the k-th; the exact partition then runs on the
    few rows at or below the guess. A guess that keeps fewer than ``k`` rows (a skewed sample)
    falls back to every row, so the answer never depends on the sample. O(m).
    """
    m = len(prim)
    if m < 4096 or m <= 16 * k:
        cand = np.arange(m)
    else:
        sample = prim[::m // 2048]
        r = min(len(sample) - 1, 2 * k * len(sample) // m + 16)
        cand = np.flatnonzero(prim <= np.partition(sample, r)[r])
        if len(cand) < k:
            cand = np.arange(m)
    sub = prim[cand]
    return cand[sub <= np.partition(sub, k - 1)[k - 1]]


def _neg_int(arr: np.ndarray) -> np.ndarray:
    """Order-reversing map on int64 that does not overflow (``~x`` == ``-x - 1``)."""
    return ~arr


def order(keys: list[np.ndarray]) -> np.ndarray:
    """Indices that put rows in the search's order. O(m log m)."""
    if not keys or len(keys[-1]) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.lexsort(keys[::-1])


def rank_key(sorted_values: np.ndarray, value: str) -> int:
    """A keyword value in the doubled rank space of ``sorted_values`` (distinct, ascending):
    ``2·i`` when it is ``sorted_values[i]``, else ``2·i − 1`` where ``i`` is its insertion
    point — so integer comparisons against ``2·rank`` columns equal string comparisons."""
    i = int(np.searchsorted(sorted_values, value, side="left")) if len(sorted_values) else 0
    exact = i < len(sorted_values) and sorted_values[i] == value
    return 2 * i if exact else 2 * i - 1


def compare_rows(sort: tuple[SortField, ...], kinds: list[str], columns: list[np.ndarray],
                 missing: list[np.ndarray | None], key: list[Any],
                 ranks: list[np.ndarray | None] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(after, equal)`` per row against one key (values in the columns' space). O(rows).

    ``ranks`` (optional, per key): a keyword column as ``2·rank`` integers, with the key's
    value for it already mapped by :func:`rank_key` — integer instead of string comparisons.
    """
    n = len(columns[0]) if columns else 0
    gt = np.zeros(n, dtype=bool)
    eq = np.ones(n, dtype=bool)
    for j, (sf, kind, col, miss, av) in enumerate(zip(sort, kinds, columns, missing, key)):
        if kind == "keyword":
            miss_arr = np.zeros(n, dtype=bool) if miss is None else miss
            a_missing = av is None
            missing_last = sf.missing != "_first"
            if a_missing:
                # rows that are missing tie; present rows are after only if missing sorts first
                row_gt = ~miss_arr if not missing_last else np.zeros(n, dtype=bool)
                row_eq = miss_arr
            else:
                given = ranks[j] if ranks is not None and j < len(ranks) else None
                vals = given if given is not None else np.where(miss_arr, "", col).astype(object)
                cmp_gt = (vals < av) if sf.desc else (vals > av)
                cmp_eq = vals == av
                row_gt = np.where(miss_arr, missing_last, cmp_gt).astype(bool)
                row_eq = np.where(miss_arr, False, cmp_eq).astype(bool)
        else:
            if kind in ("float", "score"):
                arr = col.astype(np.float64)
                a = float(np.float32(av)) if kind == "score" else float(av)
                if kind == "score":
                    arr = col.astype(np.float32).astype(np.float64)
            else:
                arr = col.astype(np.int64)
                a = int(av)
            row_gt = (arr < a) if sf.desc else (arr > a)
            row_eq = arr == a
        gt |= eq & row_gt
        eq &= row_eq
    return gt, eq


def sort_date_type(sf: SortField, ft: FieldType | None) -> FieldType | None:
    """The field type a date sort key is expressed in: ``numeric_type`` (``date`` or
    ``date_nanos``) lets indices with millisecond and nanosecond dates sort together."""
    if ft is None or ft.kind != "date" or sf.numeric_type not in ("date", "date_nanos") \
            or ft.type == sf.numeric_type:
        return ft
    return FieldType(ft.path, sf.numeric_type, format=ft.format)


def scale_date(values: np.ndarray, sf: SortField, ft: FieldType | None) -> np.ndarray:
    """A date column in the unit of the sort's ``numeric_type`` (millis <-> nanos)."""
    target = sort_date_type(sf, ft)
    if target is ft or ft is None or target is None:
        return values
    if target.type == "date_nanos":
        return values.astype(np.int64) * np.int64(1_000_000)
    return values.astype(np.int64) // np.int64(1_000_000)


def sort_value_out(sf: SortField, kind: str, value: Any, ft: FieldType | None) -> Any:
    """A key's value as Elasticsearch prints it in a hit's ``sort`` array."""
    ft = sort_date_type(sf, ft)
    if value is None:
        return None
    if kind == "score":
        return float(value)
    if kind == "int":
        v = int(value)
        if ft is not None and ft.type == "unsigned_long":
            return v + (1 << 63)      # the key of sort_columns.unsigned_sort_key, undone
        if sf.format and ft is not None and ft.kind == "date" and v not in (I64_MAX, I64_MIN):
            return format_date(v, ft, sf.format)
        if sf.numeric_type == "double" and ft is not None and ft.kind == "numeric":
            return float(v)
        return v
    if kind == "float":
        v = float(value)
        if np.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if kind == "tiebreak":
        return int(value)
    if ft is not None and ft.type == "ip" and isinstance(value, str):
        return ip_decode(value)
    return value


def field_type_for_sort(sf: SortField, mapping: Mapping) -> FieldType | None:
    if sf.field in ("_score", "_doc", "_shard_doc") or sf.script is not None \
            or sf.geo is not None:
        return None
    return mapping.get(sf.field)


def _java_str(value: Any) -> str:
    """A JSON scalar as Java's ``toString`` spells it (what Elasticsearch parses search_after
    strings from)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _after_parse_error(sf: SortField, value: Any) -> IllegalArgument:
    return IllegalArgument(f"Failed to parse search_after value for field [{sf.field}].",
                           caused_by={"type": "number_format_exception",
                                      "reason": f"For input string: \"{_java_str(value)}\""})


def _matches_date_format(value: str, fmt: str) -> bool:
    """Whether a search_after string is written in the sort's own ``format`` (Elasticsearch
    parses it with that formatter only)."""
    return parses_with(value.strip(), fmt)


def coerce_after(sort: tuple[SortField, ...], kinds: list[str], fts: list[FieldType | None],
                 after: list[Any]) -> list[Any]:
    """``search_after`` values in each key's value space, with Elasticsearch's checks.

    Mirrors ``SearchAfterBuilder.buildFieldDoc``: a sort on nothing but ``_score`` (the default)
    is refused, the counts must agree, numbers are truncated like Java's ``longValue``, strings
    are parsed (dates with the sort's ``format``, else the mapping's). ``None`` stays ``None``
    (a missing keyword echoed back); for a numeric key it is refused rather than failing later.
    """
    if not sort or (len(sort) == 1 and sort[0].field == "_score" and sort[0].desc):
        raise IllegalArgument("Sort must contain at least one field.")
    if len(after) != len(sort):
        raise IllegalArgument(f"search_after has {len(after)} value(s) but sort has "
                              f"{len(sort)}.")
    out: list[Any] = []
    for sf, kind, ft, v in zip(sort, kinds, fts, after):
        ft = sort_date_type(sf, ft)
        if kind == "keyword" and ft is not None and ft.type == "ip" and v is not None:
            try:
                out.append(stored_ip(v))
            except ValueError:
                raise _after_parse_error(sf, v) from None
            continue
        if kind == "keyword":
            out.append(None if v is None else _java_str(v))
            continue
        if v is None:
            raise _after_parse_error(sf, v)
        if kind in ("score", "float"):
            if isinstance(v, bool):
                raise _after_parse_error(sf, v)
            try:
                out.append(float(v))
            except (TypeError, ValueError):
                raise _after_parse_error(sf, v) from None
            continue
        # int, tiebreak: longs (dates, booleans and numbers stored as int64)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            shift = 1 << 63 if ft is not None and ft.type == "unsigned_long" else 0
            out.append(int(v) - shift)
            continue
        if ft is not None and ft.kind == "boolean":
            s = _java_str(v)
            if s in ("true", "false"):
                out.append(int(s == "true"))
                continue
            raise _after_parse_error(sf, v)
        if ft is not None and ft.kind == "date" and isinstance(v, str):
            fmt = sf.format or ft.format
            try:
                if sf.format and not _matches_date_format(v, sf.format):
                    raise ValueError("not in the sort's format")
                nanos = parse_date_nanos(v, fmt)
            except ValueError:
                fmt_name = fmt or "strict_date_optional_time||epoch_millis"
                raise ParsingError(f"failed to parse date field [{v}] with format [{fmt_name}]",
                                   es_type="parse_exception") from None
            if ft.type == "date_nanos":
                try:
                    nanos = nanos_in_range(nanos)
                except NanosOutOfRange as e:
                    raise IllegalArgument(str(e)) from None
            out.append(nanos if ft.type == "date_nanos" else nanos // 1_000_000)
            continue
        try:
            f = float(_java_str(v))
            if f != f or f in (float("inf"), float("-inf")):
                raise ValueError("not finite")
            out.append(int(np.floor(f)))
        except (TypeError, ValueError):
            raise _after_parse_error(sf, v) from None
    return out
