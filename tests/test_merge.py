"""The merge interleaves shard lists into one order and cuts the page exactly once."""
from __future__ import annotations

import numpy as np

from shardsearch.cluster.search.reduce import merge, total_hits
from shardsearch.cluster.engine.shard_messages import ShardHits
from shardsearch.cluster.engine.sorting import SCORE_SORT, SortField, tiebreak


def _hits(shard: int, scores: list[float], seqs: list[int], rank: int = 0) -> ShardHits:
    s = np.asarray(scores, dtype=np.float32)
    ties = tiebreak(rank, np.asarray(seqs, dtype=np.int64))
    order = np.lexsort((ties, -s.astype(np.float64)))
    s, ties = s[order], ties[order]
    return ShardHits(index=f"i{rank}", shard=shard, total=len(scores), columns=[s],
                     missing=[None], kinds=["score"], scores=s, ties=ties,
                     addr=np.arange(len(s), dtype=np.int64) + shard * 1000,
                     max_score=float(s.max()) if len(s) else None, generation=1)


def test_page_is_the_slice_of_the_global_order() -> None:
    a = _hits(0, [3.0, 1.0, 2.0], [0, 3, 5])
    b = _hits(1, [2.5, 1.0, 0.5], [1, 2, 4])
    red = merge([a, b], SCORE_SORT, 1, 3)
    got = [(e.shard_pos, e.row) for e in red.page]
    # global order: 3.0(a) 2.5(b) 2.0(a) 1.0(b, seq 2) 1.0(a, seq 3) 0.5(b)
    assert got == [(1, 0), (0, 1), (1, 1)]
    assert red.total == 6
    assert red.max_score == 3.0


def test_ties_are_broken_by_index_then_sequence_number() -> None:
    a = _hits(0, [1.0, 1.0], [7, 2], rank=1)
    b = _hits(1, [1.0, 1.0], [9, 1], rank=0)
    red = merge([a, b], SCORE_SORT, 0, 4)
    ties = [int((a if e.shard_pos == 0 else b).ties[e.row]) for e in red.page]
    assert ties == sorted(ties)
    assert [e.shard_pos for e in red.page] == [1, 1, 0, 0]


def test_page_beyond_the_end_is_empty_but_total_is_reported() -> None:
    a = _hits(0, [1.0], [0])
    red = merge([a], SCORE_SORT, 5, 10)
    assert red.page == [] and red.total == 1


def test_field_sort_descending_with_missing_last() -> None:
    sf = (SortField("n", "desc"),)
    cols = [np.array([5, -(2**63)], dtype=np.int64), np.array([7, 1], dtype=np.int64)]
    hits = [ShardHits(index="i", shard=k, total=2, columns=[c], missing=[None], kinds=["int"],
                      scores=np.zeros(2, np.float32), ties=np.array([k, 10 + k], np.int64),
                      addr=np.arange(2, dtype=np.int64), max_score=None, generation=1)
            for k, c in enumerate(cols)]
    red = merge(hits, sf, 0, 4)
    assert [(e.shard_pos, e.row) for e in red.page] == [(1, 0), (0, 0), (1, 1), (0, 1)]


def test_total_hits_follows_track_total_hits() -> None:
    assert total_hits(12_000, 10_000) == {"value": 10_000, "relation": "gte"}
    assert total_hits(12_000, True) == {"value": 12_000, "relation": "eq"}
    assert total_hits(5, 10_000) == {"value": 5, "relation": "eq"}
    assert total_hits(5, False) is None
