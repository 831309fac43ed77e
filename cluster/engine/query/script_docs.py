"""``doc['f']`` for scripts that run inside a shard (``script_score``, ``_script`` sort), read
from the segment's columns: each field's column is located once per segment, then a document's
values are a slice of it (no ``_source`` parsing, no per-document mapping lookups).

The values are typed as the mapping types them (``long`` as a Java long, ``integer`` as an int,
``double`` as a double, booleans, keywords as Strings), as ``script_fields`` does from
``_source``. Text fields have no doc values (Elasticsearch's fielddata error); dates are
refused as in ``script_fields`` (Painless gives ``ZonedDateTime`` objects, not modelled).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..mapping import Mapping
from ..script import DocField
from ..script.errors import ScriptFault
from ..script.lexer import Long
from ..segment import KeywordField, NumericField, Segment

FIELDDATA_TEXT = ("Text fields are not optimised for operations that require per-document "
                  "field data like aggregations and sorting, so these operations are disabled "
                  "by default. Please use a keyword field instead. Alternatively, set "
                  "fielddata=true on [{}] in order to load field data by uninverting the "
                  "inverted index. Note that this can use significant memory.")


class _Column:
    """One field's values in one segment, sliced per document."""

    def __init__(self, name: str, type_: str, fd: Any) -> None:
        self.name, self.type, self.fd = name, type_, fd
        if isinstance(fd, NumericField):
            self.starts = np.searchsorted(fd.value_docs, np.arange(len(fd.present) + 1))

    def values(self, doc: int) -> list[Any]:
        fd = self.fd
        if isinstance(fd, NumericField):
            raw = fd.values[self.starts[doc]:self.starts[doc + 1]].tolist()
            return sorted(_typed(v, self.type) for v in raw)
        if isinstance(fd, KeywordField):
            if fd.min_ord[doc] < 0:
                return []
            if fd.value_count[doc] > 2:
                raise ScriptFault("illegal_argument_exception", f"doc['{self.name}'] holds more "
                                  "than two keywords in this document: this server's scripts "
                                  "read at most two values of a keyword field", 0, 0)
            ords = sorted({int(fd.min_ord[doc]), int(fd.max_ord[doc])})
            return [fd.postings.term_list[o] for o in ords]
        return []


def _typed(v: Any, type_: str) -> Any:
    if type_ in ("long", "unsigned_long"):
        return Long(int(v))
    if type_ in ("integer", "short", "byte"):
        return int(v)
    if type_ == "boolean":
        return bool(v)
    return float(v)


class SegmentDocs:
    """The ``doc`` of every document of one segment: columns opened on first use."""

    def __init__(self, seg: Segment, mapping: Mapping) -> None:
        self.seg, self.mapping = seg, mapping
        self.columns: dict[str, _Column] = {}

    def column(self, name: Any) -> _Column:
        col = self.columns.get(name)
        if col is None:
            col = self.columns[name] = self._open(name)
        return col

    def _open(self, name: Any) -> _Column:
        ft = doc_values_field(self.mapping, name)
        return _Column(name, ft.type, self.seg.fields.get(ft.path))   # an alias: its target

    def doc(self, d: int) -> "DocView":
        return DocView(self, d)


class DocView(dict):  # type: ignore[type-arg]
    """``doc`` for one document: ``doc['f']`` is a :class:`DocField` built on first use."""

    def __init__(self, docs: SegmentDocs, d: int) -> None:
        super().__init__()
        self.docs, self.d = docs, d

    def get(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            col = self.docs.column(key)
            self[key] = DocField(key, col.values(self.d))
        return dict.get(self, key)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str)
                                                and self.docs.mapping.get(key) is not None)


def doc_values_field(mapping: Any, name: Any) -> Any:
    """The field ``doc['name']`` reads, or Painless's error for one it cannot read: unmapped,
    text (no fielddata), or a type whose doc values the script subset does not offer."""
    ft = mapping.get(name) if isinstance(name, str) else None
    if ft is None:
        raise ScriptFault("illegal_argument_exception", f"No field found for [{name}] in "
                          "mapping", 0, 0)
    if ft.kind == "text":
        raise ScriptFault("illegal_argument_exception", FIELDDATA_TEXT.format(name), 0, 0)
    if ft.kind not in ("keyword", "numeric", "boolean"):
        raise ScriptFault("illegal_argument_exception", f"doc values of [{ft.type}] fields "
                          "are not supported by this server's script subset", 0, 0)
    return ft
