"""The FastAPI application factory (routes live in ``api/routes``)."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from starlette.middleware.base import BaseHTTPMiddleware

from .. import __version__
from . import errors
from .deps import CoordinatorClient
from .json import PRODUCT_HEADERS
from .routes import cluster, documents, indices, search


class _ProductHeader(BaseHTTPMiddleware):
    """Elasticsearch's clients refuse responses without ``X-Elastic-Product``."""

    async def dispatch(self, request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        for k, v in PRODUCT_HEADERS.items():
            response.headers[k] = v
        return response


def create_app(coordinator: CoordinatorClient) -> FastAPI:
    """An app serving Elasticsearch's REST API through ``coordinator``."""
    app = FastAPI(title="shardsearch", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.coordinator = coordinator
    errors.install(app)
    app.add_middleware(_ProductHeader)
    for module in (cluster, search, documents, indices):
        app.include_router(module.router)
    return app
