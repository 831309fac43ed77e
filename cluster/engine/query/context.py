"""What evaluating a query against a segment needs beyond the segment itself."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..cancellation import NO_LIMIT, Cancellation
from ..mapping import Mapping
from ..scoring import Stats


@dataclass
class Context:
    """The mapping, the global statistics, ``now`` for date math, and when to stop."""

    mapping: Mapping
    stats: Stats | None
    index_name: str = ""
    now_ms: int | None = None
    cancel: Cancellation = field(default=NO_LIMIT)   # checked per clause and per expansion
