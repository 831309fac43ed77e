"""How many examples a property test runs: the thorough count, or a smaller one in the regular
run (``make test``, CI) for properties whose every example starts Ray worker processes (~1 s
per shard copy on a loaded 2-core box). ``SHARDSEARCH_THOROUGH=1`` (``make test-thorough``)
restores the thorough counts. In-process properties keep their full counts: their examples
are cheap (see ``young_collections`` in conftest.py)."""
from __future__ import annotations

import os

THOROUGH = os.environ.get("SHARDSEARCH_THOROUGH", "") not in ("", "0")


def examples(thorough: int, regular: int) -> int:
    """``thorough`` under ``SHARDSEARCH_THOROUGH=1``, else ``regular``."""
    return thorough if THOROUGH else regular
