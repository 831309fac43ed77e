"""Elasticsearch URL parameters: last value wins, booleans as ES spells them."""
from __future__ import annotations

from fastapi import Request

from ..cluster.errors import IllegalArgument
from ..cluster.values import parse_bool

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
