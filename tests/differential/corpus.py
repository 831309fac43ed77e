"""The documents and mapping loaded into both systems: small, seeded, and varied enough to tie.

Few distinct words (so queries match many documents and scores vary), small integers (so sorts
tie and the tie-break shows), fields missing from some documents (``exists``, ``missing``) and
multi-valued keywords (sort mode min/max).
"""
from __future__ import annotations

import random
from typing import Any

INDEX = "diff"
SHARDS = 3                                   # ours; OpenSearch has 1 (shard-invariant scores)
WORDS = ("apple banana cherry delta echo fox golf hotel india juliet kilo lima mango nova oscar "
         "papa quartz romeo sierra tango").split()
TAGS = ("alpha", "beta", "gamma", "delta", "alpine", "bravo", "Beta", "gam-ma")
N_DOCS = 160

MAPPING: dict[str, Any] = {"properties": {
    "title": {"type": "text"},
    "body": {"type": "text"},
    "tag": {"type": "keyword"},
    "n": {"type": "integer"},
    "price": {"type": "double"},
    "date": {"type": "date"},
    "uid": {"type": "long"},
}}
TEXT_FIELDS = ("title", "body")
KEYWORD_FIELDS = ("tag",)
NUMERIC_FIELDS = ("n", "price", "uid")
DATE_FIELDS = ("date",)
SORTABLE = ("n", "price", "uid", "tag", "date")


def _words(rng: random.Random, lo: int, hi: int) -> str:
    # a Zipf-like pick: low-index words are common, so document frequencies differ
    return " ".join(WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)]
                    for _ in range(rng.randint(lo, hi)))


def documents(seed: int = 14) -> list[tuple[str, dict[str, Any]]]:
    """``(id, source)`` pairs, in the order both systems index them (the tie-break order)."""
    rng = random.Random(seed)
    docs = []
    for i in range(N_DOCS):
        src: dict[str, Any] = {"uid": i, "title": _words(rng, 1, 5), "n": rng.randint(0, 12)}
        if rng.random() < 0.85:
            src["body"] = _words(rng, 3, 25)
        if rng.random() < 0.8:
            k = rng.choice((1, 1, 1, 2))
            tags = rng.sample(TAGS, k)
            src["tag"] = tags[0] if k == 1 else tags
        if rng.random() < 0.75:
            src["price"] = round(rng.uniform(0, 100), 2)
        if rng.random() < 0.7:
            src["date"] = f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}"
        docs.append((f"d{i:03d}", src))
    return docs
