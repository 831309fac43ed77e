"""``term_ids.ranked_ids``: Arrow's passes give the same distinct terms and ids as Python's
(sorted by code point), and values Arrow cannot take go the Python way."""
from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from shardsearch.cluster.engine.term_ids import _ARROW_FROM, _arrow_ids, _python_ids, ranked_ids


def _expected(values: list) -> tuple[list, list[int]]:
    distinct = sorted(set(values))
    rank = {v: i for i, v in enumerate(distinct)}
    return distinct, [rank[v] for v in values]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\u00e9\u4e00\U0001f600 ", max_size=4),
                min_size=_ARROW_FROM, max_size=300))
def test_arrow_term_ids_are_the_ranks_among_code_point_sorted_distinct_values(values):
    distinct, tids = _arrow_ids(values)
    assert (distinct, tids.tolist()) == _expected(values)
    assert tids.dtype == _python_ids(values)[1].dtype


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


def test_values_arrow_cannot_take_get_the_python_ids():
    """A NUL inside a value (the join separator) and a lone surrogate (no UTF-8) fall back."""
    for values in (["a\x00b", "c", "a"] * _ARROW_FROM, ["\ud800", "b", "a"] * _ARROW_FROM):
        distinct, tids = ranked_ids(values)
        assert (distinct, tids.tolist()) == _expected(values)


def test_arrow_term_ids_do_not_import_pandas():
    """pandas would cost each shard worker ~30 MiB, imported in the middle of a refresh."""
    code = ("import sys; from shardsearch.cluster.engine.term_ids import _arrow_ids; "
            "_arrow_ids([str(i % 7) for i in range(200)]); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "False"


def test_only_processes_that_write_import_arrow_compute():
    """``pyarrow.compute`` (~9 MiB) is loaded by a shard's first write, not by importing the
    front end, the coordinator or the shard."""
    code = ("import sys; import shardsearch.api.app, shardsearch.cluster.coordinator; "
            "from shardsearch.cluster.engine.shard import ShardCore; "
            "from shardsearch.cluster.engine.writes import WriteOp; "
            "core = ShardCore('i', 0); before = 'pyarrow.compute' in sys.modules; "
            "core.apply([WriteOp('index', '1', 0, b'{\"t\": \"a b\"}')]); "
            "print(before, 'pyarrow.compute' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.split() == ["False", "True"]
