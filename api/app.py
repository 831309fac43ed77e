"""The FastAPI application factory (routes live in ``api/routes``)."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from starlette.middleware.base import BaseHTTPMiddleware

from .. import __version__
from . import errors
from .auth import AuthConfig, AuthMiddleware
from .deps import CoordinatorClient
from .json import PRODUCT_HEADERS, compat_json_type
from .routes import cluster, cursors, documents, indices, search, simulation


class _ProductHeader(BaseHTTPMiddleware):
    """Elasticsearch's clients refuse responses without ``X-Elastic-Product``, and expect JSON
    in the compatible vendor media type they asked for in ``Accept``."""

    async def dispatch(self, request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        for k, v in PRODUCT_HEADERS.items():
            response.headers[k] = v
        compat = compat_json_type(request.headers.get("accept"))
        if compat and response.headers.get("content-type", "").startswith("application/json"):
            response.headers["content-type"] = compat
        return response


def create_app(coordinator: CoordinatorClient, auth: AuthConfig | None = None) -> FastAPI:
    """An app serving Elasticsearch's REST API through ``coordinator``; with ``auth`` holding
    credentials, only requests that carry one of them (``api/auth.py``)."""
    app = FastAPI(title="shardsearch", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.coordinator = coordinator
    errors.install(app)
    if auth is not None and auth.enabled:   # inside _ProductHeader: a 401 carries it too
        app.add_middleware(AuthMiddleware, config=auth)
    app.add_middleware(_ProductHeader)
    for module in (cluster, simulation, cursors, search, documents, indices):
        app.include_router(module.router)
    return app
