"""A buffered document is one bytes object that gives back everything it was made of."""
from __future__ import annotations

import gc

import pytest

from shardsearch.cluster.engine.buffered_doc import BufferedDoc


@pytest.mark.parametrize("doc_id, routing", [("gcide-1", None), ("é/ü 1", "routé"), ("", "")])
def test_a_buffered_doc_gives_back_its_id_seq_version_routing_source_and_fields(
        doc_id: str, routing: str | None) -> None:
    fields = {"title": ["a", "b"], "n": [3, 2.5], "geo": [(1.0, 2.0)], "empty": []}
    d = BufferedDoc(doc_id, 2**40 + 7, 2**62, b'{"title": "a"}', fields, routing)
    assert (d.id, d.seq, d.version, d.routing) == (doc_id, 2**40 + 7, 2**62, routing)
    assert d.columns() == (doc_id, 2**40 + 7, 2**62, routing)
    assert d.source == b'{"title": "a"}' and d.fields == fields and not d.deleted
    assert BufferedDoc("x", 1, 1, b"{}", fields, deleted=True).deleted


def test_its_pickled_fields_are_the_bytes_a_snapshot_stores_and_read_back_the_same() -> None:
    import pickle
    d = BufferedDoc("x", 1, 1, b"{}", {"k": ["v"]})
    assert pickle.loads(d.pickled_fields) == {"k": ["v"]}


def test_a_buffered_doc_pickles_and_copies_as_the_same_document() -> None:
    import copy
    import pickle
    d = BufferedDoc("x", 5, 2, b'{"a": 1}', {"a": [1]}, "r")
    for again in (pickle.loads(pickle.dumps(d, protocol=5)), copy.deepcopy(d), copy.copy(d)):
        assert type(again) is BufferedDoc and again == d
        assert again.columns() == ("x", 5, 2, "r") and again.fields == {"a": [1]}


def test_a_buffered_doc_is_one_allocation_outside_the_small_object_arenas() -> None:
    """One object per document, whose size takes it past pymalloc's 512 bytes once its
    source and fields are: large documents then live outside Python's small-object arenas,
    which a few survivors of a load would otherwise keep (``buffered_doc.py``)."""
    import sys
    d = BufferedDoc("x", 1, 1, b"{}" * 200, {"k": ["v" * 100]})
    assert isinstance(d, bytes) and not hasattr(d, "__dict__")
    assert gc.get_referents(d) == [BufferedDoc] and sys.getsizeof(d) > 512
