"""``bench --scale N``: the corpus made N times larger, deterministically, and how latency,
bulk rate and memory follow its size and the shard count.

Copy 0 of the corpus is the file itself. Copy ``k`` (1 <= k < N) rewrites each document's id
to ``<id>-<k>`` (in ``_id`` and in the source's ``id`` field) and rotates the words of its text
field (split on single spaces) by an offset drawn from a CRC-32 of the new id. The rotation
changes positions (phrases, highlights) but keeps each document's terms, frequencies and
length, so a term matches exactly N times as many documents and BM25's statistics scale
evenly. The copies are streamed from the file, one bulk body at a time: memory does not grow
with N.

Each factor 2, 4, ... up to N (powers of two, and N) is loaded at the plan's shard counts and
measured on page 1 of the ranked ``match`` (1 and 8 connections); factor 1 is the main run.
"""
from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from .corpus import Corpus, iter_ndjson
from .targets import data_memory


def copy_id(doc_id: str, k: int) -> str:
    """The id of document ``doc_id`` in copy ``k`` (copy 0 keeps the original)."""
    return doc_id if k == 0 else f"{doc_id}-{k}"


def rotate_words(text: str, key: str) -> str:
    """``text`` with its space-separated words rotated by an offset fixed by ``key``."""
    words = text.split(" ")
    if len(words) < 2:
        return text
    r = zlib.crc32(key.encode()) % len(words)
    return " ".join(words[r:] + words[:r])


def scaled_line(line: bytes, index: int, k: int, text_field: str) -> tuple[str, bytes]:
    """The id and NDJSON line of the document at ``index`` of the file, in copy ``k``."""
    doc = orjson.loads(line)
    new_id = copy_id(str(doc.get("id", index)), k)
    if k == 0:
        return new_id, line
    if "id" in doc:
        doc["id"] = new_id
    if isinstance(doc.get(text_field), str):
        doc[text_field] = rotate_words(doc[text_field], new_id)
    return new_id, orjson.dumps(doc)


def scaled_documents(base: Callable[[], Iterable[bytes]], factor: int, text_field: str,
                     done: Callable[[int, int], None] | None = None
                     ) -> Iterator[tuple[str, bytes]]:
    """Every (id, line) of ``factor`` copies of the lines ``base()`` yields, copy by copy;
    ``done(docs, raw_bytes)`` is called after the last one."""
    docs = raw = 0
    for k in range(factor):
        for index, line in enumerate(base()):
            doc_id, out = scaled_line(line, index, k, text_field)
            docs += 1
            raw += len(out) + 1
            yield doc_id, out
    if done is not None:
        done(docs, raw)


def scaled_corpus(corpus: Corpus, factor: int) -> Corpus:
    """``corpus`` times ``factor``, streamed (from its file when it has one); its
    ``raw_bytes`` is known once a load has read it through."""
    def base() -> Iterable[bytes]:
        return iter_ndjson(corpus.path, corpus.limit) if corpus.path else iter(corpus.lines)

    out = dataclasses.replace(corpus, name=f"{corpus.name} x{factor}", ids=[],
                              lines=corpus.lines[:2000], raw_bytes=0, count=len(corpus) * factor)

    def finished(docs: int, raw: int) -> None:
        out.raw_bytes = raw

    out.stream = lambda: scaled_documents(base, factor, corpus.text_field, finished)
    return out


def scale_factors(n: int) -> list[int]:
    """The factors measured beside the main run (factor 1): 2, 4, ... below ``n``, and ``n``."""
    out, f = [], 2
    while f < n:
        out.append(f)
        f *= 2
    return out + ([n] if n > 1 else [])


def scale_row(factor: int, shards: int, res: dict[str, Any]) -> dict[str, Any]:
    """What the scale plot and targets need from one engine run."""
    def page1(c: int) -> dict[str, Any]:
        return next((r for r in res["runs"] if r["query"] == "match" and r["depth"] == 0
                     and r["method"] == "from" and r["connections"] == c), {})
    mem = res["memory"]
    raw = mem["raw_ndjson_bytes"]
    return {"factor": factor, "shards": shards, "docs": res["bulk"]["docs"],
            "raw_bytes": raw, "docs_per_s": res["bulk"]["docs_per_s"],
            "bulk_cpu": res["bulk"].get("cpu"),   # CPU s by process: load, refresh
            "total_hits": page1(1).get("total_hits"), "page1_p50_ms": page1(1).get("p50_ms"),
            "page1_p99_ms": page1(1).get("p99_ms"), "page1_rps_8": page1(8).get("rps"),
            "page1_p99_ms_8": page1(8).get("p99_ms"),
            "memory_above_empty_pss": mem["loaded_above_empty_pss"],
            "memory_data_pss": data_memory(mem),
            "memory_over_raw": round(data_memory(mem) / max(1, raw), 3)}


async def run_scale(corpus: Corpus, plan: Any, out: Path, main_runs: dict[str, Any]
                    ) -> dict[str, Any]:
    """Factor 1 from the main runs, then each larger factor at each shard count."""
    from .bench import _log, bench_engine
    rows = [scale_row(1, int(s), res) for s, res in main_runs.items()]
    sub = dataclasses.replace(plan, queries=["match"], depths=[0])
    for factor in scale_factors(plan.scale):
        big = scaled_corpus(corpus, factor)
        for shards in plan.shard_counts:
            _log(f"scale x{factor}: {len(big):,} docs, {shards} shards")
            res = await bench_engine("shardsearch", shards, big, sub, out)
            rows.append(scale_row(factor, shards, res))
    return {"factors": [1] + scale_factors(plan.scale), "runs": rows,
            "method": "copy k>0: id '<id>-<k>', text words rotated by crc32(id)"}


def markdown(scale: dict[str, Any]) -> str:
    """The scale table: one row per (factor, shards)."""
    lines = ["| factor | shards | docs | bulk docs/s | matches | page-1 p50 / p99 ms (1 conn) | "
             "req/s (p99 ms) at 8 conn | memory of the data | × raw |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(scale["runs"], key=lambda r: (r["factor"], r["shards"])):
        lines.append(f"| {r['factor']} | {r['shards']} | {r['docs']:,} | {r['docs_per_s']:,.0f} | "
                     f"{r['total_hits']} | {r['page1_p50_ms']} / {r['page1_p99_ms']} | "
                     f"{r['page1_rps_8']} ({r['page1_p99_ms_8']}) | "
                     f"{r['memory_data_pss'] / 2**20:,.0f} MiB | {r['memory_over_raw']} |")
    return "\n".join(lines) + "\n"


def plot_scale(scale: dict[str, Any], out: Path) -> Path:
    """``scale.png``: page-1 p50 and memory against corpus size (one line per shard count),
    and page-1 p50 against shard count (one line per factor)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = scale["runs"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for shards in sorted({r["shards"] for r in runs}):
        mine = sorted((r for r in runs if r["shards"] == shards), key=lambda r: r["docs"])
        xs = [r["docs"] for r in mine]
        axes[0].plot(xs, [r["page1_p50_ms"] for r in mine], "o-", label=f"{shards} shards p50")
        axes[0].plot(xs, [r["page1_p99_ms"] for r in mine], "x:", label=f"{shards} shards p99")
        axes[1].plot(xs, [r["memory_data_pss"] / 2**20 for r in mine], "o-",
                     label=f"{shards} shards")
    for factor in sorted({r["factor"] for r in runs}):
        mine = sorted((r for r in runs if r["factor"] == factor), key=lambda r: r["shards"])
        axes[2].plot([r["shards"] for r in mine], [r["page1_p50_ms"] for r in mine], "o-",
                     label=f"x{factor} ({mine[0]['docs']:,} docs)")
    titles = [("documents", "page-1 ranked match, ms (1 connection)", "Latency vs corpus size"),
              ("documents", "memory of the data (PSS), MiB", "Memory vs corpus size"),
              ("shards", "page-1 p50, ms (1 connection)", "Latency vs shard count")]
    for ax, (xl, yl, title) in zip(axes, titles):
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "scale.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
