"""The comparison itself (pure, no servers): what counts as a difference and what does not."""
from __future__ import annotations

from .compare import Difference, compare


def _page(*hits: tuple[str, float | None], total: int = 2, sort: bool = False) -> dict:
    out = []
    for doc_id, score in hits:
        hit = {"_index": "diff", "_id": doc_id, "_score": score, "_source": {"a": doc_id}}
        if sort:
            hit["sort"] = [doc_id]
        out.append(hit)
    best = max((s for _, s in hits if s is not None), default=None)
    return {"hits": {"total": {"value": total, "relation": "eq"}, "max_score": best, "hits": out}}


def test_scores_within_the_tolerance_are_equal() -> None:
    assert compare((200, _page(("a", 1.9917680025100708))), (200, _page(("a", 1.9917679)))) == []


def test_a_different_order_of_the_same_hits_is_a_difference() -> None:
    diffs = compare((200, _page(("a", 1.0), ("b", 1.0))), (200, _page(("b", 1.0), ("a", 1.0))))
    assert Difference("hits.hits[]._id", ["a", "b"], ["b", "a"]) in diffs


def test_totals_sort_values_and_sources_are_compared() -> None:
    ours, theirs = _page(("a", None), sort=True), _page(("a", None), total=3)
    paths = {d.path for d in compare((200, ours), (200, theirs))}
    assert paths == {"hits.total", "hits.hits[0].sort"}


def test_errors_compare_status_then_type_but_not_the_reason() -> None:
    err = {"error": {"type": "parsing_exception", "reason": "one"}, "status": 400}
    other = {"error": {"type": "parsing_exception", "reason": "two"}, "status": 400}
    assert compare((400, err), (400, other)) == []
    (diff,) = compare((400, err), (500, other))
    assert diff.path == "status" and diff.ours[0] == 400 and diff.theirs[0] == 500


def test_counts_are_compared_exactly() -> None:
    assert compare((200, {"count": 3}), (200, {"count": 4})) == [Difference("count", 3, 4)]
