"""Ray Data for shardsearch: ``read_index`` and ``write_index`` (``cluster/client/data.py``)."""
from __future__ import annotations

from shardsearch.cluster.client.data import read_index, write_index

__all__ = ["read_index", "write_index"]
