"""``_analyze``: the tokens an analyzer (or an index field's analyzer) makes of some text,
with positions, offsets and types, as Elasticsearch shows them.

The built-in analyzers served are ``standard``, ``simple``, ``whitespace`` and ``keyword``
(``engine/analysis.py``); ``field`` picks the field's analyzer from the index mapping (a
``keyword`` field: the whole value). Custom chains (``tokenizer``, ``filter``, ``char_filter``,
``normalizer``) and ``explain`` are not built: refused by name. Several texts continue the
positions with a gap of 100 and the offsets with a gap of 1, as Lucene's analyzers do.
"""
from __future__ import annotations

from typing import Any

from ..engine.analysis import ANALYZERS, token_spans
from ..errors import IllegalArgument

_KEYS = {"analyzer", "text", "field", "tokenizer", "filter", "char_filter", "normalizer",
         "explain", "attributes"}
_REFUSED = ("tokenizer", "filter", "char_filter", "normalizer", "explain", "attributes")
POSITION_GAP, OFFSET_GAP = 100, 1
MAX_TEXT = 1_000_000     # index.analyze.max_token_count is 10,000 tokens; bytes bound here


def _analyzer_name(body: dict[str, Any], mapping: Any) -> str:
    if body.get("analyzer") is not None:
        name = str(body["analyzer"])
        if name not in ANALYZERS:
            raise IllegalArgument(f"failed to find global analyzer [{name}]")
        return name
    field = body.get("field")
    if field is None or mapping is None:
        return "standard"
    ft = mapping.fields.get(str(field))
    if ft is None:
        return "standard"
    if ft.type == "keyword":
        return "keyword"
    if ft.type not in ("text", "match_only_text"):
        raise IllegalArgument(f"Can't process field [{field}], Analysis requests are only "
                              "supported on tokenized fields")
    return ft.analyzer if ft.analyzer in ANALYZERS else "standard"


def analyze(body: Any, mapping: Any = None) -> dict[str, Any]:
    """The body of ``POST /{index}/_analyze``."""
    if not isinstance(body, dict):
        raise IllegalArgument("request body or source parameter is required",
                              es_type="parse_exception")
    for key in body:
        if key not in _KEYS:
            raise IllegalArgument(f"Unknown parameter [{key}] in request body or parameter "
                                  "is of the wrong type[START_OBJECT] ",
                                  es_type="x_content_parse_exception")
        if key in _REFUSED and body[key] not in (None, False, []):
            raise IllegalArgument(f"[{key}] is not supported by _analyze here")
    texts = body.get("text")
    texts = [texts] if isinstance(texts, str) else texts
    if not texts or not all(isinstance(t, str) for t in texts):
        raise IllegalArgument("Validation Failed: 1: text is missing;",
                              es_type="action_request_validation_exception")
    if sum(len(t) for t in texts) > MAX_TEXT:
        raise IllegalArgument(f"The text to analyze is longer than {MAX_TEXT} characters")
    name = _analyzer_name(body, mapping)
    tokens, pos, off = [], -1, 0
    for i, text in enumerate(texts):
        if i:
            pos += POSITION_GAP
            off += OFFSET_GAP
        for term, start, end, kind in token_spans(name, text):
            pos += 1
            tokens.append({"token": term, "start_offset": off + start, "end_offset": off + end,
                           "type": kind, "position": pos})
        off += len(text)
    return {"tokens": tokens}
