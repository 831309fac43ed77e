"""``bench --scale N``'s corpus (``benchmarks/scale.py``): N deterministic copies of a file,
ids rewritten, texts' words rotated, streamed one document at a time."""
from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import orjson

from shardsearch.benchmarks import bench, scale


def _file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "c.ndjson.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"\n".join(bench.synthetic_lines(n)) + b"\n")
    return path


def test_scaled_corpus_is_deterministic(tmp_path: Path) -> None:
    corpus = bench.load_corpus(_file(tmp_path, 40), None)
    big = scale.scaled_corpus(corpus, 3)
    assert list(big.documents()) == list(big.documents())
    assert len(big) == 120


def test_scaled_ids_are_unique_and_copy_zero_is_the_file(tmp_path: Path) -> None:
    corpus = bench.load_corpus(_file(tmp_path, 40), None)
    docs = list(scale.scaled_corpus(corpus, 4).documents())
    ids = [i for i, _ in docs]
    assert len(ids) == len(set(ids)) == 160
    assert [line for _, line in docs[:40]] == corpus.lines
    assert ids[40] == "syn-0-1" and orjson.loads(docs[40][1])["id"] == "syn-0-1"


def test_copies_keep_each_documents_words_and_length_but_not_their_order(tmp_path: Path
                                                                         ) -> None:
    corpus = bench.load_corpus(_file(tmp_path, 40), None)
    docs = [orjson.loads(line) for _, line in scale.scaled_corpus(corpus, 2).documents()]
    moved = 0
    for a, b in zip(docs[:40], docs[40:]):
        assert Counter(a["text"].split(" ")) == Counter(b["text"].split(" "))
        assert len(a["text"]) == len(b["text"])
        assert {k: v for k, v in a.items() if k not in ("id", "text")} == \
            {k: v for k, v in b.items() if k not in ("id", "text")}
        moved += a["text"] != b["text"]
    assert moved > 30


def test_the_raw_size_is_known_once_the_stream_is_read(tmp_path: Path) -> None:
    corpus = bench.load_corpus(_file(tmp_path, 30), None)
    big = scale.scaled_corpus(corpus, 2)
    assert big.raw_bytes == 0
    lines = [line for _, line in big.documents()]
    assert big.raw_bytes == sum(len(x) + 1 for x in lines)


def test_bulk_bodies_of_a_streamed_corpus_hold_every_document_once(tmp_path: Path) -> None:
    corpus = bench.load_corpus(_file(tmp_path, 25), None)
    bodies = list(bench.bulk_bodies(scale.scaled_corpus(corpus, 2), 20))
    assert len(bodies) == 3
    actions = [orjson.loads(x) for b in bodies for x in b.strip().split(b"\n")[::2]]
    assert len({a["index"]["_id"] for a in actions}) == 50


def test_scale_factors_double_up_to_n() -> None:
    assert scale.scale_factors(8) == [2, 4, 8]
    assert scale.scale_factors(6) == [2, 4, 6]
    assert scale.scale_factors(2) == [2]
    assert scale.scale_factors(1) == []


def test_rotation_depends_only_on_the_key() -> None:
    assert scale.rotate_words("a b c d", "k") == scale.rotate_words("a b c d", "k")
    assert scale.rotate_words("single", "k") == "single"
    assert sorted(scale.rotate_words("a b c d e", "x").split()) == list("abcde")
