"""The indices' admin API over the catalog: create, delete, resolve, mappings, settings, refresh.

:class:`IndexAdmin` holds the catalog (an :class:`~.catalog.IndexMeta` per index) and reaches
the shards through the backend for what changes them (mappings, settings, refresh). Writes that
are not made searchable at once are refreshed by a periodic task within the index's
``refresh_interval`` (1s by default), as Elasticsearch does it. Durability, when the service has
a data directory, is told of every change of the catalog before it is acknowledged.
"""
from __future__ import annotations

import asyncio
import fnmatch
import time
import uuid
from typing import Any

from ..engine.mapping import Mapping
from ..engine.limits import check_shards_per_node
from ..engine.merge_policy import MergePolicy
from ..engine.shard_calls import ShardCalls
from ..values import parse_bool
from ..errors import IllegalArgument, IndexNotFound, MapperParsing, ResourceAlreadyExists
from .field_caps import field_caps
from .catalog import (DEFAULT_MAX_RESULT_WINDOW, IndexMeta, flat_settings, int_setting,
                      refresh_interval_s, validate_index_name)


class IndexAdmin:
    """The catalog and its admin API (no Ray: shards are reached through ``backend``)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.shards = ShardCalls(backend)
        self.indices: dict[str, IndexMeta] = {}
        # index metadata on disk and recovery (durability.py); None keeps indices in memory
        self.durable: Any = None
        # index name -> why its directory could not be opened (a request naming it says so)
        self.unopenable: dict[str, str] = {}
        # periodic refresh (index.refresh_interval, 1s by default), as Elasticsearch does it;
        # the service turns it on, in-process unit tests refresh explicitly
        self.auto_refresh = False
        self._dirty: dict[str, dict[int, float]] = {}
        self._refresher: asyncio.Task | None = None

    def _check_shard_room(self, shards: int, replicas: int) -> None:
        """``cluster.max_shards_per_node``: shard copies are processes; a replica takes one only
        where there is another node to put it on."""
        nodes = max(1, len(self.backend.nodes()))
        open_now = sum(m.number_of_shards * (1 + min(m.number_of_replicas, nodes - 1))
                       for m in self.indices.values())
        check_shards_per_node(shards * (1 + min(replicas, nodes - 1)), open_now, nodes)

    def create_index(self, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        validate_index_name(name)
        if name in self.indices:
            raise ResourceAlreadyExists(f"index [{name}/{self.indices[name].uuid}] already "
                                        "exists", index=name, index_uuid=self.indices[name].uuid)
        body = body or {}
        if not isinstance(body, dict):
            raise MapperParsing("request body must be an object", es_type="parse_exception")
        for key in body:
            if key not in ("settings", "mappings", "aliases"):
                raise IllegalArgument(f"unknown key [{key}] for create index",
                                      es_type="parse_exception")
        settings = flat_settings(body.get("settings") or {})
        shards = int_setting(settings, "number_of_shards", 1, minimum=1)
        if shards > 1024:
            raise IllegalArgument("Failed to parse value [" + str(shards) + "] for setting "
                                  "[index.number_of_shards] must be <= 1024")
        replicas = int_setting(settings, "number_of_replicas", 1, minimum=0)
        self._check_shard_room(shards, replicas)
        if "max_result_window" in settings:
            int_setting(settings, "max_result_window", DEFAULT_MAX_RESULT_WINDOW, minimum=1)
        _check_merge_settings(settings)
        mapping = Mapping.from_body(body.get("mappings"))
        if "mapping.ignore_malformed" in settings:
            mapping.ignore_malformed = parse_bool(settings["mapping.ignore_malformed"],
                                                  "index.mapping.ignore_malformed")
        settings["number_of_shards"] = shards
        settings["number_of_replicas"] = replicas
        meta = IndexMeta(name=name, uuid=uuid.uuid4().hex[:22], created_ms=int(time.time() * 1000),
                         number_of_shards=shards, number_of_replicas=replicas,
                         settings=settings, mapping=mapping)
        meta.shards = [self.backend.create(name, i, mapping, replicas=replicas,
                                           settings=settings, uuid=meta.uuid)
                       for i in range(shards)]
        self.indices[name] = meta
        if self.durable is not None:
            self.durable.saved(meta)
        return {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def auto_create(self, name: str) -> IndexMeta:
        meta = self.indices.get(name)
        if meta is None:
            self.create_index(name, {})
            meta = self.indices[name]
        return meta

    def delete_index(self, expr: str) -> list[str]:
        """Delete the indices ``expr`` names; their names."""
        names = self.resolve(expr, allow_no_indices=False, wildcard_ok=True)
        for n in names:
            meta = self.indices.pop(n)
            for ref in meta.shards:
                self.backend.destroy(ref)
            if self.durable is not None:
                self.durable.deleted(meta)
        return names

    def resolve(self, expr: str | tuple[str, ...] | list[str] | None, *,
                ignore_unavailable: bool = False, allow_no_indices: bool = True,
                wildcard_ok: bool = True, expand_wildcards: bool = True) -> list[str]:
        """Index names for an expression (``a,b``, ``log-*``, ``_all``, ``-excluded``);
        ``expand_wildcards`` False (``expand_wildcards=none``): patterns and ``_all`` match
        nothing, as in Elasticsearch."""
        if expr is None or expr == "" or expr == ():
            parts = ["_all"]
        elif isinstance(expr, str):
            parts = [p.strip() for p in expr.split(",") if p.strip()]
        else:
            parts = [p for e in expr for p in str(e).split(",") if p]
        out: list[str] = []
        for i, p in enumerate(parts):
            if not expand_wildcards and (p == "_all" or "*" in p or "?" in p):
                continue
            if p in ("_all", "*"):
                out.extend(n for n in sorted(self.indices) if n not in out)
            elif p.startswith("-") and i > 0:
                pat = p[1:]
                out = [n for n in out if not fnmatch.fnmatchcase(n, pat)]
            elif "*" in p or "?" in p:
                out.extend(n for n in sorted(self.indices)
                           if fnmatch.fnmatchcase(n, p) and n not in out)
            elif p in self.indices:
                if p not in out:
                    out.append(p)
            elif not ignore_unavailable:
                why = self.unopenable.get(p)
                raise IndexNotFound(p, storage_problem=why) if why else IndexNotFound(p)
        if not out and not allow_no_indices:
            raise IndexNotFound(parts[0] if parts else "_all")
        return out

    def get_index(self, expr: str) -> dict[str, Any]:
        return {n: {"aliases": {}, "mappings": self.indices[n].mapping.to_body(),
                    "settings": {"index": self._settings_out(self.indices[n])}}
                for n in self.resolve(expr, allow_no_indices=False)}

    def _settings_out(self, meta: IndexMeta) -> dict[str, Any]:
        out: dict[str, Any] = {k: str(v) for k, v in meta.settings.items()}
        out.update({"number_of_shards": str(meta.number_of_shards),
                    "number_of_replicas": str(meta.number_of_replicas),
                    "uuid": meta.uuid, "provided_name": meta.name,
                    "creation_date": str(meta.created_ms),
                    "version": {"created": "8150099"}})
        return out

    def index_exists(self, expr: str) -> bool:
        try:
            return bool(self.resolve(expr, allow_no_indices=False))
        except IndexNotFound:
            return False

    def get_mapping(self, expr: str | None) -> dict[str, Any]:
        return {n: {"mappings": self.indices[n].mapping.to_body()}
                for n in self.resolve(expr or "_all")}

    def field_caps(self, expr: str | None, fields: list[str], *, ignore_unavailable: bool = False,
                   allow_no_indices: bool = True, **options: Any) -> dict[str, Any]:
        """``_field_caps`` over the mappings of the indices ``expr`` names (``field_caps.py``)."""
        names = self.resolve(expr or "_all", ignore_unavailable=ignore_unavailable,
                             allow_no_indices=allow_no_indices)
        return field_caps({n: self.indices[n].mapping.to_body() for n in names}, fields,
                          **options)

    async def put_mapping(self, expr: str, body: dict[str, Any]) -> dict[str, Any]:
        names = self.resolve(expr, allow_no_indices=False)
        for n in names:
            trial = Mapping.from_body(self.indices[n].mapping.to_body())
            trial.merge(body)
        for n in names:
            meta = self.indices[n]
            meta.mapping.merge(body)
            if self.durable is not None:
                self.durable.saved(meta)
            await asyncio.gather(*(self.shards.set_mapping(s, meta.mapping)
                                   for s in meta.shards))
        return {"acknowledged": True}

    def get_settings(self, expr: str | None) -> dict[str, Any]:
        return {n: {"settings": {"index": self._settings_out(self.indices[n])}}
                for n in self.resolve(expr or "_all")}

    def put_settings(self, expr: str | None, body: dict[str, Any]) -> dict[str, Any]:
        names = self.resolve(expr or "_all", allow_no_indices=False)
        flat = flat_settings(body.get("settings", body) if isinstance(body, dict) else {})
        static = {"number_of_shards", "mapping.ignore_malformed"}   # (indices are always open)
        for key in flat:
            if key in static:
                raise IllegalArgument(f"Can't update non dynamic settings [[index.{key}]] for "
                                      f"open indices {names}")
        if "max_result_window" in flat and flat["max_result_window"] is not None:
            int_setting(flat, "max_result_window", DEFAULT_MAX_RESULT_WINDOW, minimum=1)
        for n in names:
            _check_merge_settings({**self.indices[n].settings, **flat})
        for n in names:
            meta = self.indices[n]
            for k, v in flat.items():
                if v is None:
                    meta.settings.pop(k, None)
                else:
                    meta.settings[k] = v
            if "number_of_replicas" in flat and flat["number_of_replicas"] is not None:
                meta.number_of_replicas = int_setting(flat, "number_of_replicas", 1)
                meta.settings["number_of_replicas"] = meta.number_of_replicas
            # replicas added or removed, translog durability... reach the shard copies
            self.backend.reconfigure(meta.shards, flat, meta.number_of_replicas)
            if self.durable is not None:
                self.durable.saved(meta)
        return {"acknowledged": True}

    # --- refresh ------------------------------------------------------------------------------

    def mark_dirty(self, index: str, shard: int) -> None:
        """Remember unrefreshed writes; the refresher makes them searchable within the
        index's ``refresh_interval``."""
        if not self.auto_refresh:
            return
        self._dirty.setdefault(index, {}).setdefault(shard, time.monotonic())
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.get_running_loop().create_task(self._refresh_loop())

    async def _refresh_loop(self) -> None:
        while self._dirty:
            await asyncio.sleep(0.2)
            now = time.monotonic()
            calls = []
            for name in list(self._dirty):
                meta = self.indices.get(name)
                if meta is None:
                    self._dirty.pop(name, None)
                    continue
                interval = refresh_interval_s(meta.settings)
                if interval is None:
                    continue
                due = [sid for sid, since in self._dirty[name].items() if now - since >= interval]
                for sid in due:
                    self._dirty[name].pop(sid, None)
                    calls.append(self.shards.refresh(meta.shards[sid]))
                if not self._dirty[name]:
                    self._dirty.pop(name, None)
            if calls:
                await asyncio.gather(*calls, return_exceptions=True)

    async def refresh(self, expr: str | None) -> dict[str, Any]:
        names = self.resolve(expr or "_all")
        refs = [s for n in names for s in self.indices[n].shards]
        outcomes = await asyncio.gather(*(self.shards.refresh(s) for s in refs),
                                        return_exceptions=True)
        failed = sum(1 for o in outcomes if isinstance(o, BaseException))
        return {"_shards": {"total": len(refs), "successful": len(refs) - failed,
                            "failed": failed}}


def _check_merge_settings(settings: dict[str, Any]) -> None:
    """``index.merge.*``: the policy's settings parse, any other is refused by name (400)."""
    try:
        MergePolicy.from_settings(settings)
    except ValueError as e:
        raise IllegalArgument(str(e)) from None
