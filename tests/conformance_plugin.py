"""Prints ``conformance: N passed / M xfailed / T total`` at the end of a pytest run."""
from __future__ import annotations

from typing import Any

_MODULE = "test_conformance.py::"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """Count the YAML conformance cases by outcome (each case once, by its final outcome)."""
    outcome: dict[str, str] = {}
    for category, reports in terminalreporter.stats.items():
        for rep in reports:
            nodeid = getattr(rep, "nodeid", "")
            if _MODULE not in nodeid:
                continue
            if category in ("passed", "xfailed", "xpassed", "skipped", "failed", "error"):
                if outcome.get(nodeid) not in ("failed", "error"):
                    outcome[nodeid] = category
    if not outcome:
        return
    counts = {c: sum(1 for v in outcome.values() if v == c) for c in set(outcome.values())}
    line = (f"conformance: {counts.get('passed', 0)} passed / {counts.get('xfailed', 0)} xfailed"
            f" / {len(outcome)} total")
    extra = [f"{counts[c]} {c}" for c in ("failed", "error", "xpassed", "skipped") if counts.get(c)]
    if extra:
        line += " (" + ", ".join(extra) + ")"
    terminalreporter.write_line(line)
