"""What a ``_delete_by_query``, ``_update_by_query`` or ``_reindex`` asks for, parsed and checked
before any work starts (pure; no I/O). Keys we do not implement are refused naming them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.query.dsl import parse_query
from ..engine.query.nodes import MatchAll, Query
from ..engine.script import UPDATE_CONTEXT, Compiled, compile_script
from ..engine.source_filter import SourceFilter, parse_source
from ..errors import ActionRequestValidation, IllegalArgument, ParsingError

ACTIONS = {"delete": "indices:data/write/delete/byquery",
           "update": "indices:data/write/update/byquery",
           "reindex": "indices:data/write/reindex"}
DEFAULT_BATCH = 1_000
MAX_BATCH = 10_000          # a batch is one page of the snapshot: index.max_result_window
MAX_SLICES = 64

BY_QUERY_PARAMS = {"conflicts", "max_docs", "refresh", "requests_per_second", "scroll_size",
                   "slices", "wait_for_completion", "q", "df", "default_operator"}
REINDEX_PARAMS = {"refresh", "requests_per_second", "slices", "wait_for_completion",
                  "max_docs"}
_BODY = {"delete": {"query", "max_docs", "conflicts"},
         "update": {"query", "max_docs", "conflicts", "script"},
         "reindex": {"source", "dest", "max_docs", "conflicts", "script"}}
_SOURCE_KEYS = {"index", "query", "_source", "size"}
_DEST_KEYS = {"index", "op_type", "version_type", "routing"}


@dataclass
class ByQuery:
    """One by-query or reindex job: what to read (a snapshot of ``indices`` matching ``query``)
    and what to do with each document."""

    action: str                                # delete | update | reindex
    indices: tuple[str, ...]
    query: Query = field(default_factory=MatchAll)
    max_docs: int | None = None
    proceed_on_conflict: bool = False          # conflicts=proceed
    batch_size: int = DEFAULT_BATCH            # scroll_size / source.size
    slices: int | str = 1                      # N, or "auto": one per shard
    requests_per_second: float | None = None   # None: unthrottled (-1)
    refresh: bool = False
    wait_for_completion: bool = True
    script: Compiled | None = None
    source: SourceFilter = field(default_factory=SourceFilter)
    dest: str | None = None
    op_type: str = "index"                     # reindex dest: index | create
    dest_routing: str = "keep"                 # keep | discard | =value
    dest_version_type: str = "internal"        # external*: the source's version, kept

    @property
    def task_action(self) -> str:
        return ACTIONS[self.action]

    def description(self) -> str:
        src = ", ".join(self.indices)
        if self.action == "reindex":
            return f"reindex from [{src}] to [{self.dest}]"
        return f"{self.action}-by-query [{src}]"


def _positive_int(value: Any, name: str, low: int = 1, high: int | None = None) -> int:
    try:
        n = int(value)
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise IllegalArgument(f"Failed to parse int parameter [{name}] with value [{value}]"
                              ) from None
    if n < low or (high is not None and n > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise IllegalArgument(f"[{name}] must be {bound} but was [{n}]")
    return n


def parse_conflicts(value: Any) -> bool:
    if value not in ("abort", "proceed"):
        raise IllegalArgument(f"conflicts may only be \"proceed\" or \"abort\" but was [{value}]")
    return value == "proceed"


def parse_rps(value: str) -> float | None:
    """``requests_per_second``: a positive number or -1 (unlimited), as Elasticsearch reads it."""
    try:
        rps = float(value)
    except ValueError:
        raise IllegalArgument(f"[requests_per_second] must be a float but was [{value}]"
                              ) from None
    if rps == -1 or rps == float("inf"):
        return None
    if not rps > 0:
        raise IllegalArgument("[requests_per_second] must be either [-1] for unlimited or "
                              f"> 0 but was [{value}]")
    return rps


def parse_slices(value: str) -> int | str:
    if value == "auto":
        return "auto"
    return _positive_int(value, "slices", 1, MAX_SLICES)


def _check_keys(found: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in found:
        if key not in allowed:
            raise ParsingError(f"[{where}] unknown field [{key}]")


def parse_by_query(action: str, indices: tuple[str, ...], params: dict[str, str],
                   body: Any, query_from_params: Query | None) -> ByQuery:
    """The job of a by-query or reindex request (URL ``params`` and JSON ``body``)."""
    body = body if body is not None else {}
    if not isinstance(body, dict):
        raise ParsingError("request body must be an object")
    _check_keys(body, _BODY[action], action)
    job = ByQuery(action, indices)
    if "conflicts" in body:
        job.proceed_on_conflict = parse_conflicts(body["conflicts"])
    if "conflicts" in params:
        job.proceed_on_conflict = parse_conflicts(params["conflicts"])
    if "max_docs" in body:
        job.max_docs = _positive_int(body["max_docs"], "max_docs")
    if "max_docs" in params:
        job.max_docs = _positive_int(params["max_docs"], "max_docs")
    if "scroll_size" in params:
        job.batch_size = _positive_int(params["scroll_size"], "scroll_size", 1, MAX_BATCH)
    if "slices" in params:
        job.slices = parse_slices(params["slices"])
    if "requests_per_second" in params:
        job.requests_per_second = parse_rps(params["requests_per_second"])
    job.refresh = params.get("refresh", "false").lower() in ("", "true", "wait_for")
    wait = params.get("wait_for_completion", "true").lower()
    if wait not in ("true", "false", ""):
        raise IllegalArgument(f"Failed to parse value [{wait}] as only [true] or [false] are "
                              "allowed.")
    job.wait_for_completion = wait != "false"
    if body.get("query") is not None:
        job.query = parse_query(body["query"])
    if query_from_params is not None:
        job.query = query_from_params
    if body.get("script") is not None:
        job.script = compile_script(body["script"], UPDATE_CONTEXT)
    if action == "reindex":
        _parse_reindex(job, body)
    if job.max_docs is not None:
        job.batch_size = min(job.batch_size, job.max_docs)
    return job


def _parse_reindex(job: ByQuery, body: dict[str, Any]) -> None:
    source, dest = body.get("source"), body.get("dest")
    if not isinstance(source, dict) or not source.get("index"):
        raise ActionRequestValidation("Validation Failed: 1: use _all if you really want to "
                                      "copy from all existing indexes;")
    if not isinstance(dest, dict) or not isinstance(dest.get("index"), str):
        raise ActionRequestValidation("Validation Failed: 1: index must be specified;")
    _check_keys(source, _SOURCE_KEYS, "source")
    _check_keys(dest, _DEST_KEYS, "dest")
    names = source["index"]
    job.indices = tuple(names) if isinstance(names, list) else tuple(str(names).split(","))
    if source.get("query") is not None:
        job.query = parse_query(source["query"])
    if "_source" in source:
        job.source = parse_source(source["_source"])
    if "size" in source:
        job.batch_size = _positive_int(source["size"], "size", 1, MAX_BATCH)
    job.dest = dest["index"]
    job.op_type = dest.get("op_type", "index")
    if job.op_type not in ("index", "create"):
        raise IllegalArgument(f"opType must be 'create' or 'index', found: [{job.op_type}]")
    job.dest_version_type = dest.get("version_type", "internal")
    if job.dest_version_type not in ("internal", "external", "external_gte"):
        raise IllegalArgument(f"No version type match [{job.dest_version_type}]")
    routing = dest.get("routing", "keep")
    if not isinstance(routing, str) or not (routing in ("keep", "discard")
                                            or routing.startswith("=")):
        raise IllegalArgument(f"[routing] must be [keep], [discard] or [=<something>] but was "
                              f"[{routing}]")
    job.dest_routing = routing
