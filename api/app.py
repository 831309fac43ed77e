"""The FastAPI application factory (routes live in ``api/routes``)."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders

from .. import __version__
from . import errors
from .auth import AuthConfig, AuthMiddleware
from .deps import CoordinatorClient
from .filter_path import FilterPathMiddleware
from .guards import RequestGuard
from .json import PRODUCT_HEADERS, compat_json_type
from .routes import (aliases, by_query, cat, cluster, component_templates, cursors,
                     data_streams, documents, indices, multi, nodes, scripts, search,
                     simulation, ui)


class _ProductHeader:
    """Elasticsearch's clients refuse responses without ``X-Elastic-Product``, and expect JSON
    in the compatible vendor media type they asked for in ``Accept``.

    Plain ASGI (it only edits the response's first message): Starlette's
    ``BaseHTTPMiddleware`` runs each request in an extra task group, ~10 % of a search's CPU
    in the front end.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accept = None
        for k, v in scope.get("headers") or []:
            if k == b"accept":
                accept = v.decode("latin-1")
                break
        compat = compat_json_type(accept)

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(raw=list(message.get("headers") or []))
                for k, v in PRODUCT_HEADERS.items():
                    headers[k] = v
                if compat and headers.get("content-type", "").startswith("application/json"):
                    headers["content-type"] = compat
                message = {**message, "headers": headers.raw}
            await send(message)
        await self.app(scope, receive, send_with_headers)


class _NoTrailingSlash:
    """``/books/_search/`` is served as ``/books/_search``, as Elasticsearch serves it (instead
    of Starlette's 307 redirect with an empty body, which clients do not follow)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path") or ""
        if scope["type"] == "http" and len(path) > 1 and path.endswith("/"):
            scope = dict(scope, path=path.rstrip("/") or "/")
            raw = scope.get("raw_path")
            if raw:
                scope["raw_path"] = raw.rstrip(b"/") or b"/"
        await self.app(scope, receive, send)


def create_app(coordinator: CoordinatorClient, auth: AuthConfig | None = None) -> FastAPI:
    """An app serving Elasticsearch's REST API through ``coordinator``; with ``auth`` holding
    credentials, only requests that carry one of them (``api/auth.py``)."""
    app = FastAPI(title="shardsearch", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.coordinator = coordinator
    errors.install(app)
    app.add_middleware(FilterPathMiddleware)
    app.add_middleware(RequestGuard)        # innermost: after auth, around every route
    if auth is not None and auth.enabled:   # inside _ProductHeader: a 401 carries it too
        app.add_middleware(AuthMiddleware, config=auth)
    app.add_middleware(_ProductHeader)
    app.add_middleware(_NoTrailingSlash)    # outermost: every layer sees the one spelling
    app.include_router(search.hot_router)   # first: the path of most requests (see there)
    # component_templates before aliases: POST /_index_template/_simulate is no template name
    for module in (ui, cluster, nodes, cat, component_templates, aliases, simulation, cursors,
                   scripts, search, multi, documents, by_query, data_streams, indices):
        app.include_router(module.router)
    return app
