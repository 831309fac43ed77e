"""What one shard's data costs in memory, item by item, and how fast it is built and queried.

One shard of ``--shards`` (documents routed to ``--shard`` by the service's own Murmur3 rule) is
loaded in this process, without Ray, through the same path as the service: each document parsed
with ``doc_parsing.parse_document`` into a ``WriteOp`` (the raw NDJSON line is the ``_source``),
sent in bulk-sized batches to a ``ShardCopy`` (write-ahead log and snapshots in a temporary directory,
as ``shardsearch serve --data-dir``) or, with ``--core``, to a bare ``ShardCore``; then one refresh.

Reported:

* RSS of the process before loading, after the writes (buffered), and after the refresh — the
  last minus the first is what the shard's data costs (glibc heap included, as in the service);
* a breakdown of the retained objects by item (deep size, every object counted once, in the
  order listed: ``term_list`` only counts its list when its strings are the dictionary's keys);
* CPU time of the refresh (the segment build) and latency of representative queries;
* a digest of the results of those queries (hits, scores, totals, fetched sources), to compare
  two versions of the code: equal digests, equal answers.

    .venv/bin/python benchmarks/shard_memory.py [--corpus PATH] [--shards 2] [--shard 0] [--core]

Without the corpus (``../shared/corpora/gcide.ndjson.gz`` beside the repository by default) it
says so and exits.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import gzip
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from shardsearch.cluster.engine.doc_parsing import parse_document
from shardsearch.cluster.engine.mapping import Mapping
from shardsearch.cluster.engine.query.rewrite import scoring_terms
from shardsearch.cluster.engine.shard_messages import ShardQuery
from shardsearch.cluster.engine.query.dsl import parse_query
from shardsearch.cluster.indices.routing import shard_for
from shardsearch.cluster.engine.shard import ShardCore
from shardsearch.cluster.engine.writes import WriteOp
from shardsearch.cluster.distribution.shard_copy import ShardCopy
from shardsearch.cluster.engine.sorting import SCORE_SORT, parse_sort

from shardsearch.benchmarks.bench import DEFAULT_CORPUS, infer_mapping

BATCH = 5000   # lines per _bulk request in the benchmark; each shard gets its share

QUERIES: list[tuple[str, dict[str, Any], Any]] = [
    ("match text", {"match": {"text": "webster"}}, None),
    ("match 2 terms", {"match": {"text": "french horse"}}, None),
    ("match_phrase", {"match_phrase": {"text": "a small horse"}}, None),
    ("match_all sort headword", {"match_all": {}}, [{"headword": "asc"}]),
    ("match sort headword desc", {"match": {"text": "water"}}, [{"headword": "desc"}]),
    ("match_all", {"match_all": {}}, None),
    ("term pos", {"term": {"pos": "n."}}, [{"senses": "desc"}]),
    ("prefix headword", {"prefix": {"headword": "ab"}}, None),
    ("wildcard text", {"wildcard": {"text": "hors*"}}, None),
    ("regexp text", {"regexp": {"text": "w[aeiou]ter.*"}}, None),
    ("range senses", {"range": {"senses": {"gte": 3}}}, [{"words": "asc"}]),
    ("query_string", {"query_string": {"query": "text:(sea OR ship) AND pos:n."}}, None),
]


def rss() -> int:
    """Resident set size of this process, in bytes (after a collection and a heap trim)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def deep_size(obj: Any, seen: set[int]) -> int:
    """Bytes held by ``obj`` and everything it references that ``seen`` has not counted yet."""
    if id(obj) in seen or obj is None or isinstance(obj, (type, bool)):
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        base = obj
        while isinstance(base.base, np.ndarray):
            base = base.base
        size = 0
        if base is not obj:
            if id(base) in seen:
                return 0
            seen.add(id(base))
        size += base.nbytes if base.flags.owndata or base.base is None else obj.nbytes
        if obj.dtype == object:
            size += sum(deep_size(x, seen) for x in obj.ravel().tolist())
        return size
    size = sys.getsizeof(obj)
    if isinstance(obj, (str, bytes, bytearray, int, float)):
        return size
    if isinstance(obj, memoryview):
        return size + deep_size(obj.obj, seen)
    if isinstance(obj, dict):
        return size + sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return size + sum(deep_size(x, seen) for x in obj)
    for name in _attrs(obj):
        size += deep_size(getattr(obj, name, None), seen)
    return size


def _attrs(obj: Any) -> list[str]:
    names: list[str] = []
    for cls in type(obj).__mro__:
        names += [s for s in getattr(cls, "__slots__", ()) if s not in names]
    names += [k for k in getattr(obj, "__dict__", {}) if k not in names]
    return names


def breakdown(core: ShardCore, copy: ShardCopy | None) -> dict[str, int]:
    """Deep size of each item of the shard's state, summed over segments and fields."""
    seen: set[int] = set()
    out: dict[str, int] = {}

    def add(key: str, obj: Any) -> None:
        out[key] = out.get(key, 0) + deep_size(obj, seen)

    for seg in core.segments:
        add("segment: _source", seg.sources)
        add("segment: ids", seg.ids)
        for name in ("seq", "version", "created_gen", "deleted_gen"):
            add("segment: seq/version/gens", getattr(seg, name))
        add("segment: routing", seg.routing)
        for fname, fd in seg.fields.items():
            kind = type(fd).__name__.replace("Field", "").lower()
            post = getattr(fd, "postings", None)
            if post is not None:
                for name in _attrs(post):
                    add(f"{kind} postings.{name}", getattr(post, name, None))
            for name in _attrs(fd):
                if name != "postings":
                    add(f"{kind} {name}", getattr(fd, name))
        add("segment: other", seg)
    add("core: live map", core.live)
    add("core: tombstones", core.tombstones)
    add("core: write buffer", core.buffer)
    add("core: caches", [core._stats_cache, core._sorted_cache,
                         core.__dict__.get("_ords_cache")])
    add("core: other", core)
    if copy is not None:
        add("copy: last_result", copy.last_result)
        add("copy: other", copy)
    return out


def read_lines(path: Path) -> Any:
    with gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line:
                yield line


def corpus_mapping(path: Path) -> Mapping:
    """The benchmark's mapping (``bench.load_corpus``): inferred from the first 2,000
    documents, ``headword`` a keyword and ``text`` a text field."""
    sample = []
    for line in read_lines(path):
        sample.append(orjson.loads(line))
        if len(sample) >= 2000:
            break
    body = infer_mapping(sample)
    props = body["properties"]
    if "headword" in props:
        props["headword"] = {"type": "keyword"}
    if "text" in props:
        props["text"] = {"type": "text"}
    return Mapping.from_body(body)


def load(path: Path, mapping: Mapping, shards: int, shard: int, core_only: bool,
         data_dir: str) -> tuple[ShardCore, ShardCopy | None, int, int]:
    """The shard's documents written in batches; returns ``(core, copy, docs, raw bytes)``."""
    copy = None if core_only else ShardCopy("bench", shard, mapping, 0, "uuid-mem", data_dir, {})
    core = ShardCore("bench", shard, mapping) if copy is None else copy.core
    seq = 0
    op_no = 0
    docs = raw = 0
    batch: list[WriteOp] = []
    pending = 0

    def send() -> None:
        nonlocal op_no
        if copy is None:
            core.apply(batch)
        else:
            copy.command(op_no, "apply", (list(batch), None, False), f"c{op_no}",
                         f"c{op_no - 1}" if op_no else None)
            op_no += 1
        batch.clear()

    for line in read_lines(path):
        doc = orjson.loads(line)
        doc_id = str(doc.get("id", seq))
        seq += 1
        pending += 1
        if shard_for(doc_id, shards) == shard:
            fields, _ = parse_document(doc, mapping, doc_id)
            batch.append(WriteOp(op="index", id=doc_id, seq=seq, source=bytes(line),
                                 fields=fields))
            docs += 1
            raw += len(line) + 1
        if pending >= BATCH:
            send()
            pending = 0
    if batch:
        send()
    return core, copy, docs, raw


def refresh(core: ShardCore, copy: ShardCopy | None) -> float:
    """CPU seconds of the refresh (the segment build)."""
    t0 = time.process_time()
    if copy is None:
        core.refresh()
    else:
        copy.command(copy.last_op + 1, "refresh", (), "refresh", copy.last_id)
    return time.process_time() - t0


def shard_query(core: ShardCore, dsl: dict[str, Any], sort: Any) -> ShardQuery:
    query = parse_query(dsl)
    terms = scoring_terms(query, core.mapping)
    stats, _ = core.term_stats(sorted({f for f, _ in terms}), sorted(terms))
    return ShardQuery(query=query, sort=parse_sort(sort) or SCORE_SORT, k=10, index_rank=0,
                      stats=stats)


def run_queries(core: ShardCore, repeat: int) -> tuple[dict[str, float], str]:
    """Median milliseconds of each query (query phase + fetch of its page), and a digest of
    every answer."""
    digest = hashlib.sha256()
    times: dict[str, float] = {}
    for name, dsl, sort in QUERIES:
        q = shard_query(core, dsl, sort)
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            hits = core.query(q)
            docs = core.fetch(hits.addr.tolist())
            samples.append((time.perf_counter() - t0) * 1000)
        times[name] = statistics.median(samples)
        digest.update(orjson.dumps([name, hits.total, hits.scores.tolist(), hits.ties.tolist(),
                                    [c.tolist() for c in hits.columns]],
                                   option=orjson.OPT_SERIALIZE_NUMPY))
        for d in docs:
            digest.update(d.id.encode() + b"\0" + d.source + b"\0")
    for prefix in ("a", "wat", "zz"):   # term expansion over the term dictionaries
        for seg in core.segments:
            for fname in sorted(seg.fields):
                post = getattr(seg.fields[fname], "postings", None)
                if post is not None:
                    digest.update(orjson.dumps([fname, post.terms_with_prefix(prefix)]))
    return times, digest.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--shard", type=int, default=0)
    ap.add_argument("--core", action="store_true", help="a bare ShardCore (no log, no copy)")
    ap.add_argument("--repeat", type=int, default=7, help="runs of each query")
    args = ap.parse_args()
    if not args.corpus.exists():
        print(f"shard_memory: corpus {args.corpus} not found; nothing to measure")
        return
    mapping = corpus_mapping(args.corpus)
    with tempfile.TemporaryDirectory(prefix="shard-memory-") as data_dir:
        base = rss()
        t0 = time.process_time()
        core, copy, docs, raw = load(args.corpus, mapping, args.shards, args.shard, args.core,
                                     data_dir)
        load_cpu = time.process_time() - t0
        buffered = rss()
        refresh_cpu = refresh(core, copy)
        loaded = rss()
        times, digest = run_queries(core, args.repeat)
        after_queries = rss()
        items = breakdown(core, copy)
    mib = 1 << 20
    print(f"shard {args.shard} of {args.shards} ({'ShardCore' if args.core else 'ShardCopy'}): "
          f"{docs} docs, {raw / mib:.1f} MiB raw NDJSON")
    print(f"RSS above start: buffered {(buffered - base) / mib:.1f} MiB, after refresh "
          f"{(loaded - base) / mib:.1f} MiB ({(loaded - base) / raw:.2f}x raw), after queries "
          f"{(after_queries - base) / mib:.1f} MiB")
    print(f"CPU: load (parse + apply) {load_cpu:.2f} s, refresh {refresh_cpu:.2f} s")
    print("retained, by item (deep size):")
    total = sum(items.values())
    for key, size in sorted(items.items(), key=lambda kv: -kv[1]):
        if size >= 64 << 10:
            print(f"  {key:34} {size / mib:8.2f} MiB")
    print(f"  {'total':34} {total / mib:8.2f} MiB")
    print("query + fetch, median ms:")
    for name, ms in times.items():
        print(f"  {name:34} {ms:8.2f}")
    print(f"results digest: {digest}")


if __name__ == "__main__":
    main()
