"""Where shardsearch differs from OpenSearch on purpose: the one documented list.

Every difference the differential suite finds is either fixed in shardsearch or listed here with
why. Compared with a one-shard OpenSearch index, our shard-invariant scores (global statistics)
equal OpenSearch's, so scores need no entry; the consistent-page token travels in a response
header (and in the body only when asked for), which the suite does not compare; totals are
compared as OpenSearch reports them (exact up to ``track_total_hits``, then ``gte``), and agree. Each entry says which differences it covers (``covers``) and carries a probe request that
shows the difference today: ``test_documented_exceptions.py`` sends each probe to both systems and
fails when the difference is gone (the entry must then be removed) or is no longer covered.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .compare import Difference


@dataclass(frozen=True)
class Deliberate:
    """A difference kept on purpose."""
    name: str
    why: str
    covers: Callable[[Difference, dict[str, Any]], bool]
    probe: tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]  # method, path, body, params


def _search_after_with_from(diff: Difference, request: dict[str, Any]) -> bool:
    body = request.get("body") or {}
    return (diff.path == "status" and body.get("search_after") is not None
            and body.get("from", 0) != 0 and diff.ours[0] == 400 and diff.theirs[0] == 500)


def _key_ordered_terms_with_min_doc_count(tree: Any) -> bool:
    """Whether an aggregation tree holds a ``terms`` ordered by ``_key`` with min_doc_count > 1."""
    for agg in (tree or {}).values():
        terms = agg.get("terms") or {}
        order = terms.get("order") or []
        order = [order] if isinstance(order, dict) else order
        if any("_key" in o for o in order) and terms.get("min_doc_count", 1) > 1:
            return True
        if _key_ordered_terms_with_min_doc_count(agg.get("aggs")):
            return True
    return False


def _cut_by_key_before_min_doc_count(diff: Difference, request: dict[str, Any]) -> bool:
    if not (diff.path.endswith(".sum_other_doc_count") or diff.path.endswith(".buckets[]")):
        return False
    ours, theirs = diff.ours, diff.theirs
    fewer = (ours < theirs) if diff.path.endswith("count") else len(ours) > len(theirs)
    return fewer and _key_ordered_terms_with_min_doc_count(
        (request.get("body") or {}).get("aggs"))


def _fuzziness_above_two(diff: Difference, request: dict[str, Any]) -> bool:
    return (diff.path == "status" and diff.ours[0] == 400 and diff.theirs[0] == 200
            and "Valid edit distances are [0, 1, 2]" in str(diff.ours[1]))


def _missing_factor_value(diff: Difference, request: dict[str, Any]) -> bool:
    fvf = (((request.get("body") or {}).get("query") or {}).get("function_score") or {}) \
        .get("field_value_factor") or {}
    return (diff.path == "status" and bool(fvf) and "missing" not in fvf
            and diff.ours[0] == 400 and diff.theirs[0] == 500)


def _query_string_unknown_zone(diff: Difference, request: dict[str, Any]) -> bool:
    qs = ((request.get("body") or {}).get("query") or {}).get("query_string") or {}
    return (diff.path == "status" and "time_zone" in qs and diff.ours[0] == 400
            and diff.theirs[0] == 500 and "Unknown time-zone ID" in str(diff.ours[1]))


DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate(
        name="query_string_unknown_time_zone",
        why="query_string with an unknown time_zone: both refuse it with \"Unknown time-zone "
            "ID: x\"; OpenSearch lets Java's zone_rules_exception out as a 500, we answer 400 "
            "(illegal_argument_exception): a client's mistake is a 4xx.",
        covers=_query_string_unknown_zone,
        probe=("POST", "/diff/_search",
               {"query": {"query_string": {"query": "x", "time_zone": "Mars/Olympus"}}}, None)),
    Deliberate(
        name="field_value_factor_missing_value",
        why="field_value_factor on a document without the field and no `missing`: both fail "
            "every shard with \"Missing value for field [f]\"; Elasticsearch and OpenSearch "
            "throw a bare ElasticsearchException there (500), we answer 400 "
            "(illegal_argument_exception): the request asks for a value the data does not "
            "have, a client's mistake, and no 5xx for anything a client can send.",
        covers=_missing_factor_value,
        probe=("POST", "/diff/_search",
               {"query": {"function_score": {"field_value_factor": {"field": "price"}}}},
               None)),
    Deliberate(
        name="search_after_with_from",
        why="search_after with a from other than 0: we answer as Elasticsearch 8 does, 400 "
            "action_request_validation_exception from the request's validation; OpenSearch "
            "2.19 lets every shard fail and answers 500 search_phase_execution_exception "
            "(search_exception as root cause). A client's mistake is a 4xx.",
        covers=_search_after_with_from,
        probe=("POST", "/diff/_search",
               {"sort": [{"uid": "asc"}], "search_after": [3], "from": 2}, None)),
    Deliberate(
        name="terms_by_key_with_min_doc_count",
        why="terms ordered by _key with min_doc_count > 1: OpenSearch's shard cuts its list to "
            "`size` by key before the reduce applies min_doc_count, so it can return fewer "
            "buckets than exist (a term below min_doc_count took a place) and its "
            "sum_other_doc_count counts terms below min_doc_count. Ours applies min_doc_count "
            "before the cut, for every order and any number of shards: the exact answer, and "
            "what OpenSearch answers for the default order by count.",
        covers=_cut_by_key_before_min_doc_count,
        probe=("POST", "/diff/_search",
               {"size": 0, "query": {"match_phrase": {"body": "apple fox"}},
                "aggs": {"a0": {"terms": {"field": "tag", "size": 2, "min_doc_count": 3,
                                          "order": {"_key": "asc"}}}}}, None)),
    Deliberate(
        name="fuzziness_number_above_two",
        why="a JSON number above 2 as `fuzziness`: Elasticsearch 8 parses it with "
            "Fuzziness.fromEdits and answers 400 \"Valid edit distances are [0, 1, 2] but was "
            "[3]\"; OpenSearch 2.19 clamps it to 2 edits. We speak Elasticsearch's API.",
        covers=_fuzziness_above_two,
        probe=("POST", "/diff/_search",
               {"query": {"fuzzy": {"title": {"value": "apple", "fuzziness": 3}}}}, None)),
)


def explain(diff: Difference, request: dict[str, Any]) -> Deliberate | None:
    """The documented exception covering ``diff`` for this request, if any."""
    return next((d for d in DELIBERATE if d.covers(diff, request)), None)


@dataclass
class Tally:
    """What the session compared: printed in pytest's summary."""
    cases: int = 0
    by_exception: Counter = field(default_factory=Counter)

    def record(self, explained: list[Deliberate]) -> None:
        self.cases += 1
        self.by_exception.update(d.name for d in explained)

    def summary(self) -> str:
        if not self.cases:
            return ""
        n = sum(self.by_exception.values())
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_exception.items()))
        return (f"differential: {self.cases} generated cases vs OpenSearch; {n} differences were "
                f"documented exceptions" + (f" ({detail})" if detail else ""))


TALLY = Tally()
