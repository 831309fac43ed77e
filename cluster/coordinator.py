"""The coordinator: a thin facade that wires the layers and names the verbs the actor runs.

``Coordinator`` is plain async Python over a :class:`~.distribution.local_backend.ShardBackend`;
the Ray actor (``distribution/coordinator_actor.py``) is a thin async shell around it, so one slow
search never blocks the others, and it runs only the verbs in ``Coordinator.VERBS``. Each verb
belongs to one layer object:

* ``admin`` (``indices/admin.py``): the catalog of indices, mappings, settings, refresh;
* ``status`` (``indices/status.py``): shard copies, health, ``_cat/indices``, ``GET /``;
* ``documents/``: bulk writes and real-time get;
* ``search_path`` (``search/phases.py``): the path of one search, as a list of named steps;
* ``cursor_ops`` (``search/cursor_phase.py``): every top-level search, with point in time,
  scroll and page tokens choosing its snapshot;
* ``search_settings`` (``search/settings.py``): the ``search.*`` cluster settings;
* ``sim`` (``distribution/simulation.py``): simulated trouble on shard actors.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from .distribution.local_backend import ShardBackend
from .distribution.simulation import SimulationControl
from .documents.bulk_updates import bulk_with_updates
from .documents.by_query import submit
from .documents.by_query_request import ByQuery
from .documents.get import GetOptions, get_doc
from .documents.mget import mget
from .documents.tasks import TaskRegistry
from .documents.update import UpdateRequest, parse_update, update
from .engine.query.nodes import Query
from .indices import nodes, segments
from .indices.admin import IndexAdmin
from .indices.analyze import analyze
from .indices.cluster_state import cluster_state
from .indices.stats import index_stats
from .indices.node_metrics import sample as node_sample
from .indices.stored_scripts import StoredScripts
from .indices.status import ClusterStatus
from .distribution.shard_service import node_id
from .errors import SearchError
from .search import mlt_items, terms_lookup
from .search.cursor_phase import CursorOps
from .search.phases import SearchPath
from .search.request import SearchRequest
from .search.settings import SearchSettings
from .search.tuning import SearchTuning
from .setting_defaults import index_defaults


class _Delegated:
    """An attribute of the facade that lives on one of its layer objects (tests and benchmarks
    read and turn these on the coordinator)."""

    def __init__(self, owner: str, name: str | None = None) -> None:
        self.owner, self.name = owner, name

    def __set_name__(self, cls: type, name: str) -> None:
        self.name = self.name or name

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        return self if obj is None else getattr(getattr(obj, self.owner), self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(getattr(obj, self.owner), self.name, value)


class Coordinator:
    """Index metadata, write routing and search orchestration (no Ray in here)."""

    # the remote interface: the only methods the actor (and its fast lane) runs by name
    VERBS = frozenset({
        # indices
        "create_index", "delete_index", "resolve", "write_targets", "write_index_name",
        "get_index", "index_exists", "get_mapping",
        "put_mapping", "get_field_mapping", "field_caps", "get_settings", "put_settings", "refresh",
        "force_merge", "segments", "cat_segments",
        "update_aliases", "put_alias", "delete_alias", "get_alias", "alias_exists",
        "cat_aliases", "close_index", "open_index", "stats", "cat_nodes",
        "put_index_template", "get_index_template", "delete_index_template", "cluster_state",
        "put_component_template", "get_component_template", "delete_component_template",
        "simulate_index", "simulate_template",
        "analyze", "put_script", "get_script", "delete_script", "stored_scripts",
        # documents
        "bulk", "get_doc", "mget", "update", "update_script", "by_query", "get_task", "list_tasks",
        "cancel_tasks", "rethrottle",
        # search and cursors
        "search", "count", "open_pit", "close_pits", "list_pits", "scroll", "clear_scroll",
        "read_plan",
        "get_cluster_settings", "put_cluster_settings",
        # cluster
        "health", "info", "cat_indices", "shard_infos", "nodes_info", "nodes_stats",
        "search_shards", "simulate", "simulate_clear", "simulation",
    })

    indices = _Delegated("admin")
    durable = _Delegated("admin")
    auto_refresh = _Delegated("admin")
    cursors = _Delegated("cursor_ops")
    prefetch_max = _Delegated("tuning")
    prefetch_deep_max = _Delegated("tuning")
    deep_page_threshold = _Delegated("tuning")
    deep_page_samples = _Delegated("tuning")

    def __init__(self, backend: ShardBackend, cluster_name: str = "shardsearch") -> None:
        self.backend = backend
        self.admin = IndexAdmin(backend)
        self.status = ClusterStatus(self.admin, backend, cluster_name)
        self.search_settings = SearchSettings()
        self.tuning = SearchTuning()
        self.search_path = SearchPath(self.admin, backend, self.search_settings, self.tuning)
        self.cursor_ops = CursorOps(self.admin, backend, self.search_settings, self.search_path)
        self.sim = SimulationControl(self.admin, backend)
        self.tasks = TaskRegistry(self.status.node_name)
        self.scripts = StoredScripts()

    # --- indices (indices/admin.py) -------------------------------------------------------------

    def create_index(self, name: str, body: dict[str, Any] | None = None,
                     wait_for_active_shards: Any = None) -> dict[str, Any]:
        return self.admin.create_index(name, body, wait_for_active_shards)

    def delete_index(self, expr: str, **options: bool) -> dict[str, Any]:
        """Delete the indices (``options``: the resolver's) and the cursors that read them."""
        self.cursor_ops.forget_cursors_of(self.admin.delete_index(expr, **options))
        return {"acknowledged": True}

    def resolve(self, expr: str | tuple[str, ...] | list[str] | None, **options: Any) -> list[str]:
        return self.admin.resolve(expr, **options)

    def write_targets(self, names: list[tuple[str, bool]]) -> list[str]:
        """The indices writes to ``names`` land in (``indices/admin.py``)."""
        return self.admin.write_targets(names)

    def write_index_name(self, name: str) -> str:
        """The index a write to ``name`` goes to; an alias without a write index is
        Elasticsearch's 400 (``indices/admin.py``)."""
        return self.admin.write_index(name)[0]

    def get_index(self, expr: str, include_defaults: bool = False,
                  **options: bool) -> dict[str, Any]:
        return self._with_defaults(self.admin.get_index(expr, **options), include_defaults)

    def index_exists(self, expr: str) -> bool:
        return self.admin.index_exists(expr)

    def get_mapping(self, expr: str | None) -> dict[str, Any]:
        return self.admin.get_mapping(expr)

    def get_field_mapping(self, expr: str | None, fields: list[str]) -> dict[str, Any]:
        return self.admin.get_field_mapping(expr, fields)

    def field_caps(self, expr: str | None, fields: list[str], **options: Any) -> dict[str, Any]:
        return self.admin.field_caps(expr, fields, **options)

    async def put_mapping(self, expr: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.admin.put_mapping(expr, body)

    def get_settings(self, expr: str | None, include_defaults: bool = False) -> dict[str, Any]:
        return self._with_defaults(self.admin.get_settings(expr), include_defaults)

    def _with_defaults(self, out: dict[str, Any], include_defaults: bool) -> dict[str, Any]:
        """``include_defaults=true``: each index's ``defaults`` (``setting_defaults.py``)."""
        if include_defaults:
            for name, body in out.items():
                body["defaults"] = index_defaults(self.indices[name])
        return out

    def put_settings(self, expr: str | None, body: dict[str, Any]) -> dict[str, Any]:
        return self.admin.put_settings(expr, body)

    async def refresh(self, expr: str | None) -> dict[str, Any]:
        return await self.admin.refresh(expr)

    # --- aliases, open and close (indices/aliases.py, indices/admin.py) -------------------------

    def update_aliases(self, actions: Any) -> dict[str, Any]:
        return self.admin.update_aliases(actions)

    def put_alias(self, expr: str, name: str, body: dict[str, Any] | None) -> dict[str, Any]:
        return self.admin.put_alias(expr, name, body)

    def delete_alias(self, expr: str, name: str) -> dict[str, Any]:
        return self.admin.delete_alias(expr, name)

    def get_alias(self, expr: str | None, name: str | None, **options: Any) -> dict[str, Any]:
        return self.admin.get_alias(expr, name, **options)

    def alias_exists(self, expr: str | None, name: str, **options: Any) -> bool:
        return self.admin.alias_exists(expr, name, **options)

    def cat_aliases(self, name: str | None) -> list[dict[str, Any]]:
        return self.admin.cat_aliases(name)

    def put_index_template(self, name: str, body: Any, create: bool = False) -> dict[str, Any]:
        return self.admin.put_index_template(name, body, create)

    def get_index_template(self, name: str | None) -> dict[str, Any]:
        return self.admin.get_index_template(name)

    def delete_index_template(self, name: str) -> dict[str, Any]:
        return self.admin.delete_index_template(name)

    def put_component_template(self, name: str, body: Any, create: bool = False
                               ) -> dict[str, Any]:
        return self.admin.put_component_template(name, body, create)

    def get_component_template(self, name: str | None) -> dict[str, Any]:
        return self.admin.get_component_template(name)

    def delete_component_template(self, name: str) -> dict[str, Any]:
        return self.admin.delete_component_template(name)

    def simulate_index(self, index: str, body: Any = None) -> dict[str, Any]:
        return self.admin.simulate_index(index, body)

    def simulate_template(self, name: str | None, body: Any, create: bool = False
                          ) -> dict[str, Any]:
        return self.admin.simulate_template(name, body, create)

    # --- stored scripts (indices/stored_scripts.py) ---------------------------------------------

    def put_script(self, script_id: str, body: Any, context: str | None = None
                   ) -> dict[str, Any]:
        return self.scripts.put(script_id, body, context)

    def get_script(self, script_id: str) -> tuple[int, dict[str, Any]]:
        return self.scripts.get(script_id)

    def delete_script(self, script_id: str) -> dict[str, Any]:
        return self.scripts.delete(script_id)

    def stored_scripts(self, ids: list[str]) -> dict[str, dict[str, str]]:
        """The stored scripts a request names, so the front end resolves it before parsing."""
        return self.scripts.lookup(ids)

    def close_index(self, expr: str) -> dict[str, Any]:
        return self.admin.set_state(expr, "close")

    def open_index(self, expr: str) -> dict[str, Any]:
        return self.admin.set_state(expr, "open")

    async def stats(self, expr: str | None, metrics: list[str] | None = None,
                    level: str = "indices") -> dict[str, Any]:
        """``_stats``: the copies' counters summed per index (``indices/stats.py``)."""
        return index_stats(self.admin, await self.status.shard_infos(), expr, metrics, level)

    # --- documents (documents/) -----------------------------------------------------------------

    async def bulk(self, items: list[dict[str, Any]] | bytes, refresh: bool = False,
                   as_json: bool = False) -> dict[str, Any]:
        """Apply a batch of writes (``documents/bulk.py``; updates: ``bulk_updates.py``)."""
        return await bulk_with_updates(self.admin, items, refresh, as_json)

    async def update(self, req: UpdateRequest) -> dict[str, Any]:
        """One partial update (``documents/update.py``): read, merge, conditional write."""
        return await update(self.admin, req)

    async def get_doc(self, index: str, doc_id: str, routing: str | None = None,
                      options: GetOptions | None = None) -> dict[str, Any]:
        index, routing = self.admin.read_index(index, routing)   # aliases, closed indices
        return await get_doc(self.indices, self.backend, index, doc_id, routing, options)

    async def mget(self, items: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
        """``_mget`` (``documents/mget.py``): each document answered or failed in its place."""
        return await mget(self.indices, self.backend, items, self.admin.read_index)

    async def update_script(self, index: str, doc_id: str, body: dict[str, Any],
                            options: dict[str, Any]) -> dict[str, Any]:
        """``_update`` with a script: parsed here, where it is compiled and runs
        (``documents/update.py``); ``options`` are :func:`parse_update`'s keywords."""
        return await update(self.admin, parse_update(index, doc_id, body, **options))

    async def by_query(self, job: ByQuery) -> tuple[int, dict[str, Any]]:
        """``_delete_by_query``, ``_update_by_query``, ``_reindex`` (``documents/by_query.py``):
        ``(http status, response)``."""
        return await submit(job, self, self.tasks)

    def get_task(self, task_id: str) -> dict[str, Any]:
        return self.tasks.get(task_id)

    def list_tasks(self, actions: str | None = None, detailed: bool = False) -> dict[str, Any]:
        return self.tasks.list(actions, detailed, self.status.node_name)

    def cancel_tasks(self, task_id: str | None, actions: str | None = None) -> dict[str, Any]:
        return self.tasks.cancel(task_id, actions, self.status.node_name)

    def rethrottle(self, task_id: str, requests_per_second: float | None) -> dict[str, Any]:
        return self.tasks.rethrottle(task_id, requests_per_second, self.status.node_name)

    # --- search and cursors (search/) -----------------------------------------------------------

    async def search(self, req: SearchRequest,
                     snapshot: dict[tuple[str, int], int] | None = None) -> dict[str, Any]:
        """One search (``search/phases.py``); ``snapshot`` None means a top-level search, whose
        snapshot the cursors choose (point in time, scroll, page tokens)."""
        req = await self._resolve_lookups(req)
        req = await self._resolve_like_items(req)
        if snapshot is None:
            return await self.cursor_ops.search(req)
        return await self.search_path.run(req, snapshot)

    async def _resolve_lookups(self, req: SearchRequest) -> SearchRequest:
        """The request with its ``terms`` lookups fetched (``search/terms_lookup.py``)."""
        if not terms_lookup.in_request(req):
            return req
        try:
            limit = terms_lookup.max_terms_count(self.search_path.targets(req))
        except SearchError:      # the search reports it (or searches a point in time)
            limit = terms_lookup.MAX_TERMS_COUNT
        query = await terms_lookup.resolve(req.query, self.get_doc, limit)
        post = None if req.post_filter is None else \
            await terms_lookup.resolve(req.post_filter, self.get_doc, limit)
        aggs = await terms_lookup.resolve_aggs(req.aggs, self.get_doc, limit)
        if query is req.query and post is req.post_filter and aggs is req.aggs:
            return req
        return replace(req, query=query, post_filter=post, aggs=aggs)

    async def _resolve_like_items(self, req: SearchRequest) -> SearchRequest:
        """The request with its ``more_like_this`` documents fetched (``search/mlt_items.py``)."""
        if not mlt_items.in_request(req):
            return req
        try:
            names = [m.name for m in self.search_path.targets(req)]
        except SearchError:      # the search reports it (a point in time names its own)
            names = []
        default = names[0] if len(names) == 1 else None
        query = await mlt_items.resolve(req.query, self.get_doc, default)
        post = await mlt_items.resolve(req.post_filter, self.get_doc, default)
        named = tuple([(n, await mlt_items.resolve(q, self.get_doc, default))
                       for n, q in req.named])
        return replace(req, query=query, post_filter=post, named=named)

    async def count(self, indices: tuple[str, ...], query: Query,
                    terminate_after: int | None = None, min_score: float | None = None,
                    routing: str | None = None, preference: str | None = None,
                    **options: bool) -> dict[str, Any]:
        """``_count``: a search of no hits that tracks the total (``options``: the resolver's
        ``ignore_unavailable``, ``allow_no_indices``, ``expand_wildcards``)."""
        req = SearchRequest(indices=indices, query=query, size=0, track_total_hits=True,
                            terminate_after=terminate_after, min_score=min_score,
                            routing=routing, preference=preference, **options)
        resp = await self.search(req)
        out = {"count": resp["hits"]["total"]["value"], "_shards": resp["_shards"]}
        if terminate_after is not None:
            out["terminated_early"] = resp.get("terminated_early", False)
        return out

    async def open_pit(self, expr: str, keep_alive: str | None, *,
                       ignore_unavailable: bool = False, allow_no_indices: bool = True,
                       flavor: str = "elasticsearch") -> dict[str, Any]:
        return await self.cursor_ops.open_pit(
            expr, keep_alive, ignore_unavailable=ignore_unavailable,
            allow_no_indices=allow_no_indices, flavor=flavor)

    async def close_pits(self, ids: list[str] | None) -> list[tuple[str, bool, int]]:
        return await self.cursor_ops.close_pits(ids)

    def list_pits(self) -> list[dict[str, Any]]:
        return self.cursor_ops.list_pits()

    async def read_plan(self, expr: str, keep_alive: str = "5m",
                        query: Query | None = None) -> dict[str, Any]:
        """One consistent snapshot for parallel readers (Ray Data, ``client/data.py``): a point
        in time on ``expr`` and, per shard, a copy to read directly, its node and the pinned
        generation; with ``query``, its global statistics on that snapshot (so that scores do
        not depend on the shard). The reader closes the point in time when done."""
        opened = await self.cursor_ops.open_pit(expr, keep_alive)
        cursor = self.cursor_ops.cursors.get(opened["id"], "pit")
        shards, shard_list = [], []
        for (name, sid), gen in sorted(cursor.snapshot.items()):
            meta = self.admin.indices[name]
            handle, node = self.backend.read_target(meta.shards[sid])
            shards.append({"index": name, "shard": sid, "generation": gen, "handle": handle,
                           "node_id": node})
            shard_list.append((0, meta, sid, meta.shards[sid]))
        stats = None
        if query is not None:
            stats, _, _ = await self.search_path.statistics.gather(
                shard_list, SearchRequest(query=query), True, cursor.snapshot, None, None)
        return {"pit_id": opened["id"], "shards": shards, "stats": stats}

    async def scroll(self, scroll_id: str, keep_alive: str | None = None,
                     rest_total_hits_as_int: bool = False) -> dict[str, Any]:
        return await self.cursor_ops.scroll(scroll_id, keep_alive, rest_total_hits_as_int)

    async def clear_scroll(self, ids: list[str]) -> dict[str, Any]:
        return await self.cursor_ops.clear_scroll(ids)

    def get_cluster_settings(self, include_defaults: bool = False) -> dict[str, Any]:
        return self.search_settings.get(include_defaults)

    def put_cluster_settings(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.search_settings.put(body)

    # --- nodes (indices/nodes.py) ----------------------------------------------------------------

    def _nodes(self, http_host: str, spec: str | None) -> list[dict[str, Any]]:
        table = nodes.node_table(self.backend.nodes(), self.status.node_name, http_host)
        return nodes.select_nodes(table, spec)

    def nodes_info(self, spec: str | None, metrics: tuple[str, ...],
                   http: dict[str, Any]) -> dict[str, Any]:
        """``GET /_nodes``; ``http`` describes the front end that asked (its node only)."""
        host = str(http["publish_address"]).rsplit(":", 1)[0]
        return nodes.nodes_info(self._nodes(host, spec), self.status.cluster_name, metrics, http)

    async def nodes_stats(self, spec: str | None, metrics: tuple[str, ...],
                          http_host: str) -> dict[str, Any]:
        return nodes.nodes_stats(self._nodes(http_host, spec), self.status.cluster_name,
                                 await self.status.shard_infos(), metrics)

    async def search_shards(self, expr: str | None, routing: str | None,
                            preference: str | None, http_host: str,
                            **options: Any) -> dict[str, Any]:
        names = self.admin.resolve(expr or "_all", **options)
        return nodes.search_shards(self._nodes(http_host, None), names,
                                   {n: self.indices[n].number_of_shards for n in names},
                                   await self.status.shard_infos(), routing, preference)

    # --- segments (indices/segments.py) -----------------------------------------------------

    async def force_merge(self, expr: str | None, max_num_segments: int | None = None,
                          only_expunge_deletes: bool = False, flush: bool = True
                          ) -> dict[str, Any]:
        return await segments.force_merge(self.admin, expr, max_num_segments,
                                          only_expunge_deletes, flush)

    async def segments(self, expr: str | None) -> dict[str, Any]:
        return await segments.segments(self.admin, self.status, expr)

    async def cat_segments(self, expr: str | None) -> list[dict[str, Any]]:
        return segments.cat_rows(await segments.segment_rows(self.admin, self.status, expr))

    # --- cluster (indices/status.py, distribution/simulation.py) --------------------------------

    async def shard_infos(self) -> list[dict[str, Any]]:
        return await self.status.shard_infos()

    async def health(self, expr: str | None = None, level: str = "cluster") -> dict[str, Any]:
        """Health from the copies' states, and the simulated trouble when some is on."""
        out = await self.status.health(expr, level)
        sim = self.simulation()
        if sim["enabled"]:
            out["simulation"] = sim
        return out

    async def cat_indices(self, expr: str | None) -> list[dict[str, Any]]:
        return await self.status.cat_indices(expr)

    def info(self) -> dict[str, Any]:
        return self.status.info()

    async def cluster_state(self, metrics: list[str], expr: str | None = None
                            ) -> dict[str, Any]:
        """``_cluster/state``: the metadata subset and routing table (``cluster_state.py``)."""
        infos = await self.status.shard_infos() if "routing_table" in metrics else []
        return cluster_state(self.admin, self.status, infos, metrics, expr)

    def analyze(self, index: str | None, body: Any) -> dict[str, Any]:
        """``_analyze`` with the built-in analyzers or an index field's (``analyze.py``)."""
        mapping = self.indices[self.admin.read_index(index)[0]].mapping if index else None
        return analyze(body, mapping)

    async def cat_nodes(self, front: dict[str, Any] | None = None,
                        front_node: str | None = None) -> list[dict[str, Any]]:
        """``_cat/nodes``, with this process measured where it runs and ``front`` (the front
        end's own sample, ``indices/node_metrics.py``) on its Ray node, else its machine."""
        own = (node_id(), node_sample(getattr(self.backend, "data_dir", None)))
        return await self.status.cat_nodes([own] + ([(front_node, front)] if front else []))

    async def simulate(self, index: str | None = None, shard: int | list[int] | None = None,
                       **knobs: Any) -> dict[str, Any]:
        return await self.sim.simulate(index, shard, **knobs)

    async def simulate_clear(self) -> dict[str, Any]:
        return await self.sim.clear()

    def simulation(self) -> dict[str, Any]:
        return self.sim.status()


def build_coordinator(data_dir: str | None = None) -> Coordinator:
    """The service's coordinator: replicated shard groups (Ray actors), the periodic refresh,
    and with ``data_dir`` indices kept on disk (reopened now)."""
    from .distribution.replication import ReplicatedBackend
    core = Coordinator(ReplicatedBackend(data_dir=data_dir))
    core.auto_refresh = True
    if data_dir is not None:
        from .distribution.durability import Durability
        core.durable = Durability(core, data_dir)
    return core


def get_coordinator(create: bool = True, data_dir: str | None = None) -> Any:
    """The named coordinator actor of this Ray namespace (created on first use); see
    :func:`~.distribution.runtime.coordinator_actor`."""
    from .distribution.runtime import coordinator_actor
    return coordinator_actor(build_coordinator, create=create, data_dir=data_dir)
