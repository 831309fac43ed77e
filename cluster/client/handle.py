"""``Cluster``: the Python handle for notebooks and scripts.

    >>> from shardsearch import Cluster
    >>> c = Cluster.start()                       # private local Ray, coordinator actor
    >>> c.create_index("books", shards=4)
    >>> c.bulk("books", [{"title": "Dune"}, {"title": "Emma"}], refresh=True)
    >>> c.search("books", query={"match": {"title": "dune"}}, size=5)["hits"]["total"]

It speaks to the same coordinator actor as the HTTP API, with the same request parsing, so a
search here and over HTTP give the same answer.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ..search.request import parse_search
from ..coordinator import get_coordinator
from ..distribution.runtime import start_ray, stop_ray


def _decoded(resp: dict[str, Any]) -> dict[str, Any]:
    """A search response as the HTTP API shows it: internal keys dropped, ``_source`` decoded."""
    for key in ("_snapshot", "_after", "_page_token"):
        resp.pop(key, None)
    for h in resp["hits"]["hits"]:
        if isinstance(h.get("_source"), bytes):
            h["_source"] = orjson.loads(h["_source"])
    return resp


def _progress_bar(total: int | None) -> Any:
    from tqdm.auto import tqdm          # a widget in Jupyter, text in a terminal
    return tqdm(total=total, unit="B", unit_scale=True, desc="loading")


def _failed(out: dict[str, Any], what: str) -> None:
    out["errors"] += 1
    if len(out["failures"]) < 10:
        out["failures"].append(what)


class Cluster:
    """A handle on a running shardsearch coordinator (embedded Ray or a Ray cluster)."""

    def __init__(self, coordinator: Any, owns_ray: bool) -> None:
        self._coord = coordinator
        self._owns_ray = owns_ray

    # --- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def start(cls, *, num_cpus: int | None = None, object_store_mb: int | None = 200,
              data_dir: str | None = None) -> Cluster:
        """Start a private local Ray in this process and a coordinator on it; indices stay in
        memory unless ``data_dir`` is given (then they persist there and are reopened)."""
        info = start_ray(None, num_cpus=num_cpus, object_store_mb=object_store_mb,
                         token_dir=data_dir)
        coord = get_coordinator(data_dir=data_dir)
        if data_dir is not None:
            import ray
            ray.get(coord.ping.remote())     # indices found in data_dir are reopened first
        return cls(coord, owns_ray=info["started"])

    @classmethod
    def connect(cls, address: str = "auto") -> Cluster:
        """Join a running Ray cluster and use (or create) its coordinator."""
        start_ray(address)
        return cls(get_coordinator(), owns_ray=False)

    def shutdown(self) -> None:
        """Stop Ray if this handle started it."""
        if self._owns_ray:
            stop_ray()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        import ray

        from ..errors import domain_error
        try:
            return ray.get(self._coord.call.remote(method, *args, **kwargs))
        except ray.exceptions.RayTaskError as e:
            cause = domain_error(e)
            if cause is not e:
                raise cause from None
            raise

    # --- indices ------------------------------------------------------------------------------

    def create_index(self, name: str, shards: int = 1, replicas: int = 0,
                     mappings: dict[str, Any] | None = None,
                     settings: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"settings": {"number_of_shards": shards,
                                             "number_of_replicas": replicas, **(settings or {})}}
        if mappings:
            body["mappings"] = mappings
        return self._call("create_index", name, body)

    def delete_index(self, name: str) -> dict[str, Any]:
        return self._call("delete_index", name)

    def indices(self) -> list[str]:
        return sorted(self._call("resolve", "_all"))

    def refresh(self, index: str | None = None) -> dict[str, Any]:
        return self._call("refresh", index)

    def mapping(self, index: str) -> dict[str, Any]:
        return self._call("get_mapping", index)

    # --- documents ----------------------------------------------------------------------------

    def index(self, index: str, doc: dict[str, Any], id: str | None = None,
              refresh: bool = False, routing: str | None = None) -> dict[str, Any]:
        resp = self._call("bulk", [{"action": "index", "index": index, "id": id, "source": doc,
                                    "routing": routing}], refresh)
        item = resp["items"][0]["index"]
        if "error" in item:
            from ..errors import SearchError
            raise SearchError(item["error"]["reason"], es_type=item["error"]["type"],
                              status=item["status"])
        return item

    def bulk(self, index: str, docs: list[dict[str, Any]], ids: list[str] | None = None,
             refresh: bool = False, id_field: str | None = None) -> dict[str, Any]:
        """Index many documents in one call; ``id_field`` takes each ``_id`` from the document."""
        items = []
        for i, d in enumerate(docs):
            doc_id = ids[i] if ids is not None else (str(d[id_field]) if id_field else None)
            items.append({"action": "index", "index": index, "id": doc_id, "source": d})
        return self._call("bulk", items, refresh)

    def load(self, path: str, index: str, *, id_field: str | None = None,
             batch_size: int = 1000, shards: int | None = None, progress: bool = True
             ) -> dict[str, Any]:
        """Bulk-load an NDJSON file (gzipped or not; documents or ``_bulk`` pairs), as
        ``shardsearch load`` does, with a progress bar (a widget in Jupyter). Returns
        ``{"docs", "errors", "seconds", "failures"}``; unreadable lines count as errors."""
        import time

        from ..documents.ndjson_file import BadLine, Source, items
        if shards is not None and index not in self.indices():
            self.create_index(index, shards=shards)
        source, t0 = Source(path), time.perf_counter()
        out: dict[str, Any] = {"docs": 0, "errors": 0, "failures": []}
        bar = _progress_bar(source.size) if progress else None
        batch: list[dict[str, Any]] = []
        for it in items(source.lines(), index, id_field):
            if isinstance(it, BadLine):
                _failed(out, f"line {it.line}: {it.reason}")
                continue
            kind, meta = next(iter(it.action.items()))
            batch.append({"action": kind, "index": meta.get("_index", index),
                          "id": meta.get("_id"), "routing": meta.get("routing"),
                          "source": None if it.source is None else orjson.loads(it.source)})
            if len(batch) >= batch_size:
                self._load_batch(batch, out)
                batch = []
                if bar is not None:
                    bar.update(source.consumed - bar.n)
        if batch:
            self._load_batch(batch, out)
        if bar is not None:
            bar.update(max(0, (source.size or source.consumed) - bar.n))
            bar.close()
        source.close()
        self.refresh(index)
        out["seconds"] = round(time.perf_counter() - t0, 3)
        return out

    def _load_batch(self, batch: list[dict[str, Any]], out: dict[str, Any]) -> None:
        resp = self._call("bulk", batch, False)
        for entry in resp["items"]:
            result = next(iter(entry.values()))
            if "error" in result:
                _failed(out, f"[{result.get('_id')}]: {result['error'].get('reason')}")
            else:
                out["docs"] += 1

    def get(self, index: str, id: str) -> dict[str, Any]:
        out = self._call("get_doc", index, id)
        if out.get("found"):
            out["_source"] = orjson.loads(out["_source"])
        return out

    def delete(self, index: str, id: str, refresh: bool = False) -> dict[str, Any]:
        resp = self._call("bulk", [{"action": "delete", "index": index, "id": id}], refresh)
        return resp["items"][0]["delete"]

    # --- search -------------------------------------------------------------------------------

    def search(self, index: str | None = None, query: dict[str, Any] | None = None,
               from_: int = 0, size: int = 10, sort: Any = None,
               **body: Any) -> dict[str, Any]:
        """Elasticsearch's search, as a dict (``hits.hits[*]._source`` decoded)."""
        req_body: dict[str, Any] = dict(body)
        if query is not None:
            req_body["query"] = query
        req_body["from"] = from_
        req_body["size"] = size
        if sort is not None:
            req_body["sort"] = sort
        params = {k: str(v) for k, v in req_body.pop("params", {}).items()}
        if "paging" in req_body:   # ours: auto | from_size | deep_page (search/request.py)
            params["paging"] = str(req_body.pop("paging"))
        req = parse_search(tuple((index or "_all").split(",")), params, req_body)
        return _decoded(self._call("search", req))

    # --- beyond the window: scroll, point in time (search/cursor_phase.py) ---------------------

    def scroll(self, scroll_id: str, scroll: str = "1m") -> dict[str, Any]:
        """The next batch of a scroll opened with ``search(..., params={"scroll": "1m"})``."""
        return _decoded(self._call("scroll", scroll_id, scroll))

    def clear_scroll(self, scroll_id: str | list[str] = "_all") -> dict[str, Any]:
        ids = [scroll_id] if isinstance(scroll_id, str) else list(scroll_id)
        return self._call("clear_scroll", ids)

    def open_point_in_time(self, index: str, keep_alive: str = "1m") -> str:
        """A point in time over ``index``; search it with ``search(pit={"id": ...})``."""
        return self._call("open_pit", index, keep_alive)["id"]

    def close_point_in_time(self, pit_id: str) -> bool:
        return bool(self._call("close_pits", [pit_id])[0][1])

    def scan(self, index: str | None = None, query: dict[str, Any] | None = None,
             size: int = 1000, scroll: str = "1m", **body: Any) -> Iterator[dict[str, Any]]:
        """Every matching hit, batch by batch through a scroll (like ``helpers.scan``)."""
        resp = self.search(index, query=query, size=size, params={"scroll": scroll}, **body)
        scroll_id = resp["_scroll_id"]
        try:
            while resp["hits"]["hits"]:
                yield from resp["hits"]["hits"]
                resp = self.scroll(scroll_id, scroll)
        finally:
            self.clear_scroll(scroll_id)

    def count(self, index: str | None = None, query: dict[str, Any] | None = None) -> int:
        from ..engine.query.dsl import parse_query
        from ..engine.query.nodes import MatchAll
        q = parse_query(query) if query else MatchAll()
        return self._call("count", tuple((index or "_all").split(",")), q)["count"]

    def health(self) -> dict[str, Any]:
        return self._call("health")

    # --- experiments: simulated trouble (distribution/simulation.py) and sweeps (experiments.py)

    def simulate(self, index: str | None = None, shard: int | list[int] | None = None, *,
                 latency_ms: float = 0.0, jitter_ms: float = 0.0, slowdown: float = 1.0,
                 fail_rate: float = 0.0, seed: int | None = None,
                 hold_merges: bool = False) -> dict[str, Any]:
        """Give shard actors simulated trouble (all indices / all shards when omitted):
        ``latency_ms`` plus an exponential ``jitter_ms`` before every answer, work
        ``slowdown`` times slower, a ``fail_rate`` chance that a call fails, and with
        ``hold_merges`` background merges held half-way. All zero turns it off for those
        shards; :meth:`simulate_clear` turns everything off."""
        return self._call("simulate", index, shard, latency_ms=latency_ms, jitter_ms=jitter_ms,
                          slowdown=slowdown, fail_rate=fail_rate, seed=seed,
                          hold_merges=hold_merges)

    def simulate_clear(self) -> dict[str, Any]:
        """Turn every simulated trouble off."""
        return self._call("simulate_clear")

    def simulation(self) -> dict[str, Any]:
        """What simulated trouble is on, per shard."""
        return self._call("simulation")

    def sweep(self, index: str | list[str], params: dict[str, list[Any]] | None = None,
              **kwargs: Any) -> Any:
        """A parameter sweep as a pandas DataFrame, one row per measured search; see
        :func:`shardsearch.cluster.client.experiments.sweep`."""
        from .experiments import sweep
        return sweep(self, index, params, **kwargs)
