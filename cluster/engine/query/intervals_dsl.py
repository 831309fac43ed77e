"""The ``intervals`` query's JSON -> rule tree (Elasticsearch's ``IntervalQueryBuilder`` and
``IntervalsSourceProvider``): pure parsing, no data access.

A rule says *which* intervals of a field it wants (``match``, ``prefix``, ``wildcard``,
``regexp``, ``fuzzy``, ``all_of``, ``any_of``) and may narrow them by another rule (``filter``).
What a rule means for a field (analysis, term expansion) is decided in ``intervals.py``.
Both Elasticsearch's ``ordered: true|false`` and OpenSearch's
``mode: ordered|unordered|unordered_no_overlap`` are read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import IllegalArgument, ParsingError, XContentParseError
from .fuzzy import fuzzy_edits
from .nodes import Query
from .parse_term_level import REGEXP_FLAGS
from .parse_helpers import (MAX_NESTED_DEPTH, ParseState, bool_option, float_option, int_option,
                            token_name)

RULES = ("match", "any_of", "all_of", "prefix", "wildcard", "regexp", "fuzzy")
FILTERS = ("containing", "not_containing", "contained_by", "not_contained_by", "overlapping",
           "not_overlapping", "before", "after")
MODES = ("ordered", "unordered", "unordered_no_overlap")


@dataclass(frozen=True)
class Rule:
    """One interval rule; ``filter`` is ``(kind, rule)`` or None."""

    filter: tuple[str, "Rule"] | None = None


@dataclass(frozen=True)
class MatchRule(Rule):
    query: str = ""
    max_gaps: int = -1
    mode: str = "unordered"
    analyzer: str | None = None
    use_field: str | None = None


@dataclass(frozen=True)
class CombineRule(Rule):
    """``all_of`` (``any_of=False``) or ``any_of`` over sub-rules."""

    rules: tuple[Rule, ...] = ()
    any_of: bool = False
    max_gaps: int = -1
    mode: str = "unordered"


@dataclass(frozen=True)
class TermsRule(Rule):
    """``prefix``, ``wildcard``, ``regexp`` or ``fuzzy``: the terms of the field's dictionary
    that the pattern accepts, as one source (at most ``MAX_EXPANSIONS`` of them)."""

    kind: str = "prefix"
    pattern: str = ""
    analyzer: str | None = None
    use_field: str | None = None
    case_insensitive: bool = False
    flags: str = "ALL"
    fuzziness: Any = "AUTO"
    prefix_length: int = 0
    transpositions: bool = True


@dataclass(frozen=True)
class Intervals(Query):
    field: str = ""
    rule: Rule = MatchRule()


def parse_intervals(body: dict[str, Any], st: ParseState) -> Query:
    """``{"intervals": {field: {rule: {...}, "boost": b}}}``."""
    if len(body) != 1:
        if not body:
            raise ParsingError("Expected [FIELD_NAME] but got [END_OBJECT]")
        raise ParsingError("[intervals] query doesn't support multiple fields, found "
                           f"[{list(body)[0]}] and [{list(body)[1]}]")
    field, spec = next(iter(body.items()))
    if not isinstance(spec, dict):
        raise ParsingError(f"Expected [START_OBJECT] but got [{token_name(spec)}]")
    boost, rule = 1.0, None
    for key, value in spec.items():
        if key == "boost":
            boost = float_option("intervals", key, value)
        elif key == "_name":
            continue
        else:
            if rule is not None:
                raise ParsingError(f"Only one interval rule can be specified, found "
                                   f"[{rule[0]}] and [{key}]")
            rule = (key, value)
    if rule is None:
        raise ParsingError("Missing intervals from interval query definition")
    return Intervals(field=field, rule=_rule(*rule), boost=boost)


def _rule(name: str, body: Any, depth: int = 0) -> Rule:
    """One rule; nesting (sub-rules and filters) is bounded as queries are."""
    if depth > MAX_NESTED_DEPTH:
        raise IllegalArgument("The nested depth of the query exceeds the maximum nested depth "
                              "for queries set in [indices.query.bool.max_nested_depth]")
    if name not in RULES:
        raise ParsingError(f"Unknown interval type [{name}], expecting one of "
                           "[match, any_of, all_of, prefix, wildcard, regexp, fuzzy]")
    if not isinstance(body, dict):
        raise ParsingError(f"Expected [START_OBJECT] but got [{token_name(body)}]")
    if name == "match":
        return _match(body, depth)
    if name in ("all_of", "any_of"):
        return _combine(name, body, depth)
    return _terms(name, body)


def _check_keys(name: str, body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for k in body:
        if k not in allowed:
            raise XContentParseError(f"[{name}] unknown field [{k}]")


def _mode(name: str, body: dict[str, Any]) -> str:
    if "mode" in body:
        mode = str(body["mode"]).lower()
        if mode not in MODES:
            raise IllegalArgument(f"no mode can be parsed from ordinal {body['mode']}")
        return mode
    if "ordered" in body:
        return "ordered" if bool_option(name, "ordered", body["ordered"]) else "unordered"
    return "unordered"


def _max_gaps(name: str, body: dict[str, Any]) -> int:
    return int_option(name, "max_gaps", body.get("max_gaps", -1))


def _opt_str(name: str, body: dict[str, Any], key: str) -> str | None:
    v = body.get(key)
    if v is not None and not isinstance(v, str):
        raise XContentParseError(f"[{name}] {key} doesn't support values of type: "
                                 f"{token_name(v)}")
    return v


def _match(body: dict[str, Any], depth: int) -> Rule:
    _check_keys("match", body, ("query", "max_gaps", "ordered", "mode", "analyzer", "filter",
                                "use_field"))
    if not isinstance(body.get("query"), str):
        raise XContentParseError("[match] failed to parse field [query]" if "query" in body
                                 else "Required [query]")
    return MatchRule(query=body["query"], max_gaps=_max_gaps("match", body),
                     mode=_mode("match", body), analyzer=_opt_str("match", body, "analyzer"),
                     use_field=_opt_str("match", body, "use_field"),
                     filter=_filter(body.get("filter"), depth))


def _combine(name: str, body: dict[str, Any], depth: int) -> Rule:
    allowed = ("intervals", "filter") if name == "any_of" else \
        ("intervals", "max_gaps", "ordered", "mode", "filter")
    _check_keys(name, body, allowed)
    items = body.get("intervals")
    if not isinstance(items, list) or not items:
        raise XContentParseError("Required [intervals]" if items is None
                                 else f"[{name}] failed to parse field [intervals]")
    rules = []
    for item in items:
        if not isinstance(item, dict) or len(item) != 1:
            raise XContentParseError(f"[{name}] failed to parse field [intervals]")
        rules.append(_rule(*next(iter(item.items())), depth + 1))
    if name == "any_of":
        return CombineRule(rules=tuple(rules), any_of=True,
                           filter=_filter(body.get("filter"), depth))
    return CombineRule(rules=tuple(rules), max_gaps=_max_gaps(name, body),
                       mode=_mode(name, body), filter=_filter(body.get("filter"), depth))


_TERMS_KEYS = {
    "prefix": ("prefix", "analyzer", "use_field"),
    "wildcard": ("pattern", "analyzer", "use_field"),
    "regexp": ("pattern", "flags", "case_insensitive", "use_field"),
    "fuzzy": ("term", "fuzziness", "prefix_length", "transpositions", "analyzer", "use_field"),
}


def _terms(name: str, body: dict[str, Any]) -> Rule:
    keys = _TERMS_KEYS[name]
    _check_keys(name, body, keys)
    value = body.get(keys[0])
    if not isinstance(value, str):
        raise XContentParseError(f"Required [{keys[0]}]" if value is None
                                 else f"[{name}] failed to parse field [{keys[0]}]")
    flags = str(body.get("flags", "ALL")).upper()
    for f in flags.split("|"):
        if f and f not in REGEXP_FLAGS:
            raise IllegalArgument(f"Unknown regexp flag [{f}]")
    fuzziness = body.get("fuzziness", "AUTO")
    if name == "fuzzy":
        fuzzy_edits(fuzziness, value)
    prefix_length = int_option(name, "prefix_length", body.get("prefix_length", 0))
    if prefix_length < 0:
        raise IllegalArgument("prefixLength cannot be negative.")
    return TermsRule(kind=name, pattern=value, analyzer=_opt_str(name, body, "analyzer"),
                     use_field=_opt_str(name, body, "use_field"),
                     case_insensitive=bool_option(name, "case_insensitive",
                                                  body.get("case_insensitive", False)),
                     flags=flags, fuzziness=fuzziness,
                     prefix_length=prefix_length,
                     transpositions=bool_option(name, "transpositions",
                                                body.get("transpositions", True)))


def _filter(body: Any, depth: int) -> tuple[str, Rule] | None:
    if body is None:
        return None
    if not isinstance(body, dict) or len(body) != 1:
        raise ParsingError("Expected [FIELD_NAME] but got "
                           f"[{'END_OBJECT' if body == {} else token_name(body)}]")
    kind, inner = next(iter(body.items()))
    if kind == "script":
        raise IllegalArgument("[intervals] filter [script] is not supported by this server")
    if kind not in FILTERS:
        raise ParsingError(f"Unknown interval filter type [{kind}]")
    if not isinstance(inner, dict) or len(inner) != 1:
        raise ParsingError(f"Expected [FIELD_NAME] but got [{token_name(inner)}]")
    return kind, _rule(*next(iter(inner.items())), depth + 1)
