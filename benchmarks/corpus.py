"""The benchmark's corpus: an NDJSON file (GCIDE by default) or a deterministic synthetic
dictionary, its inferred mapping, the query terms it suggests, and its ``_bulk`` bodies."""
from __future__ import annotations

import gzip
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "gcide.ndjson.gz"


@dataclass
class Corpus:
    """Documents as raw NDJSON lines, their ids, and what the benchmark queries on them."""

    name: str
    lines: list[bytes]
    ids: list[str]
    raw_bytes: int                     # size of the NDJSON lines (uncompressed, with newlines)
    mapping: dict[str, Any]            # explicit mapping used for shardsearch
    text_field: str
    sort_field: str
    term: str
    # a corpus too large to hold (``--scale``): its (id, line) pairs, made afresh per call
    # (``lines`` then holds a sample only), and its document count
    stream: Callable[[], Iterator[tuple[str, bytes]]] | None = None
    count: int = 0
    path: Path | None = None           # the file it was read from (None: synthetic)
    limit: int | None = None           # how many of the file's documents it holds

    def __len__(self) -> int:
        return self.count if self.stream is not None else len(self.lines)

    def documents(self) -> Iterator[tuple[str, bytes]]:
        """Every document's id and NDJSON line, in order."""
        if self.stream is not None:
            return self.stream()
        return zip(self.ids, self.lines)


def read_ndjson(path: Path, limit: int | None = None) -> list[bytes]:
    """The first ``limit`` non-empty lines of an NDJSON file (gzipped when it ends in .gz)."""
    return list(iter_ndjson(path, limit))


def iter_ndjson(path: Path, limit: int | None = None) -> Iterator[bytes]:
    """The same lines as ``read_ndjson``, one at a time (bounded memory)."""
    if limit is not None and limit <= 0:
        return
    opener: Any = gzip.open if str(path).endswith(".gz") else open
    n = 0
    with opener(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            yield line
            n += 1
            if limit is not None and n >= limit:
                return


_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qua", "fe", "di",
              "gro", "bel", "lin", "mar", "ost", "pre", "ung"]


def synthetic_lines(n: int, seed: int = 7) -> list[bytes]:
    """A deterministic dictionary-like corpus (GCIDE's shape) for when no real one is present.

    About 90% of documents contain the term ``webster``, so ranked results page deep.
    """
    rng = random.Random(seed)
    vocab = sorted({"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4)))
                    for _ in range(6000)})
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    pos = ["n.", "v. t.", "v. i.", "adj.", "adv."]
    out = []
    for i in range(n):
        head = rng.choice(vocab)
        words = rng.choices(vocab, weights=weights, k=rng.randint(8, 90))
        if rng.random() < 0.9:
            words.insert(rng.randrange(len(words) + 1), "webster")
        text = head + " " + " ".join(words)
        doc = {"id": f"syn-{i}", "headword": head, "pos": [rng.choice(pos)],
               "senses": rng.randint(1, 6), "words": len(words) + 1, "text": text}
        out.append(orjson.dumps(doc))
    return out


def infer_mapping(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """An explicit mapping for top-level fields: long strings are text, short ones keywords."""
    lengths: dict[str, list[int]] = {}
    kinds: dict[str, str] = {}
    for d in docs:
        for k, v in d.items():
            if k == "id" or v is None:
                continue
            vals = v if isinstance(v, list) else [v]
            for x in vals:
                if isinstance(x, bool):
                    kinds.setdefault(k, "boolean")
                elif isinstance(x, int):
                    kinds.setdefault(k, "long")
                elif isinstance(x, float):
                    kinds[k] = "double"
                elif isinstance(x, str):
                    kinds[k] = "string"
                    lengths.setdefault(k, []).append(len(x))
    props: dict[str, Any] = {"id": {"type": "keyword"}}
    for k, kind in kinds.items():
        if kind == "string":
            ls = lengths.get(k, [0])
            props[k] = {"type": "text" if sum(ls) / len(ls) > 40 else "keyword"}
        else:
            props[k] = {"type": kind}
    return {"properties": props}


def _frequent_term(docs: list[dict[str, Any]], field: str) -> str:
    from ..cluster.engine.analysis import standard_tokens
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(standard_tokens(str(d.get(field, "")))))
    n = max(1, len(docs))
    for term, c in df.most_common():
        if c / n <= 0.95:
            return term
    return next(iter(df), "a")


def load_corpus(path: Path | None, limit: int | None, synthetic_docs: int = 20_000,
                term: str | None = None, sort_field: str | None = None,
                text_field: str | None = None, synthetic: bool = False) -> Corpus:
    """The corpus to benchmark: ``path`` when given (else GCIDE beside the repository when
    present, else — or with ``synthetic`` — a synthetic one), its first ``limit`` documents."""
    if path is None and not synthetic and DEFAULT_CORPUS.exists():
        path = DEFAULT_CORPUS
    if path is not None:
        lines = read_ndjson(path, limit)
        name = Path(path).name.split(".")[0]
    else:
        lines = synthetic_lines(limit or synthetic_docs)
        name = "synthetic"
    docs = [orjson.loads(ln) for ln in lines]
    ids = [str(d.get("id", i)) for i, d in enumerate(docs)]
    sample = docs[:2000]
    mapping = infer_mapping(sample)
    props = mapping["properties"]
    texts = [k for k, v in props.items() if v["type"] == "text"]
    keywords = [k for k, v in props.items() if v["type"] == "keyword" and k != "id"]
    if text_field is None:
        text_field = "text" if "text" in texts else (texts[0] if texts else None)
    if text_field is None:
        raise SystemExit("bench: the corpus has no text field to run a ranked query on")
    if sort_field is None:
        sort_field = "headword" if "headword" in keywords else (keywords[0] if keywords
                                                                else "id")
    props[sort_field] = {"type": "keyword"}
    props[text_field] = {"type": "text"}
    if term is None:
        if any("webster" in str(d.get(text_field, "")).lower() for d in sample[:500]):
            term = "webster"
        else:
            term = _frequent_term(sample, text_field)
    raw = sum(len(ln) + 1 for ln in lines)
    return Corpus(name, lines, ids, raw, mapping, text_field, sort_field, term,
                  path=Path(path) if path is not None else None, limit=limit)


def bulk_bodies(corpus: Corpus, batch: int) -> Iterator[bytes]:
    """``_bulk`` NDJSON bodies of ``batch`` documents each, made one at a time (a streamed
    corpus is never held whole)."""
    parts: list[bytes] = []
    for doc_id, line in corpus.documents():
        parts.append(orjson.dumps({"index": {"_id": doc_id}}))
        parts.append(line)
        if len(parts) == 2 * batch:
            yield b"\n".join(parts) + b"\n"
            parts = []
    if parts:
        yield b"\n".join(parts) + b"\n"
