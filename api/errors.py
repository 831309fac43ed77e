"""The one place that turns errors into Elasticsearch's JSON envelope.

Every error response looks like::

    {"error": {"root_cause": [{"type": ..., "reason": ...}], "type": ..., "reason": ...,
               ...extra fields...},
     "status": N}

Domain errors (``cluster.errors.SearchError``) carry their type and status; anything else is
reported as a 500 ``exception`` after logging (and is a bug). FastAPI's own validation and
routing errors are mapped too, so no ``{"detail": ...}`` ever leaks.
"""
from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..cluster.errors import SearchError, domain_error
from .json import JSONResponse

log = logging.getLogger("shardsearch.api")


def envelope(err: SearchError) -> dict[str, Any]:
    """Elasticsearch's error body for a domain error."""
    cause = err.to_cause()
    root = cause.pop("root_cause", None)
    if root is None:
        root = [{k: v for k, v in cause.items() if k not in ("caused_by", "failed_shards",
                                                             "phase", "grouped")}]
    error: dict[str, Any] = {"root_cause": root}
    error.update(cause)
    if error.get("caused_by") is None:
        error.pop("caused_by", None)
    return {"error": error, "status": err.status}


def error_response(err: SearchError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(envelope(err), status_code=err.status, headers=headers)


def unwrap(exc: BaseException) -> BaseException:
    """The domain error inside a Ray task error, if there is one."""
    return domain_error(exc)


def install(app: FastAPI) -> None:
    """Register the handlers that keep every error in Elasticsearch's shape."""

    @app.exception_handler(SearchError)
    async def _domain(_: Request, exc: SearchError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(SearchError(str(exc.errors()[:1]), es_type="illegal_argument_exception",
                                          status=400))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            err = SearchError(f"no handler found for uri [{request.url.path}] and method "
                              f"[{request.method}]", es_type="illegal_argument_exception",
                              status=400)
        elif exc.status_code == 405:
            err = SearchError(f"Incorrect HTTP method for uri [{request.url.path}] and method "
                              f"[{request.method}]", es_type="illegal_argument_exception",
                              status=405)
        else:
            err = SearchError(str(exc.detail), es_type="exception", status=exc.status_code)
        return error_response(err)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        inner = unwrap(exc)
        if isinstance(inner, SearchError):
            return error_response(inner)
        log.exception("unexpected error", exc_info=exc)
        return error_response(SearchError(f"{type(inner).__name__}: {inner}",
                                          es_type="exception", status=500))
