"""Field types: what a mapped field is, and how the engine stores each type.

``FieldType`` is one indexed leaf (or multi-field such as ``title.keyword``); ``kind`` groups the
many Elasticsearch types into the five the engine stores differently.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

NUMERIC_TYPES = {"long", "integer", "short", "byte", "double", "float", "half_float",
                 "scaled_float", "unsigned_long"}
INTEGER_TYPES = {"long", "integer", "short", "byte", "unsigned_long"}
INT_RANGES = {"long": (-(2**63), 2**63 - 1), "integer": (-(2**31), 2**31 - 1),
              "short": (-(2**15), 2**15 - 1), "byte": (-128, 127),
              "unsigned_long": (0, 2**64 - 1)}
LONG_MIN, LONG_MAX = INT_RANGES["long"]
DATE_TYPES = {"date", "date_nanos"}
KEYWORD_TYPES = {"keyword", "constant_keyword", "wildcard", "ip", "version"}
TEXT_TYPES = {"text", "match_only_text"}
OBJECT_TYPES = {"object", "nested", "flattened"}
RANGE_TYPES = {"integer_range", "long_range", "float_range", "double_range", "date_range"}
SUPPORTED_TYPES = (NUMERIC_TYPES | DATE_TYPES | KEYWORD_TYPES | TEXT_TYPES | OBJECT_TYPES
                   | RANGE_TYPES
                   | {"boolean", "dense_vector", "sparse_vector", "rank_features", "binary",
                      "geo_point", "alias", "completion"})


@dataclass(frozen=True)
class FieldType:
    """One indexed field (a leaf, or a multi-field like ``title.keyword``)."""

    path: str
    type: str
    analyzer: str = "standard"
    search_analyzer: str | None = None
    ignore_above: int | None = None
    index: bool = True
    doc_values: bool = True
    format: str | None = None
    null_value: Any = None
    scaling_factor: float | None = None     # scaled_float: values are round(v * factor) / factor
    ignore_malformed: bool | None = None    # None: the index's index.mapping.ignore_malformed
    ignore_z_value: bool = True             # geo_point: a third coordinate is allowed
    contexts: tuple[str, ...] = ()          # completion: its category contexts' names

    @functools.cached_property
    def kind(self) -> str:
        """How the engine stores it: ``text``, ``keyword``, ``numeric``, ``date``, ``boolean``.
        (Cached: read once per value of every document parsed.)"""
        if self.type in TEXT_TYPES:
            return "text"
        if self.type in KEYWORD_TYPES:
            return "keyword"
        if self.type in NUMERIC_TYPES:
            return "numeric"
        if self.type in DATE_TYPES:
            return "date"
        if self.type == "boolean":
            return "boolean"
        if self.type in RANGE_TYPES:
            return "range"       # bounds pairs in a numeric column (range_values.py)
        if self.type == "geo_point":
            return "geo"         # two float64 columns (geo.py)
        if self.type == "binary":
            return "binary"      # base64 text in a keyword column, never searched (binary.py)
        return "other"

    @property
    def is_integer(self) -> bool:
        return self.type in INTEGER_TYPES or self.type in DATE_TYPES or self.type in (
            "integer_range", "long_range", "date_range")


def field_type(path: str, ftype: str, spec: dict[str, Any]) -> FieldType:
    """The field type a mapping's ``spec`` of ``path`` declares."""
    return FieldType(path=path, type=ftype, analyzer=spec.get("analyzer", "standard"),
                     search_analyzer=spec.get("search_analyzer"),
                     ignore_above=spec.get("ignore_above"), index=spec.get("index", True),
                     doc_values=spec.get("doc_values", True), format=spec.get("format"),
                     null_value=spec.get("null_value"),
                     scaling_factor=spec.get("scaling_factor"),
                     ignore_malformed=_flag(spec.get("ignore_malformed")),
                     ignore_z_value=spec.get("ignore_z_value", True),
                     contexts=_context_names(spec.get("contexts")) if ftype == "completion"
                     else ())


def _context_names(contexts: Any) -> tuple[str, ...]:
    """A completion field's context names (validated by ``completion_contexts.py``)."""
    items = contexts if isinstance(contexts, list) else [contexts] if contexts else []
    return tuple(c["name"] for c in items if isinstance(c, dict) and "name" in c)


def _flag(value: Any) -> bool | None:
    """A mapping boolean (``true``, ``"true"``), None when not set."""
    return None if value is None else value is True or value == "true"


# types whose malformed values ``ignore_malformed`` may skip (Elasticsearch also has it on ip
# and geo types, which are not checked here)
IGNORE_MALFORMED_TYPES = NUMERIC_TYPES | DATE_TYPES | {"geo_point"}
# ``_ignored``: the fields of a document whose values ignore_malformed skipped (a keyword)
IGNORED_FIELD = FieldType(path="_ignored", type="keyword")

# fields Elasticsearch reserves at the root of a document
METADATA_FIELDS = {"_id", "_index", "_source", "_routing", "_version", "_seq_no",
                   "_primary_term", "_field_names", "_ignored", "_tier", "_doc_count"}
