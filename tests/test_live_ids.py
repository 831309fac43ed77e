"""The live map answers as the dict it replaced: every live id to its address, popped ids gone,
a merge's kept ids moved to the merged segment and the others left where they were; ids are
kept as bytes and read back as the same strings (any Unicode, collisions of the hash checked)."""
from __future__ import annotations

import numpy as np

from shardsearch.cluster.engine.id_column import IdColumn
from shardsearch.cluster.engine.live_ids import LiveIds


def test_id_column_reads_back_every_id_exactly() -> None:
    ids = ["a", "", "é\u00e9", "\ud800lone", "x\x00y", "a"]
    col = IdColumn(ids)
    assert list(col) == ids
    assert col[2] == ids[2] and col[-1] == "a"
    assert col[np.array([3, 0])].tolist() == [ids[3], ids[0]]
    assert col[np.array([True, False, True, False, False, False])].tolist() == ["a", ids[2]]
    assert col.rows_of("a") == [0, 5] and col.rows_of("missing") == []
    assert col.mask_of(["x\x00y", "nope"]).tolist() == [False] * 4 + [True, False]


def test_live_ids_answers_as_a_dict_would() -> None:
    live, model = LiveIds(), {}
    a = IdColumn([f"d{i}" for i in range(50)])
    live.add_segment(1, a)
    model.update((f"d{i}", (1 << 32) + i) for i in range(50))
    for i in range(0, 50, 3):   # updated: the old version popped, the new one elsewhere
        assert live.pop(f"d{i}") == model.pop(f"d{i}")
    b = IdColumn([f"d{i}" for i in range(0, 50, 3)] + ["new"])
    live.add_segment(2, b)
    model.update((d, (2 << 32) + r) for r, d in enumerate(b))
    live["solo"] = model["solo"] = 7
    assert live.pop("absent") is None and "absent" not in live
    assert dict(live.items()) == model and len(live) == len(model)
    assert all(live.get(k) == v for k, v in model.items())


def test_merge_moves_kept_ids_and_leaves_the_rest() -> None:
    live = LiveIds()
    live.add_segment(1, IdColumn(["a", "b", "c"]))
    live.add_segment(2, IdColumn(["d", "e"]))
    assert live.get("a") == 1 << 32          # a lookup just before the merge...
    merged = IdColumn(["a", "c", "d", "e"])
    live.replace_segments({1, 2}, 3, merged, np.array([0, 1, 2]))   # "e" not kept live
    assert live.get("a") == 3 << 32 and live.get("c") == (3 << 32) + 1
    assert live.get("b") == (1 << 32) + 1 and live.get("e") == (2 << 32) + 1
    assert len(live) == 5
