"""Ray Data, natively: read an index as a ``ray.data.Dataset``, write a Dataset into an index.

``read_index`` opens one consistent snapshot (a point in time: every shard's generation pinned)
and makes **one read task per shard**. Each read task starts a small streaming task on the node
of the shard copy it reads (``NodeAffinitySchedulingStrategy``, soft: elsewhere if that node is
gone) which calls the copy's actor directly — no HTTP, no coordinator in the data path — and
walks the shard in ``_shard_doc`` order with ``search_after``, ``batch_size`` documents per
call, yielding one Arrow table per batch. The point in time is closed when the last read task
has finished (or by its keep-alive if the reader is abandoned). Rows are documents: ``_id`` and
the ``_source`` fields (``with_index`` adds ``_index``, ``with_score`` ``_score``).

``write_index`` sends a Dataset's batches to the coordinator's bulk verb with at most
``max_in_flight`` batches outstanding (back-pressure: the next batch is read only when one has
been acknowledged) and returns the counts; item errors are counted and the first ones kept, a
failed call raises.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ..engine.query.dsl import parse_query
from ..engine.query.nodes import MatchAll, Query
from ..engine.shard_messages import ShardQuery
from ..engine.sorting import SortField

MAX_BATCH = 10_000
_SHARD_DOC = (SortField("_shard_doc", "asc"),)


def _rows(hits: Any, index: str, with_index: bool, with_score: bool) -> list[dict[str, Any]]:
    out = []
    for i, d in enumerate(hits.docs or []):
        row: dict[str, Any] = {"_id": d.id}
        if with_index:
            row["_index"] = index
        if with_score:
            row["_score"] = float(hits.scores[i])
        source = orjson.loads(d.source) if isinstance(d.source, (bytes, str)) else d.source
        row.update(source or {})
        out.append(row)
    return out


def scan_shard(handle: Any, index: str, generation: int, query: Query, stats: Any,
               batch_size: int, with_index: bool, with_score: bool) -> Iterator[Any]:
    """A shard's documents at ``generation`` matching ``query``, as Arrow tables of at most
    ``batch_size`` rows, straight from the copy's actor. O(n / batch_size) actor calls."""
    import pyarrow as pa
    import ray
    after: list[Any] | None = None
    while True:
        q = ShardQuery(query=query, sort=_SHARD_DOC, k=batch_size, index_rank=0,
                       generation=generation, after=after, stats=stats,
                       track_scores=with_score,
                       prefetch=batch_size)
        hits = ray.get(handle.query.remote(q))
        if len(hits):
            yield pa.Table.from_pylist(_rows(hits, index, with_index, with_score))
        if len(hits) < batch_size:
            return
        after = [int(hits.columns[0][-1])]


def _remote_scan() -> Any:
    import ray
    return ray.remote(num_cpus=0)(scan_shard)


class _PitCloser:
    """Closes the read's point in time once every read task has finished."""

    def __init__(self, coord: Any, pit_id: str) -> None:
        self.coord, self.pit_id = coord, pit_id

    def close(self) -> None:
        import ray
        ray.get(self.coord.call.remote("close_pits", [self.pit_id]))


def _datasource_class() -> Any:
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    class ShardDatasource(Datasource):
        """One read task per shard of a pinned snapshot (see the module docstring)."""

        def __init__(self, plan: dict[str, Any], query: Query, batch_size: int,
                     with_index: bool, with_score: bool) -> None:
            self.plan, self.query = plan, query
            self.batch_size, self.with_index, self.with_score = batch_size, with_index, with_score

        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                           data_context: Any = None) -> list[ReadTask]:
            return [ReadTask(self._reader(t), BlockMetadata(None, None, None, None))
                    for t in self.plan["shards"]]

        def _reader(self, target: dict[str, Any]) -> Any:
            query, size, stats = self.query, self.batch_size, self.plan["stats"]
            flags = (self.with_index, self.with_score)

            def read() -> Iterator[Any]:
                import ray
                from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
                opts: dict[str, Any] = {}
                if target["node_id"]:
                    opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(
                        target["node_id"], soft=True)
                gen = _remote_scan().options(**opts).remote(
                    target["handle"], target["index"], target["generation"], query, stats, size,
                    *flags)
                for ref in gen:
                    yield ray.get(ref)
            return read

    return ShardDatasource


def read_index(index: str, query: dict[str, Any] | None = None, *, batch_size: int = 1000,
               with_index: bool = False, with_score: bool = False, keep_alive: str = "5m",
               coordinator: Any = None) -> Any:
    """The documents of ``index`` (an index expression) matching ``query`` (query DSL) as a
    ``ray.data.Dataset`` with one read task per shard, from one consistent snapshot.

    The snapshot is read eagerly: the Dataset is materialized before this returns, so the
    point in time it pins can be released here, whatever the caller does with the Dataset
    afterwards (Ray Data datasets are lazy; an unconsumed one would otherwise hold its pins
    until ``keep_alive`` runs out). ``with_score`` adds ``_score``, from the query's global
    statistics on the snapshot (the same score a search gives)."""
    import ray
    from ..coordinator import get_coordinator
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}")
    coord = coordinator or get_coordinator()
    parsed = parse_query(query) if query is not None else MatchAll()
    plan = ray.get(coord.call.remote("read_plan", index, keep_alive, parsed))
    try:
        source = _datasource_class()(plan, parsed, batch_size, with_index, with_score)
        return ray.data.read_datasource(source).materialize()
    finally:
        _PitCloser(coord, plan["pit_id"]).close()


def write_index(dataset: Any, index: str, *, id_column: str | None = "_id",
                batch_size: int = 500, max_in_flight: int = 4, refresh: bool = True,
                coordinator: Any = None) -> dict[str, Any]:
    """Bulk-load ``dataset`` into ``index`` through the coordinator, at most ``max_in_flight``
    batches of ``batch_size`` rows outstanding. Rows become documents; ``id_column`` (when the
    row has it) gives each ``_id``. Returns ``{"docs", "errors", "failures"}``."""
    import ray
    from ..coordinator import get_coordinator
    if not 1 <= batch_size <= MAX_BATCH or max_in_flight < 1:
        raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}, max_in_flight >= 1")
    coord = coordinator or get_coordinator()
    out: dict[str, Any] = {"docs": 0, "errors": 0, "failures": []}
    pending: list[Any] = []
    for batch in dataset.iter_batches(batch_size=batch_size, batch_format="pyarrow"):
        if len(pending) >= max_in_flight:
            done, pending = ray.wait(pending, num_returns=1)
            _tally(ray.get(done[0]), out)
        pending.append(coord.call.remote("bulk", _items(batch.to_pylist(), index, id_column)))
    for ref in pending:
        _tally(ray.get(ref), out)
    if refresh:
        ray.get(coord.call.remote("refresh", index))
    return out


def _items(rows: list[dict[str, Any]], index: str, id_column: str | None) -> list[dict]:
    items = []
    for row in rows:
        doc_id = row.pop(id_column, None) if id_column else None
        items.append({"action": "index", "index": index,
                      "id": None if doc_id is None else str(doc_id), "source": row})
    return items


def _tally(resp: dict[str, Any], out: dict[str, Any]) -> None:
    for item in resp.get("items", []):
        result = next(iter(item.values()))
        if "error" in result:
            out["errors"] += 1
            if len(out["failures"]) < 10:
                out["failures"].append(result["error"])
        else:
            out["docs"] += 1
