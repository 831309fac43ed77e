"""``term_ids.ranked_ids``: the column passes (a NumPy hash table over UTF-8 bytes) give the
same distinct terms and ids as Python's (sorted by code point), and values that are no UTF-8
text go the Python way."""
from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from shardsearch.cluster.engine import term_ids
from shardsearch.cluster.engine.term_ids import (_COLUMN_FROM, _python_ids, ranked_ids,
                                                 ranked_utf8_column, utf8_list, utf8_of)


def _expected(values: list) -> tuple[list, list[int]]:
    distinct = sorted(set(values))
    rank = {v: i for i, v in enumerate(distinct)}
    return distinct, [rank[v] for v in values]


def _column_ids(values: list) -> tuple[list, list[int]]:
    distinct, tids = ranked_utf8_column(utf8_of(values))
    assert tids.dtype == _python_ids(values)[1].dtype
    return utf8_list(distinct), tids.tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\u00e9\u4e00\U0001f600 ", max_size=4), max_size=300))
def test_column_term_ids_are_the_ranks_among_code_point_sorted_distinct_values(values):
    assert _column_ids(values) == _expected(values)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["", "a" * 8, "a" * 9, "a" * 16, "a" * 17, "a" * 16 + "b",
                                 "a" * 15 + "\u00e9", "b" * 40, "b" * 39 + "a"]) |
                st.text(alphabet="ab\u00e9", min_size=7, max_size=40), max_size=200))
def test_column_term_ids_tell_apart_tokens_sharing_their_first_16_bytes(values):
    """Two words key the first 16 bytes; longer tokens also carry their whole bytes' rank,
    so prefixes sort first and long tokens that share a prefix stay apart."""
    assert _column_ids(values) == _expected(values)


def test_column_term_ids_survive_a_full_hash_table(monkeypatch):
    """The table grows when half full: all-distinct tokens in a table sized for few."""
    values = [f"v{i:05d}" for i in range(5000)] * 2
    monkeypatch.setattr(term_ids, "_slots", _tiny_first(term_ids._slots))
    assert _column_ids(values) == _expected(values)


def _tiny_first(slots):
    def tiny(keys):
        found = term_ids._probe(keys, 4)      # 16 slots: half full at once
        assert found is None
        return slots(keys)
    return tiny


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\u00e9\u4e00\U0001f600 \n", max_size=4), max_size=300))
def test_term_dictionary_from_arrow_buffers_is_the_one_from_python_strings(values):
    """``postings.sorted_ids``: the TermDict made from Arrow's UTF-8 buffers (code point
    starts, newlines inside terms included) equals ``TermDict(sorted distinct)``; ids are the
    ranks."""
    from shardsearch.cluster.engine.postings import TermDict, sorted_ids

    terms, tids = sorted_ids(values)
    distinct, ranks = _expected(values)
    want = TermDict(distinct)
    assert (terms.text, terms.starts.tolist(), terms._plain) == \
        (want.text, want.starts.tolist(), want._plain)
    assert terms.starts.dtype == want.starts.dtype
    assert terms.between(0, len(terms)) == distinct and tids.tolist() == ranks


def test_values_that_are_no_utf8_text_get_the_python_ids():
    """A NUL inside a value (the join separator) and a lone surrogate (no UTF-8) fall back."""
    for values in (["a\x00b", "c", "a"] * _COLUMN_FROM, ["\ud800", "b", "a"] * _COLUMN_FROM):
        distinct, tids = ranked_ids(values)
        assert (distinct, tids.tolist()) == _expected(values)


def test_writing_and_refreshing_a_shard_loads_neither_arrow_nor_pandas():
    """Arrow (~20 MiB per shard process, mapped at the first refresh) and pandas (~30 MiB)
    are no part of building a segment, nor of the front end or the coordinator."""
    code = ("import sys; import shardsearch.api.app, shardsearch.cluster.coordinator; "
            "from shardsearch.cluster.engine.shard import ShardCore; "
            "from shardsearch.cluster.engine.writes import WriteOp; "
            "core = ShardCore('i', 0); "
            "core.apply([WriteOp('index', str(i), i, b'{\"t\": \"a b %d\", \"k\": \"x%d\"}' "
            "% (i, i % 9)) for i in range(300)]); core.refresh(); "
            "assert core.search_count() if hasattr(core, 'search_count') else True; "
            "print(sorted(m for m in ('pyarrow', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["", "a" * 8, "a" * 9, "a" * 16, "a" * 17, "b" * 40]) |
                st.text(alphabet="ab\u00e9", max_size=20), max_size=200))
def test_vocabularies_too_large_for_a_table_are_grouped_by_a_sort_alike(values):
    """Past ``_MAX_BITS`` (a merge's union of term lists) the keys are grouped by a sort:
    the same distinct terms and ranks."""
    saved, term_ids._MAX_BITS = term_ids._MAX_BITS, 0
    try:
        assert _column_ids(values) == _expected(values)
    finally:
        term_ids._MAX_BITS = saved
