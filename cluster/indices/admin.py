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

from ..engine.exact_json import exact_json
from ..engine.gcpause import release_free_memory
from ..engine.mapping import Mapping
from ..engine.limits import check_shards_per_node
from ..engine.merge_policy import MergePolicy
from ..engine.shard_calls import ShardCalls
from ..values import parse_bool
from ..errors import (IllegalArgument, IndexClosed, IndexNotFound, MapperParsing,
                      ResourceAlreadyExists, SearchError)
from . import aliases as alias_rules
from .active_shards import ActiveShardCount, check_creatable
from .auto_expand import expanded_replicas, parse_auto_expand
from . import component_templates as components
from . import template_simulation as simulation
from . import templates
from .field_mapping import field_mappings
from .field_caps import field_caps
from .date_math import resolve_date_math
from .resolver import Access, resolve_access
from .catalog import (DEFAULT_MAX_RESULT_WINDOW, IndexMeta, flat_settings, int_setting,
                      refresh_interval_s, validate_index_name)


class IndexAdmin:
    """The catalog and its admin API (no Ray: shards are reached through ``backend``)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.shards = ShardCalls(backend)
        self.indices: dict[str, IndexMeta] = {}
        self.templates: dict[str, dict[str, Any]] = {}   # composable index templates
        self.components: dict[str, dict[str, Any]] = {}  # component templates
        # index metadata on disk and recovery (durability.py); None keeps indices in memory
        self.durable: Any = None
        # index name -> why its directory could not be opened (a request naming it says so)
        self.unopenable: dict[str, str] = {}
        # periodic refresh (index.refresh_interval, 1s by default), as Elasticsearch does it;
        # the service turns it on, in-process unit tests refresh explicitly
        self.auto_refresh = False
        self._dirty: dict[str, dict[int, float]] = {}
        self._refresher: asyncio.Task | None = None

    def _data_nodes(self) -> int:
        """Nodes that can hold shard copies (``auto_expand_replicas`` counts them)."""
        nodes = self.backend.nodes()
        return max(1, len([n for n in nodes if n.get("resource")] or nodes))

    def _check_shard_room(self, shards: int, replicas: int) -> None:
        """``cluster.max_shards_per_node``: shard copies are processes; a replica takes one only
        where there is another node to put it on."""
        nodes = max(1, len(self.backend.nodes()))
        open_now = sum(m.number_of_shards * (1 + min(m.number_of_replicas, nodes - 1))
                       for m in self.indices.values())
        check_shards_per_node(shards * (1 + min(replicas, nodes - 1)), open_now, nodes)

    def create_index(self, name: str, body: dict[str, Any] | None = None,
                     wait_for_active_shards: ActiveShardCount | None = None) -> dict[str, Any]:
        """Create ``name``; ``wait_for_active_shards`` is only checked against its copies
        here (the caller waits for them to start)."""
        name = resolve_date_math(name)
        validate_index_name(name)
        if name in self.indices:
            raise ResourceAlreadyExists(f"index [{name}/{self.indices[name].uuid}] already "
                                        "exists", index=name, index_uuid=self.indices[name].uuid)
        body = body or {}
        if not isinstance(body, dict):
            raise MapperParsing("request body must be an object", es_type="parse_exception")
        exact_json(body, "the index's settings and mappings")   # stored as JSON: before any
        for key in body:
            if key not in ("settings", "mappings", "aliases"):
                raise IllegalArgument(f"unknown key [{key}] for create index",
                                      es_type="parse_exception")
        body = templates.compose(templates.matching(self.templates, name), body, self.components)
        settings = flat_settings(body.get("settings") or {})
        shards = int_setting(settings, "number_of_shards", 1, minimum=1)
        if shards > 1024:
            raise IllegalArgument("Failed to parse value [" + str(shards) + "] for setting "
                                  "[index.number_of_shards] must be <= 1024")
        replicas = expanded_replicas(settings.get("auto_expand_replicas"), self._data_nodes(),
                                     int_setting(settings, "number_of_replicas", 1, minimum=0))
        check_creatable(wait_for_active_shards, replicas)
        self._check_shard_room(shards, replicas)
        if "max_result_window" in settings:
            int_setting(settings, "max_result_window", DEFAULT_MAX_RESULT_WINDOW, minimum=1)
        _check_merge_settings(settings)
        mapping = Mapping.from_body(body.get("mappings"))
        if "mapping.ignore_malformed" in settings:
            mapping.ignore_malformed = parse_bool(settings["mapping.ignore_malformed"],
                                                  "index.mapping.ignore_malformed")
        aliases = _creation_aliases(body.get("aliases"), self.indices)
        settings["number_of_shards"] = shards
        settings["number_of_replicas"] = replicas
        meta = IndexMeta(name=name, uuid=uuid.uuid4().hex[:22], created_ms=int(time.time() * 1000),
                         number_of_shards=shards, number_of_replicas=replicas,
                         settings=settings, mapping=mapping, aliases=aliases)
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

    def write_targets(self, names: list[tuple[str, bool]]) -> list[str]:
        """The indices writes to ``names`` go to (``(name, may_create)``: aliases and date
        math resolved, missing ones auto-created when the write may create them), so their
        copies can be counted before the write; a name that cannot be written to is left
        out here: its items fail on their own in the bulk."""
        out = []
        for given, may_create in names:
            try:
                name, _ = self.write_index(given)
                validate_index_name(name)
                meta = self.auto_create(name) if may_create else self.indices.get(name)
            except SearchError:
                continue
            if meta is not None:
                out.append(name)
        return sorted(set(out))

    def write_index(self, name: str, routing: Any = None) -> tuple[str, Any]:
        """The index a write to ``name`` goes to and its routing: ``name`` itself (open, or
        to be created), or the write index of the alias ``name`` with its index routing."""
        name = resolve_date_math(name)
        meta = self.indices.get(name)
        if meta is not None:
            if meta.state != "open":
                raise IndexClosed(name, meta.uuid)
            return name, routing
        if not alias_rules.aliased(self.indices, name):
            return name, routing
        target, alias_routing = alias_rules.write_target(self.indices, name)
        if self.indices[target].state != "open":
            raise IndexClosed(target, self.indices[target].uuid)
        return target, alias_rules.write_routing(name, alias_routing,
                                                 None if routing is None else str(routing))

    def read_index(self, name: str, routing: Any = None) -> tuple[str, Any]:
        """The one open index a single-document read of ``name`` (an index or an alias of
        one index) goes to, and its routing (an alias's index routing applies)."""
        names = self.resolve(name, allow_no_indices=False, refuse_closed=True)
        if len(names) != 1:
            raise IllegalArgument(f"alias [{name}] has more than one index associated with it "
                                  f"[{', '.join(sorted(names))}], can't execute a single index "
                                  "op")
        spec = self.indices[names[0]].aliases.get(name) if name not in self.indices else None
        alias_routing = (spec or {}).get("index_routing")
        return names[0], alias_rules.write_routing(name, alias_routing, routing)

    def delete_index(self, expr: str, *, ignore_unavailable: bool = False,
                     allow_no_indices: bool = False, expand_wildcards: bool = True) -> list[str]:
        """Delete the indices ``expr`` names; their names (never through an alias). A missing
        name with ``ignore_unavailable`` is skipped, the others are still deleted."""
        for part in str(expr).split(","):
            if part not in self.indices and alias_rules.aliased(self.indices, part):
                raise IllegalArgument(f"The provided expression [{part}] matches an alias, "
                                      "specify the corresponding concrete indices instead.")
        names = self.resolve(expr, ignore_unavailable=ignore_unavailable,
                             allow_no_indices=allow_no_indices,
                             expand_wildcards=expand_wildcards, wildcard_ok=True)
        for n in names:
            meta = self.indices.pop(n)
            for ref in meta.shards:
                self.backend.destroy(ref)
            if self.durable is not None:
                self.durable.deleted(meta)
        return names

    def resolve(self, expr: str | tuple[str, ...] | list[str] | None, *,
                ignore_unavailable: bool = False, allow_no_indices: bool = True,
                wildcard_ok: bool = True, expand_wildcards: bool = True,
                refuse_closed: bool = False, include_closed: bool = False) -> list[str]:
        """Index names for an expression (``a,b``, ``log-*``, ``_all``, ``-excluded``, aliases,
        date math); the rules are in ``resolver.py``, the one place that resolves names."""
        return list(self.resolve_access(expr, ignore_unavailable=ignore_unavailable,
                                        allow_no_indices=allow_no_indices,
                                        expand_wildcards=expand_wildcards,
                                        refuse_closed=refuse_closed,
                                        include_closed=include_closed))

    def resolve_access(self, expr: str | tuple[str, ...] | list[str] | None,
                       **options: Any) -> dict[str, Access]:
        """Index names with the alias filters and search routing they were reached by."""
        return resolve_access(self.indices, expr, unopenable=self.unopenable, **options)

    def get_index(self, expr: str, *, ignore_unavailable: bool = False,
                  allow_no_indices: bool = False, expand_wildcards: bool = True
                  ) -> dict[str, Any]:
        names = self.resolve(expr, ignore_unavailable=ignore_unavailable,
                             allow_no_indices=allow_no_indices, expand_wildcards=expand_wildcards)
        return {n: {"aliases": self.indices[n].aliases, "mappings": self.indices[n].mapping.to_body(),
                    "settings": {"index": self.settings_out(self.indices[n])}}
                for n in names}

    def settings_out(self, meta: IndexMeta) -> dict[str, Any]:
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

    def get_field_mapping(self, expr: str | None, fields: list[str]) -> dict[str, Any]:
        """``_mapping/field/{fields}`` over the indices ``expr`` names (``field_mapping.py``)."""
        return field_mappings({n: self.indices[n].mapping.to_body()
                               for n in self.resolve(expr or "_all")}, fields)

    def field_caps(self, expr: str | None, fields: list[str], *, ignore_unavailable: bool = False,
                   allow_no_indices: bool = True, **options: Any) -> dict[str, Any]:
        """``_field_caps`` over the mappings of the indices ``expr`` names (``field_caps.py``)."""
        names = self.resolve(expr or "_all", ignore_unavailable=ignore_unavailable,
                             allow_no_indices=allow_no_indices)
        return field_caps({n: self.indices[n].mapping.to_body() for n in names}, fields,
                          **options)

    async def put_mapping(self, expr: str, body: dict[str, Any]) -> dict[str, Any]:
        names = self.resolve(expr, allow_no_indices=False)
        exact_json(body, "the mapping")   # stored as JSON: refused before any index takes it
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
        return {n: {"settings": {"index": self.settings_out(self.indices[n])}}
                for n in self.resolve(expr or "_all")}

    def put_settings(self, expr: str | None, body: dict[str, Any]) -> dict[str, Any]:
        names = self.resolve(expr or "_all", allow_no_indices=False)
        exact_json(body, "the settings")   # stored as JSON: refused before any index takes it
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
        parse_auto_expand(flat.get("auto_expand_replicas"))   # refused before any index changes
        for n in names:
            meta = self.indices[n]
            for k, v in flat.items():
                if v is None:
                    meta.settings.pop(k, None)
                else:
                    meta.settings[k] = v
            if "number_of_replicas" in flat and flat["number_of_replicas"] is not None:
                meta.number_of_replicas = int_setting(flat, "number_of_replicas", 1)
            if "auto_expand_replicas" in flat or "number_of_replicas" in flat:
                meta.number_of_replicas = expanded_replicas(
                    meta.settings.get("auto_expand_replicas"), self._data_nodes(),
                    meta.number_of_replicas)
                meta.settings["number_of_replicas"] = meta.number_of_replicas
            # replicas added or removed, translog durability... reach the shard copies
            self.backend.reconfigure(meta.shards, flat, meta.number_of_replicas)
            if self.durable is not None:
                self.durable.saved(meta)
        return {"acknowledged": True}

    # --- aliases (rules in aliases.py) -----------------------------------------------------

    def update_aliases(self, actions: Any) -> dict[str, Any]:
        """``POST /_aliases``: all actions or none; ``remove_index`` deletes those indices."""
        exact_json(actions, "the alias actions")   # filters are stored as JSON: refused first
        changed, removed = alias_rules.apply_actions(self.indices, actions)
        for n in sorted(changed):
            self._saved(self.indices[n])
        if removed:
            self.delete_index(",".join(removed))
        return {"acknowledged": True, "errors": False}

    def put_alias(self, expr: str, name: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """``PUT /{index}/_alias/{name}``; ``index`` and ``alias`` in the body win."""
        body = dict(body or {})
        action = {"indices": [body.pop("index", None) or expr],
                  "alias": body.pop("alias", None) or name}
        if not action["indices"][0] or not action["alias"]:
            raise IllegalArgument("Validation Failed: 1: index is missing;2: alias is missing;",
                                  es_type="action_request_validation_exception")
        alias_rules.alias_spec(body, str(action["alias"]))   # unknown keys named first
        return self.update_aliases([{"add": {**action, **body}}])

    def delete_alias(self, expr: str, name: str) -> dict[str, Any]:
        names = self.resolve(expr, allow_no_indices=False)
        return self.update_aliases([{"remove": {"indices": names, "aliases": name.split(","),
                                                "must_exist": True}}])

    def get_alias(self, expr: str | None, name: str | None, *,
                  ignore_unavailable: bool = False) -> dict[str, Any]:
        """``GET /_alias``, ``/{index}/_alias/{name}``: 404 (with what was found) when a named
        alias exists nowhere, as Elasticsearch answers."""
        names = self.resolve(expr or "_all", ignore_unavailable=ignore_unavailable)
        out = alias_rules.get_aliases(self.indices, names, name)
        if name and name not in ("_all", "*"):
            found = {a for v in out.values() for a in v["aliases"]}
            missing = [p for p in name.split(",") if p and "*" not in p and p not in found]
            if missing:
                raise alias_rules.AliasesNotFound(missing)
        if name or expr is None:
            out = {n: v for n, v in out.items() if v["aliases"] or not name}
        return out

    def alias_exists(self, expr: str | None, name: str, *,
                     ignore_unavailable: bool = False) -> bool:
        try:
            return bool(self.get_alias(expr, name, ignore_unavailable=ignore_unavailable))
        except (IndexNotFound, alias_rules.AliasesNotFound):
            return False

    def cat_aliases(self, name: str | None) -> list[dict[str, Any]]:
        return alias_rules.cat_rows(self.indices, name)

    # --- composable index templates (templates.py) -----------------------------------------

    def put_index_template(self, name: str, body: Any, create: bool = False) -> dict[str, Any]:
        if create and name in self.templates:
            raise IllegalArgument(f"index template [{name}] already exists")
        exact_json(body, "the index template")   # stored as JSON: refused before it is kept
        self.templates[name] = templates.parse_template(name, body, self.templates,
                                                        self.components)
        self._templates_saved()
        return {"acknowledged": True}

    def get_index_template(self, name: str | None) -> dict[str, Any]:
        return templates.get_templates(self.templates, name)

    def delete_index_template(self, name: str) -> dict[str, Any]:
        gone = [n for n in self.templates if fnmatch.fnmatchcase(n, name)] if "*" in name \
            else [name] if name in self.templates else []
        if not gone:
            raise templates.TemplateMissing(f"index_template [{name}] missing",
                                            es_type="resource_not_found_exception")
        for n in gone:
            del self.templates[n]
        self._templates_saved()
        return {"acknowledged": True}

    def _templates_saved(self) -> None:
        if self.durable is not None:
            self.durable.save_templates(self.templates, self.components)

    # --- component templates (component_templates.py) --------------------------------------

    def put_component_template(self, name: str, body: Any, create: bool = False
                               ) -> dict[str, Any]:
        """Store a component template; the index templates using it must stay valid."""
        exact_json(body, "the component template")   # stored as JSON: refused before it is kept
        parsed = components.parse_component(name, body, self.components, create,
                                            templates.check_template)
        trial = {**self.components, name: parsed}
        for t in sorted(n for n, b in self.templates.items() if name in b.get("composed_of", [])):
            try:
                templates.parse_template(t, self.templates[t], {}, trial)
            except SearchError as e:
                raise IllegalArgument(f"updating component template [{name}] results in "
                                      f"invalid composable template [{t}] after templates are "
                                      f"merged: {e.reason}") from None
        self.components[name] = parsed
        self._templates_saved()
        return {"acknowledged": True}

    def get_component_template(self, name: str | None) -> dict[str, Any]:
        return components.get_components(self.components, name)

    def delete_component_template(self, name: str) -> dict[str, Any]:
        for n in components.to_delete(self.components, self.templates, name):
            del self.components[n]
        self._templates_saved()
        return {"acknowledged": True}

    def simulate_index(self, index: str, body: Any = None) -> dict[str, Any]:
        return simulation.simulate_index(index, self.templates, self.components, body)

    def simulate_template(self, name: str | None, body: Any, create: bool = False
                          ) -> dict[str, Any]:
        return simulation.simulate_template(name, body, self.templates, self.components, create)

    # --- open and close -------------------------------------------------------------------

    def set_state(self, expr: str, state: str) -> dict[str, Any]:
        """``POST /{index}/_close`` and ``_open``: a closed index keeps its data and refuses
        reads and writes (``index_closed_exception``) until it is opened again."""
        names = self.resolve(expr, allow_no_indices=False, include_closed=state == "open")
        for n in names:
            meta = self.indices[n]
            if meta.state != state:
                meta.state = state
                self._saved(meta)
        if state == "close":
            return {"acknowledged": True, "shards_acknowledged": True,
                    "indices": {n: {"closed": True} for n in names}}
        return {"acknowledged": True, "shards_acknowledged": True}

    def _saved(self, meta: IndexMeta) -> None:
        if self.durable is not None:
            self.durable.saved(meta)

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
        # a refresh usually ends a bulk load: give back what its requests left in the heap
        release_free_memory()
        return {"_shards": {"total": len(refs), "successful": len(refs) - failed,
                            "failed": failed}}


def _creation_aliases(body: Any, indices: dict[str, IndexMeta]) -> dict[str, dict[str, Any]]:
    """The ``aliases`` of a create-index body, checked as ``PUT _alias`` checks them."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise IllegalArgument("[aliases] must be an object", es_type="parse_exception")
    out = {}
    for name, spec in body.items():
        alias_rules.validate_alias_name(name, indices)
        out[name] = alias_rules.alias_spec(spec or {}, name)
    return out


def _check_merge_settings(settings: dict[str, Any]) -> None:
    """``index.merge.*``: the policy's settings parse, any other is refused by name (400)."""
    try:
        MergePolicy.from_settings(settings)
    except ValueError as e:
        raise IllegalArgument(str(e)) from None
