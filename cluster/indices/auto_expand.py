"""``index.auto_expand_replicas``: the replica count follows the number of data nodes (pure:
tested without Ray).

Elasticsearch's ``AutoExpandReplicas``: ``"min-max"`` (``max`` may be ``all``) or ``false``;
the index gets ``nodes - 1`` replicas, clamped to ``[min, max]``. Kibana creates its indices
with ``0-1`` and then waits for ``all`` copies: on one node that means no replica. Here the
count is set when the index is created and when the setting changes; a node joining or
leaving later does not change it (Elasticsearch re-expands then).
"""
from __future__ import annotations

from typing import Any

from ..errors import IllegalArgument


def parse_auto_expand(value: Any) -> tuple[int, int | None] | None:
    """``(min, max)`` (``max`` None: ``all``), or None when off (``false`` or unset)."""
    if value is None or value is False or value == "false":
        return None
    text = str(value)
    dash = text.find("-")
    if dash <= 0:
        raise IllegalArgument(f"failed to parse [index.auto_expand_replicas] from value: "
                              f"[{text}] at index {dash}")
    low, high = text[:dash], text[dash + 1:]
    try:
        lo = int(low)
        hi = None if high == "all" else int(high)
    except ValueError:
        raise IllegalArgument(f"failed to parse [index.auto_expand_replicas] from value: "
                              f"[{text}] at index {dash}") from None
    if lo < 0 or (hi is not None and hi < lo):
        raise IllegalArgument(f"[index.auto_expand_replicas] must be a range min-max with "
                              f"0 <= min <= max, got [{text}]")
    return lo, hi


def expanded_replicas(value: Any, data_nodes: int, replicas: int) -> int:
    """The replica count under ``auto_expand_replicas`` ``value`` with ``data_nodes`` nodes;
    ``replicas`` (``number_of_replicas``) when it is off."""
    bounds = parse_auto_expand(value)
    if bounds is None:
        return replicas
    lo, hi = bounds
    top = max(data_nodes - 1, 0) if hi is None else hi
    return min(max(data_nodes - 1, lo), max(top, lo))
