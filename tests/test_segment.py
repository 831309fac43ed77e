"""A segment's compact structures answer exactly what plain Python structures would.

Terms live in one sorted string (``TermDict``), ``_source`` in zstd blocks (``SourceStore``),
integer columns in the narrowest dtype that holds them. Each test compares one of them with the
obvious reference — a sorted list of strings, a list of bytes, a scan over every term — on
awkward inputs: empty strings, non-ASCII, newlines inside keyword values, documents larger
than a block, empty documents.
"""
from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.postings import TermDict, _pack_bytes, _unpack, narrow
from shardsearch.cluster.engine.segment import (SOURCE_BLOCK, SOURCE_DICT_MIN, BufferedDoc,
                                                Segment, SourceStore)

TERMS = st.lists(st.text(alphabet="ab\nzé€", max_size=5), max_size=40, unique=True)


@settings(max_examples=200, deadline=None)
@given(TERMS, st.lists(st.text(alphabet="ab\nzé€", max_size=5), max_size=10))
def test_term_dict_finds_every_term_at_its_rank_and_nothing_else(terms, probes):
    terms = sorted(terms)
    td = TermDict(terms)
    assert len(td) == len(terms)
    assert [td[i] for i in range(len(terms))] == terms
    assert td.between(0, len(terms)) == terms
    for t in terms + probes:
        assert td.find(t) == (terms.index(t) if t in terms else -1)
        assert td.bisect(t) == sum(1 for x in terms if x < t)
        assert td.bisect(t, right=True) == sum(1 for x in terms if x <= t)


@settings(max_examples=200, deadline=None)
@given(TERMS, st.text(alphabet="ab\nzé€", max_size=3))
def test_prefix_range_holds_exactly_the_terms_with_the_prefix(terms, prefix):
    terms = sorted(terms)
    lo, hi = TermDict(terms).prefix_range(prefix)
    assert terms[lo:hi] == [t for t in terms if t.startswith(prefix)]


def _keyword_segment(values: list[list[str]]) -> Segment:
    mapping = Mapping.from_body({"properties": {"k": {"type": "keyword"}}})
    docs = [BufferedDoc(str(i), i, 1, b"{}", {"k": v}) for i, v in enumerate(values)]
    return Segment.build(docs, mapping.fields, 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="abc\n", max_size=4), max_size=3), min_size=1,
                max_size=30),
       st.sampled_from(["a.*", "ab?c", "(a|b)c*", "\\n?a", "c+", ".*", "abc", "[^a]*"]),
       st.text(alphabet="abc", max_size=2), st.text(alphabet="abc", max_size=2))
def test_term_expansions_match_the_documents_a_scan_would(values, pattern, lo, hi):
    seg = _keyword_segment(values)
    post = seg.fields["k"].postings

    def docs_with(keep):
        return [i for i, vs in enumerate(values) if any(keep(v) for v in vs)]

    def matched(ids):
        return np.flatnonzero(post.union(ids, seg.n)).tolist()

    rx = re.compile(pattern, re.S)
    assert matched(post.ids_matching(rx)) == docs_with(rx.fullmatch)
    assert matched(post.ids_with_prefix(lo)) == docs_with(lambda v: v.startswith(lo))
    assert matched(post.ids_in_range(lo, None, None, hi)) == docs_with(lambda v: lo < v <= hi)
    assert matched(post.ids_in_range(None, lo, hi, None)) == docs_with(lambda v: lo <= v < hi)
    assert matched(post.ids_where(lambda t: t.upper() == lo.upper())) == \
        docs_with(lambda v: v.upper() == lo.upper())


def test_keyword_ordinals_are_ranks_of_the_sorted_distinct_values():
    values = [["b", "a"], [], ["c"], ["a"], ["é", "b\nx"]]
    kf = _keyword_segment(values).fields["k"]
    distinct = sorted({v for vs in values for v in vs})
    assert kf.sorted_values.tolist() == distinct
    for doc, vs in enumerate(values):
        want_min = distinct.index(min(vs)) if vs else -1
        want_max = distinct.index(max(vs)) if vs else -1
        assert (kf.min_ord[doc], kf.max_ord[doc]) == (want_min, want_max)
        assert kf.value_count[doc] == len(vs)
        got = kf.postings.get(vs[0]) if vs else None
        if got is not None:
            assert got[0].dtype == np.int32 and got[1].dtype == np.int32
            assert doc in got[0].tolist()


def test_source_store_returns_every_document_byte_for_byte():
    rng = random.Random(7)
    sources = [bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 50, 700])))
               for _ in range(300)]
    sources[17] = b"x" * (3 * SOURCE_BLOCK)          # larger than a block
    sources += [b""]                                   # an empty document last
    store = SourceStore(sources)
    assert len(store) == len(sources)
    assert list(store) == sources
    assert [store[i] for i in range(len(sources))] == sources
    assert store[-1] == sources[-1]
    order = list(range(len(sources)))
    rng.shuffle(order)
    assert store.take(order) == [sources[i] for i in order]
    assert store.take([]) == [] and list(SourceStore([])) == []
    with pytest.raises(IndexError):
        store[len(sources)]


def test_source_store_with_a_trained_dictionary_reads_back_and_survives_copies():
    """Past ``SOURCE_DICT_MIN`` bytes a segment's blocks share a trained zstd dictionary:
    every document still reads back byte for byte, also from a deep copy and
    a pickled one, which carry the dictionary as bytes."""
    import copy
    import pickle

    rng = random.Random(11)
    words = ["horse", "water", "the", "of", "a", "Webster", "n.", "Syn:", "--"]
    sources = [(b'{"id": "d-%d", "headword": "%s", "text": "%s"}' % (
        i, rng.choice(words).encode(), " ".join(rng.choices(words, k=rng.randint(5, 80)))
        .encode())) for i in range(12000)]
    assert sum(map(len, sources)) >= SOURCE_DICT_MIN
    store = SourceStore(sources)
    assert store.zdict is not None
    small = SourceStore(sources[:50])
    assert small.zdict is None and list(small) == sources[:50]
    order = list(range(len(sources)))
    rng.shuffle(order)
    for s in (store, copy.deepcopy(store), pickle.loads(pickle.dumps(store))):
        assert list(s) == sources and s[5] == sources[5]
        assert s.take(order[:500]) == [sources[i] for i in order[:500]]


def test_narrow_picks_the_smallest_dtype_that_holds_the_values():
    assert narrow(np.array([0, 255])).dtype == np.uint8
    assert narrow(np.array([256])).dtype == np.uint16
    assert narrow(np.array([65536])).dtype == np.int32
    assert narrow(np.array([1 << 31])).dtype == np.int64
    assert narrow(np.array([3]), high=70000).dtype == np.int32


def test_segment_ids_keep_a_separator_inside_an_id():
    mapping = Mapping()
    ids = ["a", "b\x00c", "", "d"]
    docs = [BufferedDoc(i, n, 1, b"{}", {}) for n, i in enumerate(ids)]
    assert Segment.build(docs, mapping.fields, 1).ids.tolist() == ids


def test_single_valued_numbers_share_one_column_with_equal_min_and_max():
    mapping = Mapping.from_body({"properties": {"n": {"type": "long"},
                                                "m": {"type": "double"}}})
    docs = [BufferedDoc(str(i), i, 1, b"{}", {"n": [i * 3], "m": [i / 2, -i] if i % 2 else []})
            for i in range(5)]
    seg = Segment.build(docs, mapping.fields, 1)
    n, m = seg.fields["n"], seg.fields["m"]
    assert n.min.tolist() == n.max.tolist() == [0, 3, 6, 9, 12]
    assert m.min.tolist() == [0, -1, 0, -3, 0] and m.max.tolist() == [0, 0.5, 0, 1.5, 0]
    assert m.present.tolist() == [False, True, False, True, False]


def test_postings_give_exact_frequencies_and_positions_above_one_byte():
    mapping = Mapping.from_body({"properties": {"t": {"type": "text"}}})
    texts = ["w " * 300 + "x", "x w", "w " * 256, "y"]
    docs = [BufferedDoc(str(i), i, 1, b"{}", {"t": [t]}) for i, t in enumerate(texts)]
    post = Segment.build(docs, mapping.fields, 1).fields["t"].postings
    got_docs, freqs = post.get("w")
    assert got_docs.tolist() == [0, 1, 2] and freqs.tolist() == [300, 1, 256]
    assert freqs.dtype == np.int32
    pos_docs, positions = post.positions_of("w")
    assert pos_docs.tolist() == [0] * 300 + [1] + [2] * 256
    assert positions.tolist() == list(range(300)) + [1] + list(range(256))
    assert post.get("x")[1].tolist() == [1, 1] and post.get("z") is None


def _runs(runs: list[tuple[str, int]]) -> list[str]:
    return [word for word, n in runs for _ in range(n)]


# a value is runs of one word: long runs of ``pad`` push positions past a byte, rarely or often
value_words = st.lists(st.tuples(st.sampled_from(["w", "x", "pad"]), st.integers(1, 300)),
                       max_size=4).map(_runs)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(value_words, max_size=3), min_size=1, max_size=6))
def test_positions_stored_in_one_byte_decode_to_the_absolute_positions(docs_values):
    """Positions are kept one byte each, those past 254 aside: decoding gives each
    occurrence's position — value ``k`` of a document starts ``k * 100`` past the tokens
    before it — whether few or many are that large (runs of ``pad`` push them past a byte)."""
    mapping = Mapping.from_body({"properties": {"t": {"type": "text"}}})
    docs = [BufferedDoc(str(i), i, 1, b"{}", {"t": [" ".join(v) for v in values]})
            for i, values in enumerate(docs_values)]
    post = Segment.build(docs, mapping.fields, 1).fields["t"].postings
    for term in ("w", "x"):
        want_docs, want_pos = [], []
        for i, values in enumerate(docs_values):
            before = 0
            for k, value in enumerate(values):
                for j, word in enumerate(value):
                    if word == term:
                        want_docs.append(i)
                        want_pos.append(before + k * 100 + j)
                before += len(value)
        got = post.positions_of(term)
        if not want_docs:
            assert got is None
            continue
        assert got[0].tolist() == want_docs and got[1].tolist() == want_pos
        assert got[1].dtype == np.int32


@pytest.mark.parametrize("total", [254, 255, 256, 257, 65_535, 65_536, 65_537])
def test_byte_columns_read_every_range_whatever_their_length(total):
    """The side table of values past a byte is read with bounds up to the column's length,
    also when that length is just past what the table's index dtype holds (256, 65,536)."""
    values = np.arange(total, dtype=np.int64) % 250
    values[[1, total // 2, total - 1]] = [255, 300, 70_000]   # a few past a byte
    packed, big = _pack_bytes(values)
    assert big is not None
    for a, b in ((0, total), (total - 1, total), (0, 1), (total // 2, total), (0, 0)):
        assert _unpack(packed, big, a, b).tolist() == values[a:b].tolist()


def test_a_document_of_256_distinct_tokens_gives_every_term_its_position():
    mapping = Mapping.from_body({"properties": {"t": {"type": "text"}}})
    text = " ".join(f"w{i}" for i in range(256))
    post = Segment.build([BufferedDoc("0", 0, 1, b"{}", {"t": [text]})],
                         mapping.fields, 1).fields["t"].postings
    for i in (0, 1, 254, 255):
        docs, positions = post.positions_of(f"w{i}")
        assert docs.tolist() == [0] and positions.tolist() == [i]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "_ignored"]),
                                st.lists(st.integers(0, 9), max_size=3), max_size=4),
                max_size=12))
def test_fields_are_gathered_as_a_scan_per_field_would(per_doc):
    """``entries_by_field``: each field's documents, value counts and values in document
    order, fields in the order they first occur — what scanning every document once per field
    gives."""
    from itertools import chain

    from shardsearch.cluster.engine.field_entries import entries_by_field

    by_scan = {f: [(i, d[f]) for i, d in enumerate(per_doc) if f in d]
               for f in dict.fromkeys(chain.from_iterable(per_doc))}
    by_field = entries_by_field(per_doc)
    assert list(by_field) == list(by_scan)
    for f, got in by_field.items():
        assert got.docs.tolist() == [i for i, _ in by_scan[f]] == sorted(got.docs.tolist())
        assert got.counts.tolist() == [len(v) for _, v in by_scan[f]]
        assert got.flat == list(chain.from_iterable(v for _, v in by_scan[f]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-5, (1 << 31) - 1) | st.integers(0, 70_000), max_size=200))
def test_radix_stable_order_is_numpys_stable_argsort(keys):
    """``postings.stable_order`` (two 16-bit radix passes) orders exactly as NumPy's stable
    argsort: equal keys keep their order, negative keys take the plain path."""
    from shardsearch.cluster.engine.postings import stable_order

    a = np.asarray(keys, dtype=np.int32)
    assert np.array_equal(stable_order(a), np.argsort(a, kind="stable"))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet="abc\u00e9", max_size=3), max_size=30))
def test_term_ids_are_the_ranks_of_the_values_among_the_sorted_distinct_values(values):
    """``postings.sorted_ids``: the distinct values sorted, and each value's rank among them
    (also for no value and for one, where ``itemgetter`` answers differently)."""
    from shardsearch.cluster.engine.postings import sorted_ids

    terms, tids = sorted_ids(values)
    distinct = sorted(set(values))
    assert terms.between(0, len(terms)) == distinct
    assert tids.tolist() == [distinct.index(v) for v in values]
