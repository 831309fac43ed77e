"""What every query parser shares: values read with Elasticsearch's errors, and the
``{field: value}`` / ``{field: {option: ...}}`` shape of single-field queries.

Error wording follows Elasticsearch 8: hand-written parsers (match, term, range, ...) raise
``parsing_exception``; ``bool`` is an ObjectParser there, so its errors are
``x_content_parse_exception`` and an error inside one of its clauses is wrapped in
"[bool] failed to parse field [must]". Elasticsearch prefixes these reasons with a
``[line:col]`` location; we have no token positions, so reasons start at the bracketed name.
"""
from __future__ import annotations

from typing import Any

from ...errors import IllegalArgument, ParsingError

MAX_CLAUSE_COUNT = 1024       # indices.query.bool.max_clause_count
MAX_NESTED_DEPTH = 30         # indices.query.bool.max_nested_depth


def _levenshtein_similarity(a: str, b: str) -> float:
    """Lucene's ``LevenshteinDistance.getDistance``: 1 - edits / max(len)."""
    if not a and not b:
        return 1.0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return 1.0 - prev[-1] / max(len(a), len(b))


def did_you_mean(name: str, candidates: Any) -> str:
    """Elasticsearch's ``SuggestingErrorOnUnknown.suggest``: ``" did you mean [x]?"`` or ``""``."""
    scored = [(_levenshtein_similarity(name, c), c) for c in candidates]
    keys = [c for d, c in sorted(((d, c) for d, c in scored if d > 0.5),
                                 key=lambda t: (-t[0], t[1]))]
    if not keys:
        return ""
    if len(keys) == 1:
        return f" did you mean [{keys[0]}]?"
    return " did you mean any of [" + ", ".join(keys) + "]?"


def token_name(value: Any) -> str:
    """The JSON token Elasticsearch's parser would name for ``value``."""
    if isinstance(value, dict):
        return "START_OBJECT"
    if isinstance(value, list):
        return "START_ARRAY"
    if isinstance(value, str):
        return "VALUE_STRING"
    if isinstance(value, bool):
        return "VALUE_BOOLEAN"
    if value is None:
        return "VALUE_NULL"
    return "VALUE_NUMBER"


def is_value(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParsingError(f"[{what}] failed to parse: expected a number but found [{value}]")
    try:
        return float(value)
    except ValueError:
        raise ParsingError(f"[{what}] failed to parse: expected a number but found "
                           f"[{value}]") from None


def float_option(name: str, key: str, value: Any) -> float:
    """``parser.floatValue()`` of a hand-written query parser (numbers or numeric strings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParsingError(f"[{name}] failed to parse field [{key}]: expected a number, found "
                           f"[{token_name(value)}]")
    try:
        return float(value)
    except ValueError:
        raise ParsingError(f"[{name}] failed to parse field [{key}]",
                           caused_by={"type": "number_format_exception",
                                      "reason": f"For input string: \"{value}\""}) from None


def int_option(name: str, key: str, value: Any) -> int:
    f = float_option(name, key, value)
    if isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
        raise ParsingError(f"[{name}] failed to parse field [{key}]",
                           caused_by={"type": "number_format_exception",
                                      "reason": f"For input string: \"{value}\""})
    try:
        return int(f)
    except (OverflowError, ValueError):   # inf or nan: no integer
        raise ParsingError(f"[{name}] failed to parse field [{key}]") from None


def bool_option(name: str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ParsingError(f"[{name}] failed to parse field [{key}]",
                       caused_by={"type": "illegal_argument_exception",
                                  "reason": f"Failed to parse value [{value}] as only [true] or "
                                            "[false] are allowed."})


def text_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ParseState:
    """Parse state: how deep the current query object is nested, and the named queries
    (``_name``) met so far."""

    def __init__(self) -> None:
        self.depth = 0
        self.named: dict[str, Any] = {}


def multiple_fields(name: str, first: str | None, second: str) -> None:
    if first is not None:
        raise ParsingError(f"[{name}] query doesn't support multiple fields, found [{first}] "
                           f"and [{second}]")


def field_query(name: str, body: dict[str, Any], value_keys: tuple[str, ...],
                allowed: set[str], *, short_form: bool = True,
                array_message: str | None = None) -> tuple[str | None, dict[str, Any]]:
    """The ``{field: value}`` / ``{field: {option: ...}}`` shape shared by single-field queries.

    Returns ``(field, options)``; the short form's value is stored under ``value_keys[0]``.
    Mirrors the token loop of Elasticsearch's hand-written parsers.
    """
    field_name: str | None = None
    opts: dict[str, Any] = {}
    for key, spec in body.items():
        if isinstance(spec, dict):
            multiple_fields(name, field_name, key)
            field_name = key
            for k, v in spec.items():
                if k not in allowed and k not in ("boost", "_name"):
                    raise ParsingError(f"[{name}] query does not support [{k}]")
                if isinstance(v, dict) or (isinstance(v, list) and k in value_keys
                                           and array_message is None):
                    raise ParsingError(f"[{name}] unknown token [{token_name(v)}] after [{k}]")
                if isinstance(v, list) and k in value_keys:
                    raise ParsingError(array_message or "")
                opts[k] = v
        elif isinstance(spec, list):
            raise ParsingError(f"[{name}] query does not support array of values"
                               if name != "match" else
                               f"[{name}] unknown token [START_ARRAY] after [{key}]")
        else:
            if not short_form:
                raise ParsingError(f"[{name}] query does not support [{key}]")
            multiple_fields(name, field_name, key)
            field_name = key
            opts = {value_keys[0]: spec}
    return field_name, opts


def require_field(field_name: str | None) -> str:
    if not field_name:
        raise IllegalArgument("field name is null or empty")
    return field_name
