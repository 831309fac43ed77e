"""The coordinator's side of durability: index metadata on disk, and recovery at start.

The coordinator owns what is not in any shard: which indices exist, their settings and
mappings, and the per-index sequence-number counter. Here:

* ``saved(meta)`` writes an index's metadata atomically (``storage.MetaStore``) — on create,
  mapping and settings changes, and before a bulk whose documents grew the mapping is sent to
  the shards (so a restarted service never finds documents whose fields it does not know);
* ``before_writes`` also keeps a *sequence-number reservation* on disk, a million ahead of what
  was handed out: sequence numbers must never be reused, even if a shard is missing when the
  service restarts;
* ``recover()`` (once, before the coordinator answers anything) reopens every index found
  under the data directory: its shard copies start again as actors and load their own files
  (snapshot + log tail); each shard continues from its furthest copy; the index's counter
  continues at the largest sequence number any shard holds + 1 (or at the reservation when a
  shard did not come back); a mapping that a shard has newer than the metadata wins.
"""
from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import orjson

from ..engine.meta_store import DataDirLock, MetaStore
from ..engine.storage import decode_mapping, encode_mapping, write_atomic

log = logging.getLogger("shardsearch.durability")
SEQ_BLOCK = 1_000_000


class Durability:
    """Index metadata persistence and recovery for one coordinator (one data directory)."""

    def __init__(self, coordinator: Any, data_dir: str) -> None:
        self.coord = coordinator
        self.data_dir = str(data_dir)
        self.lock = DataDirLock(data_dir)      # one service per data directory
        self.store = MetaStore(data_dir)
        self.reserved: dict[str, int] = {}     # index name -> sequence numbers reserved below
        self._recovery: asyncio.Task | None = None
        self.report: dict[str, Any] = {}
        scripts = getattr(coordinator, "scripts", None)
        if scripts is not None:
            scripts.saved = self.save_scripts
        if hasattr(coordinator.backend, "on_change"):   # in-sync copies, placements
            coordinator.backend.on_change = self._group_changed

    # --- writes -------------------------------------------------------------------------------

    def _record(self, meta: Any) -> dict[str, Any]:
        return {"name": meta.name, "uuid": meta.uuid, "created_ms": meta.created_ms,
                "number_of_shards": meta.number_of_shards,
                "number_of_replicas": meta.number_of_replicas,
                "settings": meta.settings, "mapping": encode_mapping(meta.mapping),
                "aliases": meta.aliases, "state": meta.state,
                "seq_reserved": self.reserved.get(meta.name, 0),
                "shards": [g.record() if hasattr(g, "record") else {} for g in meta.shards]}

    def _group_changed(self, group: Any) -> None:
        meta = self.coord.indices.get(group.index)
        if meta is not None and group in meta.shards:
            self.saved(meta)

    def saved(self, meta: Any) -> None:
        """Persist ``meta`` (atomic replace) before the change is acknowledged."""
        if meta.next_seq >= self.reserved.get(meta.name, 0):
            self.reserved[meta.name] = meta.next_seq + SEQ_BLOCK
        self.store.save(self._record(meta))

    def save_templates(self, templates: dict[str, Any],
                       components: dict[str, Any] | None = None) -> None:
        """The composable index templates (``<data_dir>/templates.json``) and component
        templates (``component_templates.json``), each atomic."""
        write_atomic(Path(self.data_dir) / "templates.json",
                     orjson.dumps(templates, option=orjson.OPT_INDENT_2))
        write_atomic(Path(self.data_dir) / "component_templates.json",
                     orjson.dumps(components or {}, option=orjson.OPT_INDENT_2))

    def _load_templates(self) -> None:
        admin = getattr(self.coord, "admin", None)
        if admin is None:
            return
        for file, attr in (("templates.json", "templates"),
                           ("component_templates.json", "components")):
            path = Path(self.data_dir) / file
            if not path.exists():
                continue
            try:
                setattr(admin, attr, dict(orjson.loads(path.read_bytes())))
            except (OSError, ValueError, TypeError) as e:
                # kept as it is on disk and reported; index creation goes on without them
                log.error("templates in %s cannot be read: %r; left as they are", path, e)

    def save_scripts(self, scripts: dict[str, Any]) -> None:
        """The stored scripts (``<data_dir>/scripts.json``, atomic)."""
        write_atomic(Path(self.data_dir) / "scripts.json",
                     orjson.dumps(scripts, option=orjson.OPT_INDENT_2))

    def _load_scripts(self) -> None:
        path = Path(self.data_dir) / "scripts.json"
        scripts = getattr(self.coord, "scripts", None)
        if scripts is None or not path.exists():
            return
        try:
            scripts.scripts = {str(k): {"lang": str(v["lang"]), "source": str(v["source"]),
                                        **({"options": dict(v["options"])}
                                           if v.get("options") else {})}
                               for k, v in orjson.loads(path.read_bytes()).items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
            log.error("stored scripts in %s cannot be read: %r; left as they are", path, e)

    def deleted(self, meta: Any) -> None:
        self.reserved.pop(meta.name, None)
        self.store.delete(meta.uuid)

    def before_writes(self, names: set[str], changed: set[str]) -> None:
        """Called after a bulk assigned its sequence numbers, before the shards see them."""
        for n in names:
            meta = self.coord.indices.get(n)
            if meta is None:
                continue
            if n in changed or meta.next_seq >= self.reserved.get(n, 0):
                self.saved(meta)

    # --- recovery -----------------------------------------------------------------------------

    async def ready(self) -> None:
        """Recover once; every coordinator call waits for it."""
        if self._recovery is None:
            self._recovery = asyncio.get_running_loop().create_task(self.recover())
        await asyncio.shield(self._recovery)

    async def recover(self) -> dict[str, Any]:
        from ..indices.catalog import IndexMeta
        from .shard_group import recover_group
        t0 = time.monotonic()
        self._load_templates()
        self._load_scripts()
        backend = self.coord.backend
        metas = []
        loaded = self.store.load_all()
        problems = list(self.store.problems)
        for d in loaded:
            try:
                mapping = decode_mapping(d["mapping"])
                settings = dict(d.get("settings") or {})
                meta = IndexMeta(name=d["name"], uuid=d["uuid"],
                                 created_ms=int(d["created_ms"]),
                                 number_of_shards=int(d["number_of_shards"]),
                                 number_of_replicas=int(d["number_of_replicas"]),
                                 settings=settings, mapping=mapping,
                                 aliases=dict(d.get("aliases") or {}),
                                 state=str(d.get("state") or "open"))
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                # one index's unusable metadata stops that index only, never the service
                path = self.store.indices / str(d.get("uuid"))
                problems.append({"index": d.get("name"), "uuid": str(d.get("uuid")),
                                 "path": str(path), "reason": f"meta.json unusable: {e!r}"})
                log.error("index directory %s cannot be opened: meta.json unusable: %r; left "
                          "as it is", path, e)
                continue
            records = list(d.get("shards") or [])
            meta.shards = [backend.open(meta.name, i, mapping, replicas=meta.number_of_replicas,
                                        settings=settings, uuid=meta.uuid,
                                        record=records[i] if i < len(records) else None)
                           for i in range(meta.number_of_shards)]
            self.reserved[meta.name] = int(d.get("seq_reserved", 0))
            self.coord.indices[meta.name] = meta
            metas.append(meta)
        status = getattr(self.coord, "status", None)
        if status is not None:      # reported in _cluster/health and _cat/indices
            status.dir_problems = problems
        admin = getattr(self.coord, "admin", None)
        if admin is not None:       # and in the error of a request naming such an index
            admin.unopenable = {p["index"]: f"{p['reason']} ({p['path']})" for p in problems
                                if p.get("index")}
        answers = await asyncio.gather(*(recover_group(g) for m in metas for g in m.shards))
        it = iter(answers)
        report: dict[str, Any] = {}
        for meta in metas:
            per_shard = [next(it) for _ in meta.shards]
            complete = all(per_shard)
            seqs = [int(a["max_seq"]) for got in per_shard for a in got]
            top = max(seqs) if seqs else -1
            meta.next_seq = top + 1 if complete else max(top + 1, self.reserved[meta.name])
            newest = await self._newest_mapping(meta, per_shard)
            if newest is not None:
                meta.mapping = newest
                for g in meta.shards:
                    g.mapping = newest
            self.saved(meta)
            report[meta.name] = {"shards": len(meta.shards), "complete": complete,
                                 "next_seq": meta.next_seq}
        # what the log replayed becomes searchable, as Elasticsearch refreshes after recovery
        # (a command like any other: every copy refreshes at the same point of its history)
        await asyncio.gather(*(g.command("refresh", ()) for m in metas for g in m.shards
                               if g.started), return_exceptions=True)
        self.report = {"indices": report, "seconds": round(time.monotonic() - t0, 3)}
        if metas:
            log.warning("recovered %d indices from %s in %.1fs", len(metas), self.data_dir,
                        time.monotonic() - t0)
        return self.report

    async def _newest_mapping(self, meta: Any, per_shard: list[list[dict[str, Any]]]) -> Any:
        """A mapping a shard holds that is newer than the metadata's (a crash between the
        shard's write and the metadata's), else None."""
        best_v, best_g = meta.mapping.version, None
        for g, got in zip(meta.shards, per_shard):
            for a in got:
                if int(a.get("mapping_version", -1)) > best_v:
                    best_v, best_g = int(a["mapping_version"]), g
        if best_g is None:
            return None
        from .replication import GroupSession
        try:
            state = await GroupSession(best_g).call("mapping_state", ())
        except Exception:  # noqa: BLE001 - keep the metadata's mapping
            return None
        return decode_mapping(state)

    def close(self) -> None:
        self.lock.release()
