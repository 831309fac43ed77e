"""``column_tokens``: the column tokenizer gives exactly ``standard_tokens``' tokens, counts and
term ids, whichever path each value takes (NumPy byte passes for ASCII text, joined tokens and
underscores included; Python for non-ASCII text and tokens over 255 characters), in one chunk
of values or several."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from shardsearch.cluster.engine.analysis import standard_tokens
from shardsearch.cluster.engine.column_tokens import standard_column, text_term_ids
from shardsearch.cluster.engine.term_ids import utf8_list

_PIECES = ["Foo", "bar", "U.S.A", "don't", "3.14", "1,000", "a_b", "__", "_", " ", "\n", "--",
           "caf\u00e9", "\u4e00\u4e01", "x" * 260, "A:B", "9;9", "\u00c9t\u00e9", ".", "'", "\t"]
_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
# NUL and lone surrogates are refused by ``standard_column`` (tested through ``text_term_ids``)
_TEXTS = st.lists(st.sampled_from(_PIECES) | st.text(_CHARS, max_size=6), max_size=12).map("".join)
# ASCII only: every value takes the NumPy byte passes (joiners, digits, underscores, controls)
_ASCII_PIECES = [p for p in _PIECES if p.isascii()] + ["a.b.c", "1.a", "a1.2b", "x_.y", "9,9,9",
                                                       "a'b'", "'a", "a::b", "\x7f", "\x01"]
_ASCII_TEXTS = st.lists(st.sampled_from(_ASCII_PIECES) |
                        st.text(st.characters(min_codepoint=1, max_codepoint=127), max_size=8),
                        max_size=12).map("".join)
_ANY_TEXTS = st.lists(st.sampled_from(_PIECES + ["\x00", "\ud800"]) | st.text(max_size=6),
                      max_size=12).map("".join)


@settings(max_examples=80, deadline=None)
@given(st.lists(_TEXTS, max_size=40))
def test_column_tokens_are_standard_tokens_value_by_value(values):
    tokens, counts = standard_column(values) if values else ([], [])
    flat = utf8_list(tokens) if values else []
    expected = [standard_tokens(v) for v in values]
    assert list(counts) == [len(e) for e in expected]
    assert flat == [t for e in expected for t in e]


@settings(max_examples=40, deadline=None)
@given(st.lists(_TEXTS, max_size=40), st.integers(1, 30))
def test_column_tokens_are_the_same_whatever_the_chunks_of_values(values, chunk):
    from shardsearch.cluster.engine import column_tokens
    whole = standard_column(values) if values else None
    saved, column_tokens._CHUNK_CHARS = column_tokens._CHUNK_CHARS, chunk
    try:
        cut = standard_column(values) if values else None
    finally:
        column_tokens._CHUNK_CHARS = saved
    if values:
        assert utf8_list(cut[0]) == utf8_list(whole[0]) == [
            t for v in values for t in standard_tokens(v)]
        assert cut[1].tolist() == whole[1].tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(_ANY_TEXTS, max_size=40), st.sampled_from([None, "standard", "simple", "keyword",
                                                        "whitespace", "stop"]))
def test_text_term_ids_match_the_analyzer_function(values, analyzer):
    """Term ids are ranks among the code-point-sorted distinct tokens, for every analyzer."""
    from shardsearch.cluster.engine.analysis import get_analyzer
    terms, tids, counts = text_term_ids(values, analyzer)
    toks = [get_analyzer(analyzer)(v) for v in values]
    flat = [t for ts in toks for t in ts]
    distinct = sorted(set(flat))
    assert terms.between(0, len(terms)) == distinct
    assert tids.tolist() == [distinct.index(t) for t in flat]
    assert counts.tolist() == [len(ts) for ts in toks]


def test_a_nul_inside_a_value_is_tokenized_in_python():
    values = ["a\x00b c", "Hello World"]
    terms, tids, counts = text_term_ids(values, None)
    assert terms.between(0, len(terms)) == ["a", "b", "c", "hello", "world"]
    assert counts.tolist() == [3, 2]


@settings(max_examples=150, deadline=None)
@given(st.lists(_ASCII_TEXTS, max_size=40), st.integers(1, 30))
def test_ascii_values_give_standard_tokens_through_the_byte_passes_in_any_chunks(values, chunk):
    from shardsearch.cluster.engine import column_tokens
    expected = [standard_tokens(v) for v in values]
    saved, column_tokens._CHUNK_CHARS = column_tokens._CHUNK_CHARS, chunk
    try:
        tokens, counts = standard_column(values)
    finally:
        column_tokens._CHUNK_CHARS = saved
    assert list(counts) == [len(e) for e in expected]
    assert utf8_list(tokens) == [t for e in expected for t in e]


def test_no_values_give_no_tokens():
    tokens, counts = standard_column([])
    assert utf8_list(tokens) == [] and list(counts) == []
