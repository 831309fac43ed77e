"""The benchmark's report: the Markdown tables (targets first) and the plots."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def _cell(runs: list[dict[str, Any]], **want: Any) -> dict[str, Any] | None:
    for r in runs:
        if all(r.get(k) == v for k, v in want.items()):
            return r
    return None


def markdown_table(report: dict[str, Any]) -> str:
    """The README table: p50 ms (1 connection) / req/s (8 connections) per scenario."""
    m = report["machine"]
    header = (f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram_gib']} GiB RAM, Python "
              f"{m['python']}; load average at start {m['load_avg_start']}. Corpus: "
              f"{report['corpus']['name']} ({report['corpus']['docs']:,} docs, "
              f"{report['corpus']['raw_bytes'] / 1e6:.0f} MB NDJSON); query "
              f"`match {report['corpus']['text_field']}:{report['corpus']['term']}`, sort "
              f"`{report['corpus']['sort_field']}`.")
    columns = ("| engine | shards | query | depth | method | p50 ms (1 conn) | p99 ms (1 conn) | "
               "req/s (8 conn) | p50 ms (8 conn) | p99 ms (8 conn) |")
    lines = [header, "", columns, "|---|---|---|---|---|---|---|---|---|---|"]
    blocks: list[tuple[str, str, dict[str, Any]]] = []
    for s, res in sorted(report["shardsearch"].items(), key=lambda kv: int(kv[0])):
        blocks.append(("shardsearch", s, res))
    for peer in report.get("peers", []):
        if report.get(peer):
            blocks.append((peer, "1", report[peer]))
    for engine, shards, res in blocks:
        runs = res["runs"]
        seen = []
        for r in runs:
            k = (r["query"], r["depth"], r["method"])
            if k not in seen:
                seen.append(k)
        for q, d, meth in seen:
            c1 = _cell(runs, query=q, depth=d, method=meth, connections=1) or {}
            c8 = _cell(runs, query=q, depth=d, method=meth, connections=8) or {}
            lines.append(f"| {engine} | {shards} | {q} | {d:,} | {meth} | {c1.get('p50_ms')} | "
                         f"{c1.get('p99_ms')} | {c8.get('rps')} | {c8.get('p50_ms')} | "
                         f"{c8.get('p99_ms')} |")
    lines += ["", "| engine | shards | bulk docs/s | memory above empty (PSS) | peak RSS |",
              "|---|---|---|---|---|"]
    for engine, shards, res in blocks:
        mem = res.get("memory", {})
        lines.append(f"| {engine} | {shards} | {res['bulk']['docs_per_s']:,.0f} | "
                     f"{mem.get('loaded_above_empty_pss', 0) / 2**20:,.0f} MiB | "
                     f"{mem.get('peak_rss', 0) / 2**20:,.0f} MiB |")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], out: Path) -> list[Path]:
    """``latency_vs_depth.png`` (p50 at 1 connection, per engine, per query) and
    ``throughput_vs_shards.png`` (page-1 req/s at 8 connections)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    ours = report["shardsearch"]
    key = "2" if "2" in ours else (min(ours, key=int) if ours else None)
    queries = ["match", "sort", "match_all"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for ax, q in zip(axes, queries):
        series: list[tuple[str, list[dict[str, Any]], str, str]] = []
        if key is not None:
            series.append((f"shardsearch ({key} shards), from", ours[key]["runs"], "from", "o-"))
            series.append((f"shardsearch ({key} shards), search_after", ours[key]["runs"],
                           "search_after", "s--"))
        for peer, style in (("opensearch", "s-"), ("tantivy", "^-"), ("sqlite", "v-")):
            if report.get(peer):
                series.append((f"{peer} (FastAPI), from", report[peer]["runs"], "from", style))
        for label, runs, method, style in series:
            pts = sorted((r["depth"], r["p50_ms"]) for r in runs
                         if r["query"] == q and r["connections"] == 1 and r["p50_ms"] is not None
                         and (r["method"] == method or (r["depth"] == 0 and method != "from")))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_xscale("symlog", linthresh=1000)
        depths = sorted({r["depth"] for r in ours[key]["runs"]}) if key is not None else []
        if depths:
            ax.set_xticks(depths, ["page 1" if d == 0 else f"{d:,}" for d in depths])
        ax.set_yscale("log")
        ax.set_xlabel("depth (from)")
        ax.set_ylabel("p50 latency, ms (1 connection)")
        ax.set_title({"match": f"ranked match ({report['corpus']['term']})",
                      "sort": f"sort by {report['corpus']['sort_field']}",
                      "match_all": "match_all"}[q])
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Latency vs depth — {report['corpus']['name']}, "
                 f"{report['corpus']['docs']:,} docs, {report['machine']['nproc']} CPUs")
    fig.tight_layout()
    p = out / "latency_vs_depth.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    fig, ax = plt.subplots(figsize=(7, 4.6))
    for q, style in zip(queries, ("o-", "s-", "^-")):
        pts = []
        for s, res in sorted(ours.items(), key=lambda kv: int(kv[0])):
            c = _cell(res["runs"], query=q, depth=0, method="from", connections=8)
            if c:
                pts.append((int(s), c["rps"]))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"shardsearch {q}")
    for peer, color in (("opensearch", "tab:blue"), ("tantivy", "tab:red"),
                        ("sqlite", "tab:gray")):
        if report.get(peer):
            c = _cell(report[peer]["runs"], query="match", depth=0, method="from",
                      connections=8)
            if c:
                ax.axhline(c["rps"], color=color, ls="--", label=f"{peer} match (1 process)")
    ax.set_xlabel("shards")
    ax.set_ylabel("page-1 requests/s (8 connections)")
    ax.set_title("Throughput vs shards")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    p = out / "throughput_vs_shards.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    return paths


def full_markdown(report: dict[str, Any]) -> str:
    """``table.md``: the targets (reached or not, with blockers), then every scenario's
    table that the run has."""
    from . import aggs, scale, targets, two_node
    parts = ["## Targets\n", targets.markdown(report.get("targets") or {})]
    if report.get("shardsearch"):
        parts += ["## Engines\n", markdown_table(report)]
    if report.get("aggs"):
        parts += ["## Aggregations\n", aggs.markdown(report["aggs"])]
    if report.get("scale"):
        parts += ["## Scale\n", scale.markdown(report["scale"])]
    if report.get("two_node"):
        parts += ["## Two nodes\n", two_node.markdown(report["two_node"])]
    return "\n".join(parts)


def plot_all(report: dict[str, Any], out: Path) -> list[Path]:
    """Every plot the run has data for."""
    paths = plot(report, out) if report.get("shardsearch") else []
    if report.get("scale"):
        from .scale import plot_scale
        paths.append(plot_scale(report["scale"], out))
    return paths
