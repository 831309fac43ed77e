"""Elasticsearch URL parameters: last value wins, booleans as ES spells them."""
from __future__ import annotations

from fastapi import Request

from ..cluster.errors import IllegalArgument
from ..cluster.search.request import check_params, expands_open_indices
from ..cluster.values import parse_bool, parse_time_ms

COMMON = {"pretty", "human", "error_trace", "filter_path", "format"}


def query_params(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.multi_items()}


def bool_param(params: dict[str, str], name: str, default: bool = False) -> bool:
    if name not in params:
        return default
    return parse_bool(params[name], name)


def refresh_param(params: dict[str, str]) -> bool:
    """``refresh=true|wait_for|false`` (and bare ``refresh``): whether to refresh after a write."""
    if "refresh" not in params:
        return False
    v = params["refresh"].lower()
    if v in ("", "true", "wait_for"):
        return True
    if v == "false":
        return False
    raise IllegalArgument(f"Unknown value for refresh: [{params['refresh']}].")


def int_param(params: dict[str, str], name: str) -> int | None:
    if name not in params:
        return None
    try:
        return int(params[name])
    except ValueError:
        raise IllegalArgument(f"Failed to parse int parameter [{name}] with value "
                              f"[{params[name]}]") from None


def admin_params(request: Request, allowed: set[str]) -> dict[str, str]:
    """The URL parameters of an admin request: unknown ones refused by name; ``timeout``,
    ``master_timeout`` (times) and ``local`` (a boolean) checked, since one coordinator
    acknowledges once saved and every answer is local, so their values change nothing."""
    params = query_params(request)
    check_params(params, allowed, request.url.path)
    for key in ("timeout", "master_timeout"):
        if key in params:
            parse_time_ms(params[key], key)
    if "local" in params:
        bool_param(params, "local")
    return params


def index_options(params: dict[str, str], allow_no_indices: bool = True) -> dict[str, bool]:
    """``ignore_unavailable``, ``allow_no_indices`` and ``expand_wildcards`` as the resolver's
    options (``allow_no_indices``: the API's default when the request does not say)."""
    return {"ignore_unavailable": bool_param(params, "ignore_unavailable"),
            "allow_no_indices": bool_param(params, "allow_no_indices", allow_no_indices),
            "expand_wildcards": expands_open_indices(params.get("expand_wildcards", "open"))}
