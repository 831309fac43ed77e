"""``_msearch``: NDJSON header/body pairs, each a search through the same parser as ``_search``.

A header's keys become that search's URL parameters (Elasticsearch reads them with the same
names), and its body goes through :func:`~.request.parse_search`, so one search and one item of
a multi-search accept and refuse exactly the same things. A malformed line, an unknown header
key or a search that does not parse fails the whole request, as in Elasticsearch; a search that
parses but fails when it runs (a missing index, a window too large) fails only its item.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from ..errors import ActionRequestValidation, IllegalArgument, SearchError, domain_error
from ..values import check_format
from .request import SearchRequest, check_params, parse_search

#: URL parameters of ``_msearch``; those in ``ITEM_PARAMS`` apply to every search of it.
MSEARCH_PARAMS = {
    "max_concurrent_searches", "max_concurrent_shard_requests", "pre_filter_shard_size",
    "rest_total_hits_as_int", "search_type", "typed_keys", "ccs_minimize_roundtrips",
    "ignore_unavailable", "ignore_throttled", "allow_no_indices", "expand_wildcards", "routing",
    "include_named_queries_score", "pretty", "human", "error_trace", "filter_path", "format",
}
ITEM_PARAMS = {
    "max_concurrent_shard_requests", "pre_filter_shard_size", "rest_total_hits_as_int",
    "search_type", "typed_keys", "ccs_minimize_roundtrips", "ignore_unavailable",
    "ignore_throttled", "allow_no_indices", "expand_wildcards", "routing",
    "include_named_queries_score",
}
#: Keys of a header line (Elasticsearch's ``MultiSearchRequest.readMultiLineFormat``).
HEADER_KEYS = {
    "index", "indices", "search_type", "ccs_minimize_roundtrips", "request_cache", "preference",
    "routing", "allow_partial_search_results", "ignore_unavailable", "allow_no_indices",
    "expand_wildcards", "ignore_throttled",
}
#: How many searches of one request run at once when the request does not say.
DEFAULT_MAX_CONCURRENT = 4
MAX_SEARCHES = 10_000


def _header_params(header: dict[str, Any], line_no: int) -> tuple[tuple[str, ...] | None,
                                                                    dict[str, str]]:
    """The indices a header names (None: the URL's) and its other keys as URL parameters."""
    indices = None
    params: dict[str, str] = {}
    for key, value in header.items():
        if key not in HEADER_KEYS:
            raise IllegalArgument(f"key [{key}] is not supported in the metadata section")
        if key in ("index", "indices"):
            names = value if isinstance(value, list) else str(value).split(",")
            indices = tuple(str(n) for n in names if str(n))
        elif isinstance(value, list):
            params[key] = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            params[key] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            params[key] = str(value)
        else:
            raise IllegalArgument(f"Malformed msearch header on line [{line_no}]: "
                                  f"[{key}] must be a value")
    return indices, params


def _json_line(line: bytes, line_no: int) -> dict[str, Any]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise IllegalArgument(f"Failed to parse line [{line_no}] of the msearch body as "
                              "JSON") from None
    if not isinstance(value, dict):
        raise IllegalArgument(f"Malformed line [{line_no}]: expected an object")
    return value


def ndjson_pairs(raw: bytes) -> list[tuple[dict[str, Any], dict[str, Any], int]]:
    """The ``(header, body, header line number)`` pairs of an NDJSON multi-search body."""
    lines = [ln.strip() for ln in raw.split(b"\n")]
    out: list[tuple[dict[str, Any], dict[str, Any], int]] = []
    i = 0
    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        header = _json_line(lines[i], i + 1)
        if i + 1 >= len(lines) or not lines[i + 1]:
            raise IllegalArgument("The msearch request must be terminated by a newline [\\n]")
        out.append((header, _json_line(lines[i + 1], i + 2), i + 1))
        if len(out) > MAX_SEARCHES:
            raise IllegalArgument(f"too many searches in one msearch request, at most "
                                  f"[{MAX_SEARCHES}]")
        i += 2
    if not out:
        raise ActionRequestValidation("Validation Failed: 1: no requests added;")
    return out


def parse_msearch(raw: bytes, default_indices: tuple[str, ...], params: dict[str, str],
                  path: str = "/_msearch",
                  prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                  item_errors: bool = False) -> list[SearchRequest | SearchError]:
    """The searches of an NDJSON body, each parsed by ``parse_search`` with the URL's
    request-wide parameters under its header's. ``prepare`` turns a body line into a search
    body first (stored scripts put in place, a search template rendered); what fails there
    fails its item only, and so does a search that does not parse with ``item_errors``
    (``_msearch/template``, as Elasticsearch answers it)."""
    check_params(params, MSEARCH_PARAMS, path)
    check_format(params)
    shared = {k: v for k, v in params.items() if k in ITEM_PARAMS}
    out: list[SearchRequest | SearchError] = []
    for header, body, line_no in ndjson_pairs(raw):
        indices, item_params = _header_params(header, line_no)
        merged = dict(shared, **item_params)
        try:
            if prepare is not None:
                body = prepare(body)
        except SearchError as e:   # a missing stored script, a template: fails when it runs
            out.append(e)
            continue
        try:
            out.append(parse_search(indices or default_indices, merged, body, path=path))
        except SearchError as e:
            if not item_errors:
                raise
            out.append(e)
    return out


def max_concurrent(params: dict[str, str]) -> int:
    """``max_concurrent_searches``: positive (Elasticsearch's check and text)."""
    value = params.get("max_concurrent_searches")
    if value is None:
        return DEFAULT_MAX_CONCURRENT
    try:
        n = int(value)
    except ValueError:
        raise IllegalArgument("Failed to parse int parameter [max_concurrent_searches] with "
                              f"value [{value}]") from None
    if n < 1:
        raise IllegalArgument("maxConcurrentSearchRequests must be positive")
    return n


async def run_msearch(requests: list[SearchRequest | SearchError],
                      search: Callable[[SearchRequest], Awaitable[dict[str, Any]]],
                      limit: int) -> list[dict[str, Any] | SearchError]:
    """Every search, at most ``limit`` at once; an item's failure is its value, in its place."""
    gate = asyncio.Semaphore(limit)

    async def one(req: SearchRequest | SearchError) -> dict[str, Any] | SearchError:
        if isinstance(req, SearchError):
            return req
        async with gate:
            try:
                return await search(req)
            except Exception as e:   # noqa: BLE001 - a domain error is the item's answer
                err = domain_error(e)
                if isinstance(err, SearchError):
                    return err
                raise
    return list(await asyncio.gather(*(one(r) for r in requests)))
