"""The bulk path's shortcuts give what the plain paths give.

* a document whose shape the mapping ``accepts`` parses without fail and without changing the
  mapping, so the shard may parse it alone (``dynamic=False``) and get the same fields;
* ``parse_document``'s fast cases equal its general walk;
* a :class:`WriteBatch` carries exactly the writes it was made of, through pickling and the log;
* routing many ids at once gives the shards routing each gives;
* the standard tokenizer's ASCII fast paths give the general pattern's tokens.
"""
from __future__ import annotations

import copy
import gzip
import pickle
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardsearch.cluster.engine import doc_parsing
from shardsearch.cluster.engine.analysis import general_tokens, standard_tokens
from shardsearch.cluster.errors import MapperParsing
from shardsearch.cluster.engine.doc_parsing import parse_document
from shardsearch.cluster.engine.doc_shape import doc_shape
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.indices.routing import routing_hash, routing_hashes, shard_for, shards_for
from shardsearch.cluster.engine.writes import BatchBuilder, WriteBatch, WriteOp
from shardsearch.cluster.engine.storage import decode_batch, encode_batch

FIELD_TYPES = ["text", "keyword", "long", "integer", "short", "double", "float", "boolean",
               "date", "object"]
NAMES = ["a", "b", "c", "d"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                    st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.text(max_size=6), st.sampled_from(["2021-01-02", "12", "true", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(NAMES + ["", " ", "_id"]), inner, max_size=3)), max_leaves=8)
documents = st.dictionaries(st.sampled_from(NAMES + ["a.b"]), values, max_size=4)


@st.composite
def mappings(draw: st.DrawFn) -> dict:
    def props(depth: int) -> dict:
        out = {}
        for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3)):
            t = draw(st.sampled_from(FIELD_TYPES if depth < 2 else FIELD_TYPES[:-1]))
            if t == "object":
                out[name] = {"properties": props(depth + 1)}
            else:
                spec: dict = {"type": t}
                if t == "text" and draw(st.booleans()):
                    spec["fields"] = {"kw": {"type": draw(st.sampled_from(["keyword", "long"])),
                                             "ignore_above": 3}}
                out[name] = spec
        return out
    return {"properties": props(0),
            "dynamic": draw(st.sampled_from([True, False, "strict"]))}


def _parse(doc: dict, m: Mapping, dynamic: bool) -> tuple[str, object]:
    try:
        fields, changed = parse_document(copy.deepcopy(doc), m, "1", dynamic=dynamic)
        return "ok", (fields, changed)
    except MapperParsing as e:
        return "error", e.to_cause()


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=mappings(), docs=st.lists(documents, min_size=1, max_size=3))
def test_accepted_shapes_parse_alike_without_growing_the_mapping(body: dict,
                                                                  docs: list[dict]) -> None:
    m = Mapping.from_body(body)
    for doc in docs:
        if not m.accepts(doc_shape(doc)):
            _parse(doc, m, dynamic=True)      # the coordinator's parse: may grow the mapping
            continue
        before = m.to_body()
        version = m.version
        kind, out = _parse(doc, m, dynamic=True)
        assert kind == "ok", out
        assert out[1] is False and m.to_body() == before and m.version == version
        assert _parse(doc, m, dynamic=False) == ("ok", (out[0], False))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=mappings(), doc=documents)
def test_parse_document_fast_cases_equal_the_general_walk(body: dict, doc: dict,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    fast = _parse(doc, Mapping.from_body(body), dynamic=True)
    with monkeypatch.context() as mp:
        mp.setattr(doc_parsing, "_FAST_PATHS", False)
        plain = _parse(doc, Mapping.from_body(body), dynamic=True)
    assert fast == plain


def test_gcide_like_documents_are_accepted_once_mapped() -> None:
    m = Mapping.from_body({"properties": {"id": {"type": "keyword"}, "text": {"type": "text"},
                                          "pos": {"type": "keyword"}, "senses": {"type": "long"}}})
    doc = {"id": "g-1", "text": "A word.", "pos": ["n.", "v."], "senses": 2, "xrefs": []}
    assert m.accepts(doc_shape(doc))
    assert not m.accepts(doc_shape({**doc, "new": "x"}))         # would add a field
    assert not m.accepts(doc_shape({**doc, "senses": "two"}))    # may fail
    assert not m.accepts(doc_shape({**doc, "_id": "x"}))         # metadata: the general path


ops_strategy = st.lists(st.builds(
    lambda op, i, seq, src, routing, cond, upsert: WriteOp(
        op=op, id=f"id{i}", seq=seq,
        source=None if op == "delete" else src.encode(),
        routing=routing, if_seq_no=cond, if_primary_term=1 if cond is not None else None,
        doc_as_upsert=op == "update" and upsert is None, upsert=upsert),
    st.sampled_from(["index", "create", "delete", "update"]), st.integers(0, 5),
    st.integers(0, 10**6), st.sampled_from(['{"a":1}', '{"t":"héllo ☃"}', "{}"]),
    st.one_of(st.none(), st.text(max_size=3)), st.one_of(st.none(), st.integers(-1, 9)),
    st.one_of(st.none(), st.just(b'{"u":1}'))), max_size=12)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=ops_strategy)
def test_a_write_batch_carries_exactly_its_writes(ops: list[WriteOp]) -> None:
    batch = WriteBatch.of(ops)
    assert batch.writes() == ops
    assert pickle.loads(pickle.dumps(batch, protocol=5)).writes() == ops
    logged = orjson.loads(orjson.dumps(encode_batch(batch)))
    assert decode_batch(logged, WriteBatch).writes() == ops
    b = BatchBuilder()
    for pos, op in enumerate(ops):
        extra = {k: v for k in ("doc_as_upsert", "upsert", "if_seq_no", "if_primary_term")
                 if (v := getattr(op, k)) is not None and v is not False}
        b.add(pos, op.op, op.id, op.seq, op.source, op.routing, extra)
    assert b.build().writes() == ops
    assert b.positions == list(range(len(ops)))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
                       max_size=40),
       shards=st.integers(1, 7))
def test_routing_many_values_at_once_equals_routing_each(values: list[str], shards: int) -> None:
    assert routing_hashes(values).tolist() == [routing_hash(v) for v in values]
    assert shards_for(values, shards).tolist() == [shard_for(v, shards) for v in values]


ASCII_TEXT = st.text(st.sampled_from(list("aZ09_.':,;- \n\t\"()[]{}/\\#!?xyzXYZ1234567890")),
                     max_size=60)
ANY_TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)),
                             st.sampled_from("a1_.':,;’· 中")), max_size=40)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.one_of(ASCII_TEXT, ANY_TEXT))
def test_standard_tokens_fast_paths_equal_the_general_pattern(text: str) -> None:
    assert standard_tokens(text) == general_tokens(text)


def test_standard_tokens_equal_the_general_pattern_on_gcide() -> None:
    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "gcide.ndjson.gz"
    if not corpus.exists():
        pytest.skip("GCIDE corpus not beside the repository")
    with gzip.open(corpus, "rb") as f:
        lines = [next(f) for _ in range(3000)]
    for line in lines:
        for value in orjson.loads(line).values():
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, str):
                    assert standard_tokens(v) == general_tokens(v), v
    for text in ("don't stop at 3.14, u.s.a. or foo_bar", "e.g. 1,000;2 a:b 1930's __ _x_",
                 "x" * 300 + " end", "a.b.c.d 1.2.3"):
        assert standard_tokens(text) == general_tokens(text)
