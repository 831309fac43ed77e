"""Field-by-field comparison of a shardsearch reply with OpenSearch's (pure: no HTTP here)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SCORE_RTOL = 1e-5        # both compute in float32 as Lucene 9; sums of clauses may round apart


@dataclass(frozen=True)
class Difference:
    """One place where the replies disagree: a JSON path, our value, OpenSearch's value."""
    path: str
    ours: Any
    theirs: Any


def close(a: Any, b: Any) -> bool:
    """Equal, or both numbers within the score tolerance."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=SCORE_RTOL, abs_tol=1e-6)
    return a == b


def compare_error(ours: dict[str, Any], theirs: dict[str, Any]) -> list[Difference]:
    """Errors agree on ``error.type`` (the reason texts are not compared)."""
    ot = (ours.get("error") or {}).get("type") if isinstance(ours.get("error"), dict) else None
    tt = (theirs.get("error") or {}).get("type") if isinstance(theirs.get("error"), dict) else None
    return [] if ot == tt else [Difference("error.type", ot, tt)]


def _compare_hit(i: int, o: dict[str, Any], t: dict[str, Any]) -> list[Difference]:
    out = []
    for key in ("_index", "_id", "_score", "sort", "_source"):
        ov, tv = o.get(key), t.get(key)
        same = (close(ov, tv) if key == "_score"
                else ov == tv if ov is None or tv is None
                else (isinstance(ov, list) and isinstance(tv, list) and len(ov) == len(tv)
                      and all(close(a, b) for a, b in zip(ov, tv))) if key == "sort"
                else ov == tv)
        if not same:
            out.append(Difference(f"hits.hits[{i}].{key}", ov, tv))
    return out


def compare_hits(ours: dict[str, Any], theirs: dict[str, Any]) -> list[Difference]:
    """Totals, max_score, then each hit: id and order, score, sort values, ``_source``."""
    oh, th = ours.get("hits", {}), theirs.get("hits", {})
    out = []
    if oh.get("total") != th.get("total"):
        out.append(Difference("hits.total", oh.get("total"), th.get("total")))
    if not close(oh.get("max_score"), th.get("max_score")):
        out.append(Difference("hits.max_score", oh.get("max_score"), th.get("max_score")))
    ohits, thits = oh.get("hits", []), th.get("hits", [])
    if [h.get("_id") for h in ohits] != [h.get("_id") for h in thits]:
        out.append(Difference("hits.hits[]._id", [h.get("_id") for h in ohits],
                              [h.get("_id") for h in thits]))
    for i, (o, t) in enumerate(zip(ohits, thits)):
        out.extend(d for d in _compare_hit(i, o, t) if not d.path.endswith("._id"))
    return out


def compare_aggs(ours: Any, theirs: Any, path: str = "aggregations") -> list[Difference]:
    """Aggregation results, recursively: keys, bucket order, counts; numbers within tolerance."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if set(ours) != set(theirs):
            return [Difference(path + "{}", sorted(ours), sorted(theirs))]
        return [d for k in ours for d in compare_aggs(ours[k], theirs[k], f"{path}.{k}")]
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [Difference(path + "[]", ours, theirs)]
        return [d for i, (o, t) in enumerate(zip(ours, theirs))
                for d in compare_aggs(o, t, f"{path}[{i}]")]
    return [] if close(ours, theirs) else [Difference(path, ours, theirs)]


def compare(ours: tuple[int, dict[str, Any]], theirs: tuple[int, dict[str, Any]]
            ) -> list[Difference]:
    """Status first; then the error type, or ``count``, or the hits and aggregations."""
    (os_, ob), (ts, tb) = ours, theirs
    if os_ != ts:
        return [Difference("status", (os_, _summary(ob)), (ts, _summary(tb)))]
    if os_ >= 400:
        return compare_error(ob, tb)
    if "count" in tb or "count" in ob:
        return [] if ob.get("count") == tb.get("count") else [
            Difference("count", ob.get("count"), tb.get("count"))]
    out = compare_hits(ob, tb)
    if "aggregations" in ob or "aggregations" in tb:
        out += compare_aggs(ob.get("aggregations"), tb.get("aggregations"))
    return out


def _summary(body: dict[str, Any]) -> Any:
    err = body.get("error")
    if isinstance(err, dict):
        return {"type": err.get("type"), "reason": str(err.get("reason"))[:200]}
    return "ok"
