"""shardsearch: a sharded, Elasticsearch-compatible search service on Ray actors."""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Cluster", "__version__"]


def __getattr__(name: str):  # lazy, so `import shardsearch` does not import Ray
    if name == "Cluster":
        from shardsearch.cluster.client.handle import Cluster

        return Cluster
    raise AttributeError(name)
